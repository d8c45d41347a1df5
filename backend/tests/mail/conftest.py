"""Fixtures of the mail tests: sample attachments, a sink standing for the next hop and a
`sanitas mail` subprocess re-injecting to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mail.mailkit import (
    MailFilter,
    Sink,
    free_port,
    samples,
    start_filter,
    stop_filter,
)

METRICS_TOKEN = "mail-metrics-test-token"


@pytest.fixture(scope="session")
def attachments(tmp_path_factory) -> dict[str, bytes]:
    return samples(tmp_path_factory.mktemp("mail-samples"))


@pytest.fixture(scope="module")
def sink() -> Iterator[Sink]:
    with Sink() as s:
        yield s


@pytest.fixture(scope="module")
def mail_filter(tmp_path_factory, sink) -> Iterator[MailFilter]:
    data_dir: Path = tmp_path_factory.mktemp("mail-data")
    server = start_filter(data_dir, sink.port, mail_workers=2, metrics_token=METRICS_TOKEN,
                          mail_metrics_port=free_port())
    try:
        yield server
    finally:
        stop_filter(server)


@pytest.fixture(autouse=True)
def _empty_sink(request) -> None:
    if "sink" in request.fixturenames:
        sink = request.getfixturevalue("sink")
        sink.handler.messages.clear()
        sink.handler.answer = None
        sink.handler.refuse.clear()
        sink.handler.drop_after = None
        sink.handler.then_refuse = {}
        sink.handler.rcpts_seen.clear()
        sink.handler.delay = 0.0
