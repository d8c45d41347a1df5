"""Crash recovery of the embedded executor: a real `sanitas serve` is killed (SIGKILL) while a
job runs, or in the middle of a batch; after a restart every job completes, storage holds
exactly one blob of each kind per file and the scratch the crash left is swept."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from sanitas.datadir import scratch
from sanitas.models import File, Job
from sanitas.storage import make_storage
from tests.executor.jobkit import (
    assert_batch_recovered,
    job_states,
    kill_hard,
    multipart,
    of_uid,
    past_grace,
    process_tree,
    sandbox_uid,
    scratch_entries,
    server_env,
    slow_pdf,
    small_files,
    stalled_upload,
    start,
    stop,
    survivors,
    wait_files_done,
    wait_http,
    wait_until,
)
from tests.factories import auth_headers, make_user
from tests.live_server import free_port


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
        slow = slow_pdf()
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
        left = list(scratch.jobs_dir(settings).iterdir())
        assert len(left) == 1 and (left[0] / "input").exists()  # the original, left behind
        past_grace(left)

        server = start(["serve"], env, tmp_path / "serve.log")
        wait_http(f"{base}/health")
        assert not left[0].exists()  # the sweep at start removed it

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


@pytest.mark.slow
def test_killed_server_mid_batch_every_file_completes(settings, db_session, tmp_path):
    """Two workers; the server is killed with two long jobs running, four waiting, two
    finished and an upload half sent. After the restart every file completes once more only
    if it was running, one blob of each kind per file, the crash's scratch swept at start, and
    none of the killed server's sandboxes outlived it."""
    user = make_user(db_session, role="USER")
    headers = auth_headers(settings, db_session, user)
    port = free_port()
    # 8 s: a live job's heartbeat (every 2 s) is never late enough on a loaded machine for
    # the restarted server to take it over, which would count one attempt more than the crash.
    # No express worker: the small files wait behind the long ones.
    env = server_env(settings, SANITAS_PORT=port, SANITAS_EXECUTOR_WORKERS=2,
                     SANITAS_EXECUTOR_EXPRESS_WORKERS=0, SANITAS_JOB_HEARTBEAT_TIMEOUT_SECONDS=8,
                     SANITAS_EXECUTOR_POLL_INTERVAL_SECONDS=0.3)
    base = f"http://127.0.0.1:{port}"

    def upload(files, mode="basic") -> list[str]:
        answer = httpx.post(f"{base}/api/upload/multiple", headers=headers, timeout=60,
                            files=multipart(files), data={"mode": mode})
        assert answer.status_code == 201, answer.text
        return [f["fileId"] for f in answer.json()["data"]]

    server = start(["serve"], env, tmp_path / "serve.log")
    release = None
    try:
        wait_http(f"{base}/health")
        done = upload(small_files(2))
        wait_files_done(db_session, done, 60)  # finished before the crash
        slow = upload([("long1.pdf", slow_pdf(5)), ("long2.pdf", slow_pdf(6))], "advanced")
        queued = upload(small_files(4, seed=2))  # behind the long ones
        release, client = stalled_upload(f"{base}/api/upload/multiple", headers,
                                          scratch.uploads_dir(settings))

        def mid_flight():
            jobs = job_states(db_session, slow)
            return all(j.state == "active" and j.progress > 0 for j in jobs.values())

        wait_until(mid_flight, 60, "both long jobs to be running")
        tree = process_tree(server.pid)
        sandboxes = of_uid(tree, sandbox_uid(settings))
        kill_hard(server)
        release.set()
        client.join(30)
        file_ids = [*done, *slow, *queued]
        at_crash = job_states(db_session, file_ids)
        attempts = {f: j.attempts for f, j in at_crash.items()}
        killed = {f for f, j in at_crash.items() if j.state == "active"}
        assert set(slow) <= killed and len(killed) == 2  # the two workers' jobs
        assert all(at_crash[f].state == "completed" for f in done)
        assert any(j.state == "waiting" for j in at_crash.values())

        # What the crash left: the running jobs' folders (the original inside), the upload.
        left = scratch_entries(settings)
        job_dirs = [p for p in left if p.parent == scratch.jobs_dir(settings)]
        for file_id in killed:
            assert any(p.name.startswith(f"job-{at_crash[file_id].id[:8]}-") and
                       (p / "input").exists() for p in job_dirs), (file_id, left)
        assert len(job_dirs) == len(killed)
        assert [p for p in left if p.parent == scratch.uploads_dir(settings)], left
        past_grace(left)
        # No sandbox outlives the killed server (they run in sessions of their own).
        assert len(sandboxes) >= 2, "the long jobs' sandboxes were not running"
        assert survivors(tree) == []

        server = start(["serve"], env, tmp_path / "serve.log")
        wait_http(f"{base}/health")
        assert not any(p.exists() for p in left)  # swept at start
        wait_files_done(db_session, file_ids, 120)
        assert_batch_recovered(db_session, settings, attempts, killed, tmp_path / "serve.log")
    finally:
        if release is not None:
            release.set()
        stop(server)
