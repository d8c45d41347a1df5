"""Against a real HTTP server: twenty simultaneous uploads of one GUEST never get past the
monthly upload quota or the storage quota: exactly the allowance is accepted, the rest is
refused with the usual 403, and refused uploads leave neither rows nor blobs behind."""

from __future__ import annotations

import threading
from collections import Counter

import httpx
import pytest
from sqlalchemy import func, select

from sanitas.models import File, Job
from tests.factories import TEXT, auth_headers, make_user
from tests.live_server import app_server

PARALLEL = 20
ALLOWED = 5


@pytest.fixture
def server(settings):
    # The per-user concurrency limit (admission.py) would refuse some of the race with 429:
    # here the database alone must hold the quota.
    settings.user_concurrency = PARALLEL
    with app_server(settings) as port:
        yield f"http://127.0.0.1:{port}"


def _race(base_url: str, headers: dict[str, str], content: bytes) -> list[tuple[int, str]]:
    """PARALLEL uploads, each on its own connection, released at the same moment."""
    barrier = threading.Barrier(PARALLEL)
    results: list[tuple[int, str]] = []
    lock = threading.Lock()

    def upload(i: int) -> None:
        with httpx.Client(base_url=base_url, timeout=60) as client:
            barrier.wait()
            answer = client.post("/api/upload/single", headers=headers,
                                 files={"file": (f"notes-{i}.txt", content, "text/plain")})
        body = answer.json()
        with lock:
            results.append((answer.status_code, body.get("error") or ""))

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert len(results) == PARALLEL, "some uploads did not finish"
    return results


def _rows_and_blobs(settings, db_session) -> tuple[int, int, list[str]]:
    db_session.expire_all()
    files = db_session.scalar(select(func.count()).select_from(File))
    jobs = db_session.scalar(select(func.count()).select_from(Job))
    assert files == jobs
    blobs = [p for p in (settings.files_dir / "originals").rglob("*") if p.is_file()] \
        if (settings.files_dir / "originals").exists() else []
    tmp = [p.name for p in (settings.data_dir / "tmp").rglob("*") if p.is_file()] \
        if (settings.data_dir / "tmp").exists() else []
    return files, len(blobs), tmp


def test_parallel_uploads_never_exceed_the_monthly_quota(server, settings, db_session):
    assert settings.plans["GUEST"].limits.uploads_per_month == ALLOWED
    guest = make_user(db_session, role="GUEST")
    results = _race(server, auth_headers(settings, db_session, guest), TEXT)
    assert Counter(results) == {(201, ""): ALLOWED,
                                (403, "quota_exceeded"): PARALLEL - ALLOWED}, results
    assert _rows_and_blobs(settings, db_session) == (ALLOWED, ALLOWED, [])


def test_parallel_uploads_never_exceed_the_storage_quota(server, settings, db_session):
    content = TEXT * 10
    settings.plans["GUEST"].limits = settings.plans["GUEST"].limits.model_copy(
        update={"uploads_per_month": -1,
                "storage_quota": ALLOWED * len(content) + len(content) // 2})
    guest = make_user(db_session, role="GUEST")
    results = _race(server, auth_headers(settings, db_session, guest), content)
    assert Counter(results) == {(201, ""): ALLOWED,
                                (403, "storage_quota_exceeded"): PARALLEL - ALLOWED}, results
    assert _rows_and_blobs(settings, db_session) == (ALLOWED, ALLOWED, [])
