from __future__ import annotations

from datetime import datetime

from pydantic import Field, field_validator

from sanitas.models.user import Role
from sanitas.plans import UserPlan
from sanitas.web.schemas import CamelModel, Label


class UserOut(CamelModel):
    id: str
    email: str
    username: str | None
    first_name: str | None
    last_name: str | None
    role: Role
    is_active: bool
    is_email_verified: bool
    last_login: datetime | None
    created_at: datetime
    updated_at: datetime
    file_count: int = 0
    session_count: int = 0
    # The account's plan (sanitas/plans.py): label, capabilities and limits. The web app's
    # `useCan(capability)` reads `plan.capabilities`; GET /api/plans has the whole table.
    plan: UserPlan


class TokensOut(CamelModel):
    access_token: str
    refresh_token: str
    expires_in: int


class AuthData(CamelModel):
    user: UserOut
    tokens: TokensOut


def _strip_or_none(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


# Password lengths are documented as minLength but checked by the service (auth/service.py),
# which answers 422 with the sentence the web app shows.
class RegisterIn(CamelModel):
    # Format and minimum lengths are checked by the service, with readable messages.
    email: str = Field(max_length=320)
    password: str = Field(max_length=256, json_schema_extra={"minLength": 6})
    first_name: Label | None = Field(default=None, max_length=100)
    last_name: Label | None = Field(default=None, max_length=100)
    username: str | None = Field(default=None, max_length=64)

    _strip = field_validator("first_name", "last_name", "username")(_strip_or_none)


class LoginIn(CamelModel):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=256)


class RefreshIn(CamelModel):
    refresh_token: str = Field(min_length=1, max_length=200)


class LogoutIn(CamelModel):
    refresh_token: str | None = Field(default=None, max_length=200)


class ProfileUpdateIn(CamelModel):
    first_name: Label | None = Field(default=None, max_length=100)
    last_name: Label | None = Field(default=None, max_length=100)


class UsersProfileUpdateIn(ProfileUpdateIn):
    username: str | None = Field(default=None, max_length=64)


class PasswordChangeIn(CamelModel):
    current_password: str = Field(min_length=1, max_length=256)
    new_password: str = Field(max_length=256, json_schema_extra={"minLength": 8})


class TokenIn(CamelModel):
    token: str = Field(min_length=1, max_length=200)


class ForgotPasswordIn(CamelModel):
    email: str = Field(min_length=1, max_length=320)


class ResetPasswordIn(CamelModel):
    token: str = Field(min_length=1, max_length=200)
    password: str = Field(max_length=256, json_schema_extra={"minLength": 8})


class CodeIn(CamelModel):
    code: str = Field(min_length=1, max_length=200)
