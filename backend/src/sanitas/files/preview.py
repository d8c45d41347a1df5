"""The status page's preview of a sanitized file: the PNG its job's sandbox drew from the
output (engine/preview.py, stored beside the sanitized blob at storage.preview_key and
deleted with it). Owner only: neither admins nor anyone else see another account's files
through it."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.orm import Session

from sanitas.files.service import get_visible_file, is_expired
from sanitas.models import FileStatus, User
from sanitas.storage import BlobNotFound, Storage, preview_key
from sanitas.web.errors import ApiError

UNAVAILABLE_MESSAGE = ("No preview is available for this file: previews are drawn for PDF "
                       "documents and images, not for office documents, text, archives or "
                       "files processed before previews existed.")


def open_preview(session: Session, storage: Storage, user: User, file_id: str) -> Iterator[bytes]:
    """The preview's bytes for the file's owner; 404 for anyone else's file (as for no file),
    410 once the file expired, 409 before it is COMPLETED, 404 `preview_unavailable` when
    none was drawn."""
    file = get_visible_file(session, user, file_id, admin=False)
    if is_expired(file):
        raise ApiError(410, "File has expired and was deleted.", "expired")
    if file.status != FileStatus.COMPLETED or not file.sanitized_key:
        raise ApiError(409, f"File is not ready yet (status {file.status}): its preview comes "
                            "with the sanitized file.", "not_ready")
    try:
        return storage.iter_chunks(preview_key(file.id))
    except BlobNotFound:
        raise ApiError(404, UNAVAILABLE_MESSAGE, "preview_unavailable") from None
