"""/api/reports: request a compliance report, list reports, download one."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from sanitas.files.routes import content_disposition
from sanitas.plans import Capability
from sanitas.reports import service
from sanitas.reports.schemas import ReportCreated, ReportIn, ReportList, ReportRef
from sanitas.web.deps import CurrentUser, Requires, SessionDep, SettingsDep, StorageDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/reports", tags=["reports"],
                   dependencies=[Requires(Capability.REPORTS)],
                   responses={401: {"model": ErrorEnvelope}})


@router.post("", response_model=Envelope[ReportCreated], status_code=202, responses={
    403: {"model": ErrorEnvelope, "description": "The caller's plan has no compliance reports "
                                                 "(`plan_required`), a scope other than `own` "
                                                 "asked by someone who is not an admin "
                                                 "(`forbidden`), or the "
                                                 "account's storage quota is used up "
                                                 "(`storage_quota_exceeded`)"},
    404: {"model": ErrorEnvelope, "description": "The scope names no user (`not_found`)"},
    429: {"model": ErrorEnvelope, "description": (
        "Too many calls under way at once (`too_many_concurrent`), or the account already "
        "has its most reports waiting or being generated "
        "(`too_many_pending_reports`, SANITAS_REPORT_MAX_PENDING) or kept "
        "(`too_many_stored_reports`, SANITAS_REPORT_MAX_STORED); `Retry-After` says when to "
        "try again"),
        "headers": {"Retry-After": {"description": "Seconds to wait before asking again",
                                    "schema": {"type": "integer"}}}}})
def create_report(body: ReportIn, request: Request, user: CurrentUser, session: SessionDep,
                  settings: SettingsDep):
    report = service.create_report(session, settings, user, body, ip=client_ip(request))
    worker = getattr(request.app.state, "report_worker", None)
    if worker is not None:
        worker.kick()
    return ok(ReportCreated(report=ReportRef(id=report.id, status=report.status)),
              "Report requested; it is being generated.")


@router.get("", response_model=Envelope[ReportList])
def list_reports(user: CurrentUser, session: SessionDep,
                 page: int = Query(1, ge=1, le=100000), limit: int = Query(20, ge=1, le=100)):
    return ok(service.list_reports(session, user, page=page, limit=limit), "Reports")


@router.get("/{report_id}/download", response_class=StreamingResponse, responses={
    200: {"description": "The report (CSV or PDF), as an attachment",
          "content": {"text/csv": {"schema": {"type": "string"}},
                      "application/pdf": {"schema": {"type": "string", "format": "binary"}}}},
    404: {"model": ErrorEnvelope, "description": "No such report, or not yours"},
    409: {"model": ErrorEnvelope, "description": "Not generated yet (`report_not_ready`) or "
                                                 "generation failed (`report_failed`)"}})
def download_report(report_id: str, user: CurrentUser, session: SessionDep,
                    storage: StorageDep):
    blob = service.open_download(session, storage, user, report_id)
    return StreamingResponse(blob.chunks, media_type=blob.media_type, headers={
        "Content-Disposition": content_disposition(blob.name),
        "Content-Length": str(blob.size),
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"})
