"""Uploads, processing status, downloads and a user's file history (the processing queue's
admin calls are in processing/routes.py)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import unicodedata
from typing import Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from sanitas import plans
from sanitas.config import Settings
from sanitas.datadir.scratch import uploads_dir
from sanitas.engine import strip_invisible
from sanitas.engine.policy import Mode
from sanitas.engine.verdict import Verdict
from sanitas.files import finished, intake, service
from sanitas.files.multipart import MB, receive_files
from sanitas.files.schemas import (
    FileHistory,
    FileStatusData,
    RefusedFormats,
    UploadedFile,
    UploadInfo,
)
from sanitas.models import FileStatus, StatusFilter, User
from sanitas.policies import service as policies_service
from sanitas.storage import Storage
from sanitas.web import conditional
from sanitas.web.admission import database_paused
from sanitas.web.deps import (
    API_KEY_ERRORS,
    Executor,
    ExecutorDep,
    FileReader,
    FileWriter,
    SessionDep,
    SettingsDep,
    StorageDep,
)
from sanitas.web.errors import ApiError
from sanitas.web.schemas import CamelModel, Envelope, ErrorEnvelope, ok

router = APIRouter(tags=["files"], responses={401: {"model": ErrorEnvelope},
                                              404: {"model": ErrorEnvelope},
                                              **API_KEY_ERRORS})

# -- upload ----------------------------------------------------------------------------------
@router.get("/upload/info", response_model=Envelope[UploadInfo])
def upload_info(caller: FileReader, settings: SettingsDep, session: SessionDep):
    user = caller.user
    plan = plans.plan_for(settings, user.role)
    limits = plan.limits
    default = intake.choose_policy(settings, intake.Caller.person(user), intake.PolicyRef(),
                                   session=session)
    return ok(UploadInfo(max_files=limits.max_files_per_upload,
                         max_file_size=limits.max_file_size,
                         max_file_size_mb=round(limits.max_file_size / MB, 2),
                         supported_formats=service.supported_formats(),
                         modes=policies_service.allowed_modes(plan), role=user.role,
                         default_policy_id=default.id,
                         refused_formats=_refused_formats()),
              "Upload configuration")


SCRIPT_NAMES_REASON = "Executables and scripts are not accepted."


def _refused_formats() -> list[RefusedFormats]:
    """The names the engine refuses whatever their content (engine/detect.py), so the upload
    screen can say why before sending the file."""
    from sanitas.engine.detect import SCRIPT_EXTENSIONS

    names = sorted(SCRIPT_EXTENSIONS - set(service.supported_formats()))
    return [RefusedFormats(extensions=names, reason=SCRIPT_NAMES_REASON)]

async def _upload(request: Request, user: User, session: Session, settings: Settings,
                  storage: Storage, executor: Executor | None, *, field: str,
                  max_files: int, channel: intake.Channel) -> list[UploadedFile]:
    """Read the multipart body and hand its files to intake.queue (the one way files come in:
    policy, password, quotas, blobs and rows, jobs)."""
    limits = plans.plan_for(settings, user.role).limits
    caller = intake.Caller.person(user, channel)
    await run_in_threadpool(intake.precheck, session, settings, caller)
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
        # policyId, else mode, else the role's default (404/403 before anything is stored);
        # the password from a form field only (never the query string: access logs).
        ref = intake.PolicyRef(
            policy_id=received.fields.get("policyId") or request.query_params.get("policyId"),
            mode=received.fields.get("mode") or request.query_params.get("mode"))
        queued = await run_in_threadpool(
            intake.queue, session, settings, storage, executor, caller, received.files, ref,
            password=received.fields.pop("password", None))
    finally:
        received.cleanup()
    return [UploadedFile(file_id=q.file.id, original_name=q.file.original_name,
                         size=q.file.original_size, status=q.file.status) for q in queued]

def _multipart_body(field: str, many: bool) -> dict:
    """The upload's body in the OpenAPI document (the route reads the stream itself, so
    FastAPI cannot derive it): clients and fuzzers learn to send files."""
    file_schema = {"type": "string", "format": "binary"}
    return {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": [field],
        "properties": {
            field: {"type": "array", "items": file_schema} if many else file_schema,
            "mode": {"type": "string", "enum": [mode.value for mode in Mode],
                     "description": "Processing mode: the built-in policy of that name "
                                    "(ignored when policyId is given)"},
            "policyId": {"type": "string", "maxLength": 36,
                         "description": "The policy to clean with (see /api/policies): a "
                                        "built-in, an organisation-wide or one of your own. "
                                        "Default: mode, else your role's default policy."},
            "password": {"type": "string", "format": "password",
                         "maxLength": service.MAX_PASSWORD_LENGTH,
                         "description": "Optional: opens encrypted inputs (PDF, Word/Excel/"
                                        "PowerPoint 2007 and later, ZIP) for every file of "
                                        "this upload. Never stored in clear, never returned; "
                                        "the sanitized output is not encrypted."}}}}}}}


_UPLOAD_ERRORS: dict[int | str, dict] = {
    400: {"model": ErrorEnvelope, "description": "No file, an empty file, too many files or "
          "a malformed multipart body"},
    403: {"model": ErrorEnvelope, "description": "Quota exceeded, or the mode or policy needs "
          "a plan the account lacks (`mode_not_allowed`, `policy_not_allowed`), or an API "
          "key of a Free account (`plan_required`) or without `files:write` "
          "(`insufficient_scope`)"},
    404: {"model": ErrorEnvelope, "description": "policyId names no policy the caller can "
          "use (`not_found`)"},
    413: {"model": ErrorEnvelope, "description": "A file is larger than the account allows"},
    415: {"model": ErrorEnvelope, "description": "A file's type is not accepted"},
}


@router.post("/upload/single", status_code=201, response_model=Envelope[UploadedFile],
             responses=_UPLOAD_ERRORS, openapi_extra=_multipart_body("file", many=False))
async def upload_single(request: Request, caller: FileWriter, session: SessionDep,
                        settings: SettingsDep, storage: StorageDep, executor: ExecutorDep):
    try:
        items = await _upload(request, caller.user, session, settings, storage, executor,
                              field="file", max_files=1, channel=intake.Channel.WEB)
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
async def upload_multiple(request: Request, caller: FileWriter, session: SessionDep,
                          settings: SettingsDep, storage: StorageDep, executor: ExecutorDep):
    limits = plans.plan_for(settings, caller.user.role).limits
    items = await _upload(request, caller.user, session, settings, storage, executor,
                          field="files", max_files=limits.max_files_per_upload,
                          channel=intake.Channel.WEB)
    return ok(items, f"{len(items)} file(s) uploaded successfully. They are being processed.")

# -- status and download ---------------------------------------------------------------------
@router.get("/process/status/{file_id}", response_model=Envelope[FileStatusData],
            responses={200: {"headers": {
                "ETag": {"description": "Send it back as `If-None-Match` to be answered 304 "
                                        "while nothing shown has changed",
                         "schema": {"type": "string"}},
                "Cache-Control": {"schema": {"type": "string"}}}},
                **conditional.not_modified_doc("The status")})
def process_status(file_id: str, request: Request, response: Response, caller: FileReader,
                   session: SessionDep, settings: SettingsDep):
    # Read (and authorised: another account's file is 404 whatever the request's
    # If-None-Match) before the validator is compared; rendered only when it differs.
    status = service.status_snapshot(session, settings, caller.user, file_id,
                                     admin=caller.admin)
    if conditional.if_none_match(request, status.etag):
        return conditional.not_modified(status.etag)
    response.headers.update(conditional.validator_headers(status.etag))
    return ok(status.answer(), "File status")

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
def download(file_id: str, caller: FileReader, session: SessionDep, storage: StorageDep):
    sanitized = service.open_download(session, storage, caller.user, file_id,
                                      admin=caller.admin)
    return StreamingResponse(sanitized.chunks, media_type="application/octet-stream", headers={
        "Content-Disposition": content_disposition(sanitized.name),
        "Content-Length": str(sanitized.size),
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"})

# -- a user's files --------------------------------------------------------------------------
VERDICT_QUERY = Query(None, description="Only finished files with this verdict (`refused`: "
                                        "every FAILED file); see docs/verdicts.md")

@router.get("/users/{user_id}/files", response_model=Envelope[FileHistory])
def user_files(user_id: str, caller: FileReader, session: SessionDep,
               page: int = Query(1, ge=1, le=100000), limit: int = Query(20, ge=1, le=100),
               status: StatusFilter = StatusFilter.ALL,
               sortBy: Literal["createdAt", "originalName", "originalSize", "status"] = "createdAt",
               sortOrder: Literal["asc", "desc"] = "desc",
               search: str | None = Query(None, max_length=255),
               verdict: Verdict | None = VERDICT_QUERY):
    service.check_history_access(session, caller.user, user_id, admin=caller.admin)
    history = service.file_history(session, user_id, page=page, limit=limit,
                                   status=status.file_status, search=search,
                                   sort_by=sortBy, sort_order=sortOrder, verdict=verdict)
    return ok(history, "Files retrieved successfully")

# -- one call: file in, clean file out -------------------------------------------------------
SYNC_WAIT_MAX = 60
_POLL_FIRST, _POLL_MAX = 0.05, 0.5  # seconds between looks at the file's status


class SanitizeAccepted(CamelModel):
    file_id: str
    status: FileStatus
    status_url: str = Field(description="Poll this for the result (the status call)")
    download_url: str = Field(description="The sanitized file, once status is COMPLETED")


@router.post(
    "/v1/sanitize", response_class=StreamingResponse,
    openapi_extra=_multipart_body("file", many=False),
    responses={
        200: {"description": "Processing finished within `wait`: the sanitized file, as an "
              "attachment under its safe name. `X-Sanitas-Report` holds a one-line JSON "
              "summary (the verdict, its counts and sentence, counts of findings by kind and "
              "action, hashes, policy); the `Link` (rel=\"report\") and "
              "`X-Sanitas-Report-Url` headers point to the full report. `X-Sanitas-Verdict` "
              "is the verdict (`clean`, `cleaned`, `partial`, or `encrypted` when the policy "
              "passes encrypted content unchanged and uninspected) and "
              "`X-Sanitas-Verdict-Counts` its counts (`threats=3; hiddenData=0; "
              "filesDropped=1; contentDropped=0; textLayerDropped=0; encryptedHeld=0; "
              "encryptedPassed=0`); see docs/verdicts.md.",
              "headers": {
                  "X-Sanitas-Verdict": {"schema": {"type": "string", "enum": [
                      v.value for v in Verdict if v is not Verdict.REFUSED]}},
                  "X-Sanitas-Verdict-Counts": {"schema": {"type": "string"}}},
              "content": {"application/octet-stream": {
                  "schema": {"type": "string", "format": "binary"}}}},
        202: {"model": Envelope[SanitizeAccepted], "description": "Still processing after "
              "`wait` seconds: poll the status URL (also in `Location`)"},
        **_UPLOAD_ERRORS,
        410: {"model": ErrorEnvelope, "description": "The file expired before it could be "
              "processed (`expired`)"},
        422: {"model": ErrorEnvelope, "description": "The file was refused: the reason, and "
              "the engine's rejection code as `error` (e.g. `refused_macros`, "
              "`encrypted`), with `X-Sanitas-Verdict: refused` (`encrypted` for a file no "
              "password opened, which the policy holds back); or a bad parameter "
              "(`validation_error`)"},
        503: {"model": ErrorEnvelope, "description": "Processing failed for a reason of the "
              "service's, not the file's (`infrastructure_error`, `interrupted`, "
              "`internal_error`): upload again later"}})
async def sanitize_now(request: Request, caller: FileWriter, session: SessionDep,
                       settings: SettingsDep, storage: StorageDep, executor: ExecutorDep,
                       wait: int = Query(30, ge=0, le=SYNC_WAIT_MAX, description=(
                           "Seconds to wait for the result before answering 202"))):
    """Upload one file (field `file`; optional `mode`, `policyId`, `password`) and, when it
    is processed within `wait` seconds, get the sanitized file back in the same answer. It
    counts against the quota like any upload and appears in the history."""
    user = caller.user
    item = (await _upload(request, user, session, settings, storage, executor, field="file",
                          max_files=1, channel=intake.Channel.API))[0]
    deadline = time.monotonic() + wait
    pause = _POLL_FIRST
    status = item.status
    with finished.watching(item.file_id) as ended:  # a job run by this process says so
        while status not in service.FINISHED and time.monotonic() < deadline:
            async with database_paused(request, session):  # no slot held while waiting
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ended.wait(),
                                           min(pause, max(0.0, deadline - time.monotonic())))
            ended.clear()
            pause = min(_POLL_MAX, pause * 1.5)
            status = await run_in_threadpool(service.current_status, session, item.file_id)
    if status not in service.FINISHED:
        status_url = f"/api/process/status/{item.file_id}"
        return JSONResponse(status_code=202, headers={"Location": status_url}, content=ok(
            SanitizeAccepted(file_id=item.file_id, status=status, status_url=status_url,
                             download_url=f"/api/process/download/{item.file_id}"
                             ).model_dump(mode="json", by_alias=True),
            "The file is still being processed; poll the status URL."))
    return await run_in_threadpool(_sanitized_answer, session, storage, user, item.file_id)


def _sanitized_answer(session: Session, storage: Storage, user: User,
                      file_id: str) -> StreamingResponse:
    file = service.get_visible_file(session, user, file_id, admin=False)  # the caller's own
    if file.status == FileStatus.FAILED:
        code = file.error_code or "damaged"
        message = file.error_message or "The file could not be sanitized."
        if code == "expired":
            raise ApiError(410, message, code)
        raise ApiError(422 if service.is_rejection(code) else 503, message, code,
                       headers={"X-Sanitas-File-Id": file.id, **service.verdict_headers(file)})
    summary = service.report_summary(file)
    sanitized = service.open_download(session, storage, user, file_id, admin=False)
    report_url = f"/api/process/status/{file_id}"
    return StreamingResponse(sanitized.chunks, media_type="application/octet-stream", headers={
        "Content-Disposition": content_disposition(sanitized.name),
        "Content-Length": str(sanitized.size),
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store",
        "X-Sanitas-File-Id": file_id, "X-Sanitas-Report": summary,
        "X-Sanitas-Report-Url": report_url, "Link": f'<{report_url}>; rel="report"',
        **service.verdict_headers(file)})
