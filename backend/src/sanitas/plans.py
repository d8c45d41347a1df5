"""Plans: what each account type may do, in one table.

An account's role is its plan (GUEST = Free, USER = Pro, ENTERPRISE = Enterprise; ADMIN has
every capability and is not offered for sale). `DEFAULT_PLANS` gives each plan its label, the
texts of the pricing page (SPEC section 9, word for word), its limits and its capabilities;
`FAQ` the pricing page's questions. An operator changes any of it with `SANITAS_PLANS_FILE`
(a JSON or TOML file of the same shape, merged over the defaults) and, as before, the limits
with `SANITAS_ROLE_LIMITS`; both are read and checked when the settings are made, so a bad
file stops the server naming the setting.

Routes gate a feature with `sanitas.web.deps.Requires(Capability.X)` (403 `plan_required`,
`sanitas.web.errors.require_plan`); services ask `has`; `GET /api/plans` publishes the table
the web app renders. A new gated feature is one `Capability` member and its place in the table.

This module sits below the settings (config.py resolves the table when the settings are made)
and imports nothing of sanitas but the engine's `Mode` and `CamelModel`: the roles are
defined here (models/user.py re-exports `Role`), and the plan lookups take anything with a
`plans` table (`HasPlans`, which `Settings` is).
"""

from __future__ import annotations

import json
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sanitas.camel import CamelModel
from sanitas.engine.policy import Mode

MB = 1024 * 1024
GB = 1024 * MB
PLANS_FILE_SETTING = "SANITAS_PLANS_FILE"
ROLE_LIMITS_SETTING = "SANITAS_ROLE_LIMITS"
MAX_PLANS_FILE_BYTES = 1024 * 1024


class Role(StrEnum):
    """An account's plan, which sets its limits (config.Settings.limits_for), or ADMIN."""

    GUEST = "GUEST"
    USER = "USER"
    ENTERPRISE = "ENTERPRISE"
    ADMIN = "ADMIN"


class Capability(StrEnum):
    """A feature some plans have. The value is what the API and the web app say."""

    API_KEYS = "apiKeys"  # create and use API keys (the file calls by key)
    WEBHOOKS = "webhooks"  # endpoints called when files finish or expire
    POLICY_AUTHORING = "policyAuthoring"  # write custom sanitization policies
    REPORTS = "reports"  # compliance reports (request, list, download)
    CHARTS = "charts"  # advanced analytics: the charts of /api/usage/charts
    ADVANCED_MODE = "advancedMode"  # the advanced (pixel rebuilding) processing mode
    HIGH_PRIORITY = "highPriority"  # jobs go ahead of normal-priority ones


class Limits(CamelModel):
    model_config = ConfigDict(extra="forbid")

    uploads_per_month: int = Field(ge=-1)  # -1 = unlimited
    max_file_size: int = Field(gt=0)  # bytes
    storage_quota: int = Field(ge=-1)  # bytes, -1 = unlimited
    max_files_per_upload: int = Field(gt=0)


class Plan(CamelModel):
    """One plan: who has it (role), what the pricing page says, its limits and capabilities."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    label: str = Field(min_length=1, max_length=60)  # "Free", "Pro", ...
    description: str = Field(max_length=200)  # the account type's description (SPEC 6)
    listed: bool  # shown on the pricing page (ADMIN is not)
    price: str = Field(max_length=60)  # "$19"
    period: str = Field(max_length=60)  # "per month"; "" for none
    popular: bool = False  # the pricing page's "Most Popular" badge
    features: list[str] = Field(max_length=40)
    limitations: list[str] = Field(default_factory=list, max_length=40)
    button: str = Field(max_length=60)
    # Where the pricing page's button goes: "signUp" (the dashboard when signed in, else
    # registration) or "contact" (the contact page).
    action: Literal["signUp", "contact"]
    limits: Limits
    capabilities: list[Capability]

    @field_validator("capabilities")
    @classmethod
    def _unique(cls, value: list[Capability]) -> list[Capability]:
        return [c for c in Capability if c in value]  # the enum's order, each once

    def has(self, capability: Capability) -> bool:
        return capability in self.capabilities


class FaqEntry(CamelModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=300)
    answer: str = Field(min_length=1, max_length=2000)


class PlanTable(CamelModel):
    """Every plan, the pricing page's FAQ, and the plan a new account gets."""

    model_config = ConfigDict(extra="forbid")

    plans: list[Plan]
    faq: list[FaqEntry]
    # The plan of every new account (registration, a first Google sign-in): what the home
    # and pricing pages promise a new account is this plan's entry.
    new_account_role: Role

    def plan(self, role: str) -> Plan:
        """The plan of `role`; an unknown role gets the Free (GUEST) plan: the least."""
        for plan in self.plans:
            if plan.role == role:
                return plan
        return self.plan(Role.GUEST) if role != Role.GUEST else self.plans[0]

    def __getitem__(self, role: str) -> Plan:
        return self.plan(role)

    def roles_with(self, capability: Capability) -> list[str]:
        return [p.role.value for p in self.plans if p.has(capability)]

    def refusal_message(self, capability: Capability) -> str:
        """What the 403 `plan_required` of a call the caller's plan does not include says
        (web/errors.py `require_plan`): the feature and the plans that include it."""
        labels = [p.label for p in self.plans if p.listed and p.has(capability)]
        where = (" It comes with " + " and ".join(f"the {label} plan" for label in labels)
                 + ".") if labels else ""
        return f"Your plan does not include {_FEATURE_NAMES[capability]}.{where}"


class UserPlan(CamelModel):
    """The plan part of the profile answer: what the web app's `useCan` reads."""

    role: Role
    label: str
    capabilities: list[Capability]
    limits: Limits


# -- the defaults: SPEC section 9's pricing table and the pricing page's FAQ ----------------
_EVERYTHING = list(Capability)

DEFAULT_PLANS: tuple[Plan, ...] = (
    Plan(role=Role.GUEST, label="Free", description="Guest Account - Limited access",
         listed=True, price="$0", period="forever",
         features=["5 files per month", "Up to 10MB per file", "Basic sanitization",
                   "Email support", "24h processing"],
         limitations=["Limited file formats", "Standard priority"],
         button="Get Started", action="signUp",
         limits=Limits(uploads_per_month=5, max_file_size=10 * MB, storage_quota=100 * MB,
                       max_files_per_upload=5),
         capabilities=[]),
    Plan(role=Role.USER, label="Pro", description="Standard User Account", listed=True,
         price="$19", period="per month", popular=True,
         features=["100 files per month", "Up to 100MB per file", "Advanced sanitization",
                   "Priority email support", "1h processing", "All file formats",
                   "API access", "Batch processing"],
         button="Start Free Trial", action="signUp",
         limits=Limits(uploads_per_month=100, max_file_size=100 * MB, storage_quota=5 * GB,
                       max_files_per_upload=10),
         capabilities=[Capability.API_KEYS, Capability.WEBHOOKS, Capability.ADVANCED_MODE]),
    Plan(role=Role.ENTERPRISE, label="Enterprise",
         description="Enterprise Account - Enhanced limits", listed=True,
         price="Custom", period="",
         features=["Unlimited files", "Unlimited file size", "Custom sanitization rules",
                   "Dedicated support", "Instant processing", "On-premise deployment",
                   "SLA guarantee", "Custom integrations", "Advanced analytics",
                   "Compliance reports"],
         button="Contact Sales", action="contact",
         limits=Limits(uploads_per_month=-1, max_file_size=1 * GB, storage_quota=-1,
                       max_files_per_upload=50),
         capabilities=_EVERYTHING),
    Plan(role=Role.ADMIN, label="Administrator", description="Administrator Account",
         listed=False, price="", period="", features=[], button="", action="contact",
         limits=Limits(uploads_per_month=-1, max_file_size=1 * GB, storage_quota=-1,
                       max_files_per_upload=50),
         capabilities=_EVERYTHING),
)

DEFAULT_FAQ: tuple[FaqEntry, ...] = (
    FaqEntry(question="What file formats are supported?",
             answer="PDF, Office documents (Word, Excel, PowerPoint), JPEG/PNG/GIF images and "
                    "more. Enterprise plans support all file types."),
    FaqEntry(question="How secure is the sanitization process?",
             answer="Files are processed in isolated containers without network access and "
                    "deleted after processing. We maintain SOC 2 compliance."),
    FaqEntry(question="Can I cancel my subscription anytime?",
             answer="Yes. You can cancel at any time and keep access until the end of your "
                    "billing period."),
    FaqEntry(question="Do you offer refunds?",
             answer="We offer a 30-day money-back guarantee on all paid plans."),
)

# New accounts are Pro (USER), as they always were: the pricing page's Pro button ("Start
# Free Trial") and the home page's "Get Started Free" both lead to registration.
DEFAULT_NEW_ACCOUNT_ROLE = Role.USER


def default_table() -> PlanTable:
    return PlanTable(plans=[p.model_copy(deep=True) for p in DEFAULT_PLANS],
                     faq=[f.model_copy() for f in DEFAULT_FAQ],
                     new_account_role=DEFAULT_NEW_ACCOUNT_ROLE)


# -- overrides ------------------------------------------------------------------------------
class PlansSettingError(ValueError):
    """A plans override that cannot be used; the message names the setting."""


class _LegacyLimits(BaseModel):
    """One role's entry of SANITAS_ROLE_LIMITS (snake_case, every field optional): the limits,
    and `modes` / `high_priority`, which set the advanced mode and high priority
    capabilities."""

    model_config = ConfigDict(extra="forbid")

    uploads_per_month: int | None = Field(default=None, ge=-1)
    max_file_size: int | None = Field(default=None, gt=0)
    storage_quota: int | None = Field(default=None, ge=-1)
    max_files_per_upload: int | None = Field(default=None, gt=0)
    modes: list[Mode] | None = None
    high_priority: bool | None = None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_PLANS_FILE_BYTES + 1)
    except OSError as exc:
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): cannot be read: "
                                f"{exc.strerror or exc}") from None
    if len(raw) > MAX_PLANS_FILE_BYTES:
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): larger than "
                                f"{MAX_PLANS_FILE_BYTES} bytes")
    try:
        if path.suffix.lower() == ".toml":
            data: Any = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): not valid {kind}: "
                                f"{exc}") from None
    if not isinstance(data, dict):
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): must be an object with "
                                "`plans`, `faq` and/or `newAccountRole`")
    return data


def _merge(base: Any, change: Any) -> Any:
    """`change` over `base`: objects merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(change, dict):
        merged = dict(base)
        for key, value in change.items():
            merged[key] = _merge(base.get(key), value)
        return merged
    return change


def _describe(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}"
                     for e in exc.errors()[:5])


def _apply_file(table: PlanTable, path: Path) -> PlanTable:
    data = _read_file(path)
    unknown = set(data) - {"plans", "faq", "newAccountRole"}
    if unknown:
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): unknown key(s) "
                                f"{', '.join(sorted(unknown))}; use plans, faq, newAccountRole")
    current = table.model_dump(mode="json", by_alias=True)
    plans = {p["role"]: p for p in current["plans"]}
    changes = data.get("plans", {})
    if not isinstance(changes, dict):
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): `plans` must be an object "
                                "keyed by role (GUEST, USER, ENTERPRISE, ADMIN)")
    for role, change in changes.items():
        if role not in plans:
            raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): `plans` has an unknown "
                                    f"role {role!r}; use GUEST, USER, ENTERPRISE or ADMIN")
        plans[role] = _merge(plans[role], change)
    current["plans"] = list(plans.values())
    if "faq" in data:
        current["faq"] = data["faq"]
    if "newAccountRole" in data:
        current["newAccountRole"] = data["newAccountRole"]
    try:
        merged = PlanTable.model_validate(current)
    except ValidationError as exc:
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): {_describe(exc)}") from None
    if merged.new_account_role == Role.ADMIN:
        raise PlansSettingError(f"{PLANS_FILE_SETTING} ({path}): newAccountRole cannot be "
                                "ADMIN")
    return merged


def _apply_role_limits(table: PlanTable, role_limits: dict[str, Any]) -> PlanTable:
    for role, entry in role_limits.items():
        if role not in {r.value for r in Role}:
            raise PlansSettingError(f"{ROLE_LIMITS_SETTING}: unknown role {role!r}; use GUEST, "
                                    "USER, ENTERPRISE or ADMIN")
        try:
            legacy = _LegacyLimits.model_validate(entry)
        except ValidationError as exc:
            raise PlansSettingError(f"{ROLE_LIMITS_SETTING}: {role}: {_describe(exc)}") from None
        plan = table.plan(role)
        changes = legacy.model_dump(exclude_none=True, exclude={"modes", "high_priority"})
        plan.limits = plan.limits.model_copy(update=changes)
        caps = set(plan.capabilities)
        for capability, on in ((Capability.ADVANCED_MODE,
                                None if legacy.modes is None else Mode.ADVANCED in legacy.modes),
                               (Capability.HIGH_PRIORITY, legacy.high_priority)):
            if on is True:
                caps.add(capability)
            elif on is False:
                caps.discard(capability)
        plan.capabilities = [c for c in Capability if c in caps]
    return table


def load_plans(plans_file: Path | None, role_limits: dict[str, Any]) -> PlanTable:
    """The defaults, then the plans file, then SANITAS_ROLE_LIMITS. Raises PlansSettingError
    (a ValueError naming the setting) for anything it cannot use."""
    table = default_table()
    if plans_file is not None:
        table = _apply_file(table, plans_file)
    return _apply_role_limits(table, role_limits)


# -- asking ---------------------------------------------------------------------------------
class HasPlans(Protocol):
    """What the lookups need of the settings: the resolved table (`Settings.plans`)."""

    @property
    def plans(self) -> PlanTable: ...


def plan_for(settings: HasPlans, role: str) -> Plan:
    return settings.plans.plan(role)


def has(settings: HasPlans, role: str, capability: Capability) -> bool:
    return plan_for(settings, role).has(capability)


def user_plan(settings: HasPlans, role: str) -> UserPlan:
    plan = plan_for(settings, role)
    return UserPlan(role=plan.role, label=plan.label, capabilities=list(plan.capabilities),
                    limits=plan.limits.model_copy())


_FEATURE_NAMES = {
    Capability.API_KEYS: "API access",
    Capability.WEBHOOKS: "webhooks",
    Capability.POLICY_AUTHORING: "custom sanitization policies",
    Capability.REPORTS: "compliance reports",
    Capability.CHARTS: "advanced analytics",
    Capability.ADVANCED_MODE: "advanced sanitization",
    Capability.HIGH_PRIORITY: "high-priority processing",
}
