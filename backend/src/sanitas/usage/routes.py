"""Usage: the caller's quota and storage, monthly history, and admin analytics and resets."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query

from sanitas.deps import AdminUser, CurrentUser, SessionDep, SettingsDep
from sanitas.schemas import Envelope, ErrorEnvelope, ok
from sanitas.usage import service
from sanitas.usage.schemas import Analytics, QuotaReset, UsageMonth, UsageStats

router = APIRouter(prefix="/usage", tags=["usage"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})


@router.get("/stats", response_model=Envelope[UsageStats])
def usage_stats(user: CurrentUser, session: SessionDep, settings: SettingsDep):
    return ok(service.usage_stats(session, settings, user), "Usage statistics")


@router.get("/history", response_model=Envelope[list[UsageMonth]])
def usage_history(user: CurrentUser, session: SessionDep,
                  months: int = Query(6, ge=1, le=36)):
    return ok(service.usage_history(session, user, months), "Usage history")


@router.get("/analytics", response_model=Envelope[Analytics])
def usage_analytics(_: AdminUser, session: SessionDep,
                    timeframe: Literal["day", "week", "month"] = "month"):
    return ok(service.analytics(session, timeframe), "Analytics")


@router.post("/reset-quota/{user_id}", response_model=Envelope[QuotaReset])
def reset_quota(user_id: str, _: AdminUser, session: SessionDep):
    return ok(service.reset_quota(session, user_id), "User quota reset successfully")
