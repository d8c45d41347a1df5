"""Apply Alembic migrations programmatically (used by `sanitas migrate`, `serve` and tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

BACKEND_DIR = Path(__file__).resolve().parents[2]


def alembic_config(database_url: str) -> Config:
    cfg = Config(str(BACKEND_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(BACKEND_DIR / "migrations"))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def upgrade_to_head(database_url: str) -> None:
    from sanitas.datadir import create_sqlite_file

    create_sqlite_file(database_url)  # 0600, before SQLite creates it (and its WAL) itself
    command.upgrade(alembic_config(database_url), "head")


def current_revision(database_url: str) -> str | None:
    """The migration the database is at (None: never migrated). Connects: a SQLite file that
    does not exist would be created, so look for it first (datadir.missing_installation)."""
    from alembic.runtime.migration import MigrationContext

    from sanitas.db import make_engine

    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
