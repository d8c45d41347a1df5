"""User management for admins: listing with search and filters, role and activation changes
(the last active admin stays)."""

from __future__ import annotations

import unicodedata

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.elements import ColumnElement

from sanitas.audit.service import record
from sanitas.auth import service as auth_service
from sanitas.auth.schemas import UserOut
from sanitas.config import Settings
from sanitas.db import contains_text
from sanitas.models import AuditAction, Role, User, UserStatusFilter
from sanitas.users.schemas import UserList
from sanitas.web.errors import ApiError
from sanitas.web.schemas import Pagination

STATUS_CONDITIONS = {
    UserStatusFilter.ALL: [],
    UserStatusFilter.ACTIVE: [User.is_active.is_(True)],
    UserStatusFilter.INACTIVE: [User.is_active.is_(False)],
    UserStatusFilter.VERIFIED: [User.is_email_verified.is_(True)],
    UserStatusFilter.UNVERIFIED: [User.is_email_verified.is_(False)],
}


def list_users(session: Session, settings: Settings, *, page: int, limit: int,
               search: str | None = None,
               role: Role | None = None,
               status: UserStatusFilter = UserStatusFilter.ALL) -> UserList:
    """One page of users, newest first; `search` looks in the address, the username and the
    full name."""
    conditions: list[ColumnElement[bool]] = list(STATUS_CONDITIONS[status])
    if search and search.strip():
        # Addresses are stored lower-cased in NFC (auth.service.normalise_email).
        text = unicodedata.normalize("NFC", search.strip().lower())
        full_name = (func.coalesce(User.first_name, "") + " "
                     + func.coalesce(User.last_name, ""))
        conditions.append(or_(contains_text(User.email, text),
                              contains_text(func.coalesce(User.username, ""), text),
                              contains_text(full_name, text)))
    if role is not None:
        conditions.append(User.role == role)
    total = session.scalar(select(func.count()).select_from(User).where(*conditions)) or 0
    users = session.scalars(select(User).where(*conditions)
                            .order_by(User.created_at.desc(), User.id)
                            .offset(Pagination.offset(page, limit)).limit(limit)).all()
    return UserList(users=[auth_service.user_out(session, settings, u) for u in users],
                    pagination=Pagination.of(page, limit, total))


def _other_active_admins(session: Session, user_id: str) -> int:
    # Row locks (PostgreSQL) so two admins demoting each other at once cannot both succeed.
    return len(session.scalars(select(User.id).where(
        User.role == Role.ADMIN, User.is_active.is_(True), User.id != user_id)
        .with_for_update()).all())


def update_user(session: Session, settings: Settings, user_id: str, *, role: str | None,
                is_active: bool | None, actor: User | None = None,
                ip: str | None = None) -> UserOut:
    """Change a user's role and/or activation (deactivating ends their sessions); the last
    active admin can be neither demoted nor deactivated (409). Each actual change is written
    to the audit log as done by `actor` from `ip`."""
    target = session.get(User, user_id)
    if target is None:
        raise ApiError(404, "User not found")
    if role is None and is_active is None:
        raise ApiError(422, "Nothing to update: send role or isActive", "validation_error")
    demoting = role is not None and role != Role.ADMIN
    deactivating = is_active is False
    if target.role == Role.ADMIN and target.is_active and (demoting or deactivating) \
            and _other_active_admins(session, target.id) == 0:
        raise ApiError(409, "Cannot demote or deactivate the last active admin", "last_admin")
    if role is not None and role != target.role:
        record(session, action=AuditAction.ROLE_CHANGED, actor=actor, ip=ip,
               target=("user", target.id),
               detail={"email": target.email, "from": target.role, "to": role})
    if is_active is not None and is_active != target.is_active:
        record(session, action=AuditAction.USER_ACTIVATED if is_active
               else AuditAction.USER_DEACTIVATED, actor=actor, ip=ip,
               target=("user", target.id), detail={"email": target.email})
    if role is not None:
        target.role = role
    if is_active is not None:
        target.is_active = is_active
        if not is_active:
            auth_service.revoke_all_sessions(session, target.id)
    session.commit()
    return auth_service.user_out(session, settings, target)


def lock_user(session: Session, user: User) -> None:
    """Begin the transaction in which a limit of the user's is checked and the rows it counts
    are added (an upload's quotas, API keys, webhooks, reports), serialised per user, so that
    concurrent calls cannot all see room for one more.

    It starts with a write to the user's row: on PostgreSQL that takes the row lock, on SQLite
    the database write lock (a deferred SQLite transaction would read first and take the lock
    only at its first insert, and `SELECT ... FOR UPDATE` does nothing there). Either lasts
    until commit or rollback, and the counts read after it see every upload committed before.
    The admin's quota reset writes the same row, so `quota_reset_at` is read afresh here."""
    session.commit()  # a fresh transaction: no older SQLite snapshot to upgrade to a writer
    row = session.execute(
        update(User).where(User.id == user.id)
        .values(quota_reset_at=User.quota_reset_at, updated_at=User.updated_at)
        .returning(User.quota_reset_at)
        .execution_options(synchronize_session=False)).first()
    if row is None:
        raise ApiError(401, "Authentication required. Please sign in.", "unauthorized")
    set_committed_value(user, "quota_reset_at", row[0])
