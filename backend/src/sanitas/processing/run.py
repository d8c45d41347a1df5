"""Running a job, identical for every executor: claim the row, fetch the blob, run the engine in
the sandbox with throttled progress, store the result, record COMPLETED or FAILED (outcome.py).

Jobs are rows. A claim is one conditional UPDATE (waiting -> active, or a stale active job
whose heartbeat is older than the timeout), so two executors never run the same job at once
and a crashed worker's job runs again. Every later write is guarded by the claim token
(worker_id), so a worker that lost its claim cannot overwrite the new owner's result. The
sanitized blob has one key per file, so a job run twice still leaves exactly one blob.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from sanitas import logs, sealing
from sanitas.config import Settings
from sanitas.datadir.scratch import JobScratch
from sanitas.db import rows_matched, upsert, utcnow
from sanitas.engine.report import RejectionCode
from sanitas.engine.verdict import Verdict
from sanitas.files import finished
from sanitas.files.naming import sanitized_name_for
from sanitas.models import AccountTurn, File, FileStatus, Job, JobState
from sanitas.models.job import JobFailure, is_paused, runnable_condition
from sanitas.processing.outcome import (
    INTERNAL_FAILURE_MESSAGE,
    INTERRUPTED_MESSAGE,
    PASSWORD_LOST_MESSAGE,
    Outcome,
    fail,
    finish,
    queue_file_events,
    retry_or_fail,
    wake_webhook_senders,
)
from sanitas.storage import BlobNotFound, Storage, StorageError, preview_key, sanitized_key
from sanitas.web import metrics

log = logging.getLogger(__name__)

PROGRESS_MIN_INTERVAL = 0.5  # seconds between two progress writes



def worker_id() -> str:
    """A claim token: host, pid and a random part (unique per run of the job)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"



def _short_of_room(settings: Settings, workdir: Path, input_size: int) -> bool:
    from sanitas.datadir.diskspace import is_short, room

    try:
        return is_short(room(workdir), max(settings.min_free_bytes, 2 * input_size))
    except OSError:
        return False



def _readable(reason: str | None, fallback: str) -> str:
    reason = re.sub(r"\s+", " ", reason or "").strip()
    return reason[:1000] if reason else fallback



class _Heartbeat:
    """Refreshes the job's heartbeat while the job runs, so it is not reclaimed as stale."""

    def __init__(self, factory: sessionmaker[Session], job_id: str, token: str,
                 interval: float) -> None:
        self.factory, self.job_id, self.token, self.interval = factory, job_id, token, interval
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"heartbeat-{job_id[:8]}",
                                       daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            try:
                with self.factory() as s:
                    s.execute(update(Job).where(Job.id == self.job_id, Job.worker_id == self.token,
                                                Job.state == JobState.ACTIVE)
                              .values(heartbeat_at=utcnow()))
                    s.commit()
            except Exception:  # a missed beat is not fatal; the next one may succeed
                log.warning("heartbeat for job %s failed", self.job_id, exc_info=True)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop.set()
        self.thread.join(timeout=5)



class _Progress:
    """Throttled progress writes (at most every PROGRESS_MIN_INTERVAL s, always forward)."""

    def __init__(self, factory: sessionmaker[Session], job_id: str, token: str) -> None:
        self.factory, self.job_id, self.token = factory, job_id, token
        self.last_written = 0
        self.last_time = 0.0
        self.lock = threading.Lock()

    def __call__(self, percent: int) -> None:
        percent = max(0, min(99, int(percent)))  # 100 is written with COMPLETED
        now = time.monotonic()
        with self.lock:
            if percent <= self.last_written or now - self.last_time < PROGRESS_MIN_INTERVAL:
                return
            self.last_written, self.last_time = percent, now
        try:
            with self.factory() as s:
                s.execute(update(Job).where(Job.id == self.job_id, Job.worker_id == self.token,
                                            Job.state == JobState.ACTIVE)
                          .values(progress=percent, heartbeat_at=utcnow()))
                s.commit()
        except Exception:
            log.warning("progress write for job %s failed", self.job_id, exc_info=True)



def claim(factory: sessionmaker[Session], settings: Settings, job_id: str,
          token: str) -> tuple[Outcome | None, File | None, Job | None]:
    """Take the job. Returns (None, file, job) when claimed, else the reason not to run."""
    now = utcnow()
    with factory() as s:
        if is_paused(s):
            return "paused", None, None
        result = s.execute(
            update(Job).where(Job.id == job_id,
                              runnable_condition(settings.job_heartbeat_timeout_seconds, now))
            .values(state=JobState.ACTIVE, worker_id=token, heartbeat_at=now, started_at=now,
                    finished_at=None, progress=0, attempts=Job.attempts + 1, run_after=None)
            .execution_options(synchronize_session=False))
        if rows_matched(result) != 1:
            s.rollback()
            return "skipped", None, None
        job = s.get_one(Job, job_id)  # the row just updated
        file = s.get(File, job.file_id)
        if file is not None and job.attempts > settings.job_max_attempts:
            # Taken over after a crash that many times: the file may be what kills the worker.
            job.state, job.finished_at = JobState.FAILED, now
            job.password_secret = None  # a final state: the sealed password goes
            job.error = file.error_message = INTERRUPTED_MESSAGE
            file.error_code = JobFailure.INTERRUPTED
            file.status, file.verdict = FileStatus.FAILED, Verdict.REFUSED
            file.processing_completed_at = now
            queued = queue_file_events(s, "file.failed", [file.id])
            s.commit()
            if queued:
                wake_webhook_senders()
            log.error("job %s: interrupted %d times; not tried again", job_id,
                      job.attempts - 1)
            return "failed", None, None
        if file is None or file.is_expired or file.original_key is None:
            job.state, job.finished_at = JobState.FAILED, now
            job.password_secret = None
            job.error = "The file expired before it could be processed."
            failed_now = file is not None and file.status in (FileStatus.PENDING,
                                                              FileStatus.PROCESSING)
            if file is not None and failed_now:
                file.status, file.verdict = FileStatus.FAILED, Verdict.REFUSED
                file.error_message, file.error_code = job.error, JobFailure.EXPIRED
            queued = (file is not None and failed_now
                      and queue_file_events(s, "file.failed", [file.id]))
            s.commit()
            if queued:
                wake_webhook_senders()
            return "failed", None, None
        file.status = FileStatus.PROCESSING
        file.processing_started_at = now
        file.error_message = file.error_code = None
        # The account's turn is taken: it waits behind accounts served less recently.
        upsert(s, AccountTurn, {"user_id": file.user_id, "served_at": now}, ("user_id",))
        s.commit()
        return None, file, job



def run_job(job_id: str, *, factory: sessionmaker[Session], settings: Settings,
            storage: Storage, on_claimed: Callable[[], None] | None = None) -> Outcome:
    """Run one job to its end. Never raises for a file's fault; 'retry' means the job was put
    back to waiting (with back-off) after an infrastructure fault. `on_claimed` is called
    once the job is this worker's, before it runs."""
    token = worker_id()
    outcome, file, job = claim(factory, settings, job_id, token)
    if outcome is not None:
        return outcome
    if on_claimed is not None:
        on_claimed()
    # claimed: claim() fails a job whose file is gone or has no original
    assert file is not None and job is not None and file.original_key is not None
    with logs.job_context(job_id, job.request_id):  # the call's id on the job's log lines
        try:
            outcome = _run_claimed(job_id, token, file, job, factory=factory,
                                   settings=settings, storage=storage)
        finally:
            finished.notify(file.id)  # a one-call upload waiting in this process answers now
        log.info("job %s: %s", job_id, outcome)
        return outcome



def _run_claimed(job_id: str, token: str, file: File, job: Job, *,
                 factory: sessionmaker[Session], settings: Settings,
                 storage: Storage) -> Outcome:
    from sanitas.policies.applied import policy_of_file
    from sanitas.sandbox import PreviewRequest, SandboxError, run_sanitizer

    assert file.original_key is not None
    started = time.monotonic()
    password = None
    if job.password_secret:
        try:
            password = sealing.unseal(settings, job.id, job.password_secret)
        except sealing.SecretUnavailable:
            log.error("job %s: the password given with the upload cannot be opened with this "
                      "process's secret key (SANITAS_SECRET_KEY differs?)", job_id)
            return fail(factory, job_id, token, PASSWORD_LOST_MESSAGE, started,
                         code=JobFailure.INTERNAL)
    try:
        scratch = JobScratch(settings, job_id)  # under the data dir, locked while the job runs
    except OSError as exc:  # e.g. the disk is full: the job waits and tries again
        return retry_or_fail(factory, settings, job_id, token, job.attempts, exc, started)
    workdir = scratch.path
    try:
        with _Heartbeat(factory, job_id, token,
                        max(0.5, settings.job_heartbeat_timeout_seconds / 4)):
            try:
                input_path = workdir / "input"
                storage.get_to_path(file.original_key, input_path)
                output_dir = workdir / "out"
                output_dir.mkdir()
                policy = policy_of_file(file, ocr=settings.ocr)  # as recorded at upload
                preview_path = workdir / "preview.png"
                preview = (PreviewRequest(preview_path, settings.preview_max_side,
                                          settings.preview_seconds)
                           if settings.preview_max_side > 0 else None)
                result = run_sanitizer(input_path, output_dir, policy=policy, settings=settings,
                                       on_progress=_Progress(factory, job_id, token),
                                       original_name=file.original_name, password=password,
                                       preview=preview)
                metrics.job_finished(result, policy.mode, time.monotonic() - started)
                if result.status != "ok" or not result.output:
                    if _short_of_room(settings, workdir, file.original_size):
                        # A full disk makes the sandbox's output fail as if the file were bad:
                        # the disk's fault, so the job waits and tries again.
                        raise OSError(errno.ENOSPC, "little free space for the job's output "
                                                    f"({result.reason})")
                    return fail(factory, job_id, token, _readable(
                        result.reason, "The file could not be sanitized."), started,
                        code=result.code or RejectionCode.DAMAGED,
                        detected_type=result.detected_type)
                out_path = Path(result.output)
                if not out_path.is_absolute():
                    out_path = output_dir / out_path
                key = sanitized_key(file.id)
                digest = sha256_of(out_path)  # the output, before it leaves the scratch dir
                size = storage.put_file(key, out_path, move=True)
                _store_preview(storage, file.id, preview_path)
            except (SandboxError, StorageError, OSError) as exc:
                if isinstance(exc, SandboxError):
                    metrics.sandbox_failed()
                if isinstance(exc, BlobNotFound):
                    return fail(factory, job_id, token,
                                 "The uploaded file is no longer available.", started,
                                 code=JobFailure.EXPIRED)
                return retry_or_fail(factory, settings, job_id, token, job.attempts, exc,
                                      started)
            except Exception:
                log.exception("job %s crashed", job_id)
                return fail(factory, job_id, token, INTERNAL_FAILURE_MESSAGE, started,
                             code=JobFailure.INTERNAL)

            now = utcnow()
            duration = round(time.monotonic() - started, 3)
            report = result.file_report()
            owned = finish(factory, job_id, token,
                            job_values={"state": JobState.COMPLETED, "progress": 100,
                                        "finished_at": now, "error": None},
                            file_values={
                                "status": FileStatus.COMPLETED, "sanitized_key": key,
                                "sanitized_name": sanitized_name_for(file.original_name,
                                                                     result.output_type),
                                "sanitized_size": size, "report": report,
                                "verdict": report["verdict"],
                                "sha256_sanitized": digest,
                                "processing_completed_at": now,
                                "processing_duration": duration,
                                "compression_ratio": (round(size / file.original_size, 4)
                                                      if file.original_size else None),
                                # The sandbox saw the container's structure; upload only sniffed.
                                "detected_type": result.detected_type or file.detected_type,
                                "error_message": None, "error_code": None})
            if not owned:
                log.warning("job %s: claim lost before completion; result left to the owner",
                            job_id)
                return "skipped"
            return "completed"
    finally:
        scratch.close()



def _store_preview(storage: Storage, file_id: str, path: Path) -> None:
    """Store the preview the sandbox drew beside the sanitized blob (it expires with it); a
    preview that cannot be stored is left out, never failing the job."""
    if not path.exists():
        return
    try:
        storage.put_file(preview_key(file_id), path, move=True)
    except StorageError:
        log.warning("preview of file %s not stored", file_id, exc_info=True)



def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()

