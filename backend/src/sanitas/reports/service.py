"""Requesting, listing and downloading compliance reports, and reading what goes into one.

A report lists every file uploaded in its period ([start, end)) and scope (one account's
files, or everyone's) with its hashes, policy, result and findings, and the totals. What is
listed is read here (`report_rows`); writer.py turns it into CSV or PDF and worker.py runs
the whole in the background."""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

import orjson
from sqlalchemy import Text, delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from sanitas import plans
from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.engine.verdict import Outcome, Verdict, weight
from sanitas.files.schemas import FilePolicy
from sanitas.files.service import file_outcome, policy_ref, storage_used
from sanitas.models import AuditAction, File, FileStatus, Role, User
from sanitas.models.report import Report, ReportFormat, ReportStatus
from sanitas.reports.schemas import ReportIn, ReportList, ReportOut, period_bound
from sanitas.storage import CHUNK, Storage, StorageError
from sanitas.users.service import lock_user
from sanitas.web.errors import ApiError
from sanitas.web.schemas import Pagination

log = logging.getLogger(__name__)

MAX_PERIOD_DAYS = 3660  # ten years: a longer span is a typo
# Retry-After when an account has its most reports waiting: about one report's generation.
PENDING_RETRY_SECONDS = 5
ACTIVE = (ReportStatus.PENDING, ReportStatus.PROCESSING)


def scope_of(report: Report) -> str:
    if report.scope_user_id is None:
        return "all"
    return "own" if report.scope_user_id == report.user_id else report.scope_user_id


def report_out(report: Report) -> ReportOut:
    return ReportOut(id=report.id, status=ReportStatus(report.status),
                     format=ReportFormat(report.format), scope=scope_of(report),
                     period_start=report.period_start, period_end=report.period_end,
                     user_id=report.user_id, created_at=report.created_at,
                     completed_at=report.completed_at, expires_at=report.expires_at,
                     file_count=report.file_count,
                     size=report.size, error_message=report.error_message)


def report_ttl(settings: Settings) -> timedelta:
    """How long a report is kept after it was requested (the files' TTL unless set)."""
    hours = settings.report_ttl_hours
    return timedelta(hours=settings.file_ttl_hours if hours is None else hours)


def check_report_limits(session: Session, settings: Settings, user: User) -> None:
    """Refuse a further report while the account has its most reports waiting or being
    generated, or kept (429 with Retry-After: a pending one should be done by then, a kept one
    expired), or while its storage (files and reports) is used up (403, as for uploads)."""
    most_pending, most_stored = settings.report_max_pending, settings.report_max_stored
    mine = Report.user_id == user.id
    if most_pending >= 0:
        pending = session.scalar(select(func.count()).select_from(Report)
                                 .where(mine, Report.status.in_(ACTIVE))) or 0
        if pending >= most_pending:
            raise ApiError(429, f"You already have {pending} report(s) being generated; "
                                "request another once one of them is ready.",
                           "too_many_pending_reports",
                           headers={"Retry-After": str(PENDING_RETRY_SECONDS)})
    if most_stored >= 0:
        stored, oldest = session.execute(select(func.count(), func.min(Report.expires_at))
                                         .where(mine)).one()
        if stored >= most_stored:
            wait = math.ceil((oldest - utcnow()).total_seconds()) if oldest else 0
            if wait < 1:  # expired already: the next sweep deletes it
                wait = settings.expiry_sweep_interval_seconds
            hours = report_ttl(settings).total_seconds() / 3600
            raise ApiError(429, f"You have {stored} reports, the most an account may keep; "
                                f"each is deleted {hours:g} hours after it was requested.",
                           "too_many_stored_reports", headers={"Retry-After": str(wait)})
    quota = plans.plan_for(settings, user.role).limits.storage_quota
    if quota >= 0 and storage_used(session, user.id) >= quota:
        raise ApiError(403, "Storage quota exceeded: your files and reports use all of your "
                            f"{quota / (1024 * 1024):.1f} MB. They are deleted automatically "
                            "after they expire.", "storage_quota_exceeded")


def create_report(session: Session, settings: Settings, user: User, body: ReportIn, *,
                  ip: str | None) -> Report:
    """A PENDING report for the worker. A plan with Capability.REPORTS (routes.py checks it)
    reports on the account's own files; only admins
    on everyone's (`all`) or another user's (403 otherwise; 404 for an unknown user). The
    account's report limits are checked in the transaction that adds it, serialised per
    account (the lock uploads take), so concurrent requests cannot all see room for one."""
    start, end = period_bound(body.from_, end=False), period_bound(body.to, end=True)
    if end <= start:
        raise ApiError(422, "The period's end must be after its start", "validation_error")
    if end - start > timedelta(days=MAX_PERIOD_DAYS):
        raise ApiError(422, "A report covers at most ten years", "validation_error")
    scope = body.scope.strip()
    scope_user_id: str | None
    if scope in ("own", user.id):
        scope_user_id = user.id
    elif user.role != Role.ADMIN:
        raise ApiError(403, "Only admins can report on other users' files.", "forbidden")
    elif scope == "all":
        scope_user_id = None
    else:
        if session.get(User, scope) is None:
            raise ApiError(404, "User not found", "not_found")
        scope_user_id = scope
    lock_user(session, user)
    check_report_limits(session, settings, user)
    now = utcnow()
    report = Report(user_id=user.id, scope_user_id=scope_user_id, period_start=start,
                    period_end=end, format=body.format.value, status=ReportStatus.PENDING,
                    attempts=0, created_at=now, expires_at=now + report_ttl(settings))
    session.add(report)
    session.flush()
    if scope_user_id != user.id:  # a report on other people's files is worth an audit row
        record(session, action=AuditAction.REPORT_REQUESTED, actor=user, ip=ip,
               target=("report", report.id),
               detail={"scope": scope_of(report), "format": report.format,
                       "from": start.isoformat(), "to": end.isoformat()})
    session.commit()
    return report


def list_reports(session: Session, user: User, *, page: int, limit: int) -> ReportList:
    """The caller's reports, newest first; an admin sees everyone's."""
    conditions = [] if user.role == Role.ADMIN else [Report.user_id == user.id]
    total = session.scalar(select(func.count()).select_from(Report).where(*conditions)) or 0
    rows = session.scalars(select(Report).where(*conditions)
                           .order_by(Report.created_at.desc(), Report.id)
                           .offset(Pagination.offset(page, limit)).limit(limit)).all()
    return ReportList(reports=[report_out(r) for r in rows],
                      pagination=Pagination.of(page, limit, total))


@dataclass
class Download:
    name: str
    media_type: str
    size: int
    chunks: Iterator[bytes]


def open_download(session: Session, storage: Storage, user: User, report_id: str) -> Download:
    """The report's blob for its owner or an admin (404 for anyone else, as for an unknown
    id); 409 while it is not generated yet, or when generating it failed."""
    report = session.get(Report, report_id) if len(report_id) <= 64 else None
    if report is None or (report.user_id != user.id and user.role != Role.ADMIN):
        raise ApiError(404, "Report not found", "not_found")
    if report.status == ReportStatus.FAILED:
        raise ApiError(409, f"The report could not be generated: {report.error_message}",
                       "report_failed")
    if report.status != ReportStatus.COMPLETED or not report.storage_key:
        raise ApiError(409, "The report is not ready yet; try again in a moment.",
                       "report_not_ready")
    size = storage.size(report.storage_key)
    chunks = storage.iter_chunks(report.storage_key, CHUNK)
    day = f"{report.period_start:%Y%m%d}-{report.period_end - timedelta(seconds=1):%Y%m%d}"
    media = "text/csv; charset=utf-8" if report.format == ReportFormat.CSV else \
        "application/pdf"
    return Download(name=f"sanitas-report-{day}.{report.format}", media_type=media, size=size,
                    chunks=chunks)


# -- what a report lists ------------------------------------------------------------------------


def findings_by_kind(report: dict[str, Any] | None) -> Counter[str]:
    """How many findings of each kind a file's report holds, counting those the engine only
    summarised (a line "and N more of this kind" counts N; the line for what the overall cap
    left out counts its N under its own kind, `more`), as the verdict's counts do
    (engine/verdict.weight)."""
    counts: Counter[str] = Counter()
    findings = report.get("findings") if isinstance(report, dict) else None
    for item in findings if isinstance(findings, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("kind")
        if isinstance(kind, str):
            counts[kind] += weight(item)
    return counts


@dataclass(slots=True)
class FileRow:
    id: str
    uploaded_at: datetime
    name: str
    user_email: str
    detected_type: str | None
    size: int
    sha256_original: str | None
    sha256_sanitized: str | None
    policy_id: str
    policy_name: str
    policy_version: int
    result: str
    error_code: str | None
    findings: Counter[str]
    verdict: str = ""  # engine/verdict.py's word; empty while unfinished
    verdict_summary: str = ""


@dataclass
class Totals:
    files: int = 0
    completed: int = 0
    failed: int = 0
    findings: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=lambda: Counter(dict.fromkeys(Verdict, 0)))

    def add(self, row: FileRow) -> None:
        self.files += 1
        self.completed += row.result == FileStatus.COMPLETED
        self.failed += row.result == FileStatus.FAILED
        findings = self.findings
        for kind, n in row.findings.items():
            findings[kind] += n
        if row.verdict:
            self.verdicts[row.verdict] += 1


# The columns a report row is made of (file_outcome and policy_ref read some of them); the
# rest (the policy's JSON above all) stays in the database.
_REPORT_COLUMNS = (File.id, File.created_at, File.original_name, File.detected_type,
                   File.original_size, File.sha256_original, File.sha256_sanitized,
                   File.status, File.error_code, File.error_message,
                   File.report.cast(Text),  # parsed by _report_json
                   File.mode, File.policy_id, File.policy_name, File.policy_version,
                   File.user_id)


def _report_json(text: str | None) -> Any:
    """A file's stored report, as its JSON text parses: with orjson (a report is read per file:
    about 0.4 s of a month's 82,000 with the standard library, 0.1 s with orjson), else with
    the standard library for what orjson refuses (NaN, Infinity). Integers past 64 bits come
    back as floats, which no count a report holds reaches."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


class _Columns:
    """The attributes of one row that file_outcome and policy_ref read, set row by row (one
    object for the whole report instead of one per row)."""

    __slots__ = ("error_code", "error_message", "mode", "policy_id", "policy_name",
                 "policy_version", "report", "status")
    error_code: str | None
    error_message: str | None
    mode: str
    policy_id: str | None
    policy_name: str | None
    policy_version: int | None
    report: dict[str, Any] | None
    status: str


# Distinct refusal reasons remembered per report: refused(reason, code) is the same for every
# FAILED file with the same message and code; past this many the memo starts afresh (constant
# memory).
_MEMO = 1000


def report_rows(session: Session, report: Report, batch: int = 2000) -> Iterator[FileRow]:
    """Every file of the report's period and scope, oldest first, streamed `batch` rows at a
    time through a server-side cursor (yield_per: the memory used does not grow with the
    period; on PostgreSQL the rows come in index order, ix_files_created_id read backwards
    or ix_files_user_created for one account, with an incremental sort of the ties). Plain
    Core rows of the columns shown, read as tuples (no ORM loading, no attribute lookups by
    name); file_outcome and policy_ref read the same attributes from one reused holder."""
    query = (select(*_REPORT_COLUMNS, User.email).join(User, User.id == File.user_id)
             .where(File.created_at >= report.period_start, File.created_at < report.period_end)
             .order_by(File.created_at, File.id))
    if report.scope_user_id is not None:
        query = query.where(File.user_id == report.scope_user_id)
    result = session.connection().execute(
        query, execution_options={"stream_results": True, "yield_per": batch})
    policies: dict[tuple[object, ...], FilePolicy] = {}  # a few policies for many files
    refusals: dict[tuple[str | None, str | None], Outcome | None] = {}
    held = _Columns()
    file = cast(File, held)
    failed = FileStatus.FAILED
    for (file_id, created_at, name, detected_type, size, sha_original, sha_sanitized, status,
         error_code, error_message, text, mode, policy_id, policy_name, policy_version, _,
         email) in result:
        stored = _report_json(text)
        held.status, held.error_message, held.report = status, error_message, stored
        held.error_code = error_code
        key = (policy_id, policy_name, policy_version, mode)
        policy = policies.get(key)
        if policy is None:
            held.policy_id, held.policy_name, held.policy_version = policy_id, policy_name, \
                policy_version
            held.mode = mode
            policy = policies[key] = policy_ref(file)
        if status == failed:  # refused (or held back) for its message and code
            memo = (error_message, error_code)
            if memo not in refusals:
                if len(refusals) >= _MEMO:
                    refusals.clear()
                refusals[memo] = file_outcome(file)
            outcome = refusals[memo]
        else:
            outcome = file_outcome(file)
        yield FileRow(file_id, created_at, name, email, detected_type, size, sha_original,
                      sha_sanitized, policy.id, policy.name, policy.version, status,
                      error_code, findings_by_kind(stored),
                      outcome.verdict.value if outcome else "",
                      outcome.summary if outcome else "")


# -- expiry --------------------------------------------------------------------------------------
def expire_reports(factory: sessionmaker[Session], storage: Storage, *, batch: int = 200) -> int:
    """Delete the reports past expiresAt, each blob before its row (a crash leaves the row to
    the next sweep, never a blob that no row names). A report being generated is left to the
    sweep after it is done; the delete is conditional, so one the worker claims meanwhile is
    too. Returns the number of reports deleted."""
    count = 0
    while True:
        with factory() as s:
            rows = s.execute(select(Report.id, Report.storage_key)
                             .where(Report.expires_at <= utcnow(),
                                    Report.status != ReportStatus.PROCESSING)
                             .order_by(Report.expires_at).limit(batch)).all()
            gone = 0
            for report_id, key in rows:
                if key:
                    try:
                        storage.delete(key)
                    except StorageError:
                        log.warning("expiry: could not delete the blob of report %s", report_id,
                                    exc_info=True)
                        continue
                done = s.execute(delete(Report).where(
                    Report.id == report_id, Report.status != ReportStatus.PROCESSING)
                    .execution_options(synchronize_session=False))
                gone += rows_matched(done)
            s.commit()
        count += gone
        if len(rows) < batch or gone == 0:
            return count
