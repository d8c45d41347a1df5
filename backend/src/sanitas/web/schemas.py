"""Shapes shared by every route: the `{success, message, data}` envelope, camelCase fields,
UTC timestamps and page-by-page lists."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, PlainSerializer

from sanitas.camel import CamelModel as CamelModel  # defined below the web (plans.py uses it)
from sanitas.web.validation import bounded_utc, clean_label_input

T = TypeVar("T")


class Envelope(BaseModel, Generic[T]):
    success: bool = True
    message: str = ""
    data: T | None = None


class ErrorEnvelope(BaseModel):
    success: bool = False
    message: str
    error: str


class FieldError(BaseModel):
    """One refused field of a 422: its camelCase path in the request (`name`, `rules.macros`,
    `allowedTypes.0`), null for the request as a whole; a message in plain words; and the
    kind of problem (`missing`, `string_too_short`, `value_error`, ...)."""

    field: str | None
    message: str
    code: str


class ValidationErrorEnvelope(ErrorEnvelope):
    """The 422 answer (`validation_error`): `message` sums it up in one line, `fields` names
    each refused field so a form shows the message next to it."""

    fields: list[FieldError] = []


def ok(data: object = None, message: str = "") -> dict[str, object]:
    return {"success": True, "message": message, "data": data}


def iso(value: datetime | None) -> str | None:
    """A moment as ISO 8601 in UTC with a `Z` (2026-01-31T12:00:00.123456Z), whatever time zone
    the database driver attached."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


# A datetime in Python, `iso()`'s string on the wire (a string in the OpenAPI document).
UtcTimestamp = Annotated[datetime, PlainSerializer(iso, return_type=str)]

# Moments a request gives (sanitas/web/validation.py, `bounded_utc`): within 1970-01-01 ..
# 9000-01-01 UTC, as UTC. `Moment` needs a time zone (a naive time is 422); `MomentOrUtc`,
# for the filters documented "UTC when no zone", takes a naive time as UTC.
Moment = Annotated[datetime, AfterValidator(lambda v: bounded_utc(v, naive_is_utc=False)),
                   PlainSerializer(iso, return_type=str)]
MomentOrUtc = Annotated[datetime, AfterValidator(lambda v: bounded_utc(v, naive_is_utc=True)),
                        PlainSerializer(iso, return_type=str)]

# A name or short text a person chooses (API key, policy, webhook, first/last name...):
# cleaned like uploaded file names (`clean_label`) before any length check applies.
Label = Annotated[str, BeforeValidator(clean_label_input)]


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

    @staticmethod
    def offset(page: int, limit: int) -> int:
        """Rows before page `page` (1-based) of `limit` rows."""
        return (page - 1) * limit
