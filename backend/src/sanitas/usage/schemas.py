"""Answer shapes of the usage and analytics calls (camelCase)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from sanitas.engine.report import RejectionCode
from sanitas.models.file import FileStatus
from sanitas.models.user import Role
from sanitas.web.schemas import CamelModel, UtcTimestamp


class Timeframe(StrEnum):
    """The analytics' `timeframe` query: the recent figures count the last day, week or 30
    days."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"


class UsageUser(CamelModel):
    role: Role
    member_since: UtcTimestamp | None = None


class UsagePeriod(CamelModel):
    uploads_used: int
    upload_quota: int  # -1: unlimited
    quota_utilization: float
    start: UtcTimestamp
    end: UtcTimestamp


class UsageLimits(CamelModel):
    is_over_quota: bool
    is_near_quota: bool
    days_until_reset: int
    max_file_size: int
    max_files: int


class UsageOverall(CamelModel):
    total_files: int
    total_storage_used: int
    storage_quota: int  # -1: unlimited
    storage_utilization: float


class VerdictTotals(CamelModel):
    """The user's files by verdict (docs/verdicts.md); unfinished files are in none."""

    clean: int
    cleaned: int
    partial: int
    encrypted: int = Field(description="Encrypted files not inspected: held back (no copy) or "
                                       "delivered unchanged, as the policy says")
    refused: int


class UsageStats(CamelModel):
    user: UsageUser
    current_period: UsagePeriod
    limits: UsageLimits
    overall: UsageOverall
    verdicts: VerdictTotals = Field(description="The user's files (all kept in the history) "
                                                "by verdict")


class UsageMonth(CamelModel):
    month: str  # YYYY-MM
    uploads: int
    successful: int
    total_size: int


class AnalyticsPeriod(CamelModel):
    start: UtcTimestamp
    end: UtcTimestamp


class AnalyticsUsers(CamelModel):
    total: int
    active: int
    by_role: dict[Role, int]


class AnalyticsFiles(CamelModel):
    total: int
    recent: int
    recent_completed: int
    by_status: dict[FileStatus, int]


class AnalyticsStorage(CamelModel):
    total_used: int
    average_file_size: int


class Analytics(CamelModel):
    timeframe: Timeframe
    period: AnalyticsPeriod
    users: AnalyticsUsers
    files: AnalyticsFiles
    storage: AnalyticsStorage


class QuotaReset(CamelModel):
    user_id: str
    quota_reset_at: UtcTimestamp


# -- Charts: the analytics' series over the timeframe (admins: everyone's files; ENTERPRISE:
# their own) ----------------------------------------------------------------------------------
class ChartScope(StrEnum):
    """Whose files the charts count: the caller's own, or everyone's (admins only)."""

    OWN = "own"
    ALL = "all"


class ChartBucket(StrEnum):
    """The width of one point of the files-over-time series: hours for the last 24 hours,
    UTC calendar days for a week or 30 days."""

    HOUR = "hour"
    DAY = "day"


class FilesInBucket(CamelModel):
    start: UtcTimestamp  # the bucket's first moment (the first bucket may start before period)
    cleaned: int  # COMPLETED
    rejected: int  # FAILED with one of the engine's rejection codes
    failed: int  # FAILED for another reason (expired, interrupted, server fault)
    in_progress: int  # PENDING or PROCESSING


class ThreatCount(CamelModel):
    kind: str  # the finding's kind, as the engine names it (javascript, macro, exif...)
    count: int


class RejectionCount(CamelModel):
    code: RejectionCode
    count: int


class TypeCount(CamelModel):
    type: str  # the detected kind (pdf, docx...), "unknown" when none was detected
    label: str
    count: int


class FamilyTiming(CamelModel):
    family: str  # the engine family of the detected kind (pdf, image, ooxml...), or "unknown"
    files: int
    median: float  # seconds
    p95: float  # seconds, linear interpolation between the closest ranks


class RowsRead(CamelModel):
    """How many files a series was computed from of those that matched: whole days after
    the period's first are counted in full from the daily rollups where a series has one;
    the rest are read from the rows, at most `limit` of them (the newest), and `capped`
    says when some were left out (always the period's oldest)."""

    matched: int
    read: int
    limit: int
    capped: bool


class AnalyticsCharts(CamelModel):
    timeframe: Timeframe
    scope: ChartScope
    period: AnalyticsPeriod
    bucket: ChartBucket
    files_over_time: list[FilesInBucket]
    threats_by_kind: list[ThreatCount]
    threat_reports: RowsRead  # the reports threatsByKind was counted from
    rejections_by_code: list[RejectionCount]
    top_types: list[TypeCount]
    other_types: int  # files of the period whose type is not among topTypes
    processing_time: list[FamilyTiming]
    timed_files: RowsRead  # the durations processingTime was computed from
