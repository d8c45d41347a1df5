"""Files: accepting uploads (quota, type by content, blobs then rows), reading them back with
authorisation, and the figures shared with usage statistics."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    case,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
    update,
)
from sqlalchemy.orm import Session

from sanitas import logs, plans, sealing
from sanitas.config import Settings
from sanitas.db import contains_text, utcnow
from sanitas.engine import verdict as verdicts
from sanitas.engine.verdict import Verdict
from sanitas.files.multipart import ReceivedFile
from sanitas.files.schemas import (
    FileHistory,
    FileOut,
    FilePolicy,
    FileStats,
    FileStatusData,
    FileSummary,
    JobOut,
    VerdictCounts,
)
from sanitas.models import (
    File,
    FileRollup,
    FileStatus,
    Job,
    JobState,
    Report,
    User,
)
from sanitas.models._common import new_id
from sanitas.models.job import HIGH_PRIORITY, NORMAL_PRIORITY, is_paused, jobs_ahead
from sanitas.plans import Capability, Limits
from sanitas.policies.applied import BUILT_IN_NAMES, AppliedPolicy
from sanitas.storage import BlobNotFound, Storage, original_key
from sanitas.users.service import lock_user
from sanitas.web.errors import ApiError
from sanitas.web.schemas import Pagination

log = logging.getLogger(__name__)

# -- periods and quotas ---------------------------------------------------------------------
def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month_start(now: datetime) -> datetime:
    start = month_start(now)
    return (start + timedelta(days=32)).replace(day=1)


def period_start(user: User, now: datetime | None = None) -> datetime:
    """The quota period: the calendar month (UTC), or since an admin reset if later."""
    start = month_start(now or utcnow())
    if user.quota_reset_at is not None and user.quota_reset_at > start:
        return user.quota_reset_at
    return start


def uploads_in_period(session: Session, user: User, now: datetime | None = None) -> int:
    return session.scalar(select(func.count()).select_from(File).where(
        File.user_id == user.id, File.created_at >= period_start(user, now))) or 0


def storage_used(session: Session, user_id: str | None = None) -> int:
    """Bytes of live blobs: originals and sanitized copies of files not yet expired, and the
    compliance reports generated (each until the expiry sweep deletes it)."""
    live_original = case((File.original_key.is_not(None), File.original_size), else_=0)
    live_sanitized = case((File.sanitized_key.is_not(None),
                           func.coalesce(File.sanitized_size, 0)), else_=0)
    # Only rows still holding a blob count: ix_files_live_blobs holds just those, so this
    # reads the live files, not the whole history (the same sum: the others add 0).
    query = select(func.coalesce(func.sum(live_original), 0)
                   + func.coalesce(func.sum(live_sanitized), 0)).where(
        or_(File.original_key.is_not(None), File.sanitized_key.is_not(None)))
    reports = select(func.coalesce(func.sum(Report.size), 0)).where(
        Report.storage_key.is_not(None))
    if user_id is not None:
        query = query.where(File.user_id == user_id)
        reports = reports.where(Report.user_id == user_id)
    return int(session.scalar(query) or 0) + int(session.scalar(reports) or 0)


def check_monthly_quota(session: Session, user: User, limits: Limits, adding: int) -> None:
    quota = limits.uploads_per_month
    if quota < 0:
        return
    used = uploads_in_period(session, user)
    if used + adding > quota:
        left = max(0, quota - used)
        detail = (f"you have {left} upload(s) left this month" if left
                  else "no uploads are left this month")
        raise ApiError(403, f"Monthly upload quota exceeded: your account allows {quota} "
                            f"uploads per month and {detail}.", "quota_exceeded")


def check_storage_quota(session: Session, user: User, limits: Limits, adding: int) -> None:
    quota = limits.storage_quota
    if quota < 0:
        return
    used = storage_used(session, user.id)
    if used + adding > quota:
        raise ApiError(403, f"Storage quota exceeded: these files need {_mb(adding)}, and "
                            f"{_mb(max(0, quota - used))} of your {_mb(quota)} remain. Files "
                            f"are deleted automatically after they expire.",
                       "storage_quota_exceeded")


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


MAX_PASSWORD_LENGTH = 1024


def check_password(password: str | None) -> str | None:
    """The upload's optional password for encrypted inputs (None when empty). Never echoed in
    an error, never logged."""
    if not password:
        return None
    if len(password) > MAX_PASSWORD_LENGTH or "\x00" in password:
        raise ApiError(400, f"The password must be at most {MAX_PASSWORD_LENGTH} characters "
                            "without NUL characters.", "invalid_password")
    return password


# -- type detection (the engine's, by content) -----------------------------------------------
def supported_formats() -> list[str]:
    """Extensions the engine accepts (the format registry's list), for the upload screen."""
    from sanitas.engine import formats

    return formats.supported_extensions()


def detect_type(received: ReceivedFile) -> str:
    """The kind as far as a bounded prefix tells (the engine's `sniff`, linear in at most
    `HEAD_SIZE` bytes); refuses what the engine will certainly not take. Containers (ZIP,
    OLE) get a provisional kind that the sandboxed job replaces with the one their structure
    shows: the API process never parses an upload beyond this prefix."""
    from sanitas.engine.detect import HEAD_SIZE, sniff
    from sanitas.engine.report import Rejected

    with open(received.path, "rb") as fh:
        head = fh.read(HEAD_SIZE)
    try:
        return sniff(head, received.name, received.size).kind
    except Rejected as exc:
        raise ApiError(415, f'Unsupported file "{received.name}": {exc.reason}',
                       "unsupported_type") from exc


# -- accepting an upload ---------------------------------------------------------------------
def accept_upload(session: Session, settings: Settings, storage: Storage, user: User,
                  received: list[ReceivedFile], policy: AppliedPolicy,
                  password: str | None = None) -> list[tuple[File, Job]]:
    """Validate, store the blobs, then commit rows for all files at once. Anything refused
    leaves neither rows nor blobs behind. `password` (for encrypted inputs) goes to every
    file's job, sealed; it is wiped when the job ends (sealing.py). Each file
    records `policy` (id, version, name and JSON: what its job cleans with, chosen by
    files/intake.py; its mode is the policy's) and the SHA-256 computed while its bytes were
    received."""
    plan = plans.plan_for(settings, user.role)
    limits = plan.limits
    if not received:
        raise ApiError(400, "No file was uploaded.", "no_file")
    for r in received:
        if r.size == 0:
            raise ApiError(400, f'"{r.name}" is empty.', "empty_file")
    kinds = [detect_type(r) for r in received]

    adding, adding_bytes = len(received), sum(r.size for r in received)
    # A first look without a lock refuses most over-quota uploads before any blob is stored.
    check_monthly_quota(session, user, limits, adding)
    check_storage_quota(session, user, limits, adding_bytes)

    priority = HIGH_PRIORITY if plan.has(Capability.HIGH_PRIORITY) else NORMAL_PRIORITY
    file_ids = [new_id() for _ in received]
    stored: list[str] = []
    out: list[tuple[File, Job]] = []
    try:
        for r, file_id in zip(received, file_ids, strict=True):
            storage.put_file(original_key(file_id), r.path, move=True)
            stored.append(original_key(file_id))
        # The check that holds: serialised per user, in the transaction that adds the rows
        # (the blobs are stored before, so the lock is not held while they are written).
        if limits.uploads_per_month >= 0 or limits.storage_quota >= 0:
            lock_user(session, user)
            check_monthly_quota(session, user, limits, adding)
            check_storage_quota(session, user, limits, adding_bytes)
        now = utcnow()
        expires = now + timedelta(hours=settings.file_ttl_hours)
        for r, kind, file_id, key in zip(received, kinds, file_ids, stored, strict=True):
            file = File(id=file_id, user_id=user.id, original_name=r.name,
                        original_size=r.size, detected_type=kind, mode=policy.mode.value,
                        original_key=key, status=FileStatus.PENDING, created_at=now,
                        expires_at=expires,
                        is_expired=False, download_count=0,
                        policy_id=policy.id, policy_version=policy.version,
                        policy_name=policy.name, policy_body=policy.body,
                        sha256_original=r.sha256 or None)
            job_id = new_id()
            job = Job(id=job_id, file_id=file_id, state=JobState.WAITING, priority=priority,
                      created_at=now, request_id=logs.request_id.get(),
                      password_secret=sealing.seal(settings, job_id, password)
                      if password else None)
            session.add(file)
            session.add(job)
            out.append((file, job))
        session.commit()
    except BaseException:
        session.rollback()
        for key in stored:
            try:
                storage.delete(key)
            except Exception:
                log.warning("could not remove blob %s after a failed upload", key,
                            exc_info=True)
        raise
    return out


# -- reading ---------------------------------------------------------------------------------
def get_visible_file(session: Session, user: User, file_id: str, *, admin: bool) -> File:
    """The file if the caller may see it; another user's file is 'not found' (ids are not
    probeable). `admin`: the caller has admin powers (deps.FileCaller.admin: an admin signed
    in, never an API key) and sees every file."""
    file = session.get(File, file_id) if len(file_id) <= 64 else None
    if file is None or (file.user_id != user.id and not admin):
        raise ApiError(404, "File not found", "not_found")
    return file


def is_expired(file: File, now: datetime | None = None) -> bool:
    return file.is_expired or file.expires_at <= (now or utcnow())


def policy_ref(file: File) -> FilePolicy:
    """The policy a file is cleaned with, as recorded with it; files uploaded before policies
    existed were cleaned with the built-in of their mode."""
    if file.policy_id is None:
        return FilePolicy(id=file.mode, name=BUILT_IN_NAMES.get(file.mode, file.mode),
                          version=1)
    return FilePolicy(id=file.policy_id, name=file.policy_name or file.policy_id,
                      version=file.policy_version or 1)


def file_outcome(file: File) -> verdicts.Outcome | None:
    """The verdict on a file, its counts and sentence: refused when FAILED (its error message
    says why), else the one its report stores (derived from the findings for reports stored
    before verdicts existed); None while unfinished and for an ICAP transaction the engine
    never saw."""
    if file.status == FileStatus.FAILED:
        return verdicts.refused(file.error_message, file.error_code)
    if file.status != FileStatus.COMPLETED:
        return None
    report = file.report if isinstance(file.report, dict) else {}
    icap = report.get("icap")
    if ("verdict" in report and report["verdict"] is None) or \
            (isinstance(icap, dict) and icap.get("outcome") == "passed"):
        return None
    return verdicts.of_report(report)


def _with_verdict(out: FileSummary, file: File) -> None:
    outcome = file_outcome(file)
    out.verdict = outcome.verdict if outcome else None
    out.verdict_summary = outcome.summary if outcome else None
    out.verdict_counts = (VerdictCounts.model_validate(outcome.counts.to_json())
                          if outcome and outcome.verdict is not Verdict.REFUSED else None)


def file_out(file: File, now: datetime | None = None) -> FileOut:
    out = FileOut.model_validate(file)
    out.is_expired = is_expired(file, now)  # by the clock, not only once the sweep has run
    out.policy = policy_ref(file)
    _with_verdict(out, file)
    return out


def file_summary(file: File) -> FileSummary:
    out = FileSummary.model_validate(file)
    out.is_expired = is_expired(file)
    out.policy = policy_ref(file)
    _with_verdict(out, file)
    return out


def job_out(job: Job | None) -> JobOut | None:
    if job is None:
        return None
    out = JobOut.model_validate(job)
    out.progress = min(100, max(0, job.progress))
    return out


# What a status answer is made of, for its ETag: every column of the file row but the policy's
# body (the answer names the policy, it does not show its rules), and the job's shown columns
# (never its heartbeat, which changes every few seconds while the answer does not).
_ETAG_FILE_COLUMNS = tuple(c.key for c in File.__table__.columns if c.key != "policy_body")
_ETAG_JOB_COLUMNS = ("id", "state", "progress", "attempts", "created_at", "started_at",
                     "finished_at")
# Bumped when the status answer is derived differently from the same rows (with the package
# version, so an upgraded server never confirms an answer the previous one rendered).
STATUS_ETAG_FORMAT = 1


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sanitas")
    except PackageNotFoundError:
        return "0"


_ETAG_SALT = f"status/{STATUS_ETAG_FORMAT}/{_package_version()}"


@dataclass(frozen=True)
class StatusSnapshot:
    """What the status call shows, read but not yet rendered: `etag` (a strong validator of
    the answer) is cheap, `answer()` renders the file, its report and verdict."""

    file: File
    job: Job | None
    ahead: int | None
    paused: bool
    now: datetime
    etag: str

    def answer(self) -> FileStatusData:
        out = job_out(self.job)
        if out is not None:
            out.ahead = self.ahead
        return FileStatusData(file=file_out(self.file, self.now), job=out,
                              queue_paused=self.paused)


def status_etag(file: File, job: Job | None, ahead: int | None, paused: bool,
                now: datetime) -> str:
    """A strong ETag of the status answer: a digest of everything it is derived from (the
    file row, the job's shown columns, the ahead count, the pause flag, whether the file
    has expired by now), so any change the answer would show changes it."""
    parts = [_ETAG_SALT, [getattr(file, key) for key in _ETAG_FILE_COLUMNS],
             None if job is None else [getattr(job, key) for key in _ETAG_JOB_COLUMNS],
             ahead, paused, is_expired(file, now)]
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str,
                                       separators=(",", ":")).encode()).hexdigest()
    return f'"{digest[:32]}"'


def status_snapshot(session: Session, settings: Settings, user: User, file_id: str, *,
                    admin: bool) -> StatusSnapshot:
    """A file the caller may see (else 404), with its job (None once the job record was
    cleared), the number of jobs ahead of a waiting one and whether the queue is paused."""
    file = get_visible_file(session, user, file_id, admin=admin)
    job = session.scalar(select(Job).where(Job.file_id == file.id))
    ahead = None
    if job is not None and job.state == JobState.WAITING:
        ahead = jobs_ahead(session, settings.job_heartbeat_timeout_seconds, job,
                           owner=file.user_id)
    paused = is_paused(session)
    now = utcnow()
    return StatusSnapshot(file=file, job=job, ahead=ahead, paused=paused, now=now,
                          etag=status_etag(file, job, ahead, paused, now))


def file_status(session: Session, settings: Settings, user: User, file_id: str, *,
                admin: bool) -> FileStatusData:
    """The status answer (`status_snapshot`, rendered)."""
    return status_snapshot(session, settings, user, file_id, admin=admin).answer()


# -- downloads -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Download:
    chunks: Iterator[bytes]
    size: int
    name: str


def open_download(session: Session, storage: Storage, user: User, file_id: str, *,
                  admin: bool) -> Download:
    """The sanitized copy of a file the caller may see, counted as one more download; 410 once
    it expired (or its blob is gone), 409 before it is ready."""
    file = get_visible_file(session, user, file_id, admin=admin)
    if is_expired(file):
        raise ApiError(410, "File has expired and was deleted.", "expired")
    if file.status != FileStatus.COMPLETED or not file.sanitized_key:
        raise ApiError(409, f"File is not ready for download (status {file.status}).",
                       "not_ready")
    try:
        chunks = storage.iter_chunks(file.sanitized_key)
        size = file.sanitized_size if file.sanitized_size is not None else \
            storage.size(file.sanitized_key)
    except BlobNotFound:
        raise ApiError(410, "File has expired and was deleted.", "expired") from None
    session.execute(update(File).where(File.id == file.id)
                    .values(download_count=File.download_count + 1))
    session.commit()
    return Download(chunks=chunks, size=size,
                    name=file.sanitized_name or f"sanitized_{file.original_name}")


# -- a user's file history -------------------------------------------------------------------
SORT_COLUMNS = {"createdAt": File.created_at, "originalName": func.lower(File.original_name),
                "originalSize": File.original_size, "status": File.status}


def check_history_access(session: Session, user: User, user_id: str, *, admin: bool) -> None:
    """Users see their own history; callers with admin powers (`admin`, as for
    get_visible_file) anyone's. Otherwise (or for no such user) 404."""
    if user_id != user.id and (not admin or session.get(User, user_id) is None):
        raise ApiError(404, "User not found", "not_found")


def file_stats(session: Session, user_id: str) -> FileStats:
    """The user's files by status, from the daily rollup (kept by triggers in the transaction
    of every write to `files`): one row per day and combination, not one per file."""
    counts = status_counts(session, [FileRollup.user_id == user_id])
    return FileStats(total=sum(counts.values()),
                     completed=counts.get(FileStatus.COMPLETED, 0),
                     processing=counts.get(FileStatus.PROCESSING, 0),
                     pending=counts.get(FileStatus.PENDING, 0),
                     failed=counts.get(FileStatus.FAILED, 0))


def status_counts(session: Session, conditions: list[ColumnElement[bool]]) -> dict[str, int]:
    """Files by status from the rollup rows matching `conditions`."""
    return {status: int(n or 0) for status, n in session.execute(
        select(FileRollup.status, func.sum(FileRollup.files)).where(*conditions)
        .group_by(FileRollup.status)).all()}


def rollup_filters(status: FileStatus | None,
                   verdict: Verdict | None) -> list[ColumnElement[bool]]:
    """The rollup's spelling of a list's status and verdict filters (as `file_history` applies
    them to rows: every FAILED file is refused unless held back encrypted, `encrypted` is
    held back or passed, other verdicts are COMPLETED files')."""
    out: list[ColumnElement[bool]] = []
    if status is not None:
        out.append(FileRollup.status == status)
    if verdict is Verdict.REFUSED:
        out.extend((FileRollup.status == FileStatus.FAILED,
                    FileRollup.verdict != Verdict.ENCRYPTED.value))
    elif verdict is Verdict.ENCRYPTED:
        out.append(FileRollup.verdict == verdict.value)
    elif verdict is not None:
        out.extend((FileRollup.status == FileStatus.COMPLETED,
                    FileRollup.verdict == verdict.value))
    return out


def rollup_count(session: Session, conditions: list[ColumnElement[bool]]) -> int:
    return int(session.scalar(select(func.sum(FileRollup.files)).where(*conditions)) or 0)


def page_ids(session: Session, ids: Select[Any], column: Any,
             descending: bool, *, page: int, limit: int, total: int) -> list[str]:
    """The ids of page `page` of `ids` (a SELECT of File.id with its conditions) ordered by
    `column` then File.id, given the `total` it matches. Only ids are read, so a page in an
    index's order is an index-only scan; a page nearer the end than the start is read from
    the end in the reverse order (then turned round), so the last page costs what the first
    does. The same rows in the same order as OFFSET from the start."""
    offset = Pagination.offset(page, limit)
    if offset >= total:
        return []
    after = total - offset - limit  # rows after this page
    if after < offset:
        backwards = column.asc() if descending else column.desc()
        found = session.scalars(ids.order_by(backwards, File.id.desc())
                                .offset(max(0, after)).limit(min(limit, total - offset))).all()
        return [str(i) for i in reversed(found)]
    forwards = column.desc() if descending else column.asc()
    return [str(i) for i in session.scalars(ids.order_by(forwards, File.id)
                                            .offset(offset).limit(limit))]


def files_by_id(session: Session, ids: list[str]) -> list[File]:
    """The rows of `ids`, in that order."""
    if not ids:
        return []
    found = {f.id: f for f in session.scalars(select(File).where(File.id.in_(ids)))}
    return [found[i] for i in ids if i in found]


NAME_FTS = "files_name_fts"  # SQLite's trigram index of names (migration a0c2e4f6b8d1)
# PostgreSQL: how many rows hold the rarest key of a search (:u the owner, :n the lower-cased
# search), by ANALYZE's most common keys of ix_files_name_keys (a key not among them is
# rarer than all of them: 0 here); NULL before the first ANALYZE.
COMMON_KEYS = text(
    "SELECT max(c.reltuples) * min(coalesce(s.freqs[array_position(s.keys, k)], 0)) "
    "FROM (SELECT most_common_elems::text::text[] AS keys, most_common_elem_freqs AS freqs "
    "      FROM pg_stats WHERE schemaname = current_schema() "
    "      AND tablename = 'ix_files_name_keys') AS s, "
    "pg_class AS c, unnest(sanitas_name_keys(:u, :n)) AS k "
    "WHERE c.oid = 'files'::regclass")


def name_contains(session: Session, user_id: str, search: str,
                  rows: int) -> ColumnElement[bool]:
    """The history's name search in the files of `user_id` (who has `rows` files): the name
    contains `search`, ignoring case, LIKE's wildcards taken literally (db.contains_text,
    the test every answer passes, so the answers are the LIKE's on each database).

    A search of 3 characters or more first narrows the rows by trigrams (every 3 characters in
    a row of the lower-cased search are in the name), a superset of the LIKE's rows:
    - PostgreSQL: ix_files_name_keys, a GIN index of sanitas_name_keys(user_id,
      lower(original_name)): the name's trigrams tagged with a hash of the owner, so the
      search reads this account's names only, never everyone's holding a common trigram;
      the search's own keys come from the same function. When ANALYZE's statistics of the
      index (`COMMON_KEYS`) say that the search's rarest key is in more than half the
      account's rows, the account's rows are read instead: a candidate from the index costs
      about twice a row read in the account's order (the planner cannot tell, as it takes
      the keys for independent).
    - SQLite: files_name_fts (FTS5, trigram tokenizer, which folds case per character), when
      it holds at most `rows` candidates in the whole table; a search common to more names
      than the account has reads the account's rows instead, which costs less.
    Shorter searches (no trigram), and SQLite without the FTS5 table (a build lacking FTS5 or
    its trigram tokenizer), read the account's rows."""
    match = contains_text(File.original_name, search)
    needle = search.lower()
    if len(needle) < 3:
        return match
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        if (session.scalar(COMMON_KEYS, {"u": user_id, "n": needle}) or 0) > rows / 2:
            return match
        keys = func.sanitas_name_keys
        return and_(keys(File.user_id, func.lower(File.original_name))
                    .op("@>", is_comparison=True)(keys(user_id, needle)), match)
    if dialect != "sqlite" or session.scalar(
            text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n"),
            {"n": NAME_FTS}) is None:
        return match
    fts = table(NAME_FTS, literal_column("rowid"))
    phrase = '"' + needle.replace('"', '""') + '"'  # one FTS5 string: its trigrams in a row
    candidates: Select[Any] = select(literal_column("rowid")).select_from(fts).where(
        literal_column(NAME_FTS).op("MATCH")(phrase))
    found = session.scalar(select(func.count()).select_from(
        candidates.limit(rows + 1).subquery())) or 0
    if found > rows:
        return match
    return and_(literal_column("files.rowid").in_(candidates), match)


def file_history(session: Session, user_id: str, *, page: int, limit: int,
                 status: FileStatus | None = None, search: str | None = None,
                 sort_by: str = "createdAt", sort_order: str = "desc",
                 verdict: Verdict | None = None) -> FileHistory:
    """One page of a user's files (newest first unless `sort_by`/`sort_order` say otherwise),
    optionally of one status, of one verdict and/or whose name contains `search`, with the
    counts of all the user's files by status.

    The counts and, without a search, the total come from the daily rollup; the page reads
    ids through ix_files_user_created (from whichever end is nearer), a search through the
    trigram index of names (`name_contains`)."""
    conditions = [File.user_id == user_id]
    if status is not None:
        conditions.append(File.status == status)
    if verdict is Verdict.REFUSED:  # every FAILED file but one held back encrypted
        conditions.extend((File.status == FileStatus.FAILED,
                           File.verdict.is_distinct_from(Verdict.ENCRYPTED.value)))
    elif verdict is Verdict.ENCRYPTED:  # held back (FAILED) or passed (COMPLETED)
        conditions.append(File.verdict == verdict.value)
    elif verdict is not None:
        conditions.extend((File.status == FileStatus.COMPLETED, File.verdict == verdict.value))
    stats = file_stats(session, user_id)
    if search and search.strip():
        conditions.append(name_contains(session, user_id, search.strip(), stats.total))
        total = session.scalar(select(func.count()).select_from(File).where(*conditions)) or 0
    elif status is None and verdict is None:
        total = stats.total
    else:
        total = rollup_count(session, [FileRollup.user_id == user_id,
                                       *rollup_filters(status, verdict)])
    ids = page_ids(session, select(File.id).where(*conditions), SORT_COLUMNS[sort_by],
                   sort_order != "asc", page=page, limit=limit, total=total)
    return FileHistory(files=[file_summary(f) for f in files_by_id(session, ids)],
                       stats=stats, pagination=Pagination.of(page, limit, total))


# -- the one-call sanitize (POST /api/v1/sanitize) -------------------------------------------
FINISHED = frozenset({FileStatus.COMPLETED, FileStatus.FAILED})
SUMMARY_HEADER_MAX = 4000  # characters of the X-Sanitas-Report header


def current_status(session: Session, file_id: str) -> FileStatus:
    """A file's status as stored now (one short query; the caller polls)."""
    status = session.scalar(select(File.status).where(File.id == file_id))
    if status is None:
        raise ApiError(404, "File not found", "not_found")
    return FileStatus(status)


def is_rejection(code: str | None) -> bool:
    """Whether a FAILED file was refused for what it is (the engine's codes), rather than
    failed by the service (interrupted, expired, infrastructure, internal)."""
    from sanitas.engine.report import RejectionCode

    return code in set(RejectionCode)


def report_summary(file: File) -> str:
    """The findings as one header-safe line of JSON (ASCII, bounded): counts by kind and
    action, hashes and policy; the status call has the whole report."""
    findings = (file.report or {}).get("findings") if isinstance(file.report, dict) else None
    kinds: dict[str, int] = {}
    actions: dict[str, int] = {}
    for item in findings if isinstance(findings, list) else []:
        if isinstance(item, dict):
            kind, action = str(item.get("kind", "?"))[:60], str(item.get("action", "?"))[:20]
            kinds[kind] = kinds.get(kind, 0) + 1
            actions[action] = actions.get(action, 0) + 1
    ref = policy_ref(file)
    outcome = file_outcome(file)
    summary: dict[str, object] = {
        "fileId": file.id, "status": file.status, "detectedType": file.detected_type,
        **(outcome.to_json() if outcome else {}),
        "findings": sum(kinds.values()), "actions": actions,
        "kinds": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:25]),
        "policy": {"id": ref.id, "name": ref.name, "version": ref.version},
        "sha256Original": file.sha256_original, "sha256Sanitized": file.sha256_sanitized,
        "report": f"/api/process/status/{file.id}"}
    text = json.dumps(summary, ensure_ascii=True, separators=(",", ":"))
    if len(text) > SUMMARY_HEADER_MAX:
        summary["kinds"] = {}
        summary["truncated"] = True
        if outcome:  # the names dropped are in the status call's answer
            summary["verdictSummary"] = outcome.summary[:200]
            summary["verdictCounts"] = {**outcome.counts.to_json(), "droppedFiles": []}
        text = json.dumps(summary, ensure_ascii=True, separators=(",", ":"))
    return text


def verdict_headers(file: File) -> dict[str, str]:
    """`X-Sanitas-Verdict` (the word) and `X-Sanitas-Verdict-Counts` (`threats=3;
    hiddenData=0; filesDropped=1; contentDropped=0; textLayerDropped=0;
    encryptedHeld=0; encryptedPassed=0`) of a finished file."""
    outcome = file_outcome(file)
    if outcome is None:
        return {}
    return {"X-Sanitas-Verdict": outcome.verdict.value,
            "X-Sanitas-Verdict-Counts": outcome.counts.header()}
