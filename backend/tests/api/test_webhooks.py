"""Webhooks over HTTP: creating, listing, changing and deleting endpoints, the signing secret
(shown once, sealed at rest), validation and the SSRF guard (at creation, change and send
time), who may use them (plans, owners, never API keys), the audit trail, events queued for
finished and expired files with the status call's file object, and single attempts of the
sender against a loopback receiver (signature, redirect not followed, back-off, metric)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import event, select, text, update
from sqlalchemy.orm import Session

from sanitas.db import make_engine, make_sessionmaker, utcnow
from sanitas.models import AuditEntry, File, User, Webhook, WebhookDelivery, WebhookEvent
from sanitas.processing import outcome, sweeps
from sanitas.processing.outcome import send_file_events
from sanitas.storage import make_storage
from sanitas.webhooks import sender, ssrf
from sanitas.webhooks.service import (
    KEEP_FINISHED_DAYS,
    MAX_WEBHOOKS_PER_USER,
    TESTS_PER_MINUTE,
    open_secret,
    prune_deliveries,
)
from tests.factories import add_file_and_job, auth_headers, make_user
from tests.live_server import free_port
from tests.webhook_receiver import Receiver, running

PUBLIC = "http://93.184.215.14/hooks/sanitas"  # an address literal: no DNS needed
EVENTS = ["file.completed", "file.failed"]


def _create(client, headers, **body):
    answer = client.post("/api/webhooks", headers=headers,
                         json={"url": PUBLIC, "events": EVENTS, **body})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


@pytest.fixture
def pro(settings, db_session):
    user = make_user(db_session, role="USER")
    return user, auth_headers(settings, db_session, user)


@pytest.fixture
def factory(settings):
    engine = make_engine(str(settings.database_url))
    yield make_sessionmaker(engine)
    engine.dispose()


def test_create_list_change_delete_and_audit(api, settings, db_session, pro):
    user, headers = pro
    created = _create(api, headers, events=["file.failed", "file.completed", "file.failed"])
    secret, hook = created["secret"], created["webhook"]
    assert secret.startswith("whsec_") and len(secret) > 40
    assert set(hook) >= {"id", "url", "events", "enabled"}
    assert hook["url"] == PUBLIC and hook["enabled"] is True
    assert hook["events"] == ["file.completed", "file.failed"]  # deduplicated, in order
    listed = api.get("/api/webhooks", headers=headers)
    assert listed.status_code == 200 and [w["id"] for w in listed.json()["data"]] == [hook["id"]]
    assert secret not in listed.text
    # Sealed at rest: no column holds the secret, yet the server can read it back to sign.
    dump = str(db_session.execute(text("SELECT * FROM webhooks")).all())
    assert secret not in dump and secret[6:] not in dump
    row = db_session.get(Webhook, hook["id"])
    assert open_secret(settings, row) == secret

    changed = api.put(f"/api/webhooks/{hook['id']}", headers=headers, json={
        "url": "https://93.184.215.14:8443/other?token=abc", "events": ["file.expired"],
        "enabled": False})
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["events"] == ["file.expired"]
    assert changed.json()["data"]["enabled"] is False
    gone = api.delete(f"/api/webhooks/{hook['id']}", headers=headers)
    assert gone.status_code == 200 and gone.json()["data"] == {"id": hook["id"]}
    assert api.get("/api/webhooks", headers=headers).json()["data"] == []
    assert api.delete(f"/api/webhooks/{hook['id']}", headers=headers).status_code == 404

    rows = db_session.scalars(select(AuditEntry).where(AuditEntry.target_id == hook["id"])
                              .order_by(AuditEntry.id)).all()
    assert [(r.action, r.actor_id, r.target_type) for r in rows] == [
        ("webhook.created", user.id, "webhook"), ("webhook.updated", user.id, "webhook"),
        ("webhook.deleted", user.id, "webhook")]
    assert rows[0].detail == {"url": PUBLIC, "events": ["file.completed", "file.failed"],
                              "enabled": True}
    # The query (it may carry a token) is left out; what changed is named.
    assert rows[1].detail["url"] == "https://93.184.215.14:8443/other"
    assert rows[1].detail["changed"] == ["enabled", "events", "url"]
    assert secret not in str([r.detail for r in rows]) and "abc" not in str(rows[1].detail)


@pytest.mark.parametrize(("body", "code"), [
    ({"url": ""}, "validation_error"),
    ({"url": "ftp://93.184.215.14/x"}, "invalid_webhook_url"),
    ({"url": "93.184.215.14/x"}, "invalid_webhook_url"),
    ({"url": "http://user:pw@93.184.215.14/x"}, "invalid_webhook_url"),
    ({"url": "http://93.184.215.14/a b"}, "invalid_webhook_url"),
    ({"url": "http://93.184.215.14/" + "a" * 2100}, "validation_error"),
    ({"events": []}, "validation_error"),
    ({"events": ["file.deleted"]}, "validation_error"),
    ({"events": ["webhook.test"]}, "validation_error"),
    ({"secret": "mine"}, "validation_error"),
    ({"url": "http://no-such-host.invalid/x"}, "webhook_url_unresolvable"),
])
def test_validation(api, pro, body, code):
    answer = api.post("/api/webhooks", headers=pro[1],
                      json={"url": PUBLIC, "events": EVENTS, **body})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == code
    assert api.get("/api/webhooks", headers=pro[1]).json()["data"] == []


REFUSED = ["http://127.0.0.1:8000/hook", "http://localhost/hook", "http://10.0.0.5/hook",
           "http://192.168.1.1/", "http://172.16.0.1/", "http://169.254.169.254/latest/meta-data",
           "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:a9fe:a9fe]/",
           "http://[fd00:ec2::254]/", "http://[fe80::1]/", "http://0.0.0.0/",
           "http://100.64.0.1/", "http://224.0.0.1/", "http://2130706433/",
           "http://[64:ff9b::a00:1]/"]


@pytest.mark.parametrize("url", REFUSED)
def test_private_addresses_are_refused(api, pro, url):
    answer = api.post("/api/webhooks", headers=pro[1], json={"url": url, "events": EVENTS})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "webhook_url_not_allowed"
    assert "public" in answer.json()["message"]


def test_change_to_a_private_address_is_refused(api, pro):
    hook = _create(api, pro[1])["webhook"]
    answer = api.put(f"/api/webhooks/{hook['id']}", headers=pro[1],
                     json={"url": "http://127.0.0.1/", "events": EVENTS})
    assert answer.status_code == 422 and answer.json()["error"] == "webhook_url_not_allowed"
    assert api.get("/api/webhooks", headers=pro[1]).json()["data"][0]["url"] == PUBLIC


# Cloud metadata services, and the link-local ranges most of them live in: refused even with
# SANITAS_WEBHOOK_ALLOW_PRIVATE, in every spelling.
METADATA = [
    "http://169.254.169.254/latest/meta-data",  # AWS, GCP, Azure, OpenStack, Oracle, DO, IBM
    "http://169.254.170.2/v2/credentials",  # AWS ECS task metadata and credentials
    "http://169.254.170.23/v4/",  # AWS ECS task metadata (newer agents)
    "http://169.254.0.23/",  # Tencent Cloud
    "http://[fd00:ec2::254]/latest/meta-data",  # AWS IMDS over IPv6
    "http://[fd00:ec2::23]/",  # AWS ECS task metadata over IPv6
    "http://[fd20:ce::254]/",  # Google Cloud over IPv6
    "http://100.100.100.200/latest/meta-data",  # Alibaba Cloud
    "http://192.0.0.192/",  # Oracle Cloud (older)
    "http://168.63.129.16/machine",  # Azure WireServer
    "http://[fe80::1]/", "http://[fe80::a9fe:a9fe%25eth0]/", "http://[fd00:ec2::254%25eth0]/",
    "http://[::ffff:169.254.170.2]/", "http://[::ffff:100.100.100.200]/",
    "http://[::169.254.169.254]/",  # IPv4-compatible
    "http://[::ffff:0:169.254.169.254]/",  # IPv4-translated (SIIT)
    "http://[64:ff9b::169.254.169.254]/", "http://[64:ff9b:1::a9fe:a9fe]/",  # NAT64
    "http://[2002:a9fe:a9fe::1]/",  # 6to4
    "http://[2001::5601:5601]/",  # Teredo, client 169.254.169.254
    "http://2852039166/", "http://0xa9fea9fe/", "http://169.254.169.254./",
]


@pytest.mark.parametrize("url", METADATA)
@pytest.mark.parametrize("allow_private", [False, True])
def test_the_address_check_refuses_metadata_addresses(url, allow_private):
    with pytest.raises(ssrf.UnsafeUrl) as refused:
        ssrf.check_url(url, allow_private, 5)
    assert refused.value.code == "webhook_url_not_allowed"
    assert "metadata" in refused.value.message or "link-local" in refused.value.message


def test_allow_private_lets_loopback_through_but_never_metadata(api, settings, pro):
    settings.webhook_allow_private = True
    assert _create(api, pro[1], url="http://127.0.0.1:9/hook")["webhook"]["url"] \
        == "http://127.0.0.1:9/hook"
    assert _create(api, pro[1], url="http://10.0.0.5/hook")["webhook"]["url"] \
        == "http://10.0.0.5/hook"
    hook = api.get("/api/webhooks", headers=pro[1]).json()["data"][0]
    for url in METADATA:
        answer = api.post("/api/webhooks", headers=pro[1], json={"url": url, "events": EVENTS})
        assert answer.status_code == 422, (url, answer.text)
        assert answer.json()["error"] == "webhook_url_not_allowed", url
        changed = api.put(f"/api/webhooks/{hook['id']}", headers=pro[1],
                          json={"url": url, "events": EVENTS})
        assert changed.json()["error"] == "webhook_url_not_allowed", url
    assert len(api.get("/api/webhooks", headers=pro[1]).json()["data"]) == 2


def test_a_stored_metadata_endpoint_is_never_called(api, settings, db_session, factory, pro):
    """An endpoint whose URL is a metadata address by the time it is sent to (stored before
    this rule, or a name that now resolves there): the attempt fails without a request."""
    settings.webhook_allow_private = True
    hook = _create(api, pro[1], url="http://127.0.0.1:9/hook")["webhook"]
    api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
    for url in ("http://169.254.170.2/v2/credentials", "http://[::ffff:100.100.100.200]/"):
        db_session.execute(update(Webhook).where(Webhook.id == hook["id"]).values(url=url))
        db_session.execute(update(WebhookDelivery).values(next_attempt_at=utcnow()))
        db_session.commit()
        assert _one_attempt(settings, factory) == "pending"
        log = api.get(f"/api/webhooks/{hook['id']}/deliveries",
                      headers=pro[1]).json()["data"]
        assert log[0]["lastStatusCode"] is None, url
        assert "metadata" in log[0]["lastError"], (url, log[0]["lastError"])


@pytest.mark.parametrize("role", ["USER", "ENTERPRISE", "ADMIN"])
def test_paid_plans_may_use_webhooks(api, settings, db_session, role):
    headers = auth_headers(settings, db_session, make_user(db_session, role=role))
    hook = _create(api, headers)["webhook"]
    assert api.get(f"/api/webhooks/{hook['id']}/deliveries",
                   headers=headers).status_code == 200


def test_free_plan_and_anonymous_are_refused(api, settings, db_session, pro):
    guest = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    hook = _create(api, pro[1])["webhook"]
    calls = [("POST", "/api/webhooks"), ("GET", "/api/webhooks"),
             ("PUT", f"/api/webhooks/{hook['id']}"), ("DELETE", f"/api/webhooks/{hook['id']}"),
             ("GET", f"/api/webhooks/{hook['id']}/deliveries"),
             ("POST", f"/api/webhooks/{hook['id']}/test")]
    body = {"url": PUBLIC, "events": EVENTS}
    for method, path in calls:
        answer = api.request(method, path, headers=guest, json=body)
        assert answer.status_code == 403, (method, path, answer.text)
        assert answer.json()["error"] == "plan_required"
        assert "Pro plan" in answer.json()["message"]
        assert api.request(method, path, json=body).status_code == 401


def test_another_accounts_webhook_is_not_found(api, settings, db_session, pro):
    hook = _create(api, pro[1])["webhook"]
    other = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    body = {"url": PUBLIC, "events": EVENTS}
    for method, path in [("PUT", f"/api/webhooks/{hook['id']}"),
                         ("DELETE", f"/api/webhooks/{hook['id']}"),
                         ("GET", f"/api/webhooks/{hook['id']}/deliveries"),
                         ("POST", f"/api/webhooks/{hook['id']}/test")]:
        answer = api.request(method, path, headers=other, json=body)
        assert answer.status_code == 404 and answer.json()["error"] == "not_found", path
    assert api.get("/api/webhooks", headers=other).json()["data"] == []
    assert len(api.get("/api/webhooks", headers=pro[1]).json()["data"]) == 1


def test_api_keys_are_not_accepted(api, pro):
    key = api.post("/api/keys", headers=pro[1], json={"name": "ci"}).json()["data"]["secret"]
    for method, path in [("GET", "/api/webhooks"), ("POST", "/api/webhooks")]:
        answer = api.request(method, path, headers={"X-API-Key": key},
                             json={"url": PUBLIC, "events": EVENTS})
        assert answer.status_code == 401 and answer.json()["error"] == "api_key_not_accepted"


def test_at_most_so_many_per_account(api, pro):
    for _ in range(MAX_WEBHOOKS_PER_USER):
        _create(api, pro[1])
    answer = api.post("/api/webhooks", headers=pro[1], json={"url": PUBLIC, "events": EVENTS})
    assert answer.status_code == 409 and answer.json()["error"] == "too_many_webhooks"


def test_test_event_is_queued(api, pro, db_session):
    hook = _create(api, pro[1], enabled=False)["webhook"]  # a disabled one may be tested
    answer = api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
    assert answer.status_code == 202, answer.text
    queued = answer.json()["data"]
    assert queued["state"] == "pending" and queued["attempts"] == 0
    assert queued["eventType"] == "webhook.test" and queued["eventId"].startswith("msg_")
    assert queued["payload"]["type"] == "webhook.test"
    assert queued["payload"]["data"]["webhook"]["id"] == hook["id"]
    log = api.get(f"/api/webhooks/{hook['id']}/deliveries", headers=pro[1]).json()["data"]
    assert [d["id"] for d in log] == [queued["id"]]
    assert api.get(f"/api/webhooks/{hook['id']}/deliveries?limit=0",
                   headers=pro[1]).status_code == 422
    # Deleting the webhook deletes its deliveries.
    api.delete(f"/api/webhooks/{hook['id']}", headers=pro[1])
    assert db_session.scalar(select(WebhookDelivery.id)) is None


def test_the_list_shows_each_endpoints_newest_delivery(api, pro, db_session):
    quiet = _create(api, pro[1])["webhook"]
    busy = _create(api, pro[1])["webhook"]
    assert quiet["lastDelivery"] is None
    first = api.post(f"/api/webhooks/{busy['id']}/test", headers=pro[1]).json()["data"]
    db_session.execute(update(WebhookDelivery).where(WebhookDelivery.id == first["id"])
                       .values(created_at=utcnow() - timedelta(minutes=5), state="failed",
                               attempts=11, last_status_code=500, finished_at=utcnow()))
    db_session.commit()
    listed = {w["id"]: w for w in api.get("/api/webhooks", headers=pro[1]).json()["data"]}
    assert listed[quiet["id"]]["lastDelivery"] is None
    last = listed[busy["id"]]["lastDelivery"]
    assert last["state"] == "failed" and last["lastStatusCode"] == 500
    assert last["attempts"] == 11 and last["eventType"] == "webhook.test"
    second = api.post(f"/api/webhooks/{busy['id']}/test", headers=pro[1]).json()["data"]
    listed = {w["id"]: w for w in api.get("/api/webhooks", headers=pro[1]).json()["data"]}
    last = listed[busy["id"]]["lastDelivery"]
    assert last["state"] == "pending" and last["createdAt"] == second["createdAt"]
    changed = api.put(f"/api/webhooks/{busy['id']}", headers=pro[1],
                      json={"url": PUBLIC, "events": EVENTS, "enabled": False}).json()["data"]
    assert changed["lastDelivery"]["createdAt"] == second["createdAt"]


def test_finished_and_expired_files_queue_events(api, settings, db_session, factory, pro):
    user, headers = pro
    completed_hook = _create(api, headers, events=["file.completed"])["webhook"]
    expired_hook = _create(api, headers, events=["file.expired", "file.failed"])["webhook"]
    _create(api, headers, events=["file.completed"], enabled=False)
    file, _ = add_file_and_job(db_session, settings, user, status="COMPLETED")
    other_user = make_user(db_session, role="USER")
    others, _ = add_file_and_job(db_session, settings, other_user, status="COMPLETED")

    assert send_file_events(factory, WebhookEvent.FILE_COMPLETED, [file.id, others.id]) == 1
    delivery = db_session.scalar(select(WebhookDelivery))
    assert delivery.webhook_id == completed_hook["id"]
    payload = delivery.payload
    assert payload["type"] == "file.completed" and payload["timestamp"].endswith("Z")
    status = api.get(f"/api/process/status/{file.id}", headers=headers).json()["data"]
    assert payload["data"] == {"file": status["file"]}

    # The expiry sweep queues file.expired for the owner's subscribed endpoint.
    db_session.execute(update(File).where(File.id == file.id)
                       .values(expires_at=utcnow() - timedelta(seconds=1)))
    db_session.commit()
    assert sweeps.expire_files(factory, make_storage(settings)) == 1
    expired = db_session.scalars(select(WebhookDelivery).where(
        WebhookDelivery.event_type == "file.expired")).all()
    assert [d.webhook_id for d in expired] == [expired_hook["id"]]
    assert expired[0].payload["data"]["file"]["id"] == file.id
    assert expired[0].payload["data"]["file"]["isExpired"] is True


class _Crash(BaseException):
    """Stands for the process dying: nothing after the raise runs."""


def _expire_now(db_session, file):
    db_session.execute(update(File).where(File.id == file.id)
                       .values(expires_at=utcnow() - timedelta(seconds=1)))
    db_session.commit()


def test_an_outcome_and_its_event_are_committed_together(api, settings, db_session, factory,
                                                         pro):
    """The process dies the moment the expiry's transaction is committed: the file is expired
    and its file.expired delivery is already stored, because both are one transaction."""
    user, headers = pro
    hook = _create(api, headers, events=["file.expired"])["webhook"]
    file, _ = add_file_and_job(db_session, settings, user, status="COMPLETED")
    _expire_now(db_session, file)

    def die(session):
        if not session.in_nested_transaction():  # the savepoint's release fires it too
            raise _Crash

    event.listen(Session, "after_commit", die)
    try:
        with pytest.raises(_Crash):
            sweeps.expire_files(factory, make_storage(settings))
    finally:
        event.remove(Session, "after_commit", die)
    db_session.expire_all()
    assert db_session.get(File, file.id).is_expired
    (delivery,) = db_session.scalars(select(WebhookDelivery)).all()
    assert delivery.webhook_id == hook["id"] and delivery.event_type == "file.expired"


def test_a_failing_event_never_costs_the_outcome(api, settings, db_session, factory, pro,
                                                 monkeypatch, caplog):
    """Building the payload fails: the expiry is still committed (the event's rows are undone
    alone, by a savepoint) and the failure is logged."""
    user, headers = pro
    _create(api, headers, events=["file.expired"])
    file, _ = add_file_and_job(db_session, settings, user, status="COMPLETED")
    _expire_now(db_session, file)

    def broken(file):
        raise RuntimeError("payload")

    monkeypatch.setattr(outcome, "file_payload", broken)
    assert sweeps.expire_files(factory, make_storage(settings)) == 1
    db_session.expire_all()
    assert db_session.get(File, file.id).is_expired
    assert db_session.scalars(select(WebhookDelivery)).all() == []
    assert "could not queue webhook event file.expired" in caplog.text


def _one_attempt(settings, factory):
    claimed = sender.claim_due(factory, settings, 10)
    assert len(claimed) == 1
    # A second sender finds nothing to claim while the first holds it.
    assert sender.claim_due(factory, settings, 10) == []
    return sender.attempt(factory, settings, claimed[0].delivery_id, claimed[0].token)


def test_an_attempt_is_signed_and_backs_off(api, settings, db_session, factory, pro):
    settings.webhook_allow_private = True
    before = REGISTRY.get_sample_value("sanitas_webhook_deliveries_total",
                                       {"result": "retrying"}) or 0
    with running(Receiver(statuses=[503])) as receiver:
        created = _create(api, pro[1], url=receiver.url)
        receiver.secret = created["secret"]
        hook = created["webhook"]
        api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
        assert _one_attempt(settings, factory) == "pending"
        [got] = receiver.received
        assert got.verified and got.path == "/hooks/sanitas"
        assert got.payload["type"] == "webhook.test"
        assert got.headers["Content-Type"] == "application/json"
        log = api.get(f"/api/webhooks/{hook['id']}/deliveries", headers=pro[1]).json()["data"]
        assert log[0]["attempts"] == 1 and log[0]["lastStatusCode"] == 503
        assert log[0]["attemptLog"][0]["statusCode"] == 503
        assert got.headers["webhook-id"] == log[0]["eventId"]
        # The next attempt waits the first back-off step (30 s by default).
        db_session.expire_all()
        row = db_session.scalar(select(WebhookDelivery))
        wait = (row.next_attempt_at - utcnow()).total_seconds()
        assert 25 < wait <= 34
        assert sender.claim_due(factory, settings, 10) == []
    after = REGISTRY.get_sample_value("sanitas_webhook_deliveries_total",
                                      {"result": "retrying"})
    assert after == before + 1


def test_redirects_are_not_followed(api, settings, factory, pro):
    settings.webhook_allow_private = True
    with running(Receiver()) as target, \
            running(Receiver(statuses=[302], location=target.url)) as receiver:
        hook = _create(api, pro[1], url=receiver.url)["webhook"]
        api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
        assert _one_attempt(settings, factory) == "pending"
        assert len(receiver.received) == 1 and target.received == []
    log = api.get(f"/api/webhooks/{hook['id']}/deliveries", headers=pro[1]).json()["data"]
    assert log[0]["lastStatusCode"] == 302 and "redirect" in log[0]["lastError"]


def test_the_guard_applies_again_when_sending(api, settings, factory, pro):
    """An endpoint accepted while private addresses were allowed is not called once they are
    not: the address is checked again at each attempt."""
    settings.webhook_allow_private = True
    with running(Receiver()) as receiver:
        hook = _create(api, pro[1], url=receiver.url)["webhook"]
        api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
        settings.webhook_allow_private = False
        assert _one_attempt(settings, factory) == "pending"
        assert receiver.received == []
    log = api.get(f"/api/webhooks/{hook['id']}/deliveries", headers=pro[1]).json()["data"]
    assert log[0]["lastStatusCode"] is None and "loopback" in log[0]["lastError"]


def test_gives_up_after_the_last_attempt(api, settings, db_session, factory, pro):
    settings.webhook_allow_private = True
    # Nothing listens on the port: the attempt cannot connect.
    hook = _create(api, pro[1], url=f"http://127.0.0.1:{free_port()}/x")["webhook"]
    api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
    db_session.execute(update(WebhookDelivery).values(attempts=sender.MAX_ATTEMPTS - 1))
    db_session.commit()
    assert _one_attempt(settings, factory) == "failed"
    log = api.get(f"/api/webhooks/{hook['id']}/deliveries", headers=pro[1]).json()["data"]
    assert log[0]["state"] == "failed" and log[0]["nextAttemptAt"] is None
    assert log[0]["finishedAt"] is not None and log[0]["attempts"] == sender.MAX_ATTEMPTS
    assert "connect" in log[0]["lastError"]


def test_retry_schedule_is_about_a_day(settings):
    total = sum(sender.retry_delay(settings, n) or 0 for n in range(1, sender.MAX_ATTEMPTS))
    assert 22 * 3600 < total < 28 * 3600
    assert sender.retry_delay(settings, sender.MAX_ATTEMPTS) is None


def test_test_events_are_rate_limited(api, pro):
    hook = _create(api, pro[1])["webhook"]
    answers = [api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1]).status_code
               for _ in range(TESTS_PER_MINUTE + 1)]
    assert answers == [202] * TESTS_PER_MINUTE + [429]
    log = api.get(f"/api/webhooks/{hook['id']}/deliveries", headers=pro[1]).json()["data"]
    assert len(log) == TESTS_PER_MINUTE


def test_no_events_for_a_downgraded_or_deactivated_account(api, settings, db_session, factory,
                                                           pro):
    user, headers = pro
    _create(api, headers)
    file, _ = add_file_and_job(db_session, settings, user, status="COMPLETED")
    for change in ({"role": "GUEST"}, {"role": "USER", "is_active": False}):
        db_session.execute(update(User).where(User.id == user.id).values(**change))
        db_session.commit()
        assert send_file_events(factory, WebhookEvent.FILE_COMPLETED, [file.id]) == 0
    db_session.execute(update(User).where(User.id == user.id).values(is_active=True))
    db_session.commit()
    assert send_file_events(factory, WebhookEvent.FILE_COMPLETED, [file.id]) == 1


def test_old_finished_deliveries_are_pruned(api, db_session, factory, pro):
    hook = _create(api, pro[1])["webhook"]
    for _ in range(3):
        api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
    rows = db_session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id)).all()
    long_ago = utcnow() - timedelta(days=KEEP_FINISHED_DAYS + 1)
    rows[0].state, rows[0].finished_at = "succeeded", long_ago
    rows[1].state, rows[1].finished_at = "failed", utcnow()  # recent: kept
    db_session.commit()  # rows[2] is pending: kept
    assert prune_deliveries(factory) == 1
    left = set(db_session.scalars(select(WebhookDelivery.id)))
    assert left == {rows[1].id, rows[2].id}


def _self_signed(tmp_path):
    """A certificate for `localhost` that no CA vouches for, and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_https_sends_the_name_and_verifies_the_certificate(settings, tmp_path):
    """The request goes to the checked address, but TLS still names the URL's host (SNI) and
    the certificate must be valid for it: a self-signed one fails the attempt."""
    import socket
    import ssl
    import threading

    cert_path, key_path = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    names: list[str | None] = []
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept():
        conn, _ = listener.accept()
        try:
            with context.wrap_socket(conn, server_side=True):
                pass
        except (ssl.SSLError, OSError):
            pass  # the client gives up on the certificate

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    settings.webhook_allow_private = True
    try:
        result = sender.post(settings, f"https://localhost:{port}/hook", "{}", {})
    finally:
        thread.join(timeout=10)
        listener.close()
    assert names == ["localhost"]
    assert result.status_code is None and "certificate" in (result.error or "")


def _ca_and_leaf(tmp_path):
    """An organisation's own CA (PEM) and a `localhost` certificate it signed, with its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = utcnow()
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Example Corp Internal CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                       crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False,
                                       decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def test_https_to_an_endpoint_of_a_ca_the_operator_trusts(settings, tmp_path):
    """SANITAS_WEBHOOK_CA_BUNDLE adds an organisation's CA: an endpoint whose certificate it
    signed gets the POST (and answers 204); without the setting the same endpoint fails on
    its certificate, and an unreadable bundle is named in the attempt's error."""
    import socket
    import ssl
    import threading

    ca_path, cert_path, key_path = _ca_and_leaf(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    port = listener.getsockname()[1]
    received: list[bytes] = []

    def serve(connections: int):
        for _ in range(connections):
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += tls.recv(65536)
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                      if line.lower().startswith(b"content-length")))
                    while len(body) < length:
                        body += tls.recv(65536)
                    received.append(body)
                    tls.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            except (ssl.SSLError, OSError):
                pass  # the client gave up on the certificate

    thread = threading.Thread(target=serve, args=(2,), daemon=True)
    thread.start()
    settings.webhook_allow_private = True
    url = f"https://localhost:{port}/hook"
    try:
        settings.webhook_ca_bundle = ca_path
        trusted = sender.post(settings, url, '{"type":"webhook.test"}', {})
        settings.webhook_ca_bundle = None
        untrusted = sender.post(settings, url, "{}", {})
    finally:
        thread.join(timeout=10)
        listener.close()
    assert trusted.status_code == 204 and trusted.error is None
    assert received == [b'{"type":"webhook.test"}']
    assert untrusted.status_code is None and "certificate" in (untrusted.error or "")

    settings.webhook_ca_bundle = tmp_path / "missing.pem"
    broken = sender.post(settings, url, "{}", {})
    assert broken.status_code is None
    assert "SANITAS_WEBHOOK_CA_BUNDLE could not be read" in (broken.error or "")


def test_a_lapsed_claim_is_taken_over_and_the_old_sender_cannot_write(api, settings,
                                                                       db_session, factory,
                                                                       pro):
    hook = _create(api, pro[1])["webhook"]
    api.post(f"/api/webhooks/{hook['id']}/test", headers=pro[1])
    [(delivery_id, first, _)] = sender.claim_due(factory, settings, 5)
    # The first sender dies: its lease runs out and another sender claims the delivery.
    db_session.execute(update(WebhookDelivery).values(claimed_until=utcnow()
                                                      - timedelta(seconds=1)))
    db_session.commit()
    [(same_id, second, _)] = sender.claim_due(factory, settings, 5)
    assert same_id == delivery_id and second != first
    ok = sender.AttemptResult(200, None, 5)
    assert sender.record_attempt(factory, settings, delivery_id, first, ok) is None
    assert sender.record_attempt(factory, settings, delivery_id, second, ok) == "succeeded"
    db_session.expire_all()
    row = db_session.get(WebhookDelivery, delivery_id)
    assert row.attempts == 1 and row.claim_token is None and len(row.attempt_log) == 1
