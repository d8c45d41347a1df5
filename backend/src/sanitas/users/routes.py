"""/api/users: the signed-in user's profile, and user management for admins."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from sanitas.auth import service as auth_service
from sanitas.auth.schemas import UserOut, UsersProfileUpdateIn
from sanitas.models import RoleFilter, UserStatusFilter
from sanitas.users import service
from sanitas.users.schemas import AdminUserUpdateIn, UserList
from sanitas.web.deps import AdminUser, CurrentUser, SessionDep, SettingsDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/users", tags=["users"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})

# PUT /api/auth/profile changes the names only; this one the username too.
@router.put("/profile", response_model=Envelope[UserOut],
            responses={409: {"model": ErrorEnvelope,
                             "description": "The username is taken (`username_taken`)"}})
def update_own_profile(body: UsersProfileUpdateIn, user: CurrentUser, session: SessionDep,
                       settings: SettingsDep):
    auth_service.update_profile(session, user, body.model_dump(include=body.model_fields_set,
                                                               by_alias=False))
    return ok(auth_service.user_out(session, settings, user), "Profile updated successfully")


@router.get("", response_model=Envelope[UserList])
def list_users(_: AdminUser, session: SessionDep, settings: SettingsDep,
               page: int = Query(1, ge=1, le=100000), limit: int = Query(10, ge=1, le=100),
               search: str | None = Query(None, max_length=200),
               role: RoleFilter = RoleFilter.ALL,
               status: UserStatusFilter = UserStatusFilter.ALL):
    users = service.list_users(session, settings, page=page, limit=limit, search=search,
                               role=role.role, status=status)
    return ok(users, "Users loaded")


@router.put("/{user_id}", response_model=Envelope[UserOut],
            responses={409: {"model": ErrorEnvelope,
                             "description": "The last active admin cannot be demoted or "
                                            "deactivated (`last_admin`)"}})
def update_user(user_id: str, body: AdminUserUpdateIn, request: Request, admin: AdminUser,
                session: SessionDep, settings: SettingsDep):
    user = service.update_user(session, settings, user_id, role=body.role, is_active=body.is_active,
                               actor=admin, ip=client_ip(request))
    if body.is_active is not None:
        message = f"User {'activated' if body.is_active else 'deactivated'} successfully"
    else:
        message = "User role updated successfully"
    return ok(user, message)
