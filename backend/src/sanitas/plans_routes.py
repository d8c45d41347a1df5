"""GET /api/plans: the plan table (sanitas/plans.py), public, for the home and pricing pages
and anything else that says what a plan includes."""

from __future__ import annotations

from fastapi import APIRouter

from sanitas.plans import PlanTable
from sanitas.web.deps import SettingsDep
from sanitas.web.schemas import Envelope, ok

router = APIRouter(prefix="/plans", tags=["plans"])


@router.get("", response_model=Envelope[PlanTable])
def list_plans(settings: SettingsDep):
    """Every plan (role, label, the pricing page's price, period, features, limitations and
    button, its limits and capabilities; `listed` false for ADMIN, which is not for sale), the
    pricing page's FAQ, and `newAccountRole`, the plan every new account gets. No sign-in
    needed. Operators change it with SANITAS_PLANS_FILE and SANITAS_ROLE_LIMITS."""
    return ok(settings.plans, "Plans")
