"""Helpers for the PostgreSQL test databases (importable by name from any test folder)."""

from __future__ import annotations

from sqlalchemy import create_engine, text

from sanitas.db import Base


def truncate_all(url: str) -> None:
    """Empty every table (PostgreSQL), so a shared test database starts each test clean."""
    engine = create_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()
