"""The status page's preview of a sanitized file, and several sanitized files as one ZIP
(files/preview.py, files/batch.py; the single download is in files/routes.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import Field, StringConstraints

from sanitas.db import utcnow
from sanitas.files import batch, preview
from sanitas.files.routes import content_disposition
from sanitas.web.deps import API_KEY_ERRORS, FileReader, SessionDep, SettingsDep, StorageDep
from sanitas.web.schemas import CamelModel, ErrorEnvelope

router = APIRouter(tags=["files"], responses={401: {"model": ErrorEnvelope},
                                              **API_KEY_ERRORS})


@router.get("/process/preview/{file_id}", response_class=StreamingResponse, responses={
    200: {"description": "A PNG of the sanitized file's first page (PDF) or picture (images), "
          "drawn in the sandbox from the sanitized output when it was processed: at most "
          "`SANITAS_PREVIEW_MAX_SIDE` (800) pixels a side, without metadata",
          "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}}},
    404: {"model": ErrorEnvelope, "description": "No such file among the caller's own "
          "(`not_found`; also for another account's file, whoever asks), or no preview for "
          "it (`preview_unavailable`: office documents, text, archives, SVG, e-books, a page "
          "that could not be drawn in time, files from before previews)"},
    409: {"model": ErrorEnvelope, "description": "The file is not COMPLETED (`not_ready`)"},
    410: {"model": ErrorEnvelope, "description": "The file expired; its preview went with "
          "it (`expired`)"}})
def process_preview(file_id: str, caller: FileReader, session: SessionDep,
                    storage: StorageDep):
    """The preview of one of the caller's own files (an API key acts as its owner; admins
    get no preview of other accounts' files). It expires with the file."""
    chunks = preview.open_preview(session, storage, caller.user, file_id)
    return StreamingResponse(chunks, media_type="image/png", headers={
        "Content-Disposition": 'inline; filename="preview.png"',
        "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"})


FileId = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class DownloadBatch(CamelModel):
    file_ids: list[FileId] = Field(
        min_length=1, max_length=10000,
        description="The files to download, in the ZIP's order (a repeated id once); at most "
                    "`SANITAS_DOWNLOAD_BATCH_MAX_FILES` (100)")


@router.post("/process/download-batch", response_class=StreamingResponse, responses={
    200: {"description": "A ZIP of the sanitized files (stored, not compressed), streamed as "
          "it is read; each entry under the file's download name, numbered where names "
          "repeat (\"report.pdf\", \"report (2).pdf\"). Every file counts as one download.",
          "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}},
    404: {"model": ErrorEnvelope, "description": "Some ids are not the caller's files (or no "
          "files): `not_found`, naming them; nothing is downloaded or counted"},
    409: {"model": ErrorEnvelope, "description": "Some files are not COMPLETED: `not_ready`, "
          "naming them"},
    410: {"model": ErrorEnvelope, "description": "Some files expired: `expired`, naming them"},
    422: {"model": ErrorEnvelope, "description": "No ids, a malformed id "
          "(`validation_error`), or more ids than allowed (`too_many_files`)"}})
def download_batch(body: DownloadBatch, caller: FileReader, session: SessionDep,
                   settings: SettingsDep, storage: StorageDep):
    """"Download all": several of the caller's own COMPLETED, unexpired files as one ZIP. All
    or nothing: one id that is not downloadable refuses the whole request."""
    entries = batch.open_batch(session, storage, settings, caller.user, body.file_ids)
    name = f"sanitas-{utcnow():%Y%m%d-%H%M%S}.zip"
    return StreamingResponse(batch.zip_chunks(storage, entries), media_type="application/zip",
                             headers={"Content-Disposition": content_disposition(name),
                                      "X-Content-Type-Options": "nosniff",
                                      "Cache-Control": "private, no-store"})
