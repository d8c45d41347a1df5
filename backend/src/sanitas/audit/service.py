"""Writing and reading the audit log.

`record` adds one row to the session and does not commit: the caller's commit writes it
together with the change it records, so a change that is rolled back leaves no row and a
recorded change cannot be lost. Nothing here updates or deletes a row (models/audit.py refuses
it at flush time)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from sanitas.audit.schemas import AuditEntryOut, AuditList
from sanitas.engine.text import FORMULA_START, PLAIN_NUMBER
from sanitas.models import User
from sanitas.models.audit import AuditAction, AuditEntry
from sanitas.web.schemas import Pagination, iso

# A detail is a short note for people, never a credential: keys naming one are refused
# outright (a programming error, caught by the tests), and values are cut short.
_FORBIDDEN_KEY_PARTS = ("password", "token", "secret", "hash", "cookie", "key")
MAX_TEXT = 200
MAX_DETAIL_CHARS = 1000

Scalar = str | int | float | bool | None


def _clean(detail: dict[str, Any] | None) -> dict[str, Any] | None:
    if not detail:
        return None
    out: dict[str, Any] = {}
    for key, value in detail.items():
        if any(part in key.lower() for part in _FORBIDDEN_KEY_PARTS):
            raise ValueError(f"audit detail key {key!r} may hold a secret")
        if isinstance(value, str):
            value = value[:MAX_TEXT]
        elif isinstance(value, list | tuple):
            value = [v[:MAX_TEXT] if isinstance(v, str) else v for v in value][:20]
        elif not isinstance(value, int | float | bool) and value is not None:
            value = str(value)[:MAX_TEXT]
        out[key] = value
    if len(json.dumps(out, default=str)) > MAX_DETAIL_CHARS:
        return {"truncated": True}
    return out


def record(session: Session, *, action: AuditAction, actor: User | None, ip: str | None,
           target: tuple[str, str | None] | None = None,
           detail: dict[str, Any] | None = None) -> AuditEntry:
    """Add an audit row for `action` by `actor` (None: nobody signed in) from address `ip`,
    about `target` (a type such as "user" and an id). Written by the caller's commit."""
    entry = AuditEntry(
        action=AuditAction(action).value,
        actor_id=actor.id if actor is not None else None,
        actor_email=actor.email if actor is not None else None,
        target_type=target[0] if target else None,
        target_id=(target[1] or None) if target else None,
        ip=(ip or None) and ip[:64],
        detail=_clean(detail))
    session.add(entry)
    return entry


def record_export(session: Session, admin: User, ip: str | None,
                  filters: AuditFilters) -> None:
    """Record (and commit) that `admin` took a copy of the log, with which filters."""
    record(session, action=AuditAction.AUDIT_EXPORTED, actor=admin, ip=ip, detail={
        "action": filters.action.value if filters.action else None,
        "userId": filters.user_id,
        "from": filters.start.isoformat() if filters.start else None,
        "to": filters.end.isoformat() if filters.end else None})
    session.commit()


# -- reading --------------------------------------------------------------------------------

def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class AuditFilters:
    action: AuditAction | None = None
    user_id: str | None = None  # rows this account did or that were done to it
    start: datetime | None = None  # inclusive
    end: datetime | None = None  # exclusive

    def conditions(self) -> list[ColumnElement[bool]]:
        out: list[ColumnElement[bool]] = []
        if self.action is not None:
            out.append(AuditEntry.action == self.action.value)
        if self.user_id:
            out.append(or_(AuditEntry.actor_id == self.user_id,
                           (AuditEntry.target_type == "user")
                           & (AuditEntry.target_id == self.user_id)))
        if (start := _aware(self.start)) is not None:
            out.append(AuditEntry.created_at >= start)
        if (end := _aware(self.end)) is not None:
            out.append(AuditEntry.created_at < end)
        return out


def _query(filters: AuditFilters) -> Select[AuditEntry]:
    # Newest first; the id is the order rows were written in.
    return select(AuditEntry).where(*filters.conditions()).order_by(AuditEntry.id.desc())


def list_entries(session: Session, filters: AuditFilters, *, page: int,
                 limit: int) -> AuditList:
    total = session.scalar(select(func.count()).select_from(AuditEntry)
                           .where(*filters.conditions())) or 0
    rows = session.scalars(_query(filters).offset(Pagination.offset(page, limit))
                           .limit(limit)).all()
    return AuditList(entries=[AuditEntryOut.model_validate(r) for r in rows],
                     pagination=Pagination.of(page, limit, total))


def export_batch(session: Session, filters: AuditFilters, *, before_id: int | None,
                 size: int) -> list[AuditEntry]:
    """The next `size` rows of the export, newest first, older than `before_id`."""
    query = _query(filters)
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    return list(session.scalars(query.limit(size)).all())


# -- CSV --------------------------------------------------------------------------------------

CSV_COLUMNS = ("id", "time", "action", "actor_id", "actor_email", "target_type", "target_id",
               "ip", "detail")


def neutralise(cell: str) -> str:
    """The engine's rule for CSV files (engine/text.py): a cell a spreadsheet would run as a
    formula (=, +, -, @, tab, CR, their full-width forms, after spaces or quotes) gets a
    leading apostrophe, which makes it text; plain numbers such as -5 stay as they are."""
    stripped = cell.lstrip(" \"'")
    if not (cell.startswith(FORMULA_START) or stripped.startswith(FORMULA_START)):
        return cell
    return cell if PLAIN_NUMBER.match(cell.strip()) else "'" + cell


def csv_line(values: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([neutralise(v) for v in values])
    return out.getvalue()


def csv_row(entry: AuditEntry) -> str:
    detail = json.dumps(entry.detail, ensure_ascii=False, sort_keys=True) if entry.detail \
        else ""
    return csv_line([str(entry.id), iso(entry.created_at) or "", entry.action,
                     entry.actor_id or "", entry.actor_email or "", entry.target_type or "",
                     entry.target_id or "", entry.ip or "", detail])


def csv_header() -> str:
    return csv_line(list(CSV_COLUMNS))

