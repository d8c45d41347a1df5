"""Several sanitized files as one ZIP (POST /api/process/download-batch): the caller's own
COMPLETED, unexpired files, each counted as one download, streamed from storage without
holding the archive (or any file) in memory.

All or nothing: when any id is not the caller's file (or no file), expired, or not ready,
the request is refused naming those ids, and nothing is counted. Entries are stored, not
compressed (the outputs are mostly compressed already: PDF streams, JPEG, PNG, OOXML/ODF are
ZIPs), with ZIP64 for files of 4 GB and more; names are the single download's names, cleaned
like uploaded file names and made unique ("report.pdf", "report (2).pdf") regardless of case.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.files.multipart import clean_filename
from sanitas.files.service import is_expired
from sanitas.models import File, FileStatus, User
from sanitas.storage import CHUNK, Storage
from sanitas.web.errors import ApiError

if TYPE_CHECKING:
    from typing_extensions import Buffer

MAX_NAMED = 10  # ids named in a refusal


@dataclass(frozen=True)
class Entry:
    key: str
    name: str
    size: int
    modified: datetime


def _refusal(status: int, what: str, ids: list[str], code: str) -> ApiError:
    shown = ", ".join(ids[:MAX_NAMED]) + (f" and {len(ids) - MAX_NAMED} more"
                                         if len(ids) > MAX_NAMED else "")
    return ApiError(status, f"{len(ids)} of the files {what}: {shown}. Nothing was "
                            "downloaded.", code)


def open_batch(session: Session, storage: Storage, settings: Settings, user: User,
               file_ids: list[str]) -> list[Entry]:
    """Check every id (in order: 404 not the caller's or no file, 410 expired, 409 not
    ready), count one download for each file in one conditional update, and return the
    ZIP's entries in the order asked (duplicates once)."""
    ids = list(dict.fromkeys(file_ids))
    limit = settings.download_batch_max_files
    if len(ids) > limit:
        raise ApiError(422, f"At most {limit} files can be downloaded at once ({len(ids)} "
                            "were asked for).", "too_many_files")
    files = {f.id: f for f in session.scalars(
        select(File).where(File.id.in_(ids), File.user_id == user.id))}
    missing = [i for i in ids if i not in files]
    if missing:
        raise _refusal(404, "were not found", missing, "not_found")
    now = utcnow()
    expired = [i for i in ids if is_expired(files[i], now)]
    if expired:
        raise _refusal(410, "have expired and were deleted", expired, "expired")
    waiting = [i for i in ids if files[i].status != FileStatus.COMPLETED
               or not files[i].sanitized_key]
    if waiting:
        raise _refusal(409, "are not ready for download", waiting, "not_ready")
    # Counted only if every file is still downloadable at this moment (the expiry sweep may
    # have run since they were read): all or nothing.
    result = session.execute(
        update(File).where(File.id.in_(ids), File.user_id == user.id,
                           File.status == FileStatus.COMPLETED, File.is_expired.is_(False),
                           File.sanitized_key.is_not(None), File.expires_at > now)
        .values(download_count=File.download_count + 1)
        .execution_options(synchronize_session=False))
    if rows_matched(result) != len(ids):
        session.rollback()
        raise ApiError(410, "Some of the files expired while they were being prepared. "
                            "Nothing was downloaded.", "expired")
    session.commit()
    names = unique_names([files[i].sanitized_name or f"sanitized_{files[i].original_name}"
                          for i in ids])
    entries = []
    for file_id, name in zip(ids, names, strict=True):
        file = files[file_id]
        key = file.sanitized_key
        assert key is not None  # checked above
        size = file.sanitized_size if file.sanitized_size is not None else storage.size(key)
        entries.append(Entry(key=key, name=name, size=size,
                             modified=file.processing_completed_at or now))
    return entries


def unique_names(names: list[str]) -> list[str]:
    """Each name cleaned like an uploaded file's (no directories, control or invisible
    characters; at most 255 characters), then numbered where an earlier one is the same
    regardless of case: "report.pdf", "report (2).pdf", "Report (3).pdf"."""
    taken: set[str] = set()
    out = []
    for raw in names:
        name = clean_filename(raw)
        stem, dot, extension = name.rpartition(".") if "." in name.lstrip(".") else \
            (name, "", "")
        suffix = dot + extension
        candidate, number = name, 2
        while candidate.casefold() in taken:
            tag = f" ({number})"
            candidate = stem[:255 - len(tag) - len(suffix)] + tag + suffix
            number += 1
        taken.add(candidate.casefold())
        out.append(candidate)
    return out


class _Pipe(io.RawIOBase):
    """A write-only, unseekable stream that keeps what was written until it is taken: the
    ZIP writer's output, handed on chunk by chunk."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._offset = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Buffer) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        self._offset += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self._offset

    def drain(self) -> Iterator[bytes]:
        """What was written since the last drain (nothing when nothing was)."""
        if self._parts:
            data = b"".join(self._parts)
            self._parts.clear()
            yield data


def _zip_time(moment: datetime) -> tuple[int, int, int, int, int, int]:
    if moment.year < 1980:
        return (1980, 1, 1, 0, 0, 0)
    return (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


def zip_chunks(storage: Storage, entries: list[Entry]) -> Iterator[bytes]:
    """The ZIP of `entries`, produced as it is sent: each blob is read from storage chunk by
    chunk and passed on, so memory stays at a few chunks whatever the files' sizes. A blob
    that disappears meanwhile (the expiry sweep) ends the stream early: the client gets a
    truncated archive that no tool opens, never a silently incomplete one."""
    pipe = _Pipe()
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for entry in entries:
            info = zipfile.ZipInfo(entry.name, date_time=_zip_time(entry.modified))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = entry.size  # decides ZIP64 before the data is written
            info.external_attr = 0o644 << 16
            with archive.open(info, "w") as target:
                for chunk in storage.iter_chunks(entry.key, CHUNK):
                    target.write(chunk)
                    yield from pipe.drain()  # the entry's header with its first chunk, then each
            yield from pipe.drain()  # the data descriptor (CRC and sizes)
    yield from pipe.drain()  # the central directory
