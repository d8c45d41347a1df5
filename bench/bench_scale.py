"""Scale benchmark (issue 23): the calls that used to grow with history, timed over a large
`files` table.

Loads 1,000 users (one heavy account owning 10% of the files), N files rows with their jobs
(a small findings report on the completed ones) and 300,000 audit rows with COPY on
PostgreSQL (N = 1,000,000; --rows to change), or N = 100,000 rows on SQLite, then times each
call through the service functions the routes call, as the median of 5:

  heavy user's history, page 1 / last page / search + status
  dashboard usage stats (heavy) / usage history 6 months
  admin files, page 1 / filtered (status FAILED)
  admin analytics, day / month; admin charts, month (everyone's files)
  expiry sweep with nothing due

Targets (PostgreSQL, 1M rows): every interactive call <= 50 ms, the sweep <= 20 ms.

--compare (PostgreSQL): load at the revision before the query indexes (a8c0e2f4b6d8), time,
then migrate to head (the indexes built CONCURRENTLY on the loaded table), ANALYZE, and time
again; prints both columns.

Usage: backend/.venv/bin/python bench/bench_scale.py [--db postgresql|sqlite|both]
       [--rows N] [--compare] [--pg-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND / "src"))

from alembic import command  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from sanitas.config import Settings  # noqa: E402
from sanitas.db import make_engine, make_sessionmaker  # noqa: E402
from sanitas.migrate import alembic_config  # noqa: E402

BEFORE_INDEXES = "a8c0e2f4b6d8"
USERS = 1_000
AUDIT_ROWS = 300_000
HEAVY = "u-heavy"
ADMIN = "u-admin"
RUNS = 5
REPORT = '{"findings": [{"kind": "javascript", "action": "removed", "detail": "x"}]}'
TYPES = ("pdf", "png", "jpeg", "docx", "xlsx", "csv", "txt", "svg")


# -- loading -------------------------------------------------------------------------------------
def _owner(i: int) -> str:
    return HEAVY if i % 10 == 0 else f"u-{1 + i % (USERS - 2)}"


def _file_rows(n: int, now: datetime) -> Any:
    """(id, user_id, name, size, type, mode, status, error_code, created, expires, expired,
    duration, report, verdict) over a year, oldest first; the newest 500 not yet expired."""
    span = 365 * 86400
    for i in range(n):
        created = now - timedelta(seconds=span * (n - i) / n)
        live = i >= n - 500
        expires = created + (timedelta(days=2) if live else timedelta(days=1))
        k = (i // 10) % 20
        status = "FAILED" if k == 0 else "PENDING" if live and k == 1 else "COMPLETED"
        yield (f"f-{i:08d}", _owner(i), f"Document {i % 5000} quarterly.pdf", 10_000 + i % 90_000,
               TYPES[i % len(TYPES)], "basic", status,
               "encrypted" if status == "FAILED" else None, created, expires, not live,
               0.5 + (i % 100) / 50 if status == "COMPLETED" else None,
               REPORT if status == "COMPLETED" else None,
               "cleaned" if status == "COMPLETED" else "refused" if status == "FAILED" else None)


FILE_COLUMNS = ("id", "user_id", "original_name", "original_size", "detected_type", "mode",
                "status", "error_code", "created_at", "expires_at", "is_expired",
                "processing_duration", "report", "verdict")


def _user_rows(now: datetime) -> Any:
    yield (ADMIN, "admin@example.com", "ADMIN")
    yield (HEAVY, "heavy@example.com", "ENTERPRISE")
    for u in range(1, USERS - 1):
        yield (f"u-{u}", f"user{u}@example.com", "USER")


def load_postgresql(url: str, n: int) -> None:
    import psycopg

    now = datetime.now(UTC)
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy("COPY users (id, email, role, is_active, is_email_verified, created_at, "
                      "updated_at) FROM STDIN") as copy:
            for uid, email, role in _user_rows(now):
                copy.write_row((uid, email, role, True, True, now, now))
        with cur.copy(f"COPY files ({', '.join(FILE_COLUMNS)}, download_count) "
                      "FROM STDIN") as copy:
            for row in _file_rows(n, now):
                copy.write_row((*row, 0))
        with cur.copy("COPY jobs (id, file_id, state, priority, progress, attempts, "
                      "created_at) FROM STDIN") as copy:
            for row in _file_rows(n, now):
                state = "waiting" if row[6] == "PENDING" else \
                    "failed" if row[6] == "FAILED" else "completed"
                copy.write_row((f"j-{row[0][2:]}", row[0], state, 0, 100, 1, row[8]))
        with cur.copy("COPY audit_log (created_at, actor_id, actor_email, action, target_type, "
                      "target_id, ip) FROM STDIN") as copy:
            for i in range(AUDIT_ROWS):
                copy.write_row((now - timedelta(seconds=i * 100), ADMIN, "admin@example.com",
                                "file.deleted" if i % 3 else "user.updated", "file",
                                f"f-{i:08d}", "127.0.0.1"))
        conn.commit()
    analyze(url)


def load_sqlite(url: str, n: int) -> None:
    now = datetime.now(UTC)
    engine = create_engine(url)
    marks = ", ".join(f":{c}" for c in FILE_COLUMNS)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, email, role, is_active, is_email_verified, "
                          "created_at, updated_at) VALUES (:i, :e, :r, 1, 1, :n, :n)"),
                     [{"i": i, "e": e, "r": r, "n": now} for i, e, r in _user_rows(now)])
        batch: list[dict[str, Any]] = []
        for row in _file_rows(n, now):
            batch.append(dict(zip(FILE_COLUMNS, row, strict=True)))
            if len(batch) == 10_000:
                conn.execute(text(f"INSERT INTO files ({', '.join(FILE_COLUMNS)}, "
                                  f"download_count) VALUES ({marks}, 0)"), batch)
                batch = []
        if batch:
            conn.execute(text(f"INSERT INTO files ({', '.join(FILE_COLUMNS)}, download_count) "
                              f"VALUES ({marks}, 0)"), batch)
        conn.execute(text("INSERT INTO jobs (id, file_id, state, priority, progress, attempts, "
                          "created_at) SELECT 'j-' || substr(id, 3), id, CASE status WHEN "
                          "'PENDING' THEN 'waiting' WHEN 'FAILED' THEN 'failed' ELSE "
                          "'completed' END, 0, 100, 1, created_at FROM files"))
    analyze(url)
    engine.dispose()


def analyze(url: str) -> None:
    engine = create_engine(url)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE" if url.startswith("postgresql") else "ANALYZE"))
    engine.dispose()


# -- timing --------------------------------------------------------------------------------------
def calls(url: str, data_dir: Path) -> list[tuple[str, Callable[[], Any]]]:
    from sanitas.processing import sweeps
    from sanitas.files import admin_service
    from sanitas.files import service as files
    from sanitas.models import FileStatus, User
    from sanitas.storage import make_storage
    from sanitas.usage import service as usage
    from sanitas.usage.schemas import ChartScope, Timeframe

    settings = Settings(data_dir=data_dir, database_url=url,
                        secret_key="bench-secret-key-that-is-long-enough-0123456789")
    engine = make_engine(url)
    factory = make_sessionmaker(engine)
    storage = make_storage(settings)
    with factory() as s:
        total = s.scalar(text("SELECT count(*) FROM files WHERE user_id = :u"), {"u": HEAVY})
    last_page = max(1, -(-int(total or 0) // 20))

    def with_session(fn: Callable[[Any], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with factory() as s:
                return fn(s)
        return run

    def user(s: Any, uid: str) -> Any:
        return s.get(User, uid)

    return [
        ("history, page 1", with_session(lambda s: files.file_history(
            s, HEAVY, page=1, limit=20))),
        ("history, last page", with_session(lambda s: files.file_history(
            s, HEAVY, page=last_page, limit=20))),
        ("history, search + status", with_session(lambda s: files.file_history(
            s, HEAVY, page=1, limit=20, status=FileStatus.COMPLETED, search="quarterly 12"))),
        ("usage stats (heavy)", with_session(lambda s: usage.usage_stats(
            s, settings, user(s, HEAVY)))),
        ("usage history, 6 months", with_session(lambda s: usage.usage_history(
            s, user(s, HEAVY), 6))),
        ("admin files, page 1", with_session(lambda s: admin_service.file_list(
            s, admin_service.FileFilters(), page=1, limit=20))),
        ("admin files, filtered", with_session(lambda s: admin_service.file_list(
            s, admin_service.FileFilters(status=FileStatus.FAILED, detected_type="pdf"),
            page=1, limit=20))),
        ("admin analytics, day", with_session(lambda s: usage.analytics(s, Timeframe.DAY))),
        ("admin analytics, month", with_session(lambda s: usage.analytics(
            s, Timeframe.MONTH))),
        ("admin charts, month", with_session(lambda s: usage.charts(
            s, user(s, ADMIN), Timeframe.MONTH, ChartScope.ALL))),
        ("expiry sweep, nothing due", lambda: sweeps.expire_files(factory, storage)),
    ]


def time_calls(url: str, data_dir: Path) -> dict[str, float]:
    out = {}
    for name, call in calls(url, data_dir):
        call()  # warm the cache and the session machinery
        runs = []
        for _ in range(RUNS):
            start = time.perf_counter()
            call()
            runs.append((time.perf_counter() - start) * 1000)
        out[name] = statistics.median(runs)
    return out


def print_table(title: str, columns: dict[str, dict[str, float]]) -> None:
    print(f"\n{title} (median of {RUNS}, ms)")
    heads = list(columns)
    print(f"| call | {' | '.join(heads)} |")
    print(f"|---|{'---|' * len(heads)}")
    for name in next(iter(columns.values())):
        cells = " | ".join(f"{columns[h][name]:,.1f}" for h in heads)
        print(f"| {name} | {cells} |")
    sys.stdout.flush()


# -- main ----------------------------------------------------------------------------------------
def run_postgresql(admin_url: str, rows: int, compare: bool) -> None:
    name = f"sanitas_bench_scale_{os.getpid()}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        cfg = alembic_config(url)
        command.upgrade(cfg, BEFORE_INDEXES if compare else "head")
        started = time.perf_counter()
        load_postgresql(url, rows)
        print(f"PostgreSQL: loaded {rows:,} files, their jobs and {AUDIT_ROWS:,} audit rows "
              f"in {time.perf_counter() - started:.0f} s")
        columns = {}
        with tempfile.TemporaryDirectory() as tmp:
            if compare:
                columns["before indexes"] = time_calls(url, Path(tmp))
                started = time.perf_counter()
                command.upgrade(cfg, "head")
                analyze(url)
                print(f"migrated to head (indexes built concurrently) in "
                      f"{time.perf_counter() - started:.0f} s")
            columns["head"] = time_calls(url, Path(tmp))
        print_table(f"PostgreSQL, {rows:,} files", columns)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run_sqlite(rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        command.upgrade(alembic_config(url), "head")
        started = time.perf_counter()
        load_sqlite(url, rows)
        print(f"SQLite: loaded {rows:,} files and their jobs in "
              f"{time.perf_counter() - started:.0f} s")
        print_table(f"SQLite, {rows:,} files", {"head": time_calls(url, Path(tmp))})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument("--rows", type=int, default=0, help="files rows (default 1M / 100k)")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--pg-url", default=os.environ.get(
        "SANITAS_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    if args.db in ("postgresql", "both"):
        run_postgresql(args.pg_url, args.rows or 1_000_000, args.compare)
    if args.db in ("sqlite", "both"):
        run_sqlite(args.rows or 100_000)


if __name__ == "__main__":
    main()
