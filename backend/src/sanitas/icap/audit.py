"""Auditing ICAP transactions (SANITAS_ICAP_AUDIT=1): each one becomes a row in the file
history of a service account. No bytes are kept: the row is created already expired (a
download answers 410), with the report, the policy and the hash of the original."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sanitas.auth.service import normalise_email
from sanitas.db import utcnow
from sanitas.engine import verdict
from sanitas.engine.report import Result
from sanitas.files.multipart import clean_filename
from sanitas.files.naming import sanitized_name_for
from sanitas.models import File, FileStatus, Role, User
from sanitas.policies.applied import AppliedPolicy

log = logging.getLogger(__name__)


def service_account(factory: sessionmaker[Session], email: str) -> str:
    """The id of the ICAP service account (created if missing: ENTERPRISE, verified, without
    a password, so it cannot sign in)."""
    email = normalise_email(email)
    with factory() as session:
        user = session.scalar(select(User).where(func.lower(User.email) == email))
        if user is None:
            user = User(email=email, role=Role.ENTERPRISE, is_email_verified=True,
                        password_hash=None, first_name="ICAP", last_name="service")
            session.add(user)
            session.commit()
            log.info("icap: created the service account %s", email)
        return user.id


@dataclass
class Transaction:
    """What an audited transaction records."""

    method: str  # REQMOD or RESPMOD
    url: str | None
    name: str
    size: int
    sha256: str | None
    applied: AppliedPolicy
    mode: str
    outcome: str  # clean | sanitized | blocked | passed
    code: str | None = None
    reason: str | None = None
    result: Result | None = None
    output_size: int | None = None
    duration: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def record(factory: sessionmaker[Session], user_id: str, tx: Transaction) -> None:
    """One history row for `tx` (its failure is logged, never the transaction's)."""
    now = utcnow()
    result = tx.result
    report: dict[str, Any] = (result.file_report() if result else
                              Result(input=tx.name, status="rejected").file_report())
    report["icap"] = {"method": tx.method, "url": (tx.url or "")[:1000], "outcome": tx.outcome,
                      "code": tx.code, "reason": (tx.reason or "")[:1000]}
    failed = tx.outcome == "blocked"
    if failed:  # refused by the engine or by a rule of the ICAP service: its reason
        report.update(verdict.refused(tx.reason).to_json())
    elif tx.outcome == "passed":  # the engine never saw it: no verdict
        report.update(verdict=None, verdictCounts=None, verdictSummary=None)
    name = clean_filename(tx.name)
    file = File(user_id=user_id, original_name=name, original_size=tx.size,
                detected_type=(result.detected_type if result else None),
                mode=tx.mode, original_key=None, sanitized_key=None,
                sanitized_name=(sanitized_name_for(name, result.output_type)
                                if tx.outcome == "sanitized" and result else None),
                sanitized_size=tx.output_size,
                status=FileStatus.FAILED if failed else FileStatus.COMPLETED,
                error_message=(tx.reason or "")[:1000] if failed else None,
                error_code=(tx.code or "")[:32] if failed else None,
                report=report, created_at=now, processing_started_at=now,
                processing_completed_at=now, processing_duration=round(tx.duration, 3),
                expires_at=now, is_expired=True, download_count=0,
                policy_id=tx.applied.id, policy_version=tx.applied.version,
                policy_name=tx.applied.name, policy_body=tx.applied.body,
                sha256_original=tx.sha256, verdict=report["verdict"])
    try:
        with factory() as session:
            session.add(file)
            session.commit()
    except Exception:
        log.exception("icap: could not record the audit row of a transaction")
