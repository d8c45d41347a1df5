"""Queue control (ADMIN): statistics, pause and resume, clearing finished job records."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient
from sqlalchemy import select

from sanitas.main import create_app
from sanitas.models import File, Job
from tests.factories import TEXT, add_file, auth_headers, make_user


def test_stats_counts_states(api, settings, db_session):
    user = make_user(db_session)
    for status in ("PENDING", "PENDING", "PROCESSING", "COMPLETED", "FAILED", "FAILED"):
        add_file(db_session, settings, user, status=status)
    h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    answer = api.get("/api/process/queue/stats", headers=h)
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert {k: data[k] for k in ("waiting", "active", "completed", "failed", "paused")} == {
        "waiting": 2, "active": 1, "completed": 1, "failed": 2, "paused": False}
    assert data["workers"] == 0  # no executor in this process


def test_clearing_keeps_files_downloadable(api, settings, db_session):
    user = make_user(db_session)
    done = add_file(db_session, settings, user, status="COMPLETED")
    failed = add_file(db_session, settings, user, status="FAILED")
    pending = add_file(db_session, settings, user, status="PENDING")
    h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    answer = api.post("/api/process/queue/clear-completed", headers=h)
    assert answer.status_code == 200 and answer.json()["data"] == {"cleared": 1}
    answer = api.post("/api/process/queue/clear-failed", headers=h)
    assert answer.json()["data"] == {"cleared": 1}
    assert answer.json()["message"] == "Cleared 1 failed job record(s)"
    db_session.expire_all()
    assert [j.file_id for j in db_session.scalars(select(Job))] == [pending.id]
    assert {f.id for f in db_session.scalars(select(File))} == {done.id, failed.id, pending.id}
    owner_h = auth_headers(settings, db_session, user)
    download = api.get(f"/api/process/download/{done.id}", headers=owner_h)
    assert download.status_code == 200 and download.content == b"%PDF-1.4 sanitized"
    status = api.get(f"/api/process/status/{failed.id}", headers=owner_h).json()["data"]
    assert status["file"]["status"] == "FAILED" and status["job"] is None


def test_pause_holds_new_jobs_and_resume_runs_them(settings, db_session):
    settings.executor_poll_interval_seconds = 0.2
    settings.executor_workers = 1
    admin_h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    user_h = auth_headers(settings, db_session, make_user(db_session))
    with TestClient(create_app(settings)) as client:
        stats = client.get("/api/process/queue/stats", headers=admin_h).json()["data"]
        assert stats["workers"] == 1 and stats["paused"] is False
        answer = client.post("/api/process/queue/pause", headers=admin_h)
        assert answer.status_code == 200 and answer.json()["data"] == {"paused": True}
        item = client.post("/api/upload/single", headers=user_h,
                           files={"file": ("a.txt", TEXT)}).json()["data"]
        time.sleep(1.5)
        status = client.get(f"/api/process/status/{item['fileId']}", headers=user_h).json()
        assert status["data"]["file"]["status"] == "PENDING"
        assert status["data"]["job"]["state"] == "waiting"
        assert client.get("/api/process/queue/stats",
                          headers=admin_h).json()["data"]["paused"] is True
        assert client.post("/api/process/queue/resume", headers=admin_h).json()["data"] == {
            "paused": False}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            file = client.get(f"/api/process/status/{item['fileId']}",
                              headers=user_h).json()["data"]["file"]
            if file["status"] in ("COMPLETED", "FAILED"):
                break
            time.sleep(0.1)
        assert file["status"] == "COMPLETED", file
        stats = client.get("/api/process/queue/stats", headers=admin_h).json()["data"]
        assert stats["completed"] == 1 and stats["waiting"] == 0


def test_queue_calls_are_admin_only(api, settings, db_session):
    for role in ("GUEST", "USER", "ENTERPRISE"):
        h = auth_headers(settings, db_session, make_user(db_session, role=role))
        assert api.get("/api/process/queue/stats", headers=h).status_code == 403
        for action in ("pause", "resume", "clear-completed", "clear-failed"):
            answer = api.post(f"/api/process/queue/{action}", headers=h)
            assert answer.status_code == 403
            assert answer.json()["message"] == "Admin privileges are required for this action."
    assert api.post("/api/process/queue/pause").status_code == 401
