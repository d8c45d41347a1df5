"""The audit log: one row per security-relevant action, written in the transaction of the
change it records and never changed afterwards (see sanitas/audit/)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, BigInteger, Integer, String, event
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow


class AuditAction(StrEnum):
    """What an audit row records (`area.what`)."""

    SIGN_IN = "auth.sign_in"
    SIGN_IN_FAILED = "auth.sign_in_failed"
    SIGN_OUT = "auth.sign_out"
    PASSWORD_CHANGED = "auth.password_changed"  # noqa: S105 - an action name, not a password
    PASSWORD_RESET = "auth.password_reset"  # noqa: S105 - an action name, not a password
    ROLE_CHANGED = "user.role_changed"
    USER_ACTIVATED = "user.activated"
    USER_DEACTIVATED = "user.deactivated"
    QUOTA_RESET = "user.quota_reset"
    QUEUE_PAUSED = "queue.paused"
    QUEUE_RESUMED = "queue.resumed"
    QUEUE_CLEARED = "queue.cleared"
    FILE_DELETED = "file.deleted"
    POLICY_CREATED = "policy.created"
    POLICY_UPDATED = "policy.updated"
    POLICY_DELETED = "policy.deleted"
    POLICY_DEFAULT_CHANGED = "policy.default_changed"
    REPORT_REQUESTED = "report.requested"
    AUDIT_EXPORTED = "audit.exported"
    API_KEY_CREATED = "api_key.created"
    API_KEY_REVOKED = "api_key.revoked"
    WEBHOOK_CREATED = "webhook.created"
    WEBHOOK_UPDATED = "webhook.updated"
    WEBHOOK_DELETED = "webhook.deleted"
    MAIL_RELEASED = "mail.released"


class AuditEntry(Base):
    """One recorded action. `actor_id` is a plain column, not a foreign key: the row keeps
    naming the account after it is gone, and nothing cascades into the log."""

    __tablename__ = "audit_log"

    # A growing integer: the order rows were written in (ties in `created_at` included).
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    actor_id: Mapped[str | None] = mapped_column(String(36), index=True)
    actor_email: Mapped[str | None] = mapped_column(String(320))  # as it was at the time
    action: Mapped[str] = mapped_column(String(40), index=True)
    target_type: Mapped[str | None] = mapped_column(String(32))
    target_id: Mapped[str | None] = mapped_column(String(64), index=True)
    ip: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class AuditLogIsAppendOnly(RuntimeError):
    """Raised when application code tries to change or delete an audit row."""


@event.listens_for(AuditEntry, "before_update")
def _refuse_update(*_: object) -> None:
    raise AuditLogIsAppendOnly("audit rows are never changed")


@event.listens_for(AuditEntry, "before_delete")
def _refuse_delete(*_: object) -> None:
    raise AuditLogIsAppendOnly("audit rows are never deleted")
