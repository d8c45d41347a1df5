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
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE users"))
        conn.execute(text("VACUUM ANALYZE files"))
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
    _assert_uses(loaded, sent, "GROUP BY files.status", "ix_files_user_status")


def test_admin_files_page_one_reads_the_newest_by_index(loaded: Engine) -> None:
    answers: list[Any] = []
    with _session(loaded) as session:
        sent = _captured(loaded, lambda: answers.append(admin_service.file_list(
            session, admin_service.FileFilters(), page=1, limit=20)))
    listing = answers[0]
    assert listing.pagination.total == ROWS
    assert [f.id for f in listing.files][:2] == [f"f-{ROWS - 1}", f"f-{ROWS - 2}"]
    _assert_uses(loaded, sent, "LIMIT", "ix_files_created_id")
    assert listing.types == ["csv", "docx", "pdf", "png"]
    probes = [(s, p) for s, p in sent if "min(files.detected_type)" in s]
    assert len(probes) == 5  # one per type, and one finding no more
    for probe in probes:
        _assert_uses(loaded, [probe], "min(files.detected_type)", "ix_files_detected_type")
