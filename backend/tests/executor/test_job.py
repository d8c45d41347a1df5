"""The job body (shared by both executors) against the real engine and sandbox: claims,
progress, completion, rejection without retry, retry of infrastructure faults, lost claims,
pause, and the expiry sweep."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from sanitas.db import make_sessionmaker, utcnow
from sanitas.models import File, Job
from sanitas.processing import outcome as job_outcome
from sanitas.processing import queue, run, sweeps
from sanitas.storage import make_storage
from tests.factories import add_file_and_job, make_user, pdf_bytes


def _factory(db_session):
    return make_sessionmaker(db_session.get_bind())


def test_job_completes_with_sizes_report_and_one_blob(settings, db_session):
    user = make_user(db_session)
    content = pdf_bytes(pages=2)
    file, job = add_file_and_job(db_session, settings, user, content=content,
                                 name="Plan (final).pdf")
    storage = make_storage(settings)
    outcome = run.run_job(job.id, factory=_factory(db_session), settings=settings,
                           storage=storage)
    assert outcome == "completed"
    db_session.expire_all()
    file, job = db_session.get(File, file.id), db_session.get(Job, job.id)
    assert file.status == "COMPLETED" and file.error_message is None
    assert file.sanitized_name == "sanitized_Plan (final).pdf"
    assert file.sanitized_size == storage.size(file.sanitized_key) > 0
    assert file.compression_ratio == round(file.sanitized_size / len(content), 4)
    assert file.processing_duration > 0
    assert file.processing_started_at <= file.processing_completed_at
    assert file.report["detectedType"] == "pdf" and isinstance(file.report["findings"], list)
    assert (job.state, job.progress, job.attempts) == ("completed", 100, 1)
    assert job.started_at and job.finished_at and job.heartbeat_at
    assert storage.keys("sanitized/") == [f"sanitized/{file.id}"]
    # running it again is a no-op: the job is no longer runnable
    assert run.run_job(job.id, factory=_factory(db_session), settings=settings,
                        storage=storage) == "skipped"


def test_rejected_file_fails_once_with_reason(settings, db_session):
    user = make_user(db_session)
    file, job = add_file_and_job(db_session, settings, user,
                                 content=b"%PDF-1.7\n" + bytes(range(256)) * 10)
    outcome = run.run_job(job.id, factory=_factory(db_session), settings=settings,
                           storage=make_storage(settings))
    assert outcome == "failed"
    db_session.expire_all()
    file, job = db_session.get(File, file.id), db_session.get(Job, job.id)
    assert file.status == "FAILED" and file.error_message and "\n" not in file.error_message
    assert (job.state, job.attempts) == ("failed", 1)
    assert file.sanitized_key is None
    assert make_storage(settings).keys("sanitized/") == []


def test_infrastructure_fault_is_retried_then_fails_readably(settings, db_session):
    # A sandbox that refuses to run (no sandbox, unsandboxed not allowed) is an infrastructure
    # fault: SandboxError, retried with back-off, then a readable failure.
    settings.sandbox = "none"
    settings.allow_unsandboxed = False
    settings.job_max_attempts = 2
    settings.job_retry_delay_seconds = 30
    user = make_user(db_session)
    file, job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    factory, storage = _factory(db_session), make_storage(settings)
    assert run.run_job(job.id, factory=factory, settings=settings, storage=storage) == "retry"
    db_session.expire_all()
    job = db_session.get(Job, job.id)
    assert job.state == "waiting" and job.attempts == 1 and job.worker_id is None
    assert job.run_after > utcnow() + timedelta(seconds=20)
    assert db_session.get(File, file.id).status == "PENDING"
    assert "SandboxError" in job.error
    # not due yet: nobody may start it
    assert run.run_job(job.id, factory=factory, settings=settings,
                        storage=storage) == "skipped"
    db_session.execute(update(Job).values(run_after=utcnow() - timedelta(seconds=1)))
    db_session.commit()
    assert run.run_job(job.id, factory=factory, settings=settings, storage=storage) == "failed"
    db_session.expire_all()
    file, job = db_session.get(File, file.id), db_session.get(Job, job.id)
    assert (job.state, job.attempts) == ("failed", 2)
    assert file.status == "FAILED" and file.error_message == job_outcome.INFRA_FAILURE_MESSAGE


def test_claims_are_exclusive_and_stale_claims_are_taken_over(settings, db_session):
    user = make_user(db_session)
    _, job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    factory = _factory(db_session)
    assert run.claim(factory, settings, job.id, "worker-a")[0] is None
    assert run.claim(factory, settings, job.id, "worker-b")[0] == "skipped"
    # worker-a dies: its heartbeat goes stale
    stale = utcnow() - timedelta(seconds=settings.job_heartbeat_timeout_seconds + 1)
    db_session.execute(update(Job).values(heartbeat_at=stale))
    db_session.commit()
    assert run.claim(factory, settings, job.id, "worker-b")[0] is None
    db_session.expire_all()
    assert db_session.get(Job, job.id).attempts == 2
    # worker-a wakes up: its result is not written
    assert not job_outcome.finish(factory, job.id, "worker-a", job_values={"state": "completed"},
                            file_values={"status": "COMPLETED"})
    db_session.expire_all()
    assert db_session.get(Job, job.id).state == "active"
    assert job_outcome.finish(factory, job.id, "worker-b", job_values={"state": "completed"},
                        file_values={"status": "COMPLETED"})


def test_paused_queue_starts_nothing(settings, db_session):
    user = make_user(db_session)
    _, job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    queue.set_paused(db_session, True)
    factory = _factory(db_session)
    assert run.run_job(job.id, factory=factory, settings=settings,
                        storage=make_storage(settings)) == "paused"
    db_session.expire_all()
    assert db_session.get(Job, job.id).state == "waiting"
    queue.set_paused(db_session, False)
    assert queue.find_runnable(db_session, settings, 5) == [(job.id, 0)]


def test_runnable_order_is_priority_then_age(settings, db_session):
    user = make_user(db_session)
    _, a = add_file_and_job(db_session, settings, user, content=b"a", kind="txt")
    _, b = add_file_and_job(db_session, settings, user, content=b"b", kind="txt", priority=10)
    _, c = add_file_and_job(db_session, settings, user, content=b"c", kind="txt")
    ids = [j for j, _ in queue.find_runnable(db_session, settings, 10)]
    assert ids == [b.id, a.id, c.id]
    assert [j for j, _ in queue.find_runnable(db_session, settings, 1, exclude={b.id})] == [a.id]


def test_expiry_deletes_blobs_keeps_rows(settings, db_session):
    user = make_user(db_session)
    storage = make_storage(settings)
    factory = _factory(db_session)
    done, done_job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    assert run.run_job(done_job.id, factory=factory, settings=settings,
                        storage=storage) == "completed"
    waiting, _ = add_file_and_job(db_session, settings, user, content=b"plain text", kind="txt")
    busy, busy_job = add_file_and_job(db_session, settings, user, content=b"more text", kind="txt")
    fresh, _ = add_file_and_job(db_session, settings, user, content=b"fresh", kind="txt")
    run.claim(factory, settings, busy_job.id, "worker-x")
    past = utcnow() - timedelta(minutes=1)
    db_session.execute(update(File).where(File.id.in_([done.id, waiting.id, busy.id]))
                       .values(expires_at=past))
    db_session.commit()
    assert sweeps.expire_files(factory, storage) == 2
    db_session.expire_all()
    done, waiting = db_session.get(File, done.id), db_session.get(File, waiting.id)
    assert done.is_expired and done.status == "COMPLETED" and done.original_key is None
    assert done.sanitized_key is None and done.sanitized_size  # history keeps the figures
    assert waiting.is_expired and waiting.status == "FAILED"
    assert waiting.error_message == "The file expired before it could be processed."
    assert waiting.error_code == "expired"
    assert db_session.scalar(select(Job).where(Job.file_id == waiting.id)) is None
    assert not db_session.get(File, busy.id).is_expired  # being processed: next sweep
    assert sorted(storage.keys()) == sorted([f"originals/{busy.id}", f"originals/{fresh.id}"])
    assert sweeps.expire_files(factory, storage) == 0


def test_a_job_interrupted_too_often_is_not_taken_over_again(settings, db_session):
    """A file that brings its worker down every time must not run at every restart."""
    user = make_user(db_session)
    file, job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    factory = _factory(db_session)
    stale = utcnow() - timedelta(seconds=settings.job_heartbeat_timeout_seconds + 1)
    for attempt in range(1, settings.job_max_attempts + 1):
        assert run.claim(factory, settings, job.id, f"worker-{attempt}")[0] is None
        db_session.execute(update(Job).values(heartbeat_at=stale))  # the worker died
        db_session.commit()
    assert run.claim(factory, settings, job.id, "worker-last")[0] == "failed"
    db_session.expire_all()
    file, job = db_session.get(File, file.id), db_session.get(Job, job.id)
    assert (job.state, file.status) == ("failed", "FAILED")
    assert file.error_message == job_outcome.INTERRUPTED_MESSAGE
    assert file.error_code == "interrupted"


def test_orphan_blobs_are_removed_once_old_enough(settings, db_session):
    """A crash between storing a blob and committing its row leaves a blob nobody names."""
    import os
    import time

    user = make_user(db_session)
    file, _job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    storage = make_storage(settings)
    orphan = settings.data_dir / "orphan"
    orphan.write_bytes(b"%PDF-1.4 left by a crash")
    storage.put_file("originals/00000000-0000-0000-0000-00000000dead", orphan)
    partial = settings.files_dir / "originals" / ".put-crashed"
    partial.write_bytes(b"half")
    os.utime(partial, (time.time() - 7200, time.time() - 7200))
    clock = [1000.0]
    sweeper = sweeps.OrphanSweeper(interval=600, min_age=3600, clock=lambda: clock[0])
    factory = _factory(db_session)
    assert sweeper.maybe_run(factory, storage) == 1  # only the old half-written file
    assert not partial.exists()
    assert "originals/00000000-0000-0000-0000-00000000dead" in storage.keys("originals/")
    clock[0] += 599
    assert sweeper.maybe_run(factory, storage) == 0  # not listed again within the interval
    clock[0] += 3601
    assert sweeper.maybe_run(factory, storage) == 1  # orphaned for an hour: removed
    assert storage.keys("originals/") == [file.original_key]  # the named blob stays
