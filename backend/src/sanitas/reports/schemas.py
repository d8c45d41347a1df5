"""Request and answer shapes of /api/reports (camelCase)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from sanitas.models.report import ReportFormat, ReportStatus
from sanitas.web.schemas import CamelModel, Pagination, UtcTimestamp
from sanitas.web.validation import bounded_utc


def period_bound(value: str, *, end: bool) -> datetime:
    """A period bound as a UTC moment. A date (YYYY-MM-DD) means that whole day: `from` at its
    start, `to` through its end (the next day's start, excluded). A moment (ISO 8601) is taken
    as it is, UTC when it has no zone. ValueError when it is neither, or outside the moments
    a request may give (sanitas.web.validation.bounded_utc)."""
    if _DATE.fullmatch(value):
        moment = bounded_utc(datetime.combine(date.fromisoformat(value), time(0), tzinfo=UTC),
                             naive_is_utc=False)
        return bounded_utc(moment + timedelta(days=1), naive_is_utc=False) if end else moment
    return bounded_utc(datetime.fromisoformat(value), naive_is_utc=True)


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class ReportIn(CamelModel):
    from_: str = Field(alias="from", max_length=40, description=(
        "Start of the period: a date (YYYY-MM-DD, from its start, UTC) or an ISO 8601 "
        "moment (inclusive)"))
    to: str = Field(max_length=40, description=(
        "End of the period: a date (YYYY-MM-DD, through its end, UTC) or an ISO 8601 moment "
        "(exclusive)"))
    format: ReportFormat
    scope: str = Field("own", max_length=64, description=(
        "`own` (your files), `all` (everyone's; admins) or a user id (that user's; admins)"))

    model_config = ConfigDict(extra="forbid")  # merged with CamelModel's settings

    @field_validator("from_", "to")
    @classmethod
    def _a_date_or_moment(cls, value: str, info: ValidationInfo) -> str:
        try:
            datetime.fromisoformat(value)  # a date parses too
        except ValueError:
            raise ValueError("must be a date (YYYY-MM-DD) or an ISO 8601 moment") from None
        period_bound(value, end=info.field_name == "to")  # ValueError: out of range
        return value


class ReportRef(CamelModel):
    id: str
    status: ReportStatus


class ReportCreated(CamelModel):
    report: ReportRef


class ReportOut(CamelModel):
    id: str
    status: ReportStatus
    format: ReportFormat
    scope: str = Field(description="`own`, `all` or the user id whose files it lists")
    period_start: UtcTimestamp
    period_end: UtcTimestamp
    user_id: str = Field(description="Who asked for it")
    created_at: UtcTimestamp
    completed_at: UtcTimestamp | None
    expires_at: UtcTimestamp = Field(description=(
        "When the report (row and file) is deleted: SANITAS_REPORT_TTL_HOURS after it was "
        "requested"))
    file_count: int | None
    size: int | None
    error_message: str | None


class ReportList(CamelModel):
    reports: list[ReportOut]
    pagination: Pagination
