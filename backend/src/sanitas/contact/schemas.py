"""Shapes of the contact form and of the admins' list of its messages (camelCase)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BeforeValidator, EmailStr, Field

from sanitas.web.schemas import CamelModel, Label, Pagination


def _strip(value: str) -> str:
    return value.strip() if isinstance(value, str) else value


class ContactIn(CamelModel):
    # Lengths are checked after surrounding whitespace is removed.
    name: Annotated[Label, Field(min_length=1, max_length=200)]
    email: EmailStr
    subject: Annotated[Label, Field(min_length=1, max_length=200)]
    message: Annotated[str, BeforeValidator(_strip), Field(min_length=10, max_length=5000)]


class ContactOut(CamelModel):
    id: str
    name: str
    email: str
    subject: str
    message: str
    user_id: str | None
    created_at: datetime


class ContactCreated(CamelModel):
    id: str


class ContactList(CamelModel):
    messages: list[ContactOut]
    pagination: Pagination
