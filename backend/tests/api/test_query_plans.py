"""The hot statements use their index on PostgreSQL (issue 23): a later change to a query or
to the indexes cannot silently bring back a full scan of `files`.

The statements are the ones the service code sends, captured with an engine event while the
service functions run against a table of 40,000 files (1,000 users, one owning 10%), then
EXPLAINed with their own parameters after ANALYZE."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session

from sanitas.config import Settings
from sanitas.db import make_sessionmaker
from sanitas.files import admin_service
from sanitas.files import service as files
from sanitas.processing import sweeps
from sanitas.storage import make_storage
from tests.databases import truncate_all

ROWS = 40_000
USERS = 1_000
HEAVY = "u-heavy"


@pytest.fixture(scope="module")
def loaded(pg_database_url: str) -> Iterator[Engine]:
    """A PostgreSQL database holding ROWS files (a tenth the heavy user's), all but the newest
    200 expired and swept, the rest expiring tomorrow: the sweep has nothing due."""
    truncate_all(pg_database_url)
    engine = create_engine(pg_database_url)
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO users (id, email, role, is_active, is_email_verified, created_at, "
            "updated_at) SELECT CASE WHEN g = 0 THEN :heavy ELSE 'u-' || g END, "
            "'user' || g || '@example.com', 'USER', true, true, now(), now() "
            "FROM generate_series(0, :n - 1) g"), {"heavy": HEAVY, "n": USERS})
        conn.execute(text(
            "INSERT INTO files (id, user_id, original_name, original_size, detected_type, "
            "mode, status, created_at, expires_at, is_expired, download_count) "
            "SELECT 'f-' || g, CASE WHEN g % 10 = 0 THEN :heavy "
            "ELSE 'u-' || (1 + g % (:users - 1)) END, 'file' || g || '.pdf', 1000 + g, "
            "(ARRAY['pdf', 'png', 'docx', 'csv'])[1 + g % 4], 'basic', "
            "(ARRAY['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED'])[1 + (g / 10) % 4], "
            "now() - make_interval(secs => (:n - g) * 60), "
            "now() - make_interval(secs => (:n - g) * 60) + "
            "CASE WHEN g >= :n - 200 THEN interval '2 days' ELSE interval '1 day' END, "
            "g < :n - 200, 0 FROM generate_series(0, :n - 1) g"),
            {"heavy": HEAVY, "users": USERS, "n": ROWS})
        conn.execute(text(  # the files cleaned have a time and a report with a threat
            "UPDATE files SET processing_duration = 0.5 + (length(id) % 7) / 4.0, report = "
            "'{\"findings\": [{\"kind\": \"javascript\", \"action\": \"removed\", "
            "\"location\": \"page 1\", \"detail\": \"\"}]}' WHERE status = 'COMPLETED'"))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in ("users", "files", "file_rollup", "report_rollup", "threat_rollup",
                      "duration_rollup"):
            conn.execute(text(f"VACUUM ANALYZE {table}"))
    yield engine
    engine.dispose()
    truncate_all(pg_database_url)


def _captured(engine: Engine, call: Any) -> list[tuple[str, Any]]:
    """The (statement, parameters) the service sent to the database during `call`."""
    sent: list[tuple[str, Any]] = []

    def listen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", listen)
    try:
        call()
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return sent


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _plan(engine: Engine, statement: str, parameters: Any) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        raw = conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", parameters).scalar()
    document = raw if isinstance(raw, list) else json.loads(raw)
    return list(_nodes(document[0]["Plan"]))


def _assert_uses(engine: Engine, sent: list[tuple[str, Any]], marker: str,
                 index: str) -> None:
    """The one statement containing `marker` reads `files` through `index`, never by a
    sequential scan."""
    matching = [(s, p) for s, p in sent if marker in s]
    assert len(matching) == 1, f"{marker!r} in {[s for s, _ in sent]}"
    nodes = _plan(engine, *matching[0])
    shown = json.dumps([{k: n.get(k) for k in ("Node Type", "Relation Name", "Index Name")}
                        for n in nodes])
    assert not [n for n in nodes if n["Node Type"] == "Seq Scan"
                and n.get("Relation Name") == "files"], shown
    assert index in {n.get("Index Name") for n in nodes}, shown


def _assert_no_full_scan(engine: Engine, sent: list[tuple[str, Any]]) -> None:
    """No statement of `sent` reads `files` or `file_rollup` by a sequential scan."""
    for statement, parameters in sent:
        if not statement.lstrip().upper().startswith("SELECT"):
            continue
        nodes = _plan(engine, statement, parameters)
        scans = [n.get("Relation Name") for n in nodes if n["Node Type"] == "Seq Scan"]
        assert not {"files", "file_rollup"} & set(scans), (statement, scans)


def _uses(engine: Engine, statement: str, parameters: Any) -> set[str]:
    return {n.get("Index Name") for n in _plan(engine, statement, parameters)} - {None}


def _session(engine: Engine) -> Session:
    return make_sessionmaker(engine)()


def test_expiry_sweep_with_nothing_due_reads_the_partial_index(loaded: Engine,
                                                               tmp_path) -> None:
    settings = Settings(data_dir=tmp_path, database_url=str(loaded.url.render_as_string(
        hide_password=False)), secret_key="test-secret-key-that-is-long-enough-0123456789")
    factory = make_sessionmaker(loaded)
    expired: list[int] = []
    sent = _captured(loaded, lambda: expired.append(
        sweeps.expire_files(factory, make_storage(settings))))
    assert expired == [0]
    _assert_uses(loaded, sent, "ORDER BY files.expires_at", "ix_files_expiry_due")


def test_history_page_and_counts_of_a_heavy_user_use_their_indexes(loaded: Engine) -> None:
    answers: list[Any] = []
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(
            files.file_history(session, HEAVY, page=1, limit=20)))
    history = answers[0]
    assert history.pagination.total == ROWS // 10
    assert (history.stats.completed, history.stats.failed) == (3 * ROWS // 40, ROWS // 40)
    assert [f.id for f in history.files][:2] == [f"f-{ROWS - 10}", f"f-{ROWS - 20}"]
    _assert_uses(loaded, sent, "LIMIT", "ix_files_user_created")
    # The counts by status (and so the total) come from the rollup, by its key.
    counts = [(st, p) for st, p in sent if "GROUP BY file_rollup.status" in st]
    assert len(counts) == 1 and "pk_file_rollup" in _uses(loaded, *counts[0])
    assert not [st for st, _ in sent if "count(" in st.lower()]
    _assert_no_full_scan(loaded, sent)


def test_history_last_page_reads_the_index_backwards(loaded: Engine) -> None:
    answers: list[Any] = []
    last = ROWS // 10 // 20
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(
            files.file_history(session, HEAVY, page=last, limit=20)))
    history = answers[0]
    assert history.pagination.pages == last and len(history.files) == 20
    assert history.files[-1].id == "f-0"  # the oldest file of the heavy user
    page = [(st, p) for st, p in sent if "LIMIT" in st and "ORDER BY" in st]
    assert len(page) == 1 and "ASC" in page[0][0]  # read from the end
    nodes = _plan(loaded, *page[0])
    assert any(n.get("Index Name") == "ix_files_user_created"
               and n.get("Scan Direction") == "Backward" for n in nodes), nodes
    offset = page[0][1]
    assert max(v for k, v in offset.items() if k.startswith("param")) <= 20, offset
    _assert_no_full_scan(loaded, sent)


def test_history_name_search_reads_the_accounts_name_keys(loaded: Engine) -> None:
    answers: list[Any] = []
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(files.file_history(
            session, HEAVY, page=1, limit=20, search="LE3999")))
    history = answers[0]
    assert [f.original_name for f in history.files] == ["file39990.pdf"]
    assert history.pagination.total == 1
    counted = [(st, p) for st, p in sent if "count(" in st.lower()]
    assert len(counted) == 1 and "ix_files_name_keys" in _uses(loaded, *counted[0])
    _assert_no_full_scan(loaded, sent)


def test_history_search_and_status_read_the_name_keys(loaded: Engine) -> None:
    """The search of the heavy account with a status filter: its count and its page read
    ix_files_name_keys (the account's trigrams), neither the whole account nor pg_trgm's
    index of every name; the answer is what LIKE alone finds."""
    from sanitas.models import FileStatus

    answers: list[Any] = []
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(files.file_history(
            session, HEAVY, page=1, limit=20, status=FileStatus.COMPLETED, search="e3")))
        short = [f.original_name for f in answers[0].files]
        sent = _captured(loaded, lambda: answers.append(files.file_history(
            session, HEAVY, page=1, limit=20, status=FileStatus.COMPLETED, search="File39")))
        expected = session.scalars(text(
            "SELECT original_name FROM files WHERE user_id = :u AND status = 'COMPLETED' "
            "AND lower(original_name) LIKE '%file39%' ORDER BY created_at DESC, id LIMIT 20"),
            {"u": HEAVY}).all()
        total = session.scalar(text(
            "SELECT count(*) FROM files WHERE user_id = :u AND status = 'COMPLETED' "
            "AND lower(original_name) LIKE '%file39%'"), {"u": HEAVY})
    history = answers[1]
    assert [f.original_name for f in history.files] == expected and len(expected) == 20
    assert history.pagination.total == total > 20
    assert short  # 2 characters: no trigram, the account's rows are read (same LIKE)
    for marker in ("count(", "LIMIT"):
        statement = [(st, p) for st, p in sent if marker in st]
        assert len(statement) == 1, marker
        assert "ix_files_name_keys" in _uses(loaded, *statement[0]), marker
    assert not [n for st, p in sent if "sanitas_name_keys" in st
                for n in _uses(loaded, st, p) if "trgm" in n]
    _assert_no_full_scan(loaded, sent)


def test_history_search_in_most_names_reads_the_accounts_rows(loaded: Engine) -> None:
    """A search every one of the account's names holds ('file'): by the index's statistics
    its rarest key is in all the account's rows, so the account's rows are read in order
    (each candidate from the GIN index would cost more); still no full scan."""
    answers: list[Any] = []
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(files.file_history(
            session, HEAVY, page=1, limit=20, search="FILE")))
    assert answers[0].pagination.total == ROWS // 10
    assert [f.id for f in answers[0].files][:2] == [f"f-{ROWS - 10}", f"f-{ROWS - 20}"]
    counted = [(st, p) for st, p in sent if "count(" in st and "FROM files" in st]
    assert len(counted) == 1 and "sanitas_name_keys" not in counted[0][0]
    assert {"ix_files_user_created", "ix_files_user_status", "ix_files_user_id"} & \
        _uses(loaded, *counted[0])
    _assert_no_full_scan(loaded, sent)


def test_usage_stats_and_analytics_read_the_rollup_and_live_rows(loaded: Engine) -> None:
    from sanitas.models import User
    from sanitas.usage import service as usage
    from sanitas.usage.schemas import ChartScope, Timeframe

    settings = Settings(secret_key="test-secret-key-that-is-long-enough-0123456789")
    answers: list[Any] = []
    with _session(loaded) as session:
        heavy = session.get(User, HEAVY)
        sent = _captured(loaded, lambda: answers.append(
            usage.usage_stats(session, settings, heavy)))
        storage = [(st, p) for st, p in sent if "original_key IS NOT NULL" in st]
        assert len(storage) == 1 and "ix_files_live_blobs" in _uses(loaded, *storage[0])
        _assert_no_full_scan(loaded, sent)
        assert answers[0].overall.total_files == ROWS // 10
        for timeframe in Timeframe:
            sent = _captured(loaded, lambda t=timeframe: usage.analytics(session, t))
            _assert_no_full_scan(loaded, sent)
            # Everyone's rollup rows are read twice: all of them once (files and bytes by
            # status), the period's whole days once, each by the rollup's key.
            rollup = [(st, p) for st, p in sent if "FROM file_rollup" in st]
            assert len(rollup) == 2, [st for st, _ in rollup]
            assert all("pk_file_rollup" in _uses(loaded, *r) for r in rollup)
        sent = _captured(loaded, lambda: usage.usage_history(session, heavy, 6))
        _assert_no_full_scan(loaded, sent)
        # A day's charts read the day's rows by their index (a month covers this whole table).
        admin = session.get(User, "u-1")
        sent = _captured(loaded, lambda: usage.charts(session, admin, Timeframe.DAY,
                                                      ChartScope.ALL))
        _assert_no_full_scan(loaded, sent)
        timed = [(st, p) for st, p in sent if "float8send" in st]
        assert len(timed) == 1 and "ix_files_timed" in _uses(loaded, *timed[0])
        reports = [(st, p) for st, p in sent
                   if st.startswith("SELECT count(") and "files.report" in st]
        assert len(reports) == 1 and "ix_files_reported" in _uses(loaded, *reports[0])
        sent = _captured(loaded, lambda: usage.charts(session, heavy, Timeframe.MONTH,
                                                      ChartScope.OWN))
        rollup = [(st, p) for st, p in sent if "FROM file_rollup" in st]
        assert rollup and all("pk_file_rollup" in _uses(loaded, *r) for r in rollup)
        # A month of everyone's charts: the whole days' threats and reports from their
        # rollups by key, the first day's from the rows by index. (duration_rollup holds
        # one row per day and type, here fewer than a month's: it may be read whole.)
        sent = _captured(loaded, lambda: usage.charts(session, admin, Timeframe.MONTH,
                                                      ChartScope.ALL))
        _assert_no_full_scan(loaded, sent)
        for table in ("report_rollup", "threat_rollup"):
            read = [(st, p) for st, p in sent if f"FROM {table}" in st]
            assert len(read) == 1 and f"pk_{table}" in _uses(loaded, *read[0]), table
        assert len([st for st, _ in sent if "FROM duration_rollup" in st]) == 1
        timed = [(st, p) for st, p in sent if "float8send" in st]
        assert len(timed) == 1 and "ix_files_timed" in _uses(loaded, *timed[0])


def test_report_rows_stream_in_index_order(loaded: Engine) -> None:
    from datetime import timedelta

    from sanitas.db import utcnow
    from sanitas.models.report import Report
    from sanitas.reports.service import report_rows

    now = utcnow()
    report = Report(user_id=HEAVY, scope_user_id=None, period_start=now - timedelta(hours=6),
                    period_end=now, format="csv")
    with _session(loaded) as session:
        rows: list[Any] = []
        sent = _captured(loaded, lambda: rows.extend(report_rows(session, report)))
    assert 355 <= len(rows) <= 360  # one a minute for the last six hours
    assert [r.uploaded_at for r in rows] == sorted(r.uploaded_at for r in rows)
    streamed = [(st, p) for st, p in sent if "ORDER BY files.created_at" in st]
    assert len(streamed) == 1
    assert "ix_files_created_id" in _uses(loaded, *streamed[0])
    assert "policy_body" not in streamed[0][0]


def test_admin_files_page_one_reads_the_newest_by_index(loaded: Engine) -> None:
    answers: list[Any] = []
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(admin_service.file_list(
            session, admin_service.FileFilters(), page=1, limit=20)))
    listing = answers[0]
    assert listing.pagination.total == ROWS
    assert [f.id for f in listing.files][:2] == [f"f-{ROWS - 1}", f"f-{ROWS - 2}"]
    _assert_uses(loaded, sent, "LIMIT", "ix_files_created_id")
    _assert_no_full_scan(loaded, sent)
    assert listing.types == ["csv", "docx", "pdf", "png"]
    probes = [(s, p) for s, p in sent if "min(files.detected_type)" in s]
    assert len(probes) == 5  # one per type, and one finding no more
    for probe in probes:
        _assert_uses(loaded, [probe], "min(files.detected_type)", "ix_files_detected_type")


def test_admin_files_filtered_and_deep_pages_read_indexes(loaded: Engine) -> None:
    from datetime import timedelta

    from sanitas.db import utcnow
    from sanitas.models import FileStatus

    with _session(loaded) as session:
        for filters, page in [
            (admin_service.FileFilters(status=FileStatus.FAILED, detected_type="pdf"), 1),
            (admin_service.FileFilters(), ROWS // 20),
            (admin_service.FileFilters(user_id=HEAVY), ROWS // 10 // 20),
            (admin_service.FileFilters(created_from=utcnow() - timedelta(days=3, hours=5),
                                       created_before=utcnow() - timedelta(hours=7)), 2)]:
            answers: list[Any] = []
            sent = _captured(loaded, lambda f=filters, p=page, a=answers: a.append(
                admin_service.file_list(session, f, page=p, limit=20)))
            assert len(answers[0].files) == 20, filters
            _assert_no_full_scan(loaded, sent)
