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
  CSV report of the last 30 days, all users (time until it is ready; median of 3)

then the same calls through HTTP to a live `sanitas serve` on the same database (tokens of a
live session each; the report requested with POST /api/reports and polled every 0.5 s until
ready, its time the server's own, completedAt - createdAt), sampling the server's resident
memory (the API process's peak RSS) meanwhile.

Targets (PostgreSQL, 1M rows): every interactive call <= 50 ms, the sweep <= 20 ms, the
month's report (about 90,000 rows) ready in <= 3 s, server RSS <= 300 MB; SQLite at 100k
within 2x of PostgreSQL.

--compare (PostgreSQL): load at the revision before the name-search and live-blob indexes
(b3d5f7a9c1e2; the code needs the rollup), time, then migrate to head (the indexes built
CONCURRENTLY on the loaded table), ANALYZE, and time again. The figures from before the
rollup and the first indexes are in issue 23 and docs/deploying.md.

--reuse-db NAME (to iterate on a query): the PostgreSQL database NAME (or, with --db sqlite,
the SQLite file NAME) is loaded only if it holds no files yet, migrated to head on each run and
kept afterwards (drop it yourself); not with --compare.

Usage: backend/.venv/bin/python bench/bench_scale.py [--db postgresql|sqlite|both]
       [--rows N] [--compare] [--reuse-db NAME] [--save FILE] [--against FILE]
       [--pg-url postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND / "src"))
sys.path.insert(0, str(BACKEND))

from alembic import command  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from sanitas.config import Settings  # noqa: E402
from sanitas.db import make_engine, make_sessionmaker  # noqa: E402
from sanitas.migrate import alembic_config  # noqa: E402

BEFORE_INDEXES = "b3d5f7a9c1e2"  # the rollup, before the name-search and live-blob indexes
USERS = 1_000
AUDIT_ROWS = 300_000
HEAVY = "u-heavy"
ADMIN = "u-admin"
RUNS = 5
REPORT_RUNS = 3
# How often the HTTP run asks whether the report is ready (the web app: every 2 s). Every
# 50 ms, the polls took the server's time from the report being written (same process).
REPORT_POLL_SECONDS = 0.5
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
    from sanitas.files import admin_service
    from sanitas.files import service as files
    from sanitas.models import FileStatus, User
    from sanitas.processing import sweeps
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
        (REPORT_CALL, lambda: month_report(factory, settings, storage)),
    ]


REPORT_CALL = "CSV report, 30 days, all users (ready)"


def month_report(factory: Any, settings: Settings, storage: Any) -> None:
    """Generate the CSV report of everyone's files of the last 30 days, as the report worker
    does once it has claimed the request."""
    from sanitas.models.report import Report
    from sanitas.reports import worker

    now = datetime.now(UTC)
    with factory() as s:
        report = Report(user_id=ADMIN, scope_user_id=None, period_start=now - timedelta(days=30),
                        period_end=now, format="csv", status="PROCESSING", attempts=1,
                        created_at=now, expires_at=now + timedelta(days=1))
        s.add(report)
        s.commit()
        report_id = report.id
    outcome = worker.generate(report_id, factory=factory, settings=settings, storage=storage)
    assert outcome == "completed", outcome
    with factory() as s:
        key = s.get(Report, report_id).storage_key
        s.execute(text("DELETE FROM reports WHERE id = :i"), {"i": report_id})
        s.commit()
    storage.delete(key)


def _median_ms(call: Callable[[], Any], runs: int) -> float:
    call()  # warm the cache and the session machinery
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def time_calls(url: str, data_dir: Path) -> dict[str, float]:
    return {name: _median_ms(call, REPORT_RUNS if name == REPORT_CALL else RUNS)
            for name, call in calls(url, data_dir)}


# -- through HTTP --------------------------------------------------------------------------------
class PeakRss:
    """The peak resident memory of a process, sampled every 20 ms in a thread."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.process = psutil.Process(pid)
        self.peak = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, self.process.memory_info().rss)
            except Exception:
                return
            self.stop.wait(0.02)

    def __enter__(self) -> PeakRss:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def http_calls(url: str, data_dir: Path) -> tuple[dict[str, float], float]:
    """The calls through a live `sanitas serve` on `url`: medians in ms, and the API process's
    peak RSS in MB over the whole run."""
    import httpx
    data_dir.mkdir(parents=True, exist_ok=True)

    from sanitas.models import User
    from tests.factories import auth_headers
    from tests.live_server import SECRET, free_port, start_server, stop_server

    settings = Settings(data_dir=data_dir, database_url=url, secret_key=SECRET)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as s:
        # The reports an earlier run of a reused database asked for (their files went with
        # that run's data directory): an account may keep only so many.
        s.execute(text("DELETE FROM reports WHERE user_id = :u"), {"u": ADMIN})
        s.commit()
        heavy = auth_headers(settings, s, s.get(User, HEAVY))
        admin = auth_headers(settings, s, s.get(User, ADMIN))
        total = int(s.scalar(text("SELECT count(*) FROM files WHERE user_id = :u"),
                             {"u": HEAVY}) or 0)
    engine.dispose()
    last_page = max(1, -(-total // 20))
    port = free_port()
    proc = start_server(data_dir, port, {"SANITAS_DATABASE_URL": url,
                                         "SANITAS_EXECUTOR_WORKERS": "1"})
    base = f"http://127.0.0.1:{port}/api"
    out: dict[str, float] = {}
    try:
        with PeakRss(proc.pid) as rss, httpx.Client(base_url=base, timeout=120) as client:
            def get(path: str, headers: dict[str, str], **params: Any) -> Callable[[], Any]:
                def run() -> Any:
                    answer = client.get(path, headers=headers, params=params)
                    assert answer.status_code == 200, (path, answer.status_code, answer.text)
                    return answer
                return run

            def report() -> float:
                """ms from the request to the report ready, as the server recorded them
                (createdAt, completedAt), polling as a client would."""
                now = datetime.now(UTC)
                asked = client.post("/reports", headers=admin, json={
                    "from": (now - timedelta(days=30)).isoformat(), "to": now.isoformat(),
                    "format": "csv", "scope": "all"})
                assert asked.status_code == 202, asked.text
                report_id = asked.json()["data"]["report"]["id"]
                while True:
                    time.sleep(REPORT_POLL_SECONDS)
                    listed = client.get("/reports", headers=admin, params={"limit": 100})
                    mine = [r for r in listed.json()["data"]["reports"] if r["id"] == report_id]
                    if mine and mine[0]["status"] in ("COMPLETED", "FAILED"):
                        assert mine[0]["status"] == "COMPLETED", mine[0]
                        ready = datetime.fromisoformat(mine[0]["completedAt"])
                        return (ready - datetime.fromisoformat(mine[0]["createdAt"])
                                ).total_seconds() * 1000

            history = f"/users/{HEAVY}/files"
            for name, call in [
                ("history, page 1", get(history, heavy, page=1, limit=20)),
                ("history, last page", get(history, heavy, page=last_page, limit=20)),
                ("history, search + status", get(history, heavy, page=1, limit=20,
                                                 status="COMPLETED", search="quarterly 12")),
                ("usage stats (heavy)", get("/usage/stats", heavy)),
                ("usage history, 6 months", get("/usage/history", heavy, months=6)),
                ("admin files, page 1", get("/admin/files", admin, page=1, limit=20)),
                ("admin files, filtered", get("/admin/files", admin, page=1, limit=20,
                                              status="FAILED", type="pdf")),
                ("admin analytics, day", get("/usage/analytics", admin, timeframe="day")),
                ("admin analytics, month", get("/usage/analytics", admin, timeframe="month")),
                ("admin charts, month", get("/usage/charts", admin, timeframe="month",
                                            scope="all"))]:
                out[name] = _median_ms(call, RUNS)
            report()  # the server's own figure, not the polls' granularity
            out[REPORT_CALL] = statistics.median(report() for _ in range(REPORT_RUNS))
        peak = rss.peak / 2**20
    finally:
        stop_server(proc)
    return out, peak


def print_table(title: str, columns: dict[str, dict[str, float]]) -> None:
    print(f"\n{title} (median of {RUNS}, ms)")
    heads = list(columns)
    print(f"| call | {' | '.join(heads)} |")
    print(f"|---|{'---|' * len(heads)}")
    for name in next(iter(columns.values())):
        cells = " | ".join(f"{columns[h][name]:,.1f}" if name in columns[h] else "-"
                           for h in heads)
        print(f"| {name} | {cells} |")
    sys.stdout.flush()


# -- main ----------------------------------------------------------------------------------------
def _holds_files(url: str) -> bool:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT 1 FROM files LIMIT 1")).first() is not None
    finally:
        engine.dispose()


def load_unless_reused(url: str, reuse: str | None, database: str, load: Callable[[], None],
                       what: str) -> None:
    """Load the rows with `load`, unless `reuse` names a database that already holds files
    (then it is only analysed)."""
    if reuse and _holds_files(url):
        analyze(url)
        print(f"{database}: reusing the loaded database {reuse}")
        return
    started = time.perf_counter()
    load()
    print(f"{database}: loaded {what} in {time.perf_counter() - started:.0f} s")


def run_postgresql(admin_url: str, rows: int, compare: bool,
                   reuse: str | None = None) -> dict[str, dict[str, float]]:
    name = reuse or f"sanitas_bench_scale_{os.getpid()}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not reuse or conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"),
                                     {"n": name}).first() is None:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        cfg = alembic_config(url)
        command.upgrade(cfg, BEFORE_INDEXES if compare else "head")
        load_unless_reused(url, reuse, "PostgreSQL", lambda: load_postgresql(url, rows),
                           f"{rows:,} files, their jobs and {AUDIT_ROWS:,} audit rows")
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
            print_table(f"PostgreSQL, {rows:,} files, service calls", columns)
            columns["HTTP"], peak = http_calls(url, Path(tmp) / "serve")
        print_table(f"PostgreSQL, {rows:,} files", columns)
        print(f"server (API process) peak RSS over the HTTP run: {peak:.0f} MB")
        return columns
    finally:
        if not reuse:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run_sqlite(rows: int, reuse: str | None = None) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(reuse).resolve() if reuse else Path(tmp) / 'bench.db'}"
        command.upgrade(alembic_config(url), "head")
        load_unless_reused(url, reuse, "SQLite", lambda: load_sqlite(url, rows),
                           f"{rows:,} files and their jobs")
        columns = {"head": time_calls(url, Path(tmp))}
        print_table(f"SQLite, {rows:,} files, service calls", columns)
        columns["HTTP"], peak = http_calls(url, Path(tmp) / "serve")
        print_table(f"SQLite, {rows:,} files", columns)
        print(f"server (API process) peak RSS over the HTTP run: {peak:.0f} MB")
        return columns


def print_comparison(sqlite: dict[str, dict[str, float]],
                     postgresql: dict[str, dict[str, float]]) -> None:
    """Each call's SQLite median over PostgreSQL's (the target: within 2x), through the
    service functions and through HTTP."""
    print("\nSQLite over PostgreSQL (target <= 2.0)")
    print("| call | service: SQLite / PG ms | ratio | HTTP: SQLite / PG ms | ratio |")
    print("|---|---|---|---|---|")
    for name in sqlite["head"]:
        cells = []
        for column in ("head", "HTTP"):
            lite, pg = sqlite.get(column, {}).get(name), postgresql.get(column, {}).get(name)
            if lite is None or pg is None:
                cells += ["-", "-"]
                continue
            ratio = lite / pg if pg else float("inf")
            cells += [f"{lite:,.1f} / {pg:,.1f}", f"{ratio:.2f}{'' if ratio <= 2 else ' !'}"]
        print(f"| {name} | {' | '.join(cells)} |")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument("--rows", type=int, default=0, help="files rows (default 1M / 100k)")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--reuse-db", metavar="NAME", help="keep and reuse this database "
                        "(PostgreSQL name, or SQLite file with --db sqlite)")
    parser.add_argument("--save", metavar="FILE", help="write the medians as JSON")
    parser.add_argument("--against", metavar="FILE", help="a --save of a PostgreSQL run: "
                        "compare a --db sqlite run with it")
    parser.add_argument("--pg-url", default=os.environ.get(
        "SANITAS_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    if args.reuse_db and (args.compare or args.db == "both"):
        parser.error("--reuse-db takes one database (--db postgresql or sqlite), no --compare")
    figures: dict[str, dict[str, dict[str, float]]] = {}
    if args.against:
        figures["postgresql"] = json.loads(Path(args.against).read_text())["postgresql"]
    if args.db in ("postgresql", "both"):
        figures["postgresql"] = run_postgresql(args.pg_url, args.rows or 1_000_000,
                                               args.compare, args.reuse_db)
    if args.db in ("sqlite", "both"):
        figures["sqlite"] = run_sqlite(args.rows or 100_000, args.reuse_db)
    if args.save:
        Path(args.save).write_text(json.dumps(figures, indent=1))
    if "sqlite" in figures and "postgresql" in figures:
        print_comparison(figures["sqlite"], figures["postgresql"])


if __name__ == "__main__":
    main()
