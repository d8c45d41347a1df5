"""Every user's files, for admins: the filtered, sorted and paged list, one file with its
report and job, deleting a file (blobs, job and row), and sending a FAILED file back to the
queue. The routes in files/admin_routes.py only parse, call these and shape the answer."""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, delete, func, select, update
from sqlalchemy.orm import Session

from sanitas import logs, plans
from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.db import contains_text, rows_matched, utcnow
from sanitas.files.admin_schemas import (
    AdminFileDetail,
    AdminFileList,
    AdminFileOut,
    AdminFileSummary,
)
from sanitas.files.service import (
    file_out,
    file_summary,
    files_by_id,
    is_expired,
    job_out,
    page_ids,
    rollup_count,
    rollup_filters,
)
from sanitas.models import EVERYONE, AuditAction, File, FileRollup, FileStatus, Job, User
from sanitas.models.job import HIGH_PRIORITY, NORMAL_PRIORITY
from sanitas.plans import Capability
from sanitas.storage import Storage, StorageError, preview_key
from sanitas.web.errors import ApiError
from sanitas.web.schemas import Pagination

log = logging.getLogger(__name__)

SORT_COLUMNS = {"createdAt": File.created_at, "originalName": func.lower(File.original_name),
                "originalSize": File.original_size, "status": File.status,
                "userEmail": User.email}


def _aware(value: datetime | None) -> datetime | None:
    """A query's date as UTC; one without a zone is taken as UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class FileFilters:
    user_id: str | None = None
    user: str | None = None  # part of the owner's email address, any case
    status: FileStatus | None = None  # None: every status
    detected_type: str | None = None
    created_from: datetime | None = None  # inclusive
    created_before: datetime | None = None  # exclusive

    def conditions(self) -> list:
        out = []
        if self.user_id:
            out.append(File.user_id == self.user_id)
        if self.user and self.user.strip():
            # Addresses are stored lower-cased in NFC (auth.service.normalise_email).
            out.append(contains_text(User.email,
                                     unicodedata.normalize("NFC", self.user.strip())))
        if self.status is not None:
            out.append(File.status == self.status)
        if self.detected_type:
            out.append(File.detected_type == self.detected_type)
        if (start := _aware(self.created_from)) is not None:
            out.append(File.created_at >= start)
        if (end := _aware(self.created_before)) is not None:
            out.append(File.created_at < end)
        return out


def file_list(session: Session, filters: FileFilters, *, page: int, limit: int,
              sort_by: str = "createdAt", sort_order: str = "desc") -> AdminFileList:
    """One page of the files matching `filters` (newest first unless `sort_by`/`sort_order`
    say otherwise), each with its owner's address, and every detected type for the filter.
    The total comes from the daily rollup (and the rows of the period's partial first and
    last days); the page reads ids only, from whichever end is nearer."""
    conditions = filters.conditions()
    total = _total(session, filters)
    ids = page_ids(session, select(File.id).join(User, User.id == File.user_id)
                   .where(*conditions), SORT_COLUMNS[sort_by], sort_order != "asc",
                   page=page, limit=limit, total=total)
    emails = dict(session.execute(select(File.id, User.email).join(User, User.id == File.user_id)
                                  .where(File.id.in_(ids))).all()) if ids else {}
    return AdminFileList(
        files=[AdminFileSummary(**dict(file_summary(file)), user_id=file.user_id,
                                user_email=emails[file.id])
               for file in files_by_id(session, ids) if file.id in emails],
        pagination=Pagination.of(page, limit, total), types=detected_types(session))


def _midnight(moment: datetime, *, up: bool) -> datetime:
    """The UTC midnight at or before `moment` (or at or after it, `up`)."""
    floor = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return floor + timedelta(days=1) if up and floor < moment else floor


def _total(session: Session, filters: FileFilters) -> int:
    """How many files match `filters`: the rollup's sums for the whole UTC days of the period,
    the rows themselves for its partial first and last days."""
    start, end = _aware(filters.created_from), _aware(filters.created_before)
    first = _midnight(start, up=True) if start is not None else None
    last = _midnight(end, up=False) if end is not None else None
    edges = [File.user_id == User.id, *filters.conditions()]
    if first is not None and last is not None and first >= last:  # no whole day
        return _count_rows(session, edges)
    rolled = [*rollup_filters(filters.status, None)]
    if filters.detected_type:
        rolled.append(FileRollup.detected_type == filters.detected_type)
    if first is not None:
        rolled.append(FileRollup.day >= first.date())
    if last is not None:
        rolled.append(FileRollup.day < last.date())
    owner: list[ColumnElement[bool]] = []
    if filters.user_id:
        owner.append(User.id == filters.user_id)
    if filters.user and filters.user.strip():
        owner.append(contains_text(User.email, unicodedata.normalize("NFC", filters.user.strip())))
    if owner:
        rolled.append(FileRollup.user_id.in_(select(User.id).where(*owner)))
    else:
        rolled.append(FileRollup.user_id == EVERYONE)
    total = rollup_count(session, rolled)
    if start is not None and first is not None and start < first:
        total += _count_rows(session, [*edges, File.created_at < first])
    if end is not None and last is not None and last < end:
        total += _count_rows(session, [*edges, File.created_at >= last])
    return total


def _count_rows(session: Session, conditions: list) -> int:
    return session.scalar(select(func.count()).select_from(File)
                          .join(User, User.id == File.user_id).where(*conditions)) or 0


def detected_types(session: Session) -> list[str]:
    """Every detected type some file has, by skipping through ix_files_detected_type: one
    index probe per type (the next one after the last found), not a read of every row as
    `SELECT DISTINCT` is. The types are the engine's kinds, a few dozen at most."""
    found: list[str] = []
    while True:
        after = select(func.min(File.detected_type)).where(File.detected_type.is_not(None))
        if found:
            after = after.where(File.detected_type > found[-1])
        kind = session.scalar(after)
        if kind is None:
            return sorted(t for t in found if t)
        found.append(kind)


def _find(session: Session, file_id: str) -> tuple[File, str, Job | None]:
    """The file, its owner's address and its job (None once cleared); 404 when unknown."""
    row = session.execute(select(File, User.email).join(User, User.id == File.user_id)
                          .where(File.id == file_id)).first() if len(file_id) <= 64 else None
    if row is None:
        raise ApiError(404, "File not found", "not_found")
    file, email = row
    return file, email, session.scalar(select(Job).where(Job.file_id == file.id))


def file_detail(session: Session, file_id: str) -> AdminFileDetail:
    """One file with its owner, its findings report and its job."""
    file, email, job = _find(session, file_id)
    return AdminFileDetail(file=AdminFileOut(**dict(file_out(file)), user_id=file.user_id,
                                             user_email=email), job=job_out(job))


def delete_file(session: Session, storage: Storage, file_id: str, *,
                actor: User | None = None, ip: str | None = None) -> None:
    """Remove the file's job, its row and then both its blobs. A file being processed is
    refused (409): its job would store a sanitized copy after the row is gone. The row goes
    first, so a blob whose deletion fails is an orphan the orphan sweep removes
    (processing/run.py), never a row naming a blob that is gone. The deletion is written to the
    audit log (as done by `actor` from `ip`) in the transaction that removes the row."""
    file, email, _job = _find(session, file_id)
    # Conditional, so an executor claiming the job at this moment either wins (and the file
    # is refused below) or finds no job to claim.
    session.execute(delete(Job).where(Job.file_id == file.id, Job.state != "active")
                    .execution_options(synchronize_session=False))
    running = session.scalar(select(func.count()).select_from(Job)
                             .where(Job.file_id == file.id))
    if running or file.status == "PROCESSING":
        session.rollback()
        raise ApiError(409, "The file is being processed; delete it once it has finished.",
                       "file_processing")
    keys = [key for key in (file.original_key, file.sanitized_key,
                            preview_key(file.id) if file.sanitized_key else None) if key]
    record(session, action=AuditAction.FILE_DELETED, actor=actor, ip=ip,
           target=("file", file.id),
           detail={"name": file.original_name, "ownerId": file.user_id, "ownerEmail": email,
                   "status": file.status})
    session.delete(file)
    session.commit()
    for key in keys:
        try:
            storage.delete(key)
        except StorageError:
            log.warning("admin delete: blob %s of file %s left to the orphan sweep", key,
                        file_id, exc_info=True)


def requeue_file(session: Session, settings: Settings, storage: Storage,
                 file_id: str) -> Job:
    """Send a FAILED file back to the queue: the file PENDING with its error cleared, its job
    (or a new one when the job record was cleared) waiting with no attempts. The caller hands
    the job to the executor as an upload does. 409 when the file is not FAILED or its
    original is gone."""
    file, _email, job = _find(session, file_id)
    if file.status != "FAILED":
        raise ApiError(409, f"Only a failed file can be queued again (this one is "
                            f"{file.status}).", "not_failed")
    if is_expired(file) or not file.original_key or not storage.exists(file.original_key):
        raise ApiError(409, "The uploaded file has expired and was deleted; it cannot be "
                            "processed again.", "expired")
    now = utcnow()
    # Conditional on FAILED: two admins re-queueing at once queue it once.
    result = session.execute(
        update(File).where(File.id == file.id, File.status == "FAILED")
        .values(status="PENDING", error_message=None, error_code=None,
                processing_started_at=None, processing_completed_at=None,
                processing_duration=None, report=None, verdict=None)
        .execution_options(synchronize_session=False))
    if rows_matched(result) != 1:
        session.rollback()
        raise ApiError(409, "The file is no longer failed; it was queued again already.",
                       "not_failed")
    if job is None:
        owner = session.get(User, file.user_id)
        high = owner is not None and plans.has(settings, owner.role, Capability.HIGH_PRIORITY)
        job = Job(file_id=file.id, state="waiting", created_at=now,
                  request_id=logs.request_id.get(),
                  priority=HIGH_PRIORITY if high else NORMAL_PRIORITY)
        session.add(job)
    else:
        job.state, job.progress, job.attempts = "waiting", 0, 0
        job.worker_id = job.heartbeat_at = job.run_after = None
        job.started_at = job.finished_at = None
        job.error = job.password_secret = None
        job.created_at = now
    session.commit()
    return job
