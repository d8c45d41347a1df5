"""Usage figures: a user's quota, storage and monthly history, the admins' analytics, and
quota resets."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from typing import Any

import numpy
from sqlalchemy import (
    ColumnElement,
    Integer,
    String,
    and_,
    case,
    cast,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from sanitas import plans
from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.engine import formats
from sanitas.engine.report import RejectionCode
from sanitas.engine.verdict import Verdict, weight
from sanitas.files import service as files
from sanitas.models import (
    EVERYONE,
    AuditAction,
    DurationRollup,
    File,
    FileRollup,
    FileStatus,
    ReportRollup,
    Role,
    ThreatRollup,
    User,
)
from sanitas.usage.schemas import (
    Analytics,
    AnalyticsCharts,
    AnalyticsFiles,
    AnalyticsPeriod,
    AnalyticsStorage,
    AnalyticsUsers,
    ChartBucket,
    ChartScope,
    FamilyTiming,
    FilesInBucket,
    QuotaReset,
    RejectionCount,
    RowsRead,
    ThreatCount,
    Timeframe,
    TypeCount,
    UsageLimits,
    UsageMonth,
    UsageOverall,
    UsagePeriod,
    UsageStats,
    UsageUser,
    VerdictTotals,
)
from sanitas.web.errors import ApiError

NEAR_QUOTA = 0.8
TIMEFRAMES = {Timeframe.DAY: timedelta(hours=24), Timeframe.WEEK: timedelta(days=7),
              Timeframe.MONTH: timedelta(days=30)}


def percent(used: int, quota: int) -> float:
    """`used` as a percentage of `quota` (0 for an unlimited quota, -1)."""
    if quota < 0:
        return 0.0
    if quota == 0:
        return 100.0 if used else 0.0
    return round(used / quota * 100, 2)


def usage_stats(session: Session, settings: Settings, user: User) -> UsageStats:
    limits = plans.plan_for(settings, user.role).limits
    now = utcnow()
    used = files.uploads_in_period(session, user, now)
    quota = limits.uploads_per_month
    stored = files.storage_used(session, user.id)
    total_files = int(session.scalar(select(func.sum(FileRollup.files))
                                     .where(FileRollup.user_id == user.id)) or 0)
    reset = files.next_month_start(now)
    return UsageStats(
        user=UsageUser(role=user.role, member_since=user.created_at),
        current_period=UsagePeriod(uploads_used=used, upload_quota=quota,
                                   quota_utilization=percent(used, quota),
                                   start=files.period_start(user, now), end=reset),
        limits=UsageLimits(
            is_over_quota=quota >= 0 and used >= quota,
            is_near_quota=quota >= 0 and used >= NEAR_QUOTA * quota,
            days_until_reset=max(0, math.ceil((reset - now).total_seconds() / 86400)),
            max_file_size=limits.max_file_size, max_files=limits.max_files_per_upload),
        overall=UsageOverall(total_files=total_files, total_storage_used=stored,
                             storage_quota=limits.storage_quota,
                             storage_utilization=percent(stored, limits.storage_quota)),
        verdicts=verdict_totals(session, user.id))


def verdict_totals(session: Session, user_id: str) -> VerdictTotals:
    """A user's files by verdict (the stored column; every FAILED file is refused unless it
    was held back encrypted), from the daily rollup."""
    word = case((and_(FileRollup.status == FileStatus.FAILED,
                      FileRollup.verdict != Verdict.ENCRYPTED.value),
                 literal(Verdict.REFUSED.value)),
                else_=FileRollup.verdict)
    counts: dict[str | None, int] = dict(session.execute(
        select(word, func.sum(FileRollup.files)).where(
            FileRollup.user_id == user_id,
            FileRollup.status.in_([FileStatus.COMPLETED, FileStatus.FAILED]))
        .group_by(word)).all())
    return VerdictTotals(**{v.value: int(counts.get(v.value) or 0) for v in Verdict})


def usage_history(session: Session, user: User, months: int) -> list[UsageMonth]:
    """The user's uploads per calendar month (UTC), the current month and `months - 1`
    before it, oldest first; months without uploads included."""
    now = utcnow()
    first = files.month_start(now)
    for _ in range(months - 1):
        first = files.month_start(first - timedelta(days=1))
    buckets: dict[str, UsageMonth] = {}
    cursor = first
    while cursor <= now:
        key = cursor.strftime("%Y-%m")
        buckets[key] = UsageMonth(month=key, uploads=0, successful=0, total_size=0)
        cursor = files.next_month_start(cursor)
    # From the daily rollup: months are whole UTC days.
    rows = session.execute(
        select(FileRollup.day, FileRollup.status, func.sum(FileRollup.files),
               func.sum(FileRollup.bytes_in))
        .where(FileRollup.user_id == user.id, FileRollup.day >= first.date())
        .group_by(FileRollup.day, FileRollup.status))
    for day, status, count, size in rows:
        bucket = buckets.get(day.strftime("%Y-%m"))
        if bucket is None:
            continue
        bucket.uploads += int(count or 0)
        bucket.successful += int(count or 0) if status == FileStatus.COMPLETED else 0
        bucket.total_size += int(size or 0)
    return list(buckets.values())


def analytics(session: Session, timeframe: Timeframe) -> Analytics:
    """Service-wide figures; `recent` and `active` count the last day, week or 30 days."""
    end = utcnow()
    start = end - TIMEFRAMES[timeframe]
    # the columns hold the enums' string values; the response model reads them back as enums
    by_role: dict[str, int] = {role: 0 for role in Role}
    by_role.update(dict(session.execute(select(User.role, func.count()).group_by(User.role))
                        .all()))
    # The daily rollup for the whole UTC days after start's, the rows of its partial day.
    first_day, edge_end = _edge(start)
    edge = [File.created_at >= start, File.created_at < edge_end]
    # Someone uploaded in the period: one probe of ix_files_user_created per user.
    uploaded = select(File.id).where(File.user_id == User.id, File.created_at >= start).exists()
    active = session.scalar(select(func.count()).select_from(User).where(
        or_(User.last_login >= start, uploaded))) or 0
    everyone = FileRollup.user_id == EVERYONE
    # Every file by status and their bytes: one read of everyone's rollup rows, not two.
    by_status: dict[str, int] = {s: 0 for s in FileStatus}
    size = 0
    for status, n, status_bytes in session.execute(
            select(FileRollup.status, func.sum(FileRollup.files), func.sum(FileRollup.bytes_in))
            .where(everyone).group_by(FileRollup.status)):
        by_status[status] = int(n or 0)
        size += int(status_bytes or 0)
    count = sum(by_status.values())
    recent, recent_completed = 0, 0
    for status, n in [*session.execute(select(File.status, func.count()).where(*edge)
                                       .group_by(File.status)),
                      *session.execute(select(FileRollup.status, func.sum(FileRollup.files))
                                       .where(everyone, FileRollup.day > first_day)
                                       .group_by(FileRollup.status))]:
        recent += int(n or 0)
        recent_completed += int(n or 0) if status == FileStatus.COMPLETED else 0
    average = size / count if count else 0
    return Analytics(
        timeframe=timeframe, period=AnalyticsPeriod(start=start, end=end),
        users=AnalyticsUsers(total=sum(by_role.values()), active=active, by_role=by_role),
        files=AnalyticsFiles(total=sum(by_status.values()), recent=recent,
                             recent_completed=recent_completed, by_status=by_status),
        storage=AnalyticsStorage(total_used=files.storage_used(session),
                                 average_file_size=round(float(average))))


def _edge(start: datetime) -> tuple[date, datetime]:
    """start's UTC day and the end of it: a period from `start` reads the rollup for the
    days after that one and the rows of [start, end of its day)."""
    midnight = start.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight.date(), midnight + timedelta(days=1)


# -- Charts ----------------------------------------------------------------------------------------
THREAT_ACTIONS = frozenset(("removed", "converted", "blocked"))  # not "kept"
TOP_TYPES = 10
# Rows of a period read into Python at most (the newest first); the answer says when a series
# was computed from fewer rows than matched. Reports carry up to 500 findings each.
MAX_REPORTS = 5_000
MAX_DURATIONS = 100_000
UNKNOWN = "unknown"
_REJECTION_CODES = frozenset(RejectionCode)


def require_charts_scope(user: User, scope: ChartScope) -> None:
    """Everyone's files only for admins (the charts themselves are Capability.CHARTS, which
    routes.py requires)."""
    if scope is ChartScope.ALL and user.role != Role.ADMIN:
        raise ApiError(403, "Admin privileges are required for this action.", "forbidden")


def _buckets(timeframe: Timeframe, start: datetime, end: datetime
             ) -> tuple[ChartBucket, list[datetime]]:
    """The first moments of the files-over-time buckets covering [start, end]: whole UTC hours
    for a day, whole UTC days otherwise (the first one begins at or before `start`)."""
    if timeframe is Timeframe.DAY:
        width, first = timedelta(hours=1), start.replace(minute=0, second=0, microsecond=0)
        unit = ChartBucket.HOUR
    else:
        width = timedelta(days=1)
        first = start.replace(hour=0, minute=0, second=0, microsecond=0)
        unit = ChartBucket.DAY
    starts = []
    cursor = first
    while cursor <= end:
        starts.append(cursor)
        cursor += width
    return unit, starts


def _bucket_of(starts: list[datetime]) -> ColumnElement[int]:
    """The bucket index of a file's creation time, as SQL both databases evaluate alike (a
    CASE over the bucket boundaries, compared as the column's own type)."""
    if len(starts) == 1:
        return literal(0, Integer)
    return case(*((File.created_at < boundary, index)
                  for index, boundary in enumerate(starts[1:])), else_=len(starts) - 1)


def _percentile(ordered: Any, share: float) -> float:
    """`share` (0..1) of the way through sorted values, interpolating linearly between the
    closest ranks, in PostgreSQL's percentile_cont's arithmetic."""
    rank = share * (len(ordered) - 1)
    low = math.floor(rank)
    first, second = float(ordered[low]), float(ordered[math.ceil(rank)])
    return first + (second - first) * (rank - low)


def _threat_count(finding: dict[str, Any]) -> tuple[str, int] | None:
    """(kind, how many) a report's finding stands for when it is a threat removed, converted
    or blocked; None otherwise. The engine's summary lines count as the findings they
    summarise; the total cap's line is counted under kind "more"."""
    kind, action = finding.get("kind"), finding.get("action")
    if not isinstance(kind, str) or action not in THREAT_ACTIONS:
        return None
    return kind[:100], weight(finding)


def charts(session: Session, user: User, timeframe: Timeframe,
           scope: ChartScope) -> AnalyticsCharts:
    """The analytics' series over the last day, week or 30 days, for the caller's own files
    or (admins) everyone's: files per bucket by result, threats removed by kind, rejections
    by code, the most frequent input types and processing time per family."""
    end = utcnow()
    start = end - TIMEFRAMES[timeframe]
    in_period: list[ColumnElement[bool]] = [File.created_at >= start]
    if scope is ChartScope.OWN:
        in_period.append(File.user_id == user.id)
    unit, starts = _buckets(timeframe, start, end)
    # The daily rollup holds the whole UTC days after start's; the rows themselves its
    # partial first day (and, for a day's hourly buckets, the whole period).
    first_day, edge_end = _edge(start)
    who = user.id if scope is ChartScope.OWN else EVERYONE
    owner = FileRollup.user_id == who
    whole_days = [owner, FileRollup.day > first_day]
    by_rows = in_period if unit is ChartBucket.HOUR else [*in_period, File.created_at < edge_end]

    # Files per bucket by result, and the rejections.
    rows = select(_bucket_of(starts).label("bucket"), File.status.label("status"),
                  File.error_code.label("code")).where(*by_rows).subquery()
    grouped = [*session.execute(select(rows.c.bucket, rows.c.status, rows.c.code, func.count())
                                .group_by(rows.c.bucket, rows.c.status, rows.c.code))]
    if unit is ChartBucket.DAY:
        grouped += [((day - first_day).days, status, code or None, int(n or 0))
                    for day, status, code, n in session.execute(
                        select(FileRollup.day, FileRollup.status, FileRollup.error_code,
                               func.sum(FileRollup.files)).where(*whole_days)
                        .group_by(FileRollup.day, FileRollup.status, FileRollup.error_code))]
    series = [FilesInBucket(start=s, cleaned=0, rejected=0, failed=0, in_progress=0)
              for s in starts]
    rejections: Counter[str] = Counter()
    for index, status, code, count in grouped:
        point = series[min(max(int(index), 0), len(series) - 1)]
        if status == FileStatus.COMPLETED:
            point.cleaned += count
        elif status == FileStatus.FAILED and code in _REJECTION_CODES:
            point.rejected += count
            rejections[code] += count
        elif status == FileStatus.FAILED:
            point.failed += count
        else:
            point.in_progress += count
    rejections = Counter({code: n for code, n in rejections.items() if n})
    total = sum(p.cleaned + p.rejected + p.failed + p.in_progress for p in series)

    # The most frequent input types (NULL as '', as the rollup keeps it), ranked in SQL.
    edge_rows = [*in_period, File.created_at < edge_end]
    type_or_blank = func.coalesce(File.detected_type, literal_column("''"))
    kinds = union_all(
        select(type_or_blank.label("kind"), func.count().label("n")).where(*edge_rows)
        .group_by(type_or_blank),
        select(FileRollup.detected_type.label("kind"), func.sum(FileRollup.files).label("n"))
        .where(*whole_days).group_by(FileRollup.detected_type)).subquery()
    by_type = session.execute(
        select(kinds.c.kind, func.sum(kinds.c.n)).group_by(kinds.c.kind)
        .having(func.sum(kinds.c.n) > 0)
        .order_by(func.sum(kinds.c.n).desc(), kinds.c.kind).limit(TOP_TYPES)).all()
    top = [TypeCount(type=kind or UNKNOWN,
                     label=formats.KINDS[kind].label if kind in formats.KINDS else
                     (kind or "Unknown type"), count=int(n)) for kind, n in by_type]

    # Threats removed by kind: the whole days' from the rollups, the rows' (the first partial
    # day, or a day's whole period) from the newest MAX_REPORTS of their reports.
    # A report set to None is stored as JSON null (the column's default), not SQL NULL.
    with_report = [*by_rows, File.report.is_not(None), cast(File.report, String) != "null"]
    matched_reports = session.scalar(select(func.count()).select_from(File)
                                     .where(*with_report)) or 0
    newest_reports = (select(File.report).where(*with_report)
                      .order_by(File.created_at.desc()).limit(MAX_REPORTS))
    threats = _threats_in_sql(session, newest_reports.subquery())
    reports_read = min(matched_reports, MAX_REPORTS)
    if unit is ChartBucket.DAY:
        rolled = int(session.scalar(select(func.sum(ReportRollup.reports)).where(
            ReportRollup.user_id == who, ReportRollup.day > first_day)) or 0)
        matched_reports += rolled
        reports_read += rolled
        threats += _threats_rolled_up(session, who, first_day)

    # Processing time of the files cleaned, per family of their detected type.
    timed = [*in_period, File.status == FileStatus.COMPLETED,
             File.processing_duration.is_not(None)]
    matched_timed = (session.scalar(select(func.count()).select_from(File)
                                    .where(*timed, File.created_at < edge_end)) or 0) + int(
        session.scalar(select(func.sum(FileRollup.timed)).where(
            *whole_days, FileRollup.status == FileStatus.COMPLETED)) or 0)
    kind_and_seconds = select(File.detected_type.label("kind"),
                              File.processing_duration.label("seconds"))
    if unit is ChartBucket.DAY and who == EVERYONE and matched_timed <= MAX_DURATIONS:
        # Every duration of the period: the whole days' arrays and the first day's rows.
        durations = [*_durations_rolled_up(session, first_day), *_durations_of(
            session, kind_and_seconds.where(*timed, File.created_at < edge_end).subquery())]
    else:
        durations = _durations_of(session, kind_and_seconds.where(*timed).order_by(
            File.created_at.desc()).limit(MAX_DURATIONS).subquery())
    timing = _timing(durations)
    timed_read = sum(t.files for t in timing)

    return AnalyticsCharts(
        timeframe=timeframe, scope=scope, period=AnalyticsPeriod(start=start, end=end),
        bucket=unit, files_over_time=series,
        threats_by_kind=[ThreatCount(kind=k, count=n) for k, n in _ranked(threats)],
        threat_reports=RowsRead(matched=matched_reports, read=reports_read, limit=MAX_REPORTS,
                                capped=reports_read < matched_reports),
        rejections_by_code=[RejectionCount(code=RejectionCode(c), count=n)
                            for c, n in _ranked(rejections)],
        top_types=top, other_types=total - sum(t.count for t in top),
        processing_time=timing,
        timed_files=RowsRead(matched=matched_timed, read=timed_read, limit=MAX_DURATIONS,
                             capped=timed_read < matched_timed))


def _threats_in_sql(session: Session, reports: Any) -> Counter[str]:
    """What a loop over `reports` (a subquery of File.report) reading each report's findings
    and counting them with _threat_count would count, with the findings taken apart in the
    database: one row per distinct (kind, action, detail, location) of a threat action, each
    field as JSON text, with how often it occurs, instead of every report's JSON. PostgreSQL
    parses each report once (as jsonb); SQLite walks it with json_each (JSON1)."""
    names = ("kind", "action", "detail", "location")
    if session.get_bind().dialect.name == "postgresql":
        report = cast(reports.c.report, JSONB)  # parsed once, not at every -> as json is
        findings = report.op("->")(literal_column("'findings'"))
        elements = func.jsonb_array_elements(case(
            (func.jsonb_typeof(findings) == "array", findings),
            else_=literal_column("'[]'::jsonb"))).alias("e")  # a function in FROM: lateral
        fields: list[ColumnElement[Any]] = [literal_column(f"(e.value -> '{name}')::text")
                                            for name in names]
        action: ColumnElement[Any] = literal_column("e.value ->> 'action'")
    else:  # only an array of findings is walked (json_each would walk an object's members)
        elements = func.json_each(case(
            (func.json_type(reports.c.report, "$.findings") == "array",
             func.json_extract(reports.c.report, "$.findings")),
            else_=literal("[]"))).alias("e")
        # json_each's value is JSON text only for an object or array element (a string
        # element is bare text): only an object's members are read, as PostgreSQL does.
        is_object = literal_column("e.type") == "object"
        fields = [case((is_object, literal_column(f"e.value -> '$.{name}'")))
                  for name in names]
        action = case((is_object, literal_column("e.value ->> '$.action'")))
    rows = session.execute(
        select(*fields, func.count()).select_from(reports.join(elements, true()))
        .where(action.in_(sorted(THREAT_ACTIONS))).group_by(*fields))
    threats: Counter[str] = Counter()
    for row in rows:
        parsed = {key: json.loads(value) for key, value in zip(names, row[:4], strict=True)
                  if value is not None}
        counted = _threat_count(parsed)
        if counted:
            threats[counted[0]] += counted[1] * int(row[4])
    return threats


def _threats_rolled_up(session: Session, who: str, first_day: date) -> Counter[str]:
    """The threats of `who`'s reports (or everyone's) created on the days after first_day,
    counted from threat_rollup as _threat_count counts each report's findings."""
    threats: Counter[str] = Counter()
    for kind, detail, n in session.execute(
            select(ThreatRollup.kind, ThreatRollup.detail, func.sum(ThreatRollup.findings))
            .where(ThreatRollup.user_id == who, ThreatRollup.day > first_day)
            .group_by(ThreatRollup.kind, ThreatRollup.detail)):
        if n:  # a row's detail is '' unless it may be a summary line of the whole file
            threats[kind] += weight({"kind": kind, "location": "whole file",
                                     "detail": detail}) * int(n)
    return threats


def _durations_of(session: Session, rows: Any) -> list[tuple[str | None, Any]]:
    """(type, its durations as a numpy array) of `rows`, a subquery of kind and seconds: on
    PostgreSQL each type's durations as one string of 8-byte floats, not a row per file."""
    if session.get_bind().dialect.name == "postgresql":
        return [(kind, numpy.frombuffer(packed, dtype=">f8")) for kind, packed in
                session.execute(select(rows.c.kind, func.string_agg(
                    func.float8send(rows.c.seconds), literal_column("''::bytea")))
                    .group_by(rows.c.kind))]
    listed: defaultdict[str | None, list[float]] = defaultdict(list)
    for kind, seconds in session.connection().execute(select(rows)):  # Core rows
        listed[kind].append(float(seconds))
    return [(kind, numpy.array(values, dtype=float)) for kind, values in listed.items()]


def _durations_rolled_up(session: Session, first_day: date) -> list[tuple[str | None, Any]]:
    """(type, durations) of everyone's files created on the days after first_day, one array
    per day and type from duration_rollup (packed floats on PostgreSQL, JSON on SQLite)."""
    rows = session.execute(select(DurationRollup.detected_type, DurationRollup.durations)
                           .where(DurationRollup.day > first_day))
    if session.get_bind().dialect.name == "postgresql":
        return [(kind, numpy.frombuffer(packed, dtype=">f8")) for kind, packed in rows]
    return [(kind, numpy.array(json.loads(values), dtype=float)) for kind, values in rows]


def _timing(durations: list[tuple[str | None, Any]]) -> list[FamilyTiming]:
    """Processing time per family from (detected type, numpy array of durations) pairs: the
    files, the median and the 95th percentile, interpolated as PostgreSQL's percentile_cont."""
    families: defaultdict[str, list[Any]] = defaultdict(list)
    for kind, seconds in durations:
        families[formats.KINDS[kind].family if kind in formats.KINDS else UNKNOWN].append(seconds)
    timing = []
    for family, parts in sorted(families.items()):
        ordered = numpy.sort(numpy.concatenate(parts))
        if len(ordered):
            timing.append(FamilyTiming(family=family, files=len(ordered),
                                       median=round(_percentile(ordered, 0.5), 3),
                                       p95=round(_percentile(ordered, 0.95), 3)))
    return timing


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    """Most first, then by name."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def reset_quota(session: Session, user_id: str, *, actor: User | None = None,
                ip: str | None = None) -> QuotaReset:
    """Start a fresh monthly upload count for the user from now (written to the audit log as
    done by `actor` from `ip`, in the same transaction)."""
    target = session.get(User, user_id) if len(user_id) <= 64 else None
    if target is None:
        raise ApiError(404, "User not found", "not_found")
    target.quota_reset_at = utcnow()
    record(session, action=AuditAction.QUOTA_RESET, actor=actor, ip=ip,
           target=("user", target.id), detail={"email": target.email})
    session.commit()
    return QuotaReset(user_id=target.id, quota_reset_at=target.quota_reset_at)
