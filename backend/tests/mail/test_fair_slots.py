"""The mail filter's cleaning slots are shared in turns between senders (channels/fairgate.py,
keyed by the envelope sender's domain): with one slot busy with a sender's slow message and
two more of its slow messages waiting, another domain's message is cleaned next, not after
them. (The wait being left when Postfix goes away is aiosmtpd cancelling the handler: the
gate's cancellation, test_fairgate.py.)"""

from __future__ import annotations

import smtplib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sanitas.mailfilter.server import sender_key
from tests.executor.jobkit import wait_until
from tests.factories import pdf_bytes
from tests.mail.mailkit import MailFilter, Sink, message, start_filter, stop_filter

pytestmark = pytest.mark.slow


def test_sender_key_is_the_envelope_senders_domain_else_the_client():
    assert sender_key("Alice@Example.ORG", ("127.0.0.1", 2525)) == "domain:example.org"
    assert sender_key("a@b@relay.example", ("127.0.0.1", 2525)) == "domain:relay.example"
    assert sender_key("", ("192.0.2.9", 2525)) == "client:192.0.2.9"  # a bounce: <>
    assert sender_key(None, ("192.0.2.9", 2525)) == "client:192.0.2.9"
    assert sender_key("postmaster", "/run/postfix.sock") == "client:/run/postfix.sock"
    assert len(sender_key("x@" + "d" * 1000, None)) <= 262


@pytest.fixture(scope="module")
def one_slot(tmp_path_factory) -> Iterator[tuple[MailFilter, Sink]]:
    with Sink() as sink:
        data_dir: Path = tmp_path_factory.mktemp("mail-one-slot")
        server = start_filter(data_dir, sink.port, mail_workers=1, mail_policy="advanced")
        try:
            yield server, sink
        finally:
            stop_filter(server)


def _send(port: int, sender: str, data: bytes) -> int:
    with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
        client.ehlo("postfix.test")
        client.mail(sender)
        client.rcpt("bob@example.net")
        code, _ = client.data(data)
        return code


def test_another_senders_message_is_cleaned_before_a_senders_backlog(one_slot):
    mail_filter, sink = one_slot
    sink.handler.messages.clear()
    slow = {"long.pdf": pdf_bytes(pages=15, side=(300, 400), seed=3, quality=70)}
    codes: dict[str, int] = {}

    def send(name: str, sender: str, data: bytes) -> None:
        codes[name] = _send(mail_filter.port, sender, data)

    threads = []
    for i in range(3):  # one cleaned, two waiting: all from one domain
        thread = threading.Thread(target=send, daemon=True, args=(
            f"slow{i}", "reports@busy.example", message(slow, subject=f"slow {i}")))
        thread.start()
        threads.append(thread)
        time.sleep(0.1)
    # each one's scratch folder is made just before it asks for the slot
    wait_until(lambda: len(_scratch(mail_filter)) == 3, 60,
               "the three slow messages at the slot", 0.05)
    time.sleep(0.3)
    assert not sink.handler.messages, "the first slow message was delivered too soon"
    other = threading.Thread(target=send, daemon=True, args=(
        "other", "carol@quiet.example", message({}, subject="a short one")))
    other.start()
    for thread in [*threads, other]:
        thread.join(240)
    assert codes == {"slow0": 250, "slow1": 250, "slow2": 250, "other": 250}, codes
    order = [m.sender for m in sink.handler.messages]
    print(f"\ndelivered in this order: {order}")
    # Cleaned second: delivered before the second and third slow ones (a slot is given back
    # when the engine ends, and a small message's delivery may overtake the first slow one's).
    # First come, first served cleaned it last, after all three.
    assert order.index("carol@quiet.example") <= 1, order


def _scratch(mail_filter: MailFilter) -> list[Path]:
    jobs = mail_filter.data_dir / "tmp" / "jobs"
    return [p for p in jobs.iterdir() if p.name.startswith("job-mail")] if jobs.exists() \
        else []
