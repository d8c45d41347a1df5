"""Against a real HTTP server: sixty simultaneous creations of API keys, or of webhooks, by one
account never get past the account's limit: exactly the limit is created, the rest is refused
with the usual 409, and no more rows exist than the limit (on SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from sanitas.apikeys.service import MAX_KEYS_PER_USER
from sanitas.models import ApiKey, Webhook
from sanitas.webhooks.service import MAX_WEBHOOKS_PER_USER
from tests.factories import auth_headers, make_user
from tests.live_server import app_server

PARALLEL = 60


@pytest.fixture
def server(settings):
    # The per-user concurrency limit (admission.py) would refuse some of the race with 429:
    # here the database alone must hold the limit.
    settings.user_concurrency = PARALLEL
    settings.api_queue_seconds = 60
    with app_server(settings) as port:
        yield f"http://127.0.0.1:{port}"


def _race(base_url: str, headers: dict[str, str], path: str,
          body: dict[str, Any]) -> Counter[tuple[int, str]]:
    """PARALLEL POSTs of `body` to `path`, each on its own connection, released together."""
    barrier = threading.Barrier(PARALLEL)
    results: list[tuple[int, str]] = []
    lock = threading.Lock()

    def create() -> None:
        with httpx.Client(base_url=base_url, timeout=90) as client:
            barrier.wait()
            answer = client.post(path, headers=headers, json=body)
        with lock:
            results.append((answer.status_code, answer.json().get("error") or ""))

    threads = [threading.Thread(target=create) for _ in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == PARALLEL, "some calls did not finish"
    return Counter(results)


def test_parallel_api_key_creations_never_exceed_the_limit(server, settings, db_session):
    user = make_user(db_session, role="USER")
    results = _race(server, auth_headers(settings, db_session, user), "/api/keys",
                    {"name": "ci"})
    assert results == {(201, ""): MAX_KEYS_PER_USER,
                       (409, "too_many_keys"): PARALLEL - MAX_KEYS_PER_USER}, results
    db_session.expire_all()
    assert db_session.scalar(select(func.count()).select_from(ApiKey)
                             .where(ApiKey.user_id == user.id)) == MAX_KEYS_PER_USER


def test_parallel_webhook_creations_never_exceed_the_limit(server, settings, db_session):
    user = make_user(db_session, role="USER")
    results = _race(server, auth_headers(settings, db_session, user), "/api/webhooks",
                    {"url": "http://93.184.215.14/hooks", "events": ["file.completed"]})
    assert results == {(201, ""): MAX_WEBHOOKS_PER_USER,
                       (409, "too_many_webhooks"): PARALLEL - MAX_WEBHOOKS_PER_USER}, results
    db_session.expire_all()
    assert db_session.scalar(select(func.count()).select_from(Webhook)
                             .where(Webhook.user_id == user.id)) == MAX_WEBHOOKS_PER_USER
