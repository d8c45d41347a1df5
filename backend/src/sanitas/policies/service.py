"""Policies: who may see, write and use which, their versions, each role's default, and the
policy an upload is cleaned with.

Visibility: the built-ins (from `engine.policy.BUILT_IN`, never stored), organisation-wide
policies and the caller's own; any other id is "not found". Writing: ENTERPRISE and ADMIN
accounts, on their own personal policies; admins also on organisation-wide ones. A body that
changes makes a new version (the old one stays, files refer to it).
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from sanitas import plans
from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.engine.policy import BUILT_IN, Mode, Policy, PolicyError
from sanitas.models import AuditAction, PolicyDefault, PolicyVersion, Role, StoredPolicy, User
from sanitas.models.policy import POLICY_NAME_MAX
from sanitas.plans import Capability, Plan
from sanitas.policies.applied import (
    BUILT_IN_DESCRIPTIONS,
    BUILT_IN_NAMES,
    AppliedPolicy,
    applied_built_in,
    applied_stored,
)
from sanitas.policies.schemas import (
    FindingRules,
    PolicyDefaults,
    PolicyDefaultsIn,
    PolicyIn,
    PolicyOut,
)
from sanitas.web.errors import ApiError, field_error

log = logging.getLogger(__name__)

MAX_PERSONAL_POLICIES = 200  # per account
MAX_ORGANISATION_POLICIES = 200
DEFAULT_POLICY: str = Mode.BASIC  # a role without a chosen default: the built-in basic



def not_found() -> ApiError:
    return ApiError(404, "Policy not found", "not_found")


# -- answers ---------------------------------------------------------------------------------
def _body_fields(body: dict[str, Any]) -> dict[str, Any]:
    return {"rules": body["rules"], "allowed_types": body.get("allowedTypes"),
            "output": body.get("output", "same"), "max_pages": body.get("maxPages")}


def built_in_out(policy_id: str) -> PolicyOut:
    return PolicyOut(id=policy_id, name=BUILT_IN_NAMES[policy_id],
                     description=BUILT_IN_DESCRIPTIONS[policy_id], built_in=True,
                     scope="organisation", owner_id=None, version=1,
                     **_body_fields(BUILT_IN[policy_id].to_json()))


def stored_out(policy: StoredPolicy) -> PolicyOut:
    return PolicyOut(id=policy.id, name=policy.name, description=policy.description,
                     built_in=False,
                     scope="organisation" if policy.owner_id is None else "personal",
                     owner_id=policy.owner_id, version=policy.version,
                     created_at=policy.created_at, updated_at=policy.updated_at,
                     # through the engine: a rule added since the body was stored shows its
                     # default action
                     **_body_fields(Policy.from_json(policy.body).to_json()))


# -- reading ---------------------------------------------------------------------------------
def _visible_to(user: User):
    return (StoredPolicy.deleted_at.is_(None)
            & (StoredPolicy.owner_id.is_(None) | (StoredPolicy.owner_id == user.id)))


def find_organisation_policy(session: Session, policy_id: str) -> StoredPolicy | None:
    """An organisation-wide policy (not deleted), the only stored policies a service channel
    (ICAP, mail) may use, or None."""
    if not policy_id or len(policy_id) > 36:
        return None
    return session.scalar(select(StoredPolicy).where(
        StoredPolicy.id == policy_id, StoredPolicy.deleted_at.is_(None),
        StoredPolicy.owner_id.is_(None)))


def find_visible(session: Session, user: User, policy_id: str) -> StoredPolicy | None:
    """A stored policy the caller may see and use (not deleted), or None."""
    if not policy_id or len(policy_id) > 36:
        return None
    return session.scalar(select(StoredPolicy).where(StoredPolicy.id == policy_id,
                                                     _visible_to(user)))


def finding_rules() -> FindingRules:
    from sanitas.engine.kinds import FINDING_KINDS

    return FindingRules(kinds={kind: [] if rules is None else
                               list(rules) if isinstance(rules, tuple) else [rules]
                               for kind, rules in sorted(FINDING_KINDS.items())})


def list_policies(session: Session, user: User) -> list[PolicyOut]:
    """Built-ins, then organisation-wide policies, then the caller's own, each by name."""
    stored = session.scalars(select(StoredPolicy).where(_visible_to(user)).order_by(
        StoredPolicy.owner_id.is_not(None), func.lower(StoredPolicy.name),
        StoredPolicy.id)).all()
    return [built_in_out(p) for p in BUILT_IN] + [stored_out(p) for p in stored]


def get_policy(session: Session, user: User, policy_id: str) -> PolicyOut:
    if policy_id in BUILT_IN:
        return built_in_out(policy_id)
    policy = find_visible(session, user, policy_id)
    if policy is None:
        raise not_found()
    return stored_out(policy)


# -- writing ---------------------------------------------------------------------------------
# Writing is for plans with Capability.POLICY_AUTHORING: routes.py's `Author` checks it.
def _check_scope(user: User, scope: str | None) -> None:
    if scope == "organisation" and user.role != Role.ADMIN:
        raise ApiError(403, "Only admins publish organisation-wide policies.",
                       "organisation_scope_admin_only")


def engine_body(body: PolicyIn) -> dict[str, Any]:
    """The body in the engine's canonical JSON form; the engine's own check has the last word
    (422 naming each field it refuses)."""
    try:
        return Policy.from_json(body.engine_json()).to_json()
    except PolicyError as exc:
        raise ApiError(422, "Invalid policy: " + "; ".join(
            f"{where}: {why}" for where, why in exc.errors.items()),
            "validation_error", fields=[field_error(where, why[:1].upper() + why[1:])
                                        for where, why in exc.errors.items()]) from exc


def _serialise(session: Session, user: User, organisation: bool) -> None:
    """Begin a transaction in which a count of policies holds until commit: a write to the
    caller's row (PostgreSQL: its row lock; SQLite: the database's write lock), and for
    organisation-wide policies a transaction-scoped advisory lock on PostgreSQL (several
    admins)."""
    session.commit()
    session.execute(update(User).where(User.id == user.id)
                    .values(updated_at=User.updated_at)
                    .execution_options(synchronize_session=False))
    if organisation and session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext('sanitas.policies.org'))"))


def _check_room(session: Session, owner_id: str | None) -> None:
    count = session.scalar(select(func.count()).select_from(StoredPolicy).where(
        StoredPolicy.deleted_at.is_(None),
        StoredPolicy.owner_id.is_(None) if owner_id is None
        else StoredPolicy.owner_id == owner_id)) or 0
    limit = MAX_ORGANISATION_POLICIES if owner_id is None else MAX_PERSONAL_POLICIES
    if count >= limit:
        where = "organisation-wide" if owner_id is None else "personal"
        raise ApiError(409, f"There are already {limit} {where} policies; delete one first.",
                       "too_many_policies")


def _insert(session: Session, *, owner_id: str | None, name: str, description: str | None,
            body: dict[str, Any]) -> StoredPolicy:
    now = utcnow()
    policy = StoredPolicy(owner_id=owner_id, name=name, description=description, version=1,
                          body=body, created_at=now, updated_at=now)
    session.add(policy)
    session.flush()
    session.add(PolicyVersion(policy_id=policy.id, version=1, name=name, body=body,
                              created_at=now))
    return policy


def create_policy(session: Session, user: User, data: PolicyIn,
                  ip: str | None = None) -> PolicyOut:
    _check_scope(user, data.scope)
    body = engine_body(data)
    owner_id = None if data.scope == "organisation" else user.id
    try:
        _serialise(session, user, owner_id is None)
        _check_room(session, owner_id)
        policy = _insert(session, owner_id=owner_id, name=data.name,
                         description=data.description, body=body)
        _audit(session, AuditAction.POLICY_CREATED, user, ip, policy)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return stored_out(policy)


def _audit(session: Session, action: AuditAction, user: User, ip: str | None,
           policy: StoredPolicy, duplicated_from: str | None = None) -> None:
    """The audit row of a change to a stored policy, in the transaction that makes it."""
    detail: dict[str, str | int] = {
        "name": policy.name, "version": policy.version,
        "scope": "organisation" if policy.owner_id is None else "personal"}
    if duplicated_from is not None:
        detail["duplicatedFrom"] = duplicated_from
    record(session, action=action, actor=user, ip=ip, target=("policy", policy.id),
           detail=detail)


def _writable(session: Session, user: User, policy_id: str) -> StoredPolicy:
    """The stored policy the caller may change (locked until commit), else 403/404."""
    if policy_id in BUILT_IN:
        raise ApiError(403, f"The built-in policy '{policy_id}' cannot be changed or deleted; "
                            "duplicate it to make your own.", "built_in_policy")
    policy = find_visible(session, user, policy_id)
    if policy is None:
        raise not_found()
    if policy.owner_id is None and user.role != Role.ADMIN:
        raise ApiError(403, "Only admins change organisation-wide policies.",
                       "organisation_scope_admin_only")
    # Lock the row, then read it again: concurrent edits make one version each, in turn.
    session.commit()
    session.execute(update(StoredPolicy).where(StoredPolicy.id == policy.id)
                    .values(version=StoredPolicy.version)
                    .execution_options(synchronize_session=False))
    session.refresh(policy)
    if policy.deleted_at is not None or policy.owner_id not in (None, user.id):
        raise not_found()
    if policy.owner_id is None and user.role != Role.ADMIN:  # published meanwhile
        raise ApiError(403, "Only admins change organisation-wide policies.",
                       "organisation_scope_admin_only")
    return policy


def _roles_defaulting_to(session: Session, policy_id: str) -> list[str]:
    return sorted(session.scalars(select(PolicyDefault.role)
                                  .where(PolicyDefault.policy_id == policy_id)).all())


def allowed_modes(plan: Plan) -> list[Mode]:
    """Basic for every plan; advanced with Capability.ADVANCED_MODE."""
    return [Mode.BASIC] + ([Mode.ADVANCED] if plan.has(Capability.ADVANCED_MODE) else [])


def check_mode(plan: Plan, mode: str | None) -> Mode:
    """The mode an upload names (400 `invalid_mode`, 403 `mode_not_allowed`)."""
    mode = (mode or Mode.BASIC).strip().lower() or Mode.BASIC
    if mode not in tuple(Mode):
        raise ApiError(400, f"Unknown processing mode '{mode[:40]}'; use one of: "
                            f"{', '.join(Mode)}.", "invalid_mode")
    allowed = allowed_modes(plan)
    if mode not in allowed:
        raise ApiError(403, f"The '{mode}' mode is not available for your account; "
                            f"available: {', '.join(allowed)}.", "mode_not_allowed")
    return Mode(mode)


def _role_allows(settings: Settings, role: str, mode: Mode) -> bool:
    return mode in allowed_modes(plans.plan_for(settings, role))


def update_policy(session: Session, settings: Settings, user: User, policy_id: str,
                  data: PolicyIn, ip: str | None = None) -> PolicyOut:
    _check_scope(user, data.scope)
    body = engine_body(data)
    try:
        policy = _writable(session, user, policy_id)
        owner_id = policy.owner_id
        if data.scope == "organisation":
            owner_id = None
        elif data.scope == "personal":
            owner_id = policy.owner_id or user.id
        defaults_for = _roles_defaulting_to(session, policy.id)
        if defaults_for and owner_id is not None:
            raise ApiError(409, f"This policy is the default for {', '.join(defaults_for)}; "
                                "choose another default before making it personal.",
                           "policy_in_use")
        mode = Policy.from_json(body).mode
        refusing = [r for r in defaults_for if not _role_allows(settings, r, mode)]
        if refusing:
            raise ApiError(409, f"This policy is the default for {', '.join(refusing)}, whose "
                                "plan does not include PDF output rebuilt from pixels; choose "
                                "another default first.", "policy_in_use")
        if owner_id != policy.owner_id:
            _serialise_scope_change(session, user, owner_id)
        now = utcnow()
        if body != policy.body:
            policy.version += 1
            policy.body = body
            session.add(PolicyVersion(policy_id=policy.id, version=policy.version,
                                      name=data.name, body=body, created_at=now))
        policy.name, policy.description = data.name, data.description
        policy.owner_id = owner_id
        policy.updated_at = now
        _audit(session, AuditAction.POLICY_UPDATED, user, ip, policy)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return stored_out(policy)


def _serialise_scope_change(session: Session, user: User, owner_id: str | None) -> None:
    if owner_id is None and session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext('sanitas.policies.org'))"))
    _check_room(session, owner_id)


def delete_policy(session: Session, user: User, policy_id: str, ip: str | None = None) -> None:
    """Deleted policies are no longer listed or usable; their versions stay, for the files
    cleaned with them."""
    try:
        policy = _writable(session, user, policy_id)
        defaults_for = _roles_defaulting_to(session, policy.id)
        if defaults_for:
            raise ApiError(409, f"This policy is the default for {', '.join(defaults_for)}; "
                                "choose another default before deleting it.", "policy_in_use")
        policy.deleted_at = policy.updated_at = utcnow()
        _audit(session, AuditAction.POLICY_DELETED, user, ip, policy)
        session.commit()
    except BaseException:
        session.rollback()
        raise


def duplicate_policy(session: Session, user: User, policy_id: str,
                     ip: str | None = None) -> PolicyOut:
    """A personal copy (version 1) of a policy the caller can see, built-ins included."""
    if policy_id in BUILT_IN:
        name = BUILT_IN_NAMES[policy_id]
        description: str | None = BUILT_IN_DESCRIPTIONS[policy_id]
        body = BUILT_IN[policy_id].to_json()
    else:
        source = find_visible(session, user, policy_id)
        if source is None:
            raise not_found()
        name, description, body = source.name, source.description, source.body
    copy_name = f"Copy of {name}"[:POLICY_NAME_MAX]
    try:
        _serialise(session, user, False)
        _check_room(session, user.id)
        policy = _insert(session, owner_id=user.id, name=copy_name, description=description,
                         body=dict(body))
        _audit(session, AuditAction.POLICY_CREATED, user, ip, policy, duplicated_from=policy_id)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return stored_out(policy)


# -- each role's default ---------------------------------------------------------------------
def get_defaults(session: Session) -> PolicyDefaults:
    chosen = dict(session.execute(select(PolicyDefault.role, PolicyDefault.policy_id)).all())
    return PolicyDefaults(**{role.value: chosen.get(role.value, DEFAULT_POLICY)
                             for role in Role})


def _default_candidate(session: Session, policy_id: str) -> Mode:
    """The engine mode of a policy that may be a default (a built-in or an organisation-wide
    policy), else 422."""
    if policy_id in BUILT_IN:
        return BUILT_IN[policy_id].mode
    policy = session.scalar(select(StoredPolicy).where(
        StoredPolicy.id == policy_id, StoredPolicy.deleted_at.is_(None),
        StoredPolicy.owner_id.is_(None)))
    if policy is None:
        raise ApiError(422, f"Invalid request: '{policy_id}' is not a built-in or "
                            "organisation-wide policy.", "validation_error")
    return Policy.from_json(policy.body).mode


def set_defaults(session: Session, settings: Settings, admin: User,
                 changes: PolicyDefaultsIn, ip: str | None = None) -> PolicyDefaults:
    """Set the roles named in `changes` (null: back to the built-in basic)."""
    try:
        session.commit()
        if session.get_bind().dialect.name == "postgresql":  # against a concurrent delete
            session.execute(text(
                "SELECT pg_advisory_xact_lock(hashtext('sanitas.policies.org'))"))
        for role in sorted(changes.model_fields_set):
            chosen: str | None = getattr(changes, role)
            row = session.get(PolicyDefault, role)
            before = row.policy_id if row is not None else DEFAULT_POLICY
            if (chosen or DEFAULT_POLICY) != before:
                record(session, action=AuditAction.POLICY_DEFAULT_CHANGED, actor=admin, ip=ip,
                       target=("policy", chosen or DEFAULT_POLICY),
                       detail={"role": role, "from": before, "to": chosen or DEFAULT_POLICY})
            if chosen is None or chosen == DEFAULT_POLICY:
                if row is not None:
                    session.delete(row)
                continue
            mode = _default_candidate(session, chosen)
            if not _role_allows(settings, role, mode):
                raise ApiError(422, f"Invalid request: {role}: the plan does not include PDF "
                                    "output rebuilt from pixels, which this policy uses.",
                               "validation_error")
            if row is None:
                session.add(PolicyDefault(role=role, policy_id=chosen,
                                          updated_at=utcnow(), updated_by_id=admin.id))
            else:
                row.policy_id, row.updated_at, row.updated_by_id = chosen, utcnow(), admin.id
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return get_defaults(session)


# -- the policy of an upload -----------------------------------------------------------------
def _mode_allowed(plan: Plan, applied: AppliedPolicy) -> bool:
    return applied.mode in allowed_modes(plan)


def choose_for_upload(session: Session, settings: Settings, user: User,
                      policy_id: str | None, mode: str | None) -> AppliedPolicy:
    """The policy an upload is cleaned with: `policy_id` if given (404 when the caller cannot
    see it, 403 when its output needs a mode the plan lacks), else the built-in of `mode`
    (checked as before), else the role's default."""
    plan = plans.plan_for(settings, user.role)
    policy_id = (policy_id or "").strip()
    if policy_id:
        if policy_id in BUILT_IN:
            applied = applied_built_in(policy_id, ocr=settings.ocr)
        else:
            stored = find_visible(session, user, policy_id)
            if stored is None:
                raise ApiError(404, "Policy not found", "not_found")
            applied = applied_stored(stored)
        if not _mode_allowed(plan, applied):
            raise ApiError(403, f"The policy '{applied.name}' rebuilds files as PDF from "
                                "pixels (advanced mode), which your plan does not include.",
                           "policy_not_allowed")
        return applied
    if mode and mode.strip():
        return applied_built_in(check_mode(plan, mode), ocr=settings.ocr)
    row = session.get(PolicyDefault, user.role)
    if row is not None:
        if row.policy_id in BUILT_IN:
            applied = applied_built_in(row.policy_id, ocr=settings.ocr)
        else:
            stored = session.scalar(select(StoredPolicy).where(
                StoredPolicy.id == row.policy_id, StoredPolicy.deleted_at.is_(None)))
            applied = applied_stored(stored) if stored is not None else \
                applied_built_in(DEFAULT_POLICY, ocr=settings.ocr)
        if _mode_allowed(plan, applied):
            return applied
        log.warning("the default policy %s of role %s needs a mode the role's plan lacks; "
                    "using the built-in basic policy", row.policy_id, user.role)
    return applied_built_in(DEFAULT_POLICY, ocr=settings.ocr)
