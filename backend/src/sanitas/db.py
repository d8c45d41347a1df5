"""Database engine, sessions and the declarative base."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    ColumnExpressionArgument,
    DateTime,
    create_engine,
    event,
    func,
)
from sqlalchemy.engine import CursorResult, Engine, Result
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    return datetime.now(UTC)


def rows_matched(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE matched. Session.execute returns a CursorResult for those
    statements, though it is typed as a plain Result (which has no rowcount)."""
    return cast("CursorResult[Any]", result).rowcount


def upsert(session: Session, model: type[Base], values: dict[str, Any],
           key: tuple[str, ...]) -> None:
    """Insert the row `values` of `model`, or update the other columns of the one whose `key`
    columns match: one statement (INSERT ... ON CONFLICT DO UPDATE), so concurrent writers of
    the same key never fail on it, on PostgreSQL and SQLite alike."""
    from sqlalchemy.dialects import postgresql, sqlite

    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(model).values(**values)
    changed = {name: statement.excluded[name] for name in values if name not in key}
    session.execute(statement.on_conflict_do_update(index_elements=list(key), set_=changed))


def contains_text(expression: ColumnExpressionArgument[str], text: str) -> ColumnElement[bool]:
    """What every search box matches: `expression` contains `text`, ignoring case. LIKE's
    wildcards (`%`, `_`) and its escape character in `text` are taken literally."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return func.lower(expression).like(f"%{escaped}%", escape="\\")


class UTCDateTime(TypeDecorator):
    """Timezone-aware UTC datetimes on every backend (SQLite stores them naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None:
            if value.tzinfo is None:
                raise ValueError("naive datetime given; use sanitas.db.utcnow()")
            value = value.astimezone(UTC)
        return value

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime}  # noqa: RUF012 - SQLAlchemy's documented hook; never mutated


def _ensure_wal(cur) -> None:
    """WAL is a property of the file, set once. Switching needs the file to itself, and SQLite
    answers "database is locked" at once (no busy wait) when another connection is open on a
    new file, so the switch is retried for a while."""
    deadline = time.monotonic() + 30
    while cur.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            cur.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def make_engine(url: str, pool_size: int = 10) -> Engine:
    """`pool_size` connections are kept; a few more may be opened for bursts. The API sizes it
    to its database slots plus the executor's threads (see sanitas/web/admission.py)."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30},
                               pool_size=pool_size, max_overflow=10, pool_timeout=30)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA busy_timeout=30000")
            _ensure_wal(cur)
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=pool_size, max_overflow=10)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    with factory() as session:
        yield session
