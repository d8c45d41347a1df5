from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, String
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column
from sanitas.plans import Role as Role  # an account's role is its plan, defined with them

ROLES = tuple(Role)


class RoleFilter(StrEnum):
    """The users list's `role` query: empty for every role, or only the accounts of one Role."""

    GUEST = Role.GUEST.value
    USER = Role.USER.value
    ENTERPRISE = Role.ENTERPRISE.value
    ADMIN = Role.ADMIN.value
    ALL = ""

    @property
    def role(self) -> Role | None:
        """The role to keep, or None for every role."""
        return None if self is RoleFilter.ALL else Role(self.value)


class UserStatusFilter(StrEnum):
    """The users list's `status` query: every account, or only the (in)active or
    (un)verified ones."""

    ALL = "all"
    ACTIVE = "active"
    INACTIVE = "inactive"
    VERIFIED = "verified"
    UNVERIFIED = "unverified"


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = id_column()
    email: Mapped[str] = mapped_column(String(320), unique=True, index=True)
    username: Mapped[str | None] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    first_name: Mapped[str | None] = mapped_column(String(100))
    last_name: Mapped[str | None] = mapped_column(String(100))
    role: Mapped[str] = mapped_column(String(16), default=Role.USER, index=True)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    is_email_verified: Mapped[bool] = mapped_column(Boolean, default=False)
    google_sub: Mapped[str | None] = mapped_column(String(255), unique=True)
    last_login: Mapped[datetime | None]
    # An admin quota reset starts a fresh monthly count from this moment.
    quota_reset_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
