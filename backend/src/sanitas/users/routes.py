"""/api/users: the signed-in user's profile, and user management for admins."""

from __future__ import annotations

import unicodedata
from typing import Literal

from fastapi import APIRouter, Query
from sqlalchemy import func, or_, select

from sanitas.auth import service
from sanitas.auth.schemas import UserOut, UsersProfileUpdateIn
from sanitas.deps import AdminUser, CurrentUser, SessionDep
from sanitas.errors import ApiError
from sanitas.models import User
from sanitas.schemas import Envelope, ErrorEnvelope, ok
from sanitas.users.schemas import AdminUserUpdateIn, Pagination, UserList

router = APIRouter(prefix="/users", tags=["users"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})

UserStatus = Literal["all", "active", "inactive", "verified", "unverified"]


@router.put("/profile", response_model=Envelope[UserOut],
            responses={409: {"model": ErrorEnvelope,
                             "description": "The username is taken (`username_taken`)"}})
def update_own_profile(body: UsersProfileUpdateIn, user: CurrentUser, session: SessionDep):
    changes = body.model_dump(include=body.model_fields_set, by_alias=False)
    if "username" in changes:
        user.username = service.check_username(session, changes["username"],
                                               exclude_user_id=user.id)
    for field in ("first_name", "last_name"):
        if field in changes:
            value = (changes[field] or "").strip()
            setattr(user, field, value or None)
    session.commit()
    return ok(service.user_out(session, user), "Profile updated successfully")


@router.get("", response_model=Envelope[UserList])
def list_users(_: AdminUser, session: SessionDep,
               page: int = Query(1, ge=1, le=100000), limit: int = Query(10, ge=1, le=100),
               search: str | None = Query(None, max_length=200),
               role: Literal["GUEST", "USER", "ENTERPRISE", "ADMIN", ""] | None = None,
               status: UserStatus = "all"):
    conditions = []
    if search and search.strip():
        # Addresses are stored lower-cased in NFC (auth.service.normalise_email).
        like = f"%{unicodedata.normalize('NFC', search.strip().lower())}%"
        full_name = func.lower(func.coalesce(User.first_name, "") + " "
                               + func.coalesce(User.last_name, ""))
        conditions.append(or_(func.lower(User.email).like(like),
                              func.lower(func.coalesce(User.username, "")).like(like),
                              full_name.like(like)))
    if role:
        conditions.append(User.role == role)
    conditions += {"all": [], "active": [User.is_active.is_(True)],
                   "inactive": [User.is_active.is_(False)],
                   "verified": [User.is_email_verified.is_(True)],
                   "unverified": [User.is_email_verified.is_(False)]}[status]
    total = session.scalar(select(func.count()).select_from(User).where(*conditions)) or 0
    users = session.scalars(select(User).where(*conditions)
                            .order_by(User.created_at.desc(), User.id)
                            .offset((page - 1) * limit).limit(limit)).all()
    data = UserList(users=[service.user_out(session, u) for u in users],
                    pagination=Pagination.of(page, limit, total))
    return ok(data, "Users loaded")


def _other_active_admins(session, user_id: str) -> int:
    # Row locks (PostgreSQL) so two admins demoting each other at once cannot both succeed.
    return len(session.scalars(select(User.id).where(
        User.role == "ADMIN", User.is_active.is_(True), User.id != user_id)
        .with_for_update()).all())


@router.put("/{user_id}", response_model=Envelope[UserOut],
            responses={409: {"model": ErrorEnvelope,
                             "description": "The last active admin cannot be demoted or "
                                            "deactivated (`last_admin`)"}})
def update_user(user_id: str, body: AdminUserUpdateIn, _: AdminUser, session: SessionDep):
    target = session.get(User, user_id)
    if target is None:
        raise ApiError(404, "User not found")
    if body.role is None and body.is_active is None:
        raise ApiError(422, "Nothing to update: send role or isActive", "validation_error")
    demoting = body.role is not None and body.role != "ADMIN"
    deactivating = body.is_active is False
    if target.role == "ADMIN" and target.is_active and (demoting or deactivating) \
            and _other_active_admins(session, target.id) == 0:
        raise ApiError(409, "Cannot demote or deactivate the last active admin", "last_admin")
    if body.role is not None:
        target.role = body.role
    if body.is_active is not None:
        target.is_active = body.is_active
        if not body.is_active:
            service.revoke_all_sessions(session, target.id)
    session.commit()
    if body.is_active is not None:
        message = f"User {'activated' if body.is_active else 'deactivated'} successfully"
    else:
        message = "User role updated successfully"
    return ok(service.user_out(session, target), message)
