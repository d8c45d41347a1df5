"""Usage: the caller's quota and storage, monthly history, and admin analytics and resets."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from sanitas.models import User
from sanitas.plans import Capability
from sanitas.usage import service
from sanitas.usage.schemas import (
    Analytics,
    AnalyticsCharts,
    ChartScope,
    QuotaReset,
    Timeframe,
    UsageMonth,
    UsageStats,
)
from sanitas.web.deps import AdminUser, CurrentUser, Requires, SessionDep, SettingsDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

SCOPE_HELP = "own: the caller's files; all: everyone's (ADMIN only)"

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
                    timeframe: Timeframe = Timeframe.MONTH):
    return ok(service.analytics(session, timeframe), "Analytics")


@router.get("/charts", response_model=Envelope[AnalyticsCharts])
def usage_charts(user: Annotated[User, Requires(Capability.CHARTS)], session: SessionDep,
                 timeframe: Timeframe = Timeframe.MONTH,
                 scope: Annotated[ChartScope, Query(description=SCOPE_HELP)] = ChartScope.OWN):
    """Series for the analytics charts over the timeframe: files per hour or day by result,
    threats removed by kind, rejections by code, top input types, processing time per
    family. A plan without advanced analytics gets 403 `plan_required`."""
    service.require_charts_scope(user, scope)
    return ok(service.charts(session, user, timeframe, scope), "Analytics charts")


@router.post("/reset-quota/{user_id}", response_model=Envelope[QuotaReset])
def reset_quota(user_id: str, request: Request, admin: AdminUser, session: SessionDep):
    return ok(service.reset_quota(session, user_id, actor=admin, ip=client_ip(request)),
              "User quota reset successfully")
