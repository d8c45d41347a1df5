"""The embedded database: a new SQLite file switches to WAL even while another connection
holds it, instead of failing the request with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading

from sqlalchemy import text

from sanitas.db import make_engine


def test_wal_switch_waits_for_a_connection_that_holds_the_new_file(tmp_path):
    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x INTEGER)")
    holder.execute("BEGIN IMMEDIATE")  # a writer at work (e.g. migrations on a new file)
    holder.execute("INSERT INTO t VALUES (1)")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            mode = connection.execute(text("PRAGMA journal_mode")).scalar()
        assert mode == "wal"
    finally:
        release.join()
        holder.close()
        engine.dispose()
