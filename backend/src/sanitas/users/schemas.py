from __future__ import annotations

from typing import Literal

from sanitas.auth.schemas import UserOut
from sanitas.schemas import CamelModel, Pagination


class UserList(CamelModel):
    users: list[UserOut]
    pagination: Pagination


class AdminUserUpdateIn(CamelModel):
    role: Literal["GUEST", "USER", "ENTERPRISE", "ADMIN"] | None = None
    is_active: bool | None = None
