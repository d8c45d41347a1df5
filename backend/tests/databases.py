"""Helpers for the PostgreSQL test databases (importable by name from any test folder)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from sanitas.db import Base
from sanitas.migrate import upgrade_to_head

PG_ADMIN_URL = os.environ.get("SANITAS_TEST_PG_URL",
                              "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@contextmanager
def fresh_pg_database(name: str) -> Iterator[str]:
    """A new, migrated database `name` on the test server (one left over by a killed run is
    dropped first); its URL. Dropped again afterwards."""
    admin = make_url(PG_ADMIN_URL)
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url = admin.set(database=name).render_as_string(hide_password=False)
        upgrade_to_head(url)
        yield url
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def truncate_all(url: str) -> None:
    """Empty every table (PostgreSQL), so a shared test database starts each test clean."""
    engine = create_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()
