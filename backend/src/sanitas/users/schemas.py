from __future__ import annotations

from sanitas.auth.schemas import UserOut
from sanitas.models.user import Role
from sanitas.web.schemas import CamelModel, Pagination


class UserList(CamelModel):
    users: list[UserOut]
    pagination: Pagination


class AdminUserUpdateIn(CamelModel):
    role: Role | None = None
    is_active: bool | None = None
