"""Auditing mail (SANITAS_MAIL_AUDIT=1), as ICAP's transactions: each message becomes a row in
the file history of a service account, created already expired (no bytes there: the original
is held under held_messages), with the report, the policy and the hash of the original."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sanitas.auth.service import normalise_email
from sanitas.db import utcnow
from sanitas.engine import verdict
from sanitas.engine.report import Result
from sanitas.models import File, FileStatus, Role, User
from sanitas.policies.applied import AppliedPolicy

log = logging.getLogger(__name__)


def service_account(factory: sessionmaker[Session], email: str) -> str:
    """The id of the mail service account (created if missing: ENTERPRISE, verified, without
    a password, so it cannot sign in)."""
    email = normalise_email(email)
    with factory() as session:
        user = session.scalar(select(User).where(func.lower(User.email) == email))
        if user is None:
            user = User(email=email, role=Role.ENTERPRISE, is_email_verified=True,
                        password_hash=None, first_name="Mail", last_name="service")
            session.add(user)
            session.commit()
            log.info("mail: created the service account %s", email)
        return user.id


@dataclass
class Record:
    sender: str
    recipients: list[str]
    digest: str
    size: int
    applied: AppliedPolicy
    mode: str
    outcome: str  # sanitized | blocked
    reason: str | None
    result: Result
    duration: float
    sha256: str | None = None


def record(factory: sessionmaker[Session], user_id: str, rec: Record) -> None:
    """One history row for a message (its failure is logged, never the message's)."""
    now = utcnow()
    report = rec.result.file_report()
    report["mail"] = {"from": rec.sender[:320], "to": rec.recipients[:50],
                      "digest": rec.digest, "outcome": rec.outcome,
                      "reason": (rec.reason or "")[:1000]}
    failed = rec.outcome == "blocked"
    if failed:
        report.update(verdict.refused(rec.reason).to_json())
    code = rec.result.code.value if rec.result.code else "refused"
    file = File(user_id=user_id, original_name="message.eml", original_size=rec.size,
                detected_type=rec.result.detected_type, mode=rec.mode, original_key=None,
                sanitized_key=None, sanitized_name=None if failed else "message.eml",
                sanitized_size=None,
                status=FileStatus.FAILED if failed else FileStatus.COMPLETED,
                error_message=(rec.reason or "")[:1000] if failed else None,
                error_code=code[:32] if failed else None,
                report=report, created_at=now, processing_started_at=now,
                processing_completed_at=now, processing_duration=round(rec.duration, 3),
                expires_at=now, is_expired=True, download_count=0,
                policy_id=rec.applied.id, policy_version=rec.applied.version,
                policy_name=rec.applied.name, policy_body=rec.applied.body,
                sha256_original=rec.sha256, verdict=report["verdict"])
    try:
        with factory() as session:
            session.add(file)
            session.commit()
    except Exception:
        log.exception("mail: could not record the audit row of a message")


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
