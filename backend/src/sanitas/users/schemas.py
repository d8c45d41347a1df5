from __future__ import annotations

from typing import Literal

from sanitas.auth.schemas import UserOut
from sanitas.schemas import CamelModel


class Pagination(CamelModel):
    page: int
    limit: int
    total: int
    pages: int
    has_prev: bool
    has_next: bool

    @classmethod
    def of(cls, page: int, limit: int, total: int) -> Pagination:
        pages = (total + limit - 1) // limit if total else 0
        return cls(page=page, limit=limit, total=total, pages=pages, has_prev=page > 1,
                   has_next=page < pages)


class UserList(CamelModel):
    users: list[UserOut]
    pagination: Pagination


class AdminUserUpdateIn(CamelModel):
    role: Literal["GUEST", "USER", "ENTERPRISE", "ADMIN"] | None = None
    is_active: bool | None = None
