"""Crash recovery of the embedded executor: a real `sanitas serve` is killed (SIGKILL) while a
job runs; after a restart the job completes and exactly one sanitized blob exists."""

from __future__ import annotations

import httpx
from factories import auth_headers, make_user
from jobkit import free_port, kill_hard, pdf_bytes, server_env, start, stop, wait_http, wait_until
from sqlalchemy import select

from sanitas.models import File, Job
from sanitas.storage import make_storage


def test_killed_server_job_completes_after_restart(settings, db_session, tmp_path):
    user = make_user(db_session, role="USER")
    headers = auth_headers(settings, db_session, user)
    port = free_port()
    env = server_env(settings, SANITAS_PORT=port, SANITAS_EXECUTOR_WORKERS=1,
                     SANITAS_JOB_HEARTBEAT_TIMEOUT_SECONDS=3,
                     SANITAS_EXECUTOR_POLL_INTERVAL_SECONDS=0.3)
    base = f"http://127.0.0.1:{port}"
    server = start(["serve"], env, tmp_path / "serve.log")
    try:
        wait_http(f"{base}/health")
        slow = pdf_bytes(pages=40, side=(300, 400))
        answer = httpx.post(f"{base}/api/upload/single", headers=headers, timeout=60,
                            files={"file": ("long.pdf", slow)}, data={"mode": "advanced"})
        assert answer.status_code == 201, answer.text
        file_id = answer.json()["data"]["fileId"]

        def running():
            db_session.expire_all()
            job = db_session.scalar(select(Job).where(Job.file_id == file_id))
            return job.state == "active" and job.progress > 0

        wait_until(running, 60, "the job to be running")
        kill_hard(server)
        db_session.expire_all()
        job = db_session.scalar(select(Job).where(Job.file_id == file_id))
        assert job.state == "active" and job.attempts == 1  # left behind by the crash
        assert db_session.get(File, file_id).status == "PROCESSING"

        server = start(["serve"], env, tmp_path / "serve.log")
        wait_http(f"{base}/health")

        def finished():
            answer = httpx.get(f"{base}/api/process/status/{file_id}", headers=headers)
            data = answer.json()["data"]
            return data if data["file"]["status"] in ("COMPLETED", "FAILED") else None

        data = wait_until(finished, 120, "the job to finish after the restart", 0.3)
        assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
        assert data["job"]["attempts"] == 2 and data["job"]["progress"] == 100
        storage = make_storage(settings)
        assert storage.keys("sanitized/") == [f"sanitized/{file_id}"]
        download = httpx.get(f"{base}/api/process/download/{file_id}", headers=headers)
        assert download.status_code == 200 and download.content.startswith(b"%PDF")
    finally:
        stop(server)
