"""Answer shapes of the audit log calls (camelCase)."""

from __future__ import annotations

from typing import Any

from sanitas.models.audit import AuditAction
from sanitas.web.schemas import CamelModel, Pagination, UtcTimestamp


class AuditEntryOut(CamelModel):
    id: int
    created_at: UtcTimestamp
    action: AuditAction
    actor_id: str | None
    actor_email: str | None
    target_type: str | None
    target_id: str | None
    ip: str | None
    detail: dict[str, Any] | None


class AuditList(CamelModel):
    entries: list[AuditEntryOut]
    pagination: Pagination
