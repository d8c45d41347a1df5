"""/api/audit: the audit log, for admins (a filtered page, or every matching row as CSV)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from sanitas.audit import service
from sanitas.audit.schemas import AuditList
from sanitas.audit.service import AuditFilters
from sanitas.models.audit import AuditAction
from sanitas.web.deps import AdminUser, SessionDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, MomentOrUtc, ok

router = APIRouter(prefix="/audit", tags=["audit"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})

EXPORT_BATCH = 1000  # rows read per database slot while the CSV is sent


def audit_filters(
    action: AuditAction | None = None,
    userId: Annotated[str | None, Query(
        max_length=64, description="Rows this account did, or that were done to it")] = None,
    from_: Annotated[MomentOrUtc | None, Query(
        alias="from", description="From this moment (inclusive; UTC when no zone)")] = None,
    to: Annotated[MomentOrUtc | None, Query(
        description="Until this moment (exclusive; UTC when no zone)")] = None,
) -> AuditFilters:
    return AuditFilters(action=action, user_id=userId or None, start=from_, end=to)


Filters = Annotated[AuditFilters, Depends(audit_filters)]


@router.get("", response_model=Envelope[AuditList])
def list_audit(_: AdminUser, session: SessionDep, filters: Filters,
               page: int = Query(1, ge=1, le=100000), limit: int = Query(50, ge=1, le=200)):
    return ok(service.list_entries(session, filters, page=page, limit=limit), "Audit log")


@router.get("/export", response_class=StreamingResponse, responses={
    200: {"description": "Every matching row, newest first, as CSV (UTF-8)",
          "content": {"text/csv": {"schema": {"type": "string"}}}}})
def export_audit(request: Request, admin: AdminUser, session: SessionDep, filters: Filters):
    service.record_export(session, admin, client_ip(request), filters)
    # Rows are read batch by batch while the answer is sent, each batch in one of the API's
    # database slots with its own session (the call's session closes when this returns).
    factory, gate = request.app.state.sessionmaker, request.app.state.db_gate

    def read(s: Session, before_id: int | None) -> list[str]:
        rows = service.export_batch(s, filters, before_id=before_id, size=EXPORT_BATCH)
        return [service.csv_row(r) for r in rows] + ([str(rows[-1].id)] if rows else [])

    def batch(before_id: int | None) -> list[str]:
        with factory() as s:
            return read(s, before_id)

    # The first batch is read before the answer starts, in the call's own session: a query
    # that fails answers an error status instead of a 200 cut short.
    first = read(session, None)

    async def body() -> AsyncIterator[str]:
        yield service.csv_header()
        lines = first
        while lines:
            before = int(lines.pop())
            yield "".join(lines)
            if len(lines) < EXPORT_BATCH:
                return
            async with gate.slot():
                lines = await run_in_threadpool(batch, before)

    return StreamingResponse(body(), media_type="text/csv; charset=utf-8", headers={
        "Content-Disposition": 'attachment; filename="sanitas-audit-log.csv"',
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"})
