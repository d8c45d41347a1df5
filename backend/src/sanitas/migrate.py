"""Apply Alembic migrations programmatically (used by `sanitas migrate`, `serve` and tests)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config

if TYPE_CHECKING:
    from sanitas.config import Settings

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
    does not exist would be created, so look for it first (missing_installation)."""
    from alembic.runtime.migration import MigrationContext

    from sanitas.db import make_engine

    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def _shown(database_url: str) -> str:
    return database_url.split("@")[-1] if "@" in database_url else database_url  # no password


def missing_installation(settings: Settings) -> str | None:
    """Why these settings name no installation (None when they do), creating nothing: no
    SQLite file where they point, or a database never migrated. The answer names the place
    and how to point at the right one."""
    from sanitas.datadir import sqlite_path

    url = str(settings.database_url)
    db = sqlite_path(url)
    if db is not None and not db.is_file():
        why = f"there is no database at {db}"
    elif current_revision(url) is None:
        why = f"the database {_shown(url)} has never been migrated"
    else:
        return None
    hint = (" `sanitas serve` (`make run`) keeps its data in SANITAS_DATA_DIR, by default ./data "
            "of the folder it was started from: run this command from that folder or set "
            "SANITAS_DATA_DIR (or SANITAS_DATABASE_URL) as `serve` has it. To start a new "
            "installation here, run `sanitas migrate` first.")
    checkout = (BACKEND_DIR.parent / "data").resolve()
    if checkout != settings.data_dir and (checkout / "sanitas.db").is_file():
        hint += f" This checkout's `make run` data is in {checkout}."
    return f"no Sanitas installation: {why}.{hint}"
