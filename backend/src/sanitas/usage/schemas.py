"""Answer shapes of the usage and analytics calls (camelCase)."""

from __future__ import annotations

from sanitas.models.file import FileStatus
from sanitas.models.user import Role
from sanitas.schemas import CamelModel, UtcTimestamp


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


class UsageStats(CamelModel):
    user: UsageUser
    current_period: UsagePeriod
    limits: UsageLimits
    overall: UsageOverall


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
    timeframe: str
    period: AnalyticsPeriod
    users: AnalyticsUsers
    files: AnalyticsFiles
    storage: AnalyticsStorage


class QuotaReset(CamelModel):
    user_id: str
    quota_reset_at: UtcTimestamp
