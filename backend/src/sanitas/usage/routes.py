"""Usage: the caller's quota and storage, monthly history, and admin analytics and resets."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Literal

from fastapi import APIRouter, Query
from sqlalchemy import func, or_, select

from sanitas.db import utcnow
from sanitas.deps import AdminUser, CurrentUser, SessionDep, SettingsDep
from sanitas.errors import ApiError
from sanitas.files import service
from sanitas.models import ROLES, File, User
from sanitas.schemas import Envelope, ErrorEnvelope, ok
from sanitas.usage.schemas import Analytics, QuotaReset, UsageMonth, UsageStats

router = APIRouter(prefix="/usage", tags=["usage"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})

NEAR_QUOTA = 0.8
TIMEFRAMES = {"day": timedelta(hours=24), "week": timedelta(days=7), "month": timedelta(days=30)}


def _percent(used: int, quota: int) -> float:
    if quota < 0:
        return 0.0
    if quota == 0:
        return 100.0 if used else 0.0
    return round(used / quota * 100, 2)


@router.get("/stats", response_model=Envelope[UsageStats])
def usage_stats(user: CurrentUser, session: SessionDep, settings: SettingsDep):
    limits = settings.limits_for(user.role)
    now = utcnow()
    start = service.period_start(user, now)
    used = service.uploads_in_period(session, user, now)
    quota = limits.uploads_per_month
    storage_quota = limits.storage_quota
    stored = service.storage_used(session, user.id)
    total_files = session.scalar(select(func.count()).select_from(File)
                                 .where(File.user_id == user.id)) or 0
    reset = service.next_month_start(now)
    return ok({
        "user": {"role": user.role, "memberSince": service.iso(user.created_at)},
        "currentPeriod": {"uploadsUsed": used, "uploadQuota": quota,
                          "quotaUtilization": _percent(used, quota),
                          "start": service.iso(start), "end": service.iso(reset)},
        "limits": {"isOverQuota": quota >= 0 and used >= quota,
                   "isNearQuota": quota >= 0 and used >= NEAR_QUOTA * quota,
                   "daysUntilReset": max(0, math.ceil((reset - now).total_seconds() / 86400)),
                   "maxFileSize": limits.max_file_size,
                   "maxFiles": limits.max_files_per_upload},
        "overall": {"totalFiles": total_files, "totalStorageUsed": stored,
                    "storageQuota": storage_quota,
                    "storageUtilization": _percent(stored, storage_quota)},
    }, "Usage statistics")


@router.get("/history", response_model=Envelope[list[UsageMonth]])
def usage_history(user: CurrentUser, session: SessionDep,
                  months: int = Query(6, ge=1, le=36)):
    now = utcnow()
    first = service.month_start(now)
    for _ in range(months - 1):
        first = service.month_start(first - timedelta(days=1))
    buckets: dict[str, dict] = {}
    cursor = first
    while cursor <= now:
        key = cursor.strftime("%Y-%m")
        buckets[key] = {"month": key, "uploads": 0, "successful": 0, "totalSize": 0}
        cursor = service.next_month_start(cursor)
    rows = session.execute(select(File.created_at, File.status, File.original_size).where(
        File.user_id == user.id, File.created_at >= first))
    for created, status, size in rows:
        bucket = buckets.get(created.strftime("%Y-%m"))
        if bucket is None:
            continue
        bucket["uploads"] += 1
        bucket["successful"] += status == "COMPLETED"
        bucket["totalSize"] += size or 0
    return ok(list(buckets.values()), "Usage history")


@router.get("/analytics", response_model=Envelope[Analytics])
def usage_analytics(_: AdminUser, session: SessionDep,
                    timeframe: Literal["day", "week", "month"] = "month"):
    end = utcnow()
    start = end - TIMEFRAMES[timeframe]
    by_role = {role: 0 for role in ROLES}
    by_role.update(dict(session.execute(select(User.role, func.count()).group_by(User.role))
                        .all()))
    active_uploaders = select(File.user_id).where(File.created_at >= start)
    active = session.scalar(select(func.count()).select_from(User).where(
        or_(User.last_login >= start, User.id.in_(active_uploaders)))) or 0
    by_status = {s: 0 for s in ("PENDING", "PROCESSING", "COMPLETED", "FAILED")}
    by_status.update(dict(session.execute(select(File.status, func.count())
                                          .group_by(File.status)).all()))
    total_files = sum(by_status.values())
    recent = session.scalar(select(func.count()).select_from(File)
                            .where(File.created_at >= start)) or 0
    recent_completed = session.scalar(select(func.count()).select_from(File).where(
        File.created_at >= start, File.status == "COMPLETED")) or 0
    average = session.scalar(select(func.avg(File.original_size))) or 0
    return ok({
        "timeframe": timeframe,
        "period": {"start": service.iso(start), "end": service.iso(end)},
        "users": {"total": sum(by_role.values()), "active": active, "byRole": by_role},
        "files": {"total": total_files, "recent": recent, "recentCompleted": recent_completed,
                  "byStatus": by_status},
        "storage": {"totalUsed": service.storage_used(session),
                    "averageFileSize": round(float(average))},
    }, "Analytics")


@router.post("/reset-quota/{user_id}", response_model=Envelope[QuotaReset])
def reset_quota(user_id: str, _: AdminUser, session: SessionDep):
    target = session.get(User, user_id) if len(user_id) <= 64 else None
    if target is None:
        raise ApiError(404, "User not found", "not_found")
    target.quota_reset_at = utcnow()
    session.commit()
    return ok({"userId": target.id, "quotaResetAt": service.iso(target.quota_reset_at)},
              "User quota reset successfully")
