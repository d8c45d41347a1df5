"""Webhook attempts against endpoints that never finish answering (a loopback `Drip` server
sending one byte a second): each attempt ends at its overall deadline, whether the endpoint
drips its response head, a TLS handshake, or its name never resolves; and one account's
dripping endpoints never hold every sender: another account's event is delivered at once, by
the real sender thread and its claim query, on SQLite and PostgreSQL."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from sqlalchemy import select

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.models import WebhookDelivery
from sanitas.webhooks import sender
from tests.factories import auth_headers, make_user
from tests.webhook_receiver import Drip, Receiver, running

EVENTS = ["file.completed"]


@pytest.fixture
def factory(settings):
    engine = make_engine(str(settings.database_url))
    yield make_sessionmaker(engine)
    engine.dispose()


def _plain_settings(tmp_path, **values) -> Settings:
    """Settings for calls that touch no database (sender.post)."""
    return Settings(data_dir=tmp_path, secret_key="test-secret-key-that-is-long-enough-0123",
                    webhook_allow_private=True, **values)


@pytest.mark.parametrize(("prefix", "scheme"), [(Drip.HEAD, "http"),
                                                (Drip.TLS_RECORD, "https")],
                         ids=["response-head", "tls-handshake"])
def test_a_dripping_endpoint_is_cut_at_the_deadline(tmp_path, prefix, scheme):
    """Each byte comes well within the per-step timeout (5 s), so only the attempt's deadline
    can end it: the response head, or the TLS handshake, never completes."""
    settings = _plain_settings(tmp_path, webhook_deadline_seconds=2.0)
    with Drip(prefix=prefix, interval=0.5) as drip:
        url = drip.url if scheme == "http" else drip.url.replace("http://127.0.0.1",
                                                                 "https://localhost")
        result = sender.post(settings, url, '{"type":"webhook.test"}', {})
        assert len(drip.opened) == 1
    assert result.status_code is None
    assert "did not answer in time (an attempt may take 2 s in all)" in (result.error or "")
    assert 1900 <= result.duration_ms <= 3500, result


def test_name_resolution_is_inside_the_deadline(tmp_path, monkeypatch):
    """A resolver that does not answer: the attempt still ends at its deadline, as one whose
    name could not be resolved in time."""
    settings = _plain_settings(tmp_path, webhook_deadline_seconds=1.5)
    real = socket.getaddrinfo
    release = threading.Event()

    def hanging(host, *args, **kwargs):
        if host == "hangs.example":
            release.wait(30)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    try:
        result = sender.post(settings, "http://hangs.example/hook", "{}", {})
    finally:
        release.set()
    assert result.status_code is None and "resolved in time" in (result.error or "")
    assert 1400 <= result.duration_ms <= 3000, result


def test_the_claim_skips_accounts_at_their_cap(api, settings, db_session, factory):
    """Three due deliveries of one account, older than another account's one: with a cap of
    two per account, four free senders take two of the first and the other's; while the
    first has two under way, only other accounts' deliveries are claimed."""
    busy_user = make_user(db_session, role="USER")
    other_user = make_user(db_session, role="USER")
    busy, other = (auth_headers(settings, db_session, u) for u in (busy_user, other_user))
    busy_hooks = [_hook(api, busy, f"http://93.184.215.14/{i}") for i in range(3)]
    other_hook = _hook(api, other, "http://93.184.215.14/other")
    for hook in busy_hooks:
        _send_test(api, busy, hook)
    _send_test(api, other, other_hook)

    claimed = sender.claim_due(factory, settings, 4, {busy_user.id: 2}, 2)
    assert [c.account_id for c in claimed] == [other_user.id]
    _release(db_session)
    claimed = sender.claim_due(factory, settings, 4, {}, 2)
    assert sorted(c.account_id for c in claimed) == sorted([busy_user.id] * 2 + [other_user.id])
    _release(db_session)
    assert len(sender.claim_due(factory, settings, 4)) == 4  # without a cap: anyone's


def _release(db_session):
    db_session.expire_all()
    for row in db_session.scalars(select(WebhookDelivery)):
        row.claim_token, row.claimed_until = None, None
    db_session.commit()


def _hook(api, headers, url) -> str:
    answer = api.post("/api/webhooks", headers=headers, json={"url": url, "events": EVENTS})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["webhook"]["id"]


def _send_test(api, headers, hook_id) -> None:
    assert api.post(f"/api/webhooks/{hook_id}/test", headers=headers).status_code == 202


def _wait(condition, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"timed out waiting for {what}"
        time.sleep(0.05)
    return time.monotonic() - started


def test_one_accounts_dripping_endpoints_never_stall_another_account(api, settings,
                                                                     db_session, factory):
    """As many dripping endpoints of one account as there are senders: at most half of the
    senders take them, and another account's event is delivered within a few seconds, long
    before the drips' deadline; each drip attempt is then recorded as failed after about the
    deadline."""
    deadline = 6.0
    settings.webhook_allow_private = True
    settings.webhook_deadline_seconds = deadline
    settings.webhook_senders = 4
    settings.webhook_poll_interval_seconds = 0.2
    busy_user = make_user(db_session, role="USER")
    other_user = make_user(db_session, role="USER")
    busy, other = (auth_headers(settings, db_session, u) for u in (busy_user, other_user))
    with Drip(interval=1.0) as drip, running(Receiver()) as receiver:
        busy_hooks = [_hook(api, busy, f"{drip.url}/{i}") for i in range(4)]
        other_hook = _hook(api, other, receiver.url)
        for hook in busy_hooks:
            _send_test(api, busy, hook)
        webhooks = sender.WebhookSender(settings, factory)
        assert webhooks.per_account == 2
        webhooks.start()
        try:
            _wait(lambda: len(drip.opened) >= 2, 10, "the first drip attempts")
            time.sleep(0.5)
            assert len(drip.opened) == 2  # the account's cap: the other two wait
            queued = time.monotonic()
            _send_test(api, other, other_hook)
            receiver.wait_for("webhook.test", timeout=deadline - 1.5)
            delay = time.monotonic() - queued
            assert delay < 3.0, delay
            assert drip.open_connections == 2  # the drips are still under way
            print(f"\nanother account's delivery: {delay * 1000:.0f} ms after it was queued")

            def recorded():
                db_session.expire_all()
                return [d for d in db_session.scalars(select(WebhookDelivery))
                        if d.webhook_id in busy_hooks and d.attempts == 1]

            _wait(lambda: len(recorded()) >= 2, deadline + 10, "the drip attempts' outcome")
            for delivery in recorded():
                [entry] = delivery.attempt_log
                assert delivery.state == "pending"  # failed, to be retried
                assert entry["statusCode"] is None
                assert "an attempt may take 6 s in all" in entry["error"]
                assert deadline * 1000 - 100 <= entry["durationMs"] <= deadline * 1000 + 2000
                print(f"drip attempt: durationMs {entry['durationMs']}")
            # Their slots freed, the account's two other deliveries are attempted.
            _wait(lambda: len(drip.opened) == 4, 10, "the account's other deliveries")
        finally:
            drip.stop()  # ends the attempts under way at once
            webhooks.stop()
