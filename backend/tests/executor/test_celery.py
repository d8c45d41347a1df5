"""The Celery executor against the real Redis and PostgreSQL with real `sanitas worker`
processes: processing, high-priority queue first, and crash recovery (the worker is killed
mid-job; after a restart the job completes with exactly one sanitized blob)."""

from __future__ import annotations

import os

import pytest
import redis
from databases import truncate_all
from factories import auth_headers, make_user
from fastapi.testclient import TestClient
from jobkit import kill_hard, pdf_bytes, server_env, start, stop, wait_until
from sqlalchemy import select

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.main import create_app
from sanitas.models import File, Job
from sanitas.storage import make_storage

TEXT = b"hello from the celery test\n"


@pytest.fixture
def celery_settings(tmp_path, pg_database_url):
    truncate_all(pg_database_url)
    db = 2 + os.getpid() % 14  # a Redis database of our own (test runs may share the server)
    broker = f"redis://127.0.0.1:6379/{db}"
    redis.Redis.from_url(broker).flushdb()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    return Settings(data_dir=data_dir, database_url=pg_database_url, executor="celery",
                    broker_url=broker, secret_key="test-secret-key-that-is-long-enough-0123456789",
                    job_heartbeat_timeout_seconds=3, celery_recover_interval_seconds=2,
                    executor_workers=1)


@pytest.fixture
def session(celery_settings):
    engine = make_engine(str(celery_settings.database_url))
    with make_sessionmaker(engine)() as s:
        yield s
    engine.dispose()


def _worker_env(settings):
    return server_env(settings, SANITAS_EXECUTOR="celery", SANITAS_BROKER_URL=settings.broker_url,
                      SANITAS_JOB_HEARTBEAT_TIMEOUT_SECONDS=3,
                      SANITAS_CELERY_RECOVER_INTERVAL_SECONDS=2, SANITAS_EXECUTOR_WORKERS=1,
                      SANITAS_LOG_LEVEL="INFO")


def _status(client, headers, file_id):
    return client.get(f"/api/process/status/{file_id}", headers=headers).json()["data"]


def _done(client, headers, file_id):
    data = _status(client, headers, file_id)
    return data if data["file"]["status"] in ("COMPLETED", "FAILED") else None


def test_celery_processes_uploads_high_priority_first(celery_settings, session, tmp_path):
    user_h = auth_headers(celery_settings, session, make_user(session, role="USER"))
    ent_h = auth_headers(celery_settings, session, make_user(session, role="ENTERPRISE"))
    admin_h = auth_headers(celery_settings, session, make_user(session, role="ADMIN"))
    with TestClient(create_app(celery_settings)) as client:
        # queue work while paused and without workers: normal first, then enterprise
        client.post("/api/process/queue/pause", headers=admin_h)
        normal = [client.post("/api/upload/single", headers=user_h,
                              files={"file": (f"n{i}.txt", TEXT)}).json()["data"]["fileId"]
                  for i in range(3)]
        high = client.post("/api/upload/single", headers=ent_h,
                           files={"file": ("vip.txt", TEXT)}).json()["data"]["fileId"]
        assert session.scalar(select(Job.priority).where(Job.file_id == high)) == 10
        worker = start(["worker", "--concurrency=1"], _worker_env(celery_settings),
                       tmp_path / "worker.log")
        try:
            wait_until(lambda: client.get("/api/process/queue/stats", headers=admin_h)
                       .json()["data"]["workers"] >= 1, 60, "the worker to answer pings", 0.5)
            # paused: the worker consumes nothing
            assert _status(client, user_h, normal[0])["file"]["status"] == "PENDING"
            client.post("/api/process/queue/resume", headers=admin_h)
            for file_id in [*normal, high]:
                data = wait_until(lambda fid=file_id: _done(client, user_h if fid != high
                                                            else ent_h, fid),
                                  90, "processing by the Celery worker", 0.3)
                assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
            session.expire_all()
            started = {f.id: f.processing_started_at for f in session.scalars(select(File))}
            assert started[high] < min(started[n] for n in normal)
            stats = client.get("/api/process/queue/stats", headers=admin_h).json()["data"]
            assert stats["completed"] == 4 and stats["executor"] == "celery"
            download = client.get(f"/api/process/download/{high}", headers=ent_h)
            assert download.status_code == 200 and b"hello from the celery test" in \
                download.content
        finally:
            stop(worker)


def test_killed_worker_job_completes_after_restart(celery_settings, session, tmp_path):
    headers = auth_headers(celery_settings, session, make_user(session, role="USER"))
    env = _worker_env(celery_settings)
    worker = start(["worker", "--concurrency=1"], env, tmp_path / "worker.log")
    try:
        with TestClient(create_app(celery_settings)) as client:
            slow = pdf_bytes(pages=40, side=(300, 400))
            answer = client.post("/api/upload/single", headers=headers, data={"mode": "advanced"},
                                 files={"file": ("long.pdf", slow)})
            assert answer.status_code == 201, answer.text
            file_id = answer.json()["data"]["fileId"]

            def running():
                session.expire_all()
                job = session.scalar(select(Job).where(Job.file_id == file_id))
                return job.state == "active" and job.progress > 0

            wait_until(running, 90, "the job to be running on the worker")
            kill_hard(worker)
            session.expire_all()
            assert session.scalar(select(Job.state).where(Job.file_id == file_id)) == "active"

            worker = start(["worker", "--concurrency=1"], env, tmp_path / "worker.log")
            data = wait_until(lambda: _done(client, headers, file_id), 150,
                              "the job to finish on the restarted worker", 0.5)
            assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
            assert data["job"]["attempts"] >= 2
            assert make_storage(celery_settings).keys("sanitized/") == [f"sanitized/{file_id}"]
            assert client.get(f"/api/process/download/{file_id}",
                              headers=headers).status_code == 200
    finally:
        stop(worker)


def test_worker_beat_runs_the_expiry_sweep(celery_settings, session, tmp_path):
    from datetime import timedelta

    from sqlalchemy import update

    from sanitas.db import utcnow

    headers = auth_headers(celery_settings, session, make_user(session, role="USER"))
    env = {**_worker_env(celery_settings), "SANITAS_EXPIRY_SWEEP_INTERVAL_SECONDS": "1"}
    worker = start(["worker", "--concurrency=1"], env, tmp_path / "worker.log")
    try:
        with TestClient(create_app(celery_settings)) as client:
            file_id = client.post("/api/upload/single", headers=headers,
                                  files={"file": ("old.txt", TEXT)}).json()["data"]["fileId"]
            data = wait_until(lambda: _done(client, headers, file_id), 90, "processing", 0.3)
            assert data["file"]["status"] == "COMPLETED"
            session.execute(update(File).where(File.id == file_id)
                            .values(expires_at=utcnow() - timedelta(seconds=1)))
            session.commit()

            def swept():
                session.expire_all()
                return session.get(File, file_id).is_expired

            wait_until(swept, 60, "the scheduled expiry sweep on the worker", 0.5)
            assert make_storage(celery_settings).keys() == []
            assert client.get(f"/api/process/download/{file_id}",
                              headers=headers).status_code == 410
    finally:
        stop(worker)
