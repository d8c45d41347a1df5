"""Held mail (issue 24): admins list the messages the mail filter handled and release an
original to its recipients (re-injected to the next hop, a real SMTP server here, with a
header saying it was released; audit logged); the original is kept sealed in storage and
goes when its retention ends; nobody else may call these, and API keys are refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from sanitas.db import make_engine, make_sessionmaker, utcnow
from sanitas.mailfilter import headers, held, relay, vault
from sanitas.models import AuditEntry, HeldMessage
from tests.factories import auth_headers, make_user
from tests.mail.mailkit import Sink, free_port

ORIGINAL = (b"Received: from client.example.org by mx.example.net\r\n"
            b"From: Alice <alice@example.org>\r\nTo: bob@example.net\r\n"
            b"Subject: Invoice\r\nMessage-ID: <held-1@example.org>\r\n\r\n"
            b"The macro document is attached.\r\n")


@pytest.fixture
def sink():
    with Sink() as s:
        yield s


@pytest.fixture
def factory(settings):
    engine = make_engine(str(settings.database_url))
    yield make_sessionmaker(engine)
    engine.dispose()


def hold(settings, factory, storage, *, data: bytes = ORIGINAL, status: str = "delivered",
         ) -> str:
    """A message as the filter leaves it: its row and its sealed original."""
    envelope = relay.Envelope("alice@example.org", ["bob@example.net", "carol@example.net"])
    begun = held.begin(factory, held.digest_of(envelope, data), envelope, len(data),
                       headers.read(data), "basic")
    held.keep_original(settings, storage, factory, begun.id, data)
    held.finish(factory, begun.id, status=status, verdict="partial",
                summary="1 file dropped: tool.exe", duration=0.5,
                attachments=[{"name": "tool.exe", "deliveredAs": "tool.removed.txt",
                              "verdict": "refused", "summary": "Removed: an executable"}])
    return begun.id


def test_admin_lists_and_releases_an_original(api, settings, db_session, storage, factory,
                                              sink):
    settings.mail_next_hop = f"127.0.0.1:{sink.port}"
    admin = make_user(db_session, role="ADMIN", email="root@example.com")
    held_id = hold(settings, factory, storage)

    blob = b"".join(storage.iter_chunks(vault.key_of(held_id)))
    assert blob.startswith(vault.MAGIC) and b"macro document" not in blob  # sealed at rest

    headers_ = auth_headers(settings, db_session, admin)
    listed = api.get("/api/admin/mail/held", headers=headers_)
    assert listed.status_code == 200, listed.text
    data = listed.json()["data"]
    assert data["pagination"]["total"] == 1
    row = data["messages"][0]
    assert row["id"] == held_id and row["status"] == "delivered"
    assert row["sender"] == "alice@example.org"
    assert row["recipients"] == ["bob@example.net", "carol@example.net"]
    assert row["subject"] == "Invoice" and row["messageId"] == "<held-1@example.org>"
    assert row["attachments"][0]["verdict"] == "refused" and row["originalKept"] is True
    assert row["duration"] == 0.5 and row["verdict"] == "partial"

    released = api.post(f"/api/admin/mail/held/{held_id}/release", headers=headers_)
    assert released.status_code == 200, released.text
    assert released.json()["data"]["status"] == "released"
    assert released.json()["data"]["releasedBy"] == "root@example.com"
    got = sink.handler.wait(1, 10)
    assert len(got) == 1
    assert got[0].sender == "alice@example.org"
    assert got[0].recipients == ["bob@example.net", "carol@example.net"]
    first, rest = got[0].data.split(b"\r\n", 1)
    assert first.startswith(b"X-Sanitas-Released: original released by root@example.com at ")
    assert rest == ORIGINAL  # the original, byte for byte
    db_session.expire_all()
    entry = db_session.scalars(select(AuditEntry).where(
        AuditEntry.action == "mail.released")).one()
    assert entry.actor_id == admin.id and entry.target_id == held_id
    assert entry.detail == {"sender": "alice@example.org", "recipients": 2,
                            "messageId": "<held-1@example.org>"}
    only_released = api.get("/api/admin/mail/held?status=released", headers=headers_)
    assert only_released.json()["data"]["pagination"]["total"] == 1
    assert api.get("/api/admin/mail/held?status=refused",
                   headers=headers_).json()["data"]["messages"] == []


def test_release_failures(api, settings, db_session, storage, factory):
    admin = make_user(db_session, role="ADMIN")
    headers_ = auth_headers(settings, db_session, admin)
    held_id = hold(settings, factory, storage)

    settings.mail_next_hop = f"127.0.0.1:{free_port()}"  # nobody listens there
    down = api.post(f"/api/admin/mail/held/{held_id}/release", headers=headers_)
    assert down.status_code == 502 and down.json()["error"] == "next_hop_failed"
    db_session.expire_all()
    assert db_session.get(HeldMessage, held_id).status == "delivered"
    assert db_session.scalars(select(AuditEntry).where(
        AuditEntry.action == "mail.released")).all() == []

    missing = api.post("/api/admin/mail/held/no-such-id/release", headers=headers_)
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"

    # Retention over: the sweep deletes the sealed original; the row stays, not releasable.
    held.finish(factory, held_id, expires_at=utcnow() - timedelta(seconds=1))
    assert held.sweep(factory, storage) == 1
    assert not storage.exists(vault.key_of(held_id))
    gone = api.post(f"/api/admin/mail/held/{held_id}/release", headers=headers_)
    assert gone.status_code == 409 and gone.json()["error"] == "original_gone"
    listed = api.get("/api/admin/mail/held", headers=headers_).json()["data"]["messages"]
    assert listed[0]["originalKept"] is False


def test_another_secret_key_does_not_open_an_original(settings, storage, factory):
    held_id = hold(settings, factory, storage)
    other = settings.model_copy(update={"secret_key": "another-secret-key-long-enough-987654321"})
    key = vault.key_of(held_id)
    with pytest.raises(vault.Unsealable):
        vault.load(other, storage, held_id, key)
    with pytest.raises(vault.Unsealable):  # bound to its id: a copy under another id fails
        vault.unseal(settings, "another-id", b"".join(storage.iter_chunks(key)))
    assert vault.load(settings, storage, held_id, key) == ORIGINAL


def test_only_admins_with_a_session(api, settings, db_session, storage, factory):
    held_id = hold(settings, factory, storage)
    assert api.get("/api/admin/mail/held").status_code == 401
    assert api.post(f"/api/admin/mail/held/{held_id}/release").status_code == 401
    for role in ("USER", "ENTERPRISE"):
        user = make_user(db_session, role=role)
        headers_ = auth_headers(settings, db_session, user)
        assert api.get("/api/admin/mail/held", headers=headers_).status_code == 403
        assert api.post(f"/api/admin/mail/held/{held_id}/release",
                        headers=headers_).status_code == 403
    admin = make_user(db_session, role="ADMIN")
    created = api.post("/api/keys", headers=auth_headers(settings, db_session, admin),
                       json={"name": "ci"})
    assert created.status_code == 201, created.text
    key = {"X-API-Key": created.json()["data"]["secret"]}
    refused = api.get("/api/admin/mail/held", headers=key)
    assert refused.status_code == 401 and refused.json()["error"] == "api_key_not_accepted"
    assert api.post(f"/api/admin/mail/held/{held_id}/release",
                    headers=key).status_code == 401


def test_a_retry_reuses_its_row_and_a_delivered_one_is_a_duplicate(settings, factory, storage):
    envelope = relay.Envelope("a@example.org", ["b@example.net"])
    digest = held.digest_of(envelope, ORIGINAL)
    first = held.begin(factory, digest, envelope, len(ORIGINAL), headers.read(ORIGINAL), "basic")
    held.finish(factory, first.id, status="deferred")
    again = held.begin(factory, digest, envelope, len(ORIGINAL), headers.read(ORIGINAL), "basic")
    assert again.id == first.id and not again.duplicate
    held.finish(factory, first.id, status="delivered")
    third = held.begin(factory, digest, envelope, len(ORIGINAL), headers.read(ORIGINAL), "basic")
    assert third.duplicate and third.id == first.id
    other = relay.Envelope("a@example.org", ["someone-else@example.net"])
    fresh = held.begin(factory, held.digest_of(other, ORIGINAL), other, len(ORIGINAL),
                       headers.read(ORIGINAL), "basic")
    assert fresh.id != first.id and not fresh.duplicate
    with factory() as session:
        assert session.get(HeldMessage, first.id).attempts == 2  # the duplicate is no attempt
