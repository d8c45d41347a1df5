"""Usage figures: a user's quota, storage and monthly history, the admins' analytics, and
quota resets."""

from __future__ import annotations

import math
from datetime import timedelta

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.errors import ApiError
from sanitas.files import service as files
from sanitas.models import File, FileStatus, Role, User
from sanitas.usage.schemas import (
    Analytics,
    AnalyticsFiles,
    AnalyticsPeriod,
    AnalyticsStorage,
    AnalyticsUsers,
    QuotaReset,
    UsageLimits,
    UsageMonth,
    UsageOverall,
    UsagePeriod,
    UsageStats,
    UsageUser,
)

NEAR_QUOTA = 0.8
TIMEFRAMES = {"day": timedelta(hours=24), "week": timedelta(days=7), "month": timedelta(days=30)}


def percent(used: int, quota: int) -> float:
    """`used` as a percentage of `quota` (0 for an unlimited quota, -1)."""
    if quota < 0:
        return 0.0
    if quota == 0:
        return 100.0 if used else 0.0
    return round(used / quota * 100, 2)


def usage_stats(session: Session, settings: Settings, user: User) -> UsageStats:
    limits = settings.limits_for(user.role)
    now = utcnow()
    used = files.uploads_in_period(session, user, now)
    quota = limits.uploads_per_month
    stored = files.storage_used(session, user.id)
    total_files = session.scalar(select(func.count()).select_from(File)
                                 .where(File.user_id == user.id)) or 0
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
                             storage_utilization=percent(stored, limits.storage_quota)))


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
    rows = session.execute(select(File.created_at, File.status, File.original_size).where(
        File.user_id == user.id, File.created_at >= first))
    for created, status, size in rows:
        bucket = buckets.get(created.strftime("%Y-%m"))
        if bucket is None:
            continue
        bucket.uploads += 1
        bucket.successful += status == FileStatus.COMPLETED
        bucket.total_size += size or 0
    return list(buckets.values())


def analytics(session: Session, timeframe: str) -> Analytics:
    """Service-wide figures; `recent` and `active` count the last day, week or 30 days."""
    end = utcnow()
    start = end - TIMEFRAMES[timeframe]
    by_role = {role: 0 for role in Role}
    by_role.update(dict(session.execute(select(User.role, func.count()).group_by(User.role))
                        .all()))
    active_uploaders = select(File.user_id).where(File.created_at >= start)
    active = session.scalar(select(func.count()).select_from(User).where(
        or_(User.last_login >= start, User.id.in_(active_uploaders)))) or 0
    by_status = {s: 0 for s in FileStatus}
    by_status.update(dict(session.execute(select(File.status, func.count())
                                          .group_by(File.status)).all()))
    recent = session.scalar(select(func.count()).select_from(File)
                            .where(File.created_at >= start)) or 0
    recent_completed = session.scalar(select(func.count()).select_from(File).where(
        File.created_at >= start, File.status == FileStatus.COMPLETED)) or 0
    average = session.scalar(select(func.avg(File.original_size))) or 0
    return Analytics(
        timeframe=timeframe, period=AnalyticsPeriod(start=start, end=end),
        users=AnalyticsUsers(total=sum(by_role.values()), active=active, by_role=by_role),
        files=AnalyticsFiles(total=sum(by_status.values()), recent=recent,
                             recent_completed=recent_completed, by_status=by_status),
        storage=AnalyticsStorage(total_used=files.storage_used(session),
                                 average_file_size=round(float(average))))


def reset_quota(session: Session, user_id: str) -> QuotaReset:
    """Start a fresh monthly upload count for the user from now."""
    target = session.get(User, user_id) if len(user_id) <= 64 else None
    if target is None:
        raise ApiError(404, "User not found", "not_found")
    target.quota_reset_at = utcnow()
    session.commit()
    return QuotaReset(user_id=target.id, quota_reset_at=target.quota_reset_at)
