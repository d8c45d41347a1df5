"""Reports cannot fill the disk or hog the report worker: per-account limits on reports
waiting and kept (429 with Retry-After, atomic under a concurrent burst on both databases),
reports count against the account's storage, expire like files (row and blob deleted by the
expiry sweep), and generation is shared round-robin between accounts."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from sanitas.db import make_engine, make_sessionmaker
from sanitas.main import create_app
from sanitas.models import Report
from sanitas.plans import Capability
from sanitas.reports.service import expire_reports
from sanitas.storage import make_storage
from tests.api.test_reports import request_report, wait_ready
from tests.factories import TEXT, add_file, auth_headers, make_user
from tests.live_server import app_server

PERIOD = {"from": "2026-03-10", "to": "2026-03-12", "format": "csv"}
PARALLEL = 30


@pytest.fixture(autouse=True)
def _every_plan_reports(settings):
    """These tests are about the report limits, on the small quotas of the Free plan too:
    every plan gets compliance reports here (by default only Enterprise has them)."""
    for plan in settings.plans.plans:
        if not plan.has(Capability.REPORTS):
            plan.capabilities = [*plan.capabilities, Capability.REPORTS]


def _burst(base_url: str, headers: dict[str, str], n: int) -> list[httpx.Response]:
    """`n` report requests, each on its own connection, released at the same moment."""
    barrier = threading.Barrier(n)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def ask() -> None:
        with httpx.Client(base_url=base_url, timeout=60) as client:
            barrier.wait(30)
            answer = client.post("/api/reports", headers=headers, json=PERIOD)
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=ask) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert len(answers) == n, "some requests did not finish"
    return answers


def _codes(answers: list[httpx.Response]) -> Counter[tuple[int, str]]:
    return Counter((a.status_code, a.json().get("error") or "") for a in answers)


def _count_reports(db_session, user_id: str) -> int:
    db_session.expire_all()
    return db_session.scalar(select(func.count()).select_from(Report)
                             .where(Report.user_id == user_id)) or 0


@pytest.fixture
def server(settings):
    """The API over real HTTP without the report worker (what is requested stays PENDING);
    the per-user concurrency limit is lifted so the database alone must hold the limits."""
    settings.user_concurrency = PARALLEL
    with app_server(settings) as port:
        yield f"http://127.0.0.1:{port}"


def test_a_burst_from_one_account_is_capped_at_the_pending_limit(server, settings,
                                                                 db_session):
    assert settings.report_max_pending == 3
    guest = make_user(db_session, role="GUEST")  # the Free plan
    answers = _burst(server, auth_headers(settings, db_session, guest), PARALLEL)
    assert _codes(answers) == {(202, ""): 3, (429, "too_many_pending_reports"):
                               PARALLEL - 3}, _codes(answers)
    for refused in (a for a in answers if a.status_code == 429):
        assert int(refused.headers["Retry-After"]) >= 1
        assert "being generated" in refused.json()["message"]
    assert _count_reports(db_session, guest.id) == 3
    # Another account is not held back by this one's limit.
    other = make_user(db_session, role="GUEST")
    assert httpx.post(f"{server}/api/reports", json=PERIOD, timeout=30,
                      headers=auth_headers(settings, db_session, other)).status_code == 202


def test_a_burst_is_capped_at_the_stored_limit(server, settings, db_session):
    settings.report_max_pending = -1
    settings.report_max_stored = 4
    settings.report_ttl_hours = 2
    user = make_user(db_session)
    answers = _burst(server, auth_headers(settings, db_session, user), PARALLEL)
    assert _codes(answers) == {(202, ""): 4, (429, "too_many_stored_reports"):
                               PARALLEL - 4}, _codes(answers)
    # Retry-After: when the oldest of them expires (two hours after it was requested).
    waits = {int(a.headers["Retry-After"]) for a in answers if a.status_code == 429}
    assert all(7200 - 120 <= w <= 7200 for w in waits), waits
    assert "deleted 2 hours after" in next(
        a for a in answers if a.status_code == 429).json()["message"]
    assert _count_reports(db_session, user.id) == 4


def _sweep_soon(settings) -> None:
    settings.executor_poll_interval_seconds = 0.2
    settings.expiry_sweep_interval_seconds = 0.3


def test_expired_reports_are_deleted_with_their_blobs_by_the_sweep(db_session, settings):
    _sweep_soon(settings)
    settings.report_max_stored = 2
    user = make_user(db_session)
    add_file(db_session, settings, user, status="COMPLETED",
             created_at=datetime(2026, 3, 10, 12, tzinfo=UTC))
    h = auth_headers(settings, db_session, user)
    storage = make_storage(settings)
    with TestClient(create_app(settings)) as live:
        old = request_report(live, h, **PERIOD)
        kept = request_report(live, h, **PERIOD | {"format": "pdf"})
        for report_id in (old, kept):
            assert wait_ready(live, h, report_id)["status"] == "COMPLETED"
        listed = {r["id"]: r for r in live.get("/api/reports", headers=h)
                  .json()["data"]["reports"]}
        ttl = datetime.fromisoformat(listed[old]["expiresAt"]) - \
            datetime.fromisoformat(listed[old]["createdAt"])
        assert ttl == timedelta(hours=settings.file_ttl_hours)  # the files' TTL by default
        assert sorted(storage.keys("reports/")) == sorted(
            [f"reports/{old}.csv", f"reports/{kept}.pdf"])
        full = live.post("/api/reports", headers=h, json=PERIOD)
        assert full.status_code == 429 and full.json()["error"] == "too_many_stored_reports"

        db_session.execute(update(Report).where(Report.id == old).values(
            expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        db_session.commit()
        deadline = time.monotonic() + 30
        while _count_reports(db_session, user.id) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        db_session.expire_all()
        assert db_session.get(Report, old) is None and db_session.get(Report, kept) is not None
        assert storage.keys("reports/") == [f"reports/{kept}.pdf"]
        assert live.get(f"/api/reports/{old}/download", headers=h).status_code == 404
        assert live.get(f"/api/reports/{kept}/download", headers=h).status_code == 200
        assert [r["id"] for r in live.get("/api/reports", headers=h)
                .json()["data"]["reports"]] == [kept]
        # The room it held is free again.
        assert live.post("/api/reports", headers=h, json=PERIOD).status_code == 202


def test_the_sweep_leaves_a_report_being_generated(db_session, settings):
    """Past its expiry but PROCESSING: deleted by a later sweep, once it is done."""
    settings.report_ttl_hours = 0
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    with TestClient(create_app(settings, start_background=False)) as api:
        busy = request_report(api, h, **PERIOD)
        waiting = request_report(api, h, **PERIOD)
    db_session.execute(update(Report).where(Report.id == busy).values(
        status="PROCESSING", claimed_at=datetime.now(UTC)))
    db_session.commit()
    engine = make_engine(str(settings.database_url))
    try:
        assert expire_reports(make_sessionmaker(engine), make_storage(settings)) == 1
    finally:
        engine.dispose()
    db_session.expire_all()
    assert db_session.get(Report, busy) is not None
    assert db_session.get(Report, waiting) is None


def test_reports_count_against_the_accounts_storage(db_session, settings):
    settings.executor_poll_interval_seconds = 0.2
    user = make_user(db_session, role="GUEST")
    other = make_user(db_session, role="GUEST")
    kept = add_file(db_session, settings, user, status="COMPLETED",
                    created_at=datetime(2026, 3, 10, 12, tzinfo=UTC))
    # in the report's period, but not yet due: the live executor's expiry sweep would
    # otherwise delete its blobs between the two readings below
    kept.expires_at = datetime.now(UTC) + timedelta(days=1)
    db_session.commit()
    h = auth_headers(settings, db_session, user)
    with TestClient(create_app(settings)) as live:
        before = live.get("/api/usage/stats", headers=h).json()["data"]["overall"]
        report_id = request_report(live, h, **PERIOD | {"format": "pdf"})
        size = wait_ready(live, h, report_id)["size"]
        assert size > 1000
        after = live.get("/api/usage/stats", headers=h).json()["data"]["overall"]
        assert after["totalStorageUsed"] == before["totalStorageUsed"] + size
        oh = auth_headers(settings, db_session, other)
        assert live.get("/api/usage/stats", headers=oh).json()["data"]["overall"][
            "totalStorageUsed"] == 0

        # A quota the files and the report fill: neither an upload nor a report fits.
        settings.plans["GUEST"].limits = settings.plans["GUEST"].limits.model_copy(
            update={"storage_quota": after["totalStorageUsed"] + len(TEXT) - 1})
        upload = live.post("/api/upload/single", headers=h,
                           files={"file": ("notes.txt", TEXT, "text/plain")})
        assert upload.status_code == 403, upload.text
        assert upload.json()["error"] == "storage_quota_exceeded"
        settings.plans["GUEST"].limits = settings.plans["GUEST"].limits.model_copy(
            update={"storage_quota": after["totalStorageUsed"]})
        refused = live.post("/api/reports", headers=h, json=PERIOD)
        assert refused.status_code == 403 and refused.json()["error"] == \
            "storage_quota_exceeded"
        assert live.post("/api/reports", headers=oh, json=PERIOD).status_code == 202


def test_generation_is_shared_between_accounts(db_session, settings):
    """Twenty reports of one account, then one of another: the other's is generated second,
    not after the twenty."""
    settings.report_max_pending = settings.report_max_stored = 50
    settings.executor_poll_interval_seconds = 0.2
    busy, patient = make_user(db_session), make_user(db_session)
    bh, ph = (auth_headers(settings, db_session, u) for u in (busy, patient))
    with TestClient(create_app(settings, start_background=False)) as api:
        many = [request_report(api, bh, **PERIOD) for _ in range(20)]
        one = request_report(api, ph, **PERIOD)
    with TestClient(create_app(settings)) as live:
        assert wait_ready(live, ph, one)["status"] == "COMPLETED"
        for report_id in many:
            assert wait_ready(live, bh, report_id)["status"] == "COMPLETED"
    db_session.expire_all()
    order = [r.id for r in db_session.scalars(select(Report).order_by(Report.completed_at))]
    assert order.index(one) == 1, order.index(one)
    assert order[0] == many[0]
