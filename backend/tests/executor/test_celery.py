"""The Celery executor against the real Redis and PostgreSQL with real `sanitas worker`
processes: processing, high-priority queue first, and crash recovery (the worker is killed
mid-job; after a restart the job completes with exactly one sanitized blob; one of two
workers is killed mid-batch and the other finishes everything), and each file cleaned with the
policy recorded at its upload."""

from __future__ import annotations

import hashlib
import os

import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import select

from sanitas.config import Settings
from sanitas.datadir import scratch
from sanitas.db import make_engine, make_sessionmaker, utcnow
from sanitas.main import create_app
from sanitas.models import File, Job
from sanitas.storage import make_storage
from tests.api.policy_samples import LINK, body, link_uris, pdf_with_link
from tests.databases import truncate_all
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
    start,
    stop,
    survivors,
    wait_files_done,
    wait_until,
)
from tests.factories import auth_headers, make_user

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
            slow = slow_pdf()
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


@pytest.mark.slow
def test_killed_worker_mid_batch_the_other_finishes(celery_settings, session, tmp_path):
    """Two workers on one machine (one runs the schedule, the other --no-beat, as the systemd
    unit advises); the second is killed while it runs a job and the batch still waits.
    The first re-runs the killed job (periodic recovery of a stale heartbeat), finishes the
    rest, and its periodic sweep removes the killed worker's scratch: one blob of each kind per
    file, nothing left over, no sandbox outliving its worker. PostgreSQL only, the production
    pairing of the Celery executor."""
    headers = auth_headers(celery_settings, session, make_user(session, role="USER"))
    env = {**_worker_env(celery_settings), "SANITAS_EXPIRY_SWEEP_INTERVAL_SECONDS": "2"}
    survivor = start(["worker", "--concurrency=1"], env, tmp_path / "worker-a.log")
    victim = start(["worker", "--concurrency=1", "--no-beat"], env, tmp_path / "worker-b.log")
    try:
        with TestClient(create_app(celery_settings)) as client:
            wait_until(lambda: client.app.state.executor.workers() >= 2, 60,
                       "both workers to answer pings", 0.5)

            def upload(files, mode="basic") -> list[str]:
                answer = client.post("/api/upload/multiple", headers=headers,
                                     files=multipart(files), data={"mode": mode})
                assert answer.status_code == 201, answer.text
                return [f["fileId"] for f in answer.json()["data"]]

            file_ids = [*upload([("long1.pdf", slow_pdf(5)), ("long2.pdf", slow_pdf(6))],
                                "advanced"),
                        *upload(small_files(6))]

            def victims_job():
                pids = {p.pid for p in process_tree(victim.pid)}
                for job in job_states(session, file_ids).values():
                    if job.state == "active" and job.progress > 0 and \
                            int(job.worker_id.split(":")[1]) in pids:
                        return job
                return None

            running = wait_until(victims_job, 90, "the second worker to run a job")
            tree = process_tree(victim.pid)
            sandboxes = of_uid(tree, sandbox_uid(celery_settings))
            kill_hard(victim)
            at_crash = job_states(session, file_ids)
            attempts = {f: j.attempts for f, j in at_crash.items()}
            assert (at_crash[running.file_id].state, at_crash[running.file_id].attempts) == \
                ("active", 1)
            assert any(j.state == "waiting" for j in at_crash.values())
            assert sandboxes, "the killed worker's sandbox was not running"
            assert survivors(tree) == []

            left = [p for p in scratch_entries(celery_settings)
                    if p.name.startswith(f"job-{running.id[:8]}-")]
            assert len(left) == 1 and (left[0] / "input").exists()  # the original, left behind
            assert left[0].parent == scratch.jobs_dir(celery_settings)
            past_grace(left)

            wait_files_done(session, file_ids, 150)
            assert_batch_recovered(session, celery_settings, attempts, {running.file_id})
            assert survivor.poll() is None
    finally:
        stop(victim)
        stop(survivor)


def test_celery_worker_cleans_with_the_files_policy(celery_settings, session, tmp_path):
    """A file uploaded with a stored policy (links removed) and one with the built-in basic
    (links kept): the Celery worker runs each with its recorded policy, and records the
    sanitized copy's SHA-256."""
    h = auth_headers(celery_settings, session, make_user(session, role="ENTERPRISE"))
    pdf = pdf_with_link()
    with TestClient(create_app(celery_settings)) as client:
        policy = client.post("/api/policies", headers=h,
                             json=body("No links", hyperlinks="remove")).json()["data"]
        removed = client.post("/api/upload/single", headers=h, data={"policyId": policy["id"]},
                              files={"file": ("links.pdf", pdf)}).json()["data"]["fileId"]
        kept = client.post("/api/upload/single", headers=h, data={"mode": "basic"},
                           files={"file": ("links.pdf", pdf)}).json()["data"]["fileId"]
        worker = start(["worker", "--concurrency=1"], _worker_env(celery_settings),
                       tmp_path / "worker.log")
        try:
            for file_id, links in ((removed, []), (kept, [LINK])):
                data = wait_until(lambda fid=file_id: _done(client, h, fid), 90,
                                  "processing by the Celery worker", 0.3)
                assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
                output = client.get(f"/api/process/download/{file_id}", headers=h).content
                assert link_uris(output) == links
                assert data["file"]["sha256Sanitized"] == hashlib.sha256(output).hexdigest()
                assert data["file"]["sha256Original"] == hashlib.sha256(pdf).hexdigest()
            assert _status(client, h, removed)["file"]["policy"] == {
                "id": policy["id"], "name": "No links", "version": 1}
        finally:
            stop(worker)


def test_two_workers_share_a_batch_on_s3(celery_settings, session, s3_endpoint, tmp_path):
    """Throughput (issue 30): the API and two `sanitas worker` processes (one job at a time
    each; the second --no-beat) on PostgreSQL, Redis and an S3 server. A batch of 12 small
    files: every file COMPLETED, each job claimed and run exactly once (attempts 1), both
    workers' pool processes among the jobs' claimers (Job.worker_id is host:pid:random, the
    pid of the Celery pool process that ran it). The bucket keeps versions, so a second run
    of a job would leave a second version of its sanitized blob: each sanitized key has
    exactly one version (and no delete marker), its size and hash the row's, and downloads
    answer those bytes."""
    import time

    import boto3

    bucket = f"two-workers-{os.getpid()}-{tmp_path.name[-8:]}".lower().replace("_", "-")
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    prefix = "tenant/throughput"
    settings = celery_settings.model_copy(update={
        "storage": "s3", "s3_endpoint_url": s3_endpoint, "s3_bucket": bucket,
        "s3_access_key_id": "test", "s3_secret_access_key": "test", "s3_prefix": prefix})
    env = {**_worker_env(settings), "SANITAS_STORAGE": "s3",
           "SANITAS_S3_ENDPOINT_URL": s3_endpoint, "SANITAS_S3_BUCKET": bucket,
           "SANITAS_S3_ACCESS_KEY_ID": "test", "SANITAS_S3_SECRET_ACCESS_KEY": "test",
           "SANITAS_S3_PREFIX": prefix}
    headers = auth_headers(settings, session, make_user(session, role="USER"))
    first = start(["worker", "--concurrency=1"], env, tmp_path / "worker-a.log")
    second = start(["worker", "--concurrency=1", "--no-beat"], env, tmp_path / "worker-b.log")
    try:
        with TestClient(create_app(settings)) as client:
            assert client.app.state.storage.name == "s3"
            wait_until(lambda: client.app.state.executor.workers() >= 2, 60,
                       "both workers to answer pings", 0.5)
            files = small_files(12)
            began = time.monotonic()
            file_ids = []
            for batch in (files[:6], files[6:]):  # a USER sends at most 10 files a request
                answer = client.post("/api/upload/multiple", headers=headers,
                                     files=multipart(batch), data={"mode": "basic"})
                assert answer.status_code == 201, answer.text
                file_ids += [f["fileId"] for f in answer.json()["data"]]
            assert len(file_ids) == len(files)
            wait_files_done(session, file_ids, 90)
            took = time.monotonic() - began
            # the pool processes as they are now, both workers still running
            trees = {name: {p.pid for p in process_tree(proc.pid)}
                     for name, proc in (("a", first), ("b", second))}
            assert first.poll() is None and second.poll() is None

            jobs = job_states(session, file_ids)
            rows = {f.id: f for f in session.scalars(select(File).where(File.id.in_(file_ids)))}
            for file_id, job in jobs.items():
                row = rows[file_id]
                assert row.status == "COMPLETED", (row.original_name, row.error_message)
                assert (job.state, job.attempts, job.progress) == ("completed", 1, 100), \
                    (row.original_name, job.state, job.attempts, job.error)
            claimers = {file_id: job.worker_id.split(":") for file_id, job in jobs.items()}
            assert all(len(parts) == 3 and parts[2] for parts in claimers.values()), claimers
            by_worker = {name: sorted(f for f, parts in claimers.items()
                                      if int(parts[1]) in pids)
                         for name, pids in trees.items()}
            assert sorted(by_worker["a"] + by_worker["b"]) == sorted(file_ids), \
                (claimers, trees)  # every claimer is a pool process of one of the two
            assert by_worker["a"] and by_worker["b"], by_worker  # both took jobs
            assert len({job.worker_id for job in jobs.values()}) == len(jobs)  # one claim each

            versions = s3.list_object_versions(Bucket=bucket, Prefix=f"{prefix}/sanitized/")
            assert versions.get("DeleteMarkers", []) == []
            seen = sorted(v["Key"] for v in versions.get("Versions", []))
            assert seen == sorted(f"{prefix}/sanitized/{f}" for f in file_ids)  # once each
            storage = client.app.state.storage
            assert storage.keys("sanitized/") == sorted(f"sanitized/{f}" for f in file_ids)
            assert storage.keys("originals/") == sorted(f"originals/{f}" for f in file_ids)
            for file_id in file_ids:
                row = rows[file_id]
                assert row.sanitized_key == f"sanitized/{file_id}"
                assert storage.size(row.sanitized_key) == row.sanitized_size
                download = client.get(f"/api/process/download/{file_id}", headers=headers)
                assert download.status_code == 200, (row.original_name, download.text)
                assert len(download.content) == row.sanitized_size
                assert hashlib.sha256(download.content).hexdigest() == row.sha256_sanitized
            print(f"12 files through two workers on S3 in {took:.1f} s; "
                  f"a: {len(by_worker['a'])}, b: {len(by_worker['b'])}")
    finally:
        stop(second)
        stop(first)


def test_celery_accounts_take_turns_on_one_worker(celery_settings, session, tmp_path):
    """The broker's queues are first in, first out; the fair order is the database's. One
    worker process; account A queues three slow files (advanced mode, 40 pages each) while
    the queue is paused, then B one small text file. On resume B's file runs right after the
    job the worker took first, not after all of A's (each message is a worker's turn: it runs
    the fair order's head and the handed job gets a new message), and completes within twice
    its lone time plus one slow job's slot. Every job runs once."""
    a_h = auth_headers(celery_settings, session, make_user(session, role="USER"))
    b_h = auth_headers(celery_settings, session, make_user(session, role="USER"))
    admin_h = auth_headers(celery_settings, session, make_user(session, role="ADMIN"))
    worker = start(["worker", "--concurrency=1"], _worker_env(celery_settings),
                   tmp_path / "worker.log")
    try:
        with TestClient(create_app(celery_settings)) as client:
            wait_until(lambda: client.app.state.executor.workers() >= 1, 60,
                       "the worker to answer pings", 0.5)

            def small() -> str:
                answer = client.post("/api/upload/single", headers=b_h,
                                     files={"file": ("small.txt", TEXT)})
                assert answer.status_code == 201, answer.text
                return answer.json()["data"]["fileId"]

            def seconds(file_id: str) -> float:
                session.expire_all()
                f = session.get(File, file_id)
                return (f.processing_completed_at - f.created_at).total_seconds()

            lone = []
            for _ in range(2):  # the first also warms the worker's sandboxes
                file_id = small()
                wait_files_done(session, [file_id], 60)
                lone.append(seconds(file_id))
            client.post("/api/process/queue/pause", headers=admin_h)
            slow = []
            for seed in (1, 2, 3):
                answer = client.post("/api/upload/single", headers=a_h, data={"mode": "advanced"},
                                     files={"file": (f"long{seed}.pdf", slow_pdf(seed))})
                assert answer.status_code == 201, answer.text
                slow.append(answer.json()["data"]["fileId"])
            b_file = small()
            resumed = utcnow()
            client.post("/api/process/queue/resume", headers=admin_h)
            wait_files_done(session, [*slow, b_file], 240)
            session.expire_all()
            files = {f.id: f for f in session.scalars(select(File).where(
                File.id.in_([*slow, b_file])))}
            assert all(f.status == "COMPLETED" for f in files.values()), \
                {f.id: f.error_message for f in files.values()}
            started = sorted(files, key=lambda fid: files[fid].processing_started_at)
            assert started[1] == b_file, [files[f].original_name for f in started]
            first_slot = files[started[0]].processing_duration
            waited = (files[b_file].processing_completed_at - resumed).total_seconds()
            assert waited <= 2 * lone[-1] + first_slot + 1.0, (waited, lone, first_slot)
            jobs = session.scalars(select(Job).where(Job.file_id.in_(files))).all()
            assert [j.attempts for j in jobs] == [1] * 4
    finally:
        stop(worker)
