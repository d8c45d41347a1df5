"""Uploads, processing status, downloads, the processing queue and a user's file history."""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import delete, func, select, update
from starlette.concurrency import run_in_threadpool

from sanitas.admission import database_paused
from sanitas.deps import AdminUser, CurrentUser, SessionDep, SettingsDep
from sanitas.engine import strip_invisible
from sanitas.errors import ApiError
from sanitas.executor import job as jobs
from sanitas.files import service
from sanitas.files.multipart import MB, receive_files
from sanitas.files.schemas import (
    FileHistory,
    FileStatusData,
    QueueCleared,
    QueuePaused,
    QueueStats,
    UploadedFile,
    UploadInfo,
)
from sanitas.models import File, Job, User
from sanitas.schemas import Envelope, ErrorEnvelope, ok
from sanitas.scratch import uploads_dir
from sanitas.storage import BlobNotFound, make_storage

log = logging.getLogger(__name__)

router = APIRouter(tags=["files"], responses={401: {"model": ErrorEnvelope},
                                              404: {"model": ErrorEnvelope}})

def _storage(request: Request):
    state = request.app.state
    if getattr(state, "storage", None) is None:
        state.storage = make_storage(state.settings)
    return state.storage

def _executor(request: Request):
    return getattr(request.app.state, "executor", None)

# -- upload ----------------------------------------------------------------------------------
@router.get("/upload/info", response_model=Envelope[UploadInfo])
def upload_info(user: CurrentUser, settings: SettingsDep):
    limits = settings.limits_for(user.role)
    return ok({
        "maxFiles": limits.max_files_per_upload,
        "maxFileSize": limits.max_file_size,
        "maxFileSizeMB": round(limits.max_file_size / MB, 2),
        "supportedFormats": service.supported_formats(),
        "modes": service.allowed_modes(limits),
        "role": user.role,
    }, "Upload configuration")

def _precheck(session, user: User, limits) -> None:
    """Refuse before reading the body when no upload can be accepted anyway."""
    service.check_monthly_quota(session, user, limits, 1)

async def _upload(request: Request, user: User, session, settings, *, field: str,
                  max_files: int) -> list[dict]:
    limits = settings.limits_for(user.role)
    await run_in_threadpool(_precheck, session, user, limits)
    # Reading the body may take minutes: no connection or database slot is held meanwhile.
    received = None
    try:
        async with database_paused(request, session):
            received = await receive_files(request, file_fields={field},
                                           max_file_size=limits.max_file_size,
                                           max_files=max_files,
                                           tmp_dir=uploads_dir(settings),
                                           min_free_bytes=settings.min_free_bytes)
    except ApiError:
        if received is not None:  # the body was read but no slot came back in time
            received.cleanup()
        raise
    try:
        mode = service.check_mode(limits, received.fields.get("mode")
                                  or request.query_params.get("mode"))
        # A form field only (never the query string, which ends up in access logs).
        password = service.check_password(received.fields.pop("password", None))
        pairs = await run_in_threadpool(service.accept_upload, session, settings,
                                        _storage(request), user, received.files, mode,
                                        password=password)
    finally:
        received.cleanup()
    executor = _executor(request)
    items = []
    for file, job in pairs:
        if executor is not None:
            await run_in_threadpool(executor.submit, job.id, job.priority)
        items.append({"fileId": file.id, "originalName": file.original_name,
                      "size": file.original_size, "status": file.status})
    return items

def _multipart_body(field: str, many: bool) -> dict:
    """The upload's body in the OpenAPI document (the route reads the stream itself, so
    FastAPI cannot derive it): clients and fuzzers learn to send files."""
    file_schema = {"type": "string", "format": "binary"}
    return {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": [field],
        "properties": {
            field: {"type": "array", "items": file_schema} if many else file_schema,
            "mode": {"type": "string", "enum": list(service.KNOWN_MODES),
                     "description": "Processing mode (default basic)"},
            "password": {"type": "string", "format": "password",
                         "maxLength": service.MAX_PASSWORD_LENGTH,
                         "description": "Optional: opens encrypted inputs (PDF, Word/Excel/"
                                        "PowerPoint 2007 and later, ZIP) for every file of "
                                        "this upload. Never stored in clear, never returned; "
                                        "the sanitized output is not encrypted."}}}}}}}


_UPLOAD_ERRORS: dict[int | str, dict] = {
    400: {"model": ErrorEnvelope, "description": "No file, an empty file, too many files or "
          "a malformed multipart body"},
    403: {"model": ErrorEnvelope, "description": "Quota exceeded or mode not allowed"},
    413: {"model": ErrorEnvelope, "description": "A file is larger than the account allows"},
    415: {"model": ErrorEnvelope, "description": "A file's type is not accepted"},
}


@router.post("/upload/single", status_code=201, response_model=Envelope[UploadedFile],
             responses=_UPLOAD_ERRORS, openapi_extra=_multipart_body("file", many=False))
async def upload_single(request: Request, user: CurrentUser, session: SessionDep,
                        settings: SettingsDep):
    try:
        items = await _upload(request, user, session, settings, field="file", max_files=1)
    except ApiError as exc:
        if exc.error == "too_many_files":
            raise ApiError(400, "Send one file (field 'file') to /api/upload/single; use "
                                "/api/upload/multiple (fields 'files') for several.",
                           "too_many_files") from None
        raise
    return ok(items[0], "File uploaded successfully. It is being processed.")

@router.post("/upload/multiple", status_code=201,
             response_model=Envelope[list[UploadedFile]], responses=_UPLOAD_ERRORS,
             openapi_extra=_multipart_body("files", many=True))
async def upload_multiple(request: Request, user: CurrentUser, session: SessionDep,
                          settings: SettingsDep):
    limits = settings.limits_for(user.role)
    items = await _upload(request, user, session, settings, field="files",
                          max_files=limits.max_files_per_upload)
    return ok(items, f"{len(items)} file(s) uploaded successfully. They are being processed.")

# -- status and download ---------------------------------------------------------------------
@router.get("/process/status/{file_id}", response_model=Envelope[FileStatusData])
def process_status(file_id: str, user: CurrentUser, session: SessionDep):
    file = service.get_visible_file(session, user, file_id)
    job = session.scalar(select(Job).where(Job.file_id == file.id))
    return ok({"file": service.file_out(file), "job": service.job_out(job)}, "File status")

_UNSAFE_ASCII = re.compile(r'[^A-Za-z0-9 !#$&+,\-.^_`{}~()\[\]@=]')

def content_disposition(filename: str) -> str:
    """RFC 6266: an ASCII fallback `filename=` (quotes, backslashes, controls and non-ASCII
    replaced) and the exact name as `filename*=UTF-8''...` (percent-encoded, so quotes and
    newlines cannot break the header). Invisible format characters (bidirectional overrides
    and isolates, zero-width spaces...) are left out of both, as from stored names."""
    name = strip_invisible(re.sub(r"[\x00-\x1f\x7f-\x9f]", "", filename)) or "download"
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    ascii_name = _UNSAFE_ASCII.sub("_", ascii_name).strip() or "download"
    if "." in name and "." not in ascii_name:
        ascii_name += "." + name.rsplit(".", 1)[1].encode("ascii", "ignore").decode()
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"

@router.get("/process/download/{file_id}", response_class=StreamingResponse, responses={
    200: {"description": "The sanitized file, as an attachment under its safe name",
          "content": {"application/octet-stream": {
              "schema": {"type": "string", "format": "binary"}}}},
    409: {"model": ErrorEnvelope}, 410: {"model": ErrorEnvelope}})
def download(file_id: str, request: Request, user: CurrentUser, session: SessionDep):
    file = service.get_visible_file(session, user, file_id)
    if service.is_expired(file):
        raise ApiError(410, "File has expired and was deleted.", "expired")
    if file.status != "COMPLETED" or not file.sanitized_key:
        raise ApiError(409, f"File is not ready for download (status {file.status}).",
                       "not_ready")
    storage = _storage(request)
    try:
        chunks = storage.iter_chunks(file.sanitized_key)
        size = file.sanitized_size if file.sanitized_size is not None else \
            storage.size(file.sanitized_key)
    except BlobNotFound:
        raise ApiError(410, "File has expired and was deleted.", "expired") from None
    session.execute(update(File).where(File.id == file.id)
                    .values(download_count=File.download_count + 1))
    session.commit()
    name = file.sanitized_name or f"sanitized_{file.original_name}"
    return StreamingResponse(chunks, media_type="application/octet-stream", headers={
        "Content-Disposition": content_disposition(name), "Content-Length": str(size),
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"})

# -- queue (admin) ---------------------------------------------------------------------------
@router.get("/process/queue/stats", response_model=Envelope[QueueStats])
def queue_stats(request: Request, _: AdminUser, session: SessionDep, settings: SettingsDep):
    counts = jobs.queue_counts(session)
    executor = _executor(request)
    return ok({**counts, "paused": jobs.is_paused(session),
               "workers": executor.workers() if executor is not None else 0,
               "executor": settings.executor}, "Queue statistics")

@router.post("/process/queue/pause", response_model=Envelope[QueuePaused])
def queue_pause(_: AdminUser, session: SessionDep):
    jobs.set_paused(session, True)
    return ok({"paused": True}, "Queue paused: no new jobs will start; running jobs finish.")

@router.post("/process/queue/resume", response_model=Envelope[QueuePaused])
def queue_resume(request: Request, _: AdminUser, session: SessionDep):
    jobs.set_paused(session, False)
    executor = _executor(request)
    if executor is not None:
        executor.kick()
    return ok({"paused": False}, "Queue resumed")

def _clear(session, state: str) -> int:
    # Job records only: the files (and their downloads) are untouched.
    result = session.execute(delete(Job).where(Job.state == state))
    session.commit()
    return result.rowcount or 0

@router.post("/process/queue/clear-completed", response_model=Envelope[QueueCleared])
def queue_clear_completed(_: AdminUser, session: SessionDep):
    n = _clear(session, "completed")
    return ok({"cleared": n}, f"Cleared {n} completed job record(s)")

@router.post("/process/queue/clear-failed", response_model=Envelope[QueueCleared])
def queue_clear_failed(_: AdminUser, session: SessionDep):
    n = _clear(session, "failed")
    return ok({"cleared": n}, f"Cleared {n} failed job record(s)")

# -- a user's files --------------------------------------------------------------------------
SORT_COLUMNS = {"createdAt": File.created_at, "originalName": func.lower(File.original_name),
                "originalSize": File.original_size, "status": File.status}

def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

@router.get("/users/{user_id}/files", response_model=Envelope[FileHistory],
            response_model_exclude_unset=True)  # history rows carry no report
def user_files(user_id: str, user: CurrentUser, session: SessionDep,
               page: int = Query(1, ge=1, le=100000), limit: int = Query(20, ge=1, le=100),
               status: Literal["ALL", "COMPLETED", "PROCESSING", "PENDING", "FAILED"] = "ALL",
               sortBy: Literal["createdAt", "originalName", "originalSize", "status"] = "createdAt",
               sortOrder: Literal["asc", "desc"] = "desc",
               search: str | None = Query(None, max_length=255)):
    if user_id != user.id and (user.role != "ADMIN" or session.get(User, user_id) is None):
        raise ApiError(404, "User not found", "not_found")
    conditions = [File.user_id == user_id]
    stats_rows = session.execute(select(File.status, func.count()).where(*conditions)
                                 .group_by(File.status)).all()
    by_status = {s: n for s, n in stats_rows}
    stats = {"total": sum(by_status.values()), "completed": by_status.get("COMPLETED", 0),
             "processing": by_status.get("PROCESSING", 0),
             "pending": by_status.get("PENDING", 0), "failed": by_status.get("FAILED", 0)}
    if status != "ALL":
        conditions.append(File.status == status)
    if search and search.strip():
        conditions.append(func.lower(File.original_name).like(
            f"%{_like_escape(search.strip().lower())}%", escape="\\"))
    total = session.scalar(select(func.count()).select_from(File).where(*conditions)) or 0
    column = SORT_COLUMNS[sortBy]
    order = column.asc() if sortOrder == "asc" else column.desc()
    files = session.scalars(select(File).where(*conditions).order_by(order, File.id)
                            .offset((page - 1) * limit).limit(limit)).all()
    pages = (total + limit - 1) // limit
    return ok({
        "files": [service.file_out(f, with_report=False) for f in files],
        "stats": stats,
        "pagination": {"page": page, "limit": limit, "total": total, "pages": pages,
                       "hasPrev": page > 1, "hasNext": page < pages},
    }, "Files retrieved successfully")
