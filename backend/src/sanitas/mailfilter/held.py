"""The held_messages rows: one per message the filter handled (a retry of the same queued
message, same envelope and bytes, reuses its row), the sealed original for release, the
retention sweep, and the admin's list and release."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sanitas.audit import service as audit
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.mailfilter import headers, relay, vault
from sanitas.mailfilter.schemas import HeldAttachmentOut, HeldMessageList, HeldMessageOut
from sanitas.models import AuditAction, HeldMessage, HeldStatus, User
from sanitas.storage import BlobNotFound, Storage
from sanitas.web.errors import ApiError
from sanitas.web.schemas import Pagination

log = logging.getLogger(__name__)
RELEASED_HEADER = "X-Sanitas-Released"


def digest_of(envelope: relay.Envelope, data: bytes) -> str:
    sha = hashlib.sha256()
    sha.update(envelope.sender.encode("utf-8", "surrogateescape") + b"\0")
    for rcpt in envelope.recipients:
        sha.update(rcpt.encode("utf-8", "surrogateescape") + b"\0")
    sha.update(b"\0")
    sha.update(data)
    return sha.hexdigest()


@dataclass
class Begun:
    id: str
    duplicate: bool  # this very message was delivered before: answer 250, deliver nothing
    kept: bool  # its original is already in storage


def begin(factory: sessionmaker[Session], digest: str, envelope: relay.Envelope, size: int,
          head: headers.Head, policy_id: str) -> Begun:
    with factory() as session:
        row = session.scalar(select(HeldMessage).where(HeldMessage.digest == digest)
                             .order_by(HeldMessage.created_at.desc()).limit(1))
        if row is not None and row.status in (HeldStatus.DELIVERED, HeldStatus.RELEASED):
            return Begun(row.id, True, row.original_key is not None)
        if row is None:
            row = HeldMessage(digest=digest, sender=envelope.sender[:320],
                              recipients=[r[:320] for r in envelope.recipients[:1000]],
                              message_id=(head.message_id or None) and head.message_id[:255],
                              subject=head.subject, size=size, status=HeldStatus.RECEIVED,
                              policy_id=policy_id, attempts=1)
            session.add(row)
        else:
            row.attempts += 1
            row.status, row.updated_at = HeldStatus.RECEIVED, utcnow()
        session.commit()
        return Begun(row.id, False, row.original_key is not None)


def keep_original(settings: Settings, storage: Storage, factory: sessionmaker[Session],
                  held_id: str, data: bytes) -> None:
    """Seal and store the original for settings.mail_hold_days (none kept with 0)."""
    if settings.mail_hold_days <= 0:
        return
    key = vault.store(settings, storage, held_id, data)
    with factory() as session:
        row = session.get(HeldMessage, held_id)
        if row is not None:
            row.original_key = key
            row.expires_at = utcnow() + timedelta(days=settings.mail_hold_days)
            session.commit()


def finish(factory: sessionmaker[Session], held_id: str, **values: Any) -> None:
    with factory() as session:
        row = session.get(HeldMessage, held_id)
        if row is None:
            return
        for name, value in values.items():
            setattr(row, name, value)
        row.updated_at = utcnow()
        session.commit()


def sweep(factory: sessionmaker[Session], storage: Storage, limit: int = 500) -> int:
    """Delete the originals whose retention ended (the rows stay, without a key)."""
    now = utcnow()
    with factory() as session:
        rows = session.scalars(select(HeldMessage).where(
            HeldMessage.original_key.is_not(None), HeldMessage.expires_at <= now)
            .limit(limit)).all()
        for row in rows:
            assert row.original_key is not None
            storage.delete(row.original_key)
            row.original_key = None
        session.commit()
        return len(rows)


# -- the admin's calls ---------------------------------------------------------------------
def held_out(row: HeldMessage) -> HeldMessageOut:
    return HeldMessageOut(
        id=row.id, created_at=row.created_at, updated_at=row.updated_at,
        message_id=row.message_id, sender=row.sender, recipients=list(row.recipients or []),
        subject=row.subject, size=row.size, status=row.status, verdict=row.verdict,
        verdict_counts=row.verdict_counts, summary=row.summary,
        attachments=[HeldAttachmentOut(**a) for a in row.attachments or []],
        reason=row.reason, refused_recipients=list(row.refused_recipients or []),
        policy_id=row.policy_id, attempts=row.attempts, duration=row.duration,
        original_kept=row.original_key is not None, expires_at=row.expires_at,
        released_at=row.released_at, released_by=row.released_by)


def held_list(session: Session, *, status: str | None, page: int, limit: int,
              ) -> HeldMessageList:
    """A page of held messages, newest first (only those of `status` when given)."""
    query = select(HeldMessage)
    count = select(func.count()).select_from(HeldMessage)
    if status:
        query = query.where(HeldMessage.status == status)
        count = count.where(HeldMessage.status == status)
    total = session.scalar(count) or 0
    rows = session.scalars(query.order_by(HeldMessage.created_at.desc(), HeldMessage.id)
                           .offset(Pagination.offset(page, limit)).limit(limit)).all()
    return HeldMessageList(messages=[held_out(r) for r in rows],
                           pagination=Pagination.of(page, limit, total))


def release_held(session: Session, settings: Settings, storage: Storage, held_id: str, *,
                 admin: User, ip: str | None) -> HeldMessageOut:
    """Release the original of `held_id` (ApiError 404, 409, 502; see `release`): the row
    says who released it and when, and the audit log records it in the same commit."""
    row = session.get(HeldMessage, held_id[:36])
    if row is None:
        raise ApiError(404, "No such held message.", "not_found")
    try:
        release(settings, storage, row, admin.email)
    except ReleaseError as exc:
        raise ApiError(exc.status, exc.message, exc.code) from None
    now = utcnow()
    row.status, row.released_at, row.released_by, row.updated_at = \
        HeldStatus.RELEASED, now, admin.email, now
    audit.record(session, action=AuditAction.MAIL_RELEASED, actor=admin, ip=ip,
                 target=("held_message", row.id),
                 detail={"sender": row.sender, "recipients": len(row.recipients or []),
                         "messageId": row.message_id})
    session.commit()
    return held_out(row)


class ReleaseError(Exception):
    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def released_copy(original: bytes, admin_email: str, when: str) -> bytes:
    note = f"{RELEASED_HEADER}: original released by {admin_email} at {when}"
    return note.encode("utf-8", "replace") + b"\r\n" + original


def release(settings: Settings, storage: Storage, row: HeldMessage, admin_email: str,
            ) -> relay.Outcome:
    """Re-inject the original of `row` to its recipients (the next hop), with a header saying
    who released it and when. ReleaseError 409 when the original is no longer kept (or no
    longer opens), 502 when the next hop did not take it."""
    if row.original_key is None:
        raise ReleaseError(409, "The original of this message is no longer kept (its "
                                "retention ended, or none was kept).", "original_gone")
    try:
        original = vault.load(settings, storage, row.id, row.original_key)
    except BlobNotFound:
        raise ReleaseError(409, "The original of this message is missing from storage.",
                           "original_gone") from None
    except vault.Unsealable:
        raise ReleaseError(409, "The original of this message does not open with this "
                                "server's secret key.", "original_unreadable") from None
    when = utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    data = released_copy(original, admin_email, when)
    options = [] if data.isascii() else ["BODY=8BITMIME"]
    if not all(r.isascii() for r in [row.sender, *row.recipients]):
        options.append("SMTPUTF8")
    envelope = relay.Envelope(row.sender, list(row.recipients), options)
    outcome = relay.send(settings.mail_next_hop, envelope, data,
                         timeout=settings.mail_next_hop_timeout_seconds)
    if not outcome.accepted:
        raise ReleaseError(502, f"The original could not be re-injected: {outcome.reply}",
                           "next_hop_failed")
    return outcome
