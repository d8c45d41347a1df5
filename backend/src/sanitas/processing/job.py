"""The job body, identical for every executor: claim the row, fetch the blob, run the engine in
the sandbox with throttled progress, store the result, record COMPLETED or FAILED.

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
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from sanitas import logs
from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.datadir.scratch import JobScratch
from sanitas.db import rows_matched, utcnow
from sanitas.engine.report import RejectionCode
from sanitas.engine.verdict import Verdict
from sanitas.models import AuditAction, File, FileStatus, Job, JobState, QueueState, User
from sanitas.processing import job_secret
from sanitas.storage import BlobNotFound, Storage, StorageError, preview_key, sanitized_key
from sanitas.web import metrics

if TYPE_CHECKING:
    from collections.abc import Callable

    from sanitas.engine.policy import Policy

log = logging.getLogger(__name__)

Outcome = Literal["completed", "failed", "retry", "skipped", "paused"]

PROGRESS_MIN_INTERVAL = 0.5  # seconds between two progress writes
INFRA_FAILURE_MESSAGE = ("Processing failed because of a temporary server problem. "
                         "Please upload the file again later.")
INTERNAL_FAILURE_MESSAGE = "Processing failed because of an internal error."

HIGH_PRIORITY = 10
NORMAL_PRIORITY = 0


def worker_id() -> str:
    """A claim token: host, pid and a random part (unique per run of the job)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _add_webhook_events(s: Session, event: str, file_ids: list[str]) -> bool:
    """Add the files' webhook deliveries to `s`'s transaction, to be committed with the outcome
    that caused them (see webhooks.service.add_file_events). A failure to build them is logged
    and undone alone (a savepoint), never the outcome's. True when any was added: after the
    commit, call `_wake_webhook_senders`."""
    try:
        from sanitas.models.webhook import WebhookEvent
        from sanitas.webhooks.service import add_file_events

        with s.begin_nested():
            return add_file_events(s, WebhookEvent(event), file_ids) > 0
    except Exception:
        log.warning("could not queue webhook event %s", event, exc_info=True)
        return False


def _wake_webhook_senders() -> None:
    from sanitas.webhooks.service import wake_senders

    wake_senders()


def is_paused(session: Session) -> bool:
    return bool(session.scalar(select(QueueState.paused).where(QueueState.id == 1)))


def set_paused(session: Session, paused: bool, *, actor: User | None = None,
               ip: str | None = None) -> None:
    """Pause or resume the queue; an admin's change (`actor`) is written to the audit log in
    the same transaction."""
    if actor is not None:
        record(session, action=AuditAction.QUEUE_PAUSED if paused else AuditAction.QUEUE_RESUMED,
               actor=actor, ip=ip)
    state = session.get(QueueState, 1)
    if state is None:
        session.add(QueueState(id=1, paused=paused, updated_at=utcnow()))
    else:
        state.paused = paused
        state.updated_at = utcnow()
    session.commit()


def runnable_condition(settings: Settings, now: datetime) -> ColumnElement[bool]:
    """Jobs an executor may start now: waiting and due, or active with a stale heartbeat."""
    stale = now - timedelta(seconds=settings.job_heartbeat_timeout_seconds)
    return or_(
        and_(Job.state == JobState.WAITING, or_(Job.run_after.is_(None), Job.run_after <= now)),
        and_(Job.state == JobState.ACTIVE,
             or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < stale)),
    )


def find_runnable(session: Session, settings: Settings, limit: int,
                  exclude: set[str] | frozenset[str] = frozenset()) -> list[tuple[str, int]]:
    """(job id, priority) of runnable jobs, high priority first, oldest first."""
    query = (select(Job.id, Job.priority).where(runnable_condition(settings, utcnow()))
             .order_by(Job.priority.desc(), Job.created_at, Job.id).limit(limit + len(exclude)))
    rows = [(r.id, r.priority) for r in session.execute(query)]
    return [r for r in rows if r[0] not in exclude][:limit]


AHEAD_COUNT_CAP = 10_000  # jobs_ahead counts at most this many rows


def jobs_ahead(session: Session, settings: Settings, job: Job) -> int:
    """How many runnable jobs an executor would claim before `job`, in find_runnable's order
    (priority, then created time, then id); one COUNT over at most AHEAD_COUNT_CAP rows."""
    before = or_(
        Job.priority > job.priority,
        and_(Job.priority == job.priority,
             or_(Job.created_at < job.created_at,
                 and_(Job.created_at == job.created_at, Job.id < job.id))),
    )
    ahead = (select(Job.id).where(runnable_condition(settings, utcnow()), before,
                                  Job.id != job.id)
             .limit(AHEAD_COUNT_CAP).subquery())
    return session.scalar(select(func.count()).select_from(ahead)) or 0


def sanitized_name_for(original_name: str, output_type: str | None) -> str:
    """The download's name: the engine's output name (its one naming rule) after
    'sanitized_'."""
    from sanitas.engine import safe_output_name

    return safe_output_name(original_name, output_type or "", prefix="sanitized_")


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


class JobFailure(StrEnum):
    """Why a job failed when the file itself was not refused (then the engine's
    RejectionCode says why)."""

    INTERRUPTED = "interrupted"  # the worker died on it too many times
    EXPIRED = "expired"  # the file expired (or its upload vanished) before it ran
    INFRASTRUCTURE = "infrastructure_error"  # retries exhausted on server faults
    INTERNAL = "internal_error"  # a bug


PASSWORD_LOST_MESSAGE = ("The password given with the upload could not be read back by the "  # noqa: S105 - a message, not a password
                         "processing server (its secret key differs); upload the file again.")
INTERRUPTED_MESSAGE = ("Processing of this file was interrupted several times (the worker "
                       "stopped while it ran), so it was not tried again.")


def claim(factory: sessionmaker[Session], settings: Settings, job_id: str,
          token: str) -> tuple[Outcome | None, File | None, Job | None]:
    """Take the job. Returns (None, file, job) when claimed, else the reason not to run."""
    now = utcnow()
    with factory() as s:
        if is_paused(s):
            return "paused", None, None
        result = s.execute(
            update(Job).where(Job.id == job_id, runnable_condition(settings, now))
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
            queued = _add_webhook_events(s, "file.failed", [file.id])
            s.commit()
            if queued:
                _wake_webhook_senders()
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
                      and _add_webhook_events(s, "file.failed", [file.id]))
            s.commit()
            if queued:
                _wake_webhook_senders()
            return "failed", None, None
        file.status = FileStatus.PROCESSING
        file.processing_started_at = now
        file.error_message = file.error_code = None
        s.commit()
        return None, file, job


def _finish(factory: sessionmaker[Session], job_id: str, token: str, *,
            job_values: dict[str, object], file_values: dict[str, object]) -> bool:
    """Write the outcome if we still own the job; False when the claim was lost. A final
    state wipes the job's sealed password (job_secret.py) and queues the owner's webhook
    event (file.completed or file.failed) in the same transaction."""
    final = job_values.get("state")
    if final in (JobState.COMPLETED, JobState.FAILED):
        job_values = {**job_values, "password_secret": None}
    with factory() as s:
        result = s.execute(update(Job).where(Job.id == job_id, Job.worker_id == token,
                                             Job.state == JobState.ACTIVE).values(**job_values)
                           .execution_options(synchronize_session=False))
        if rows_matched(result) != 1:
            s.rollback()
            return False
        file_id = s.scalar(select(Job.file_id).where(Job.id == job_id))
        s.execute(update(File).where(File.id == file_id).values(**file_values)
                  .execution_options(synchronize_session=False))
        queued = (file_id is not None and final in (JobState.COMPLETED, JobState.FAILED)
                  and _add_webhook_events(s, "file.completed" if final == JobState.COMPLETED
                                          else "file.failed", [file_id]))
        s.commit()
    if queued:
        _wake_webhook_senders()
    return True


def run_job(job_id: str, *, factory: sessionmaker[Session], settings: Settings,
            storage: Storage) -> Outcome:
    """Run one job to its end. Never raises for a file's fault; 'retry' means the job was put
    back to waiting (with back-off) after an infrastructure fault."""
    token = worker_id()
    outcome, file, job = claim(factory, settings, job_id, token)
    if outcome is not None:
        return outcome
    # claimed: claim() fails a job whose file is gone or has no original
    assert file is not None and job is not None and file.original_key is not None
    with logs.job_context(job_id, job.request_id):  # the call's id on the job's log lines
        outcome = _run_claimed(job_id, token, file, job, factory=factory, settings=settings,
                               storage=storage)
        log.info("job %s: %s", job_id, outcome)
        return outcome


def _run_claimed(job_id: str, token: str, file: File, job: Job, *,
                 factory: sessionmaker[Session], settings: Settings,
                 storage: Storage) -> Outcome:
    from sanitas.sandbox import PreviewRequest, SandboxError, run_sanitizer

    assert file.original_key is not None
    started = time.monotonic()
    password = None
    if job.password_secret:
        try:
            password = job_secret.unseal(settings, job.id, job.password_secret)
        except job_secret.SecretUnavailable:
            log.error("job %s: the password given with the upload cannot be opened with this "
                      "process's secret key (SANITAS_SECRET_KEY differs?)", job_id)
            return _fail(factory, job_id, token, PASSWORD_LOST_MESSAGE, started,
                         code=JobFailure.INTERNAL)
    try:
        scratch = JobScratch(settings, job_id)  # under the data dir, locked while the job runs
    except OSError as exc:  # e.g. the disk is full: the job waits and tries again
        return _retry_or_fail(factory, settings, job_id, token, job.attempts, exc, started)
    workdir = scratch.path
    try:
        with _Heartbeat(factory, job_id, token,
                        max(0.5, settings.job_heartbeat_timeout_seconds / 4)):
            try:
                input_path = workdir / "input"
                storage.get_to_path(file.original_key, input_path)
                output_dir = workdir / "out"
                output_dir.mkdir()
                mode, policy = job_policy(file)
                preview_path = workdir / "preview.png"
                preview = (PreviewRequest(preview_path, settings.preview_max_side,
                                          settings.preview_seconds)
                           if settings.preview_max_side > 0 else None)
                result = run_sanitizer(input_path, output_dir, mode=mode, settings=settings,
                                       on_progress=_Progress(factory, job_id, token),
                                       original_name=file.original_name, password=password,
                                       policy=policy, preview=preview)
                metrics.job_finished(result, mode, time.monotonic() - started)
                if result.status != "ok" or not result.output:
                    if _short_of_room(settings, workdir, file.original_size):
                        # A full disk makes the sandbox's output fail as if the file were bad:
                        # the disk's fault, so the job waits and tries again.
                        raise OSError(errno.ENOSPC, "little free space for the job's output "
                                                    f"({result.reason})")
                    return _fail(factory, job_id, token, _readable(
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
                    return _fail(factory, job_id, token,
                                 "The uploaded file is no longer available.", started,
                                 code=JobFailure.EXPIRED)
                return _retry_or_fail(factory, settings, job_id, token, job.attempts, exc,
                                      started)
            except Exception:
                log.exception("job %s crashed", job_id)
                return _fail(factory, job_id, token, INTERNAL_FAILURE_MESSAGE, started,
                             code=JobFailure.INTERNAL)

            now = utcnow()
            duration = round(time.monotonic() - started, 3)
            report = result.file_report()
            owned = _finish(factory, job_id, token,
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


def job_policy(file: File) -> tuple[str, Policy | None]:
    """The mode and policy a file's job runs with: a stored policy's recorded JSON (the exact
    version chosen at upload), or for the built-ins (and files from before policies) their
    mode, as before (the server's OCR setting applies to advanced mode)."""
    from sanitas.engine.policy import BUILT_IN
    from sanitas.engine.policy import Policy as EnginePolicy

    if file.policy_body is None or file.policy_id is None or file.policy_id in BUILT_IN:
        return file.mode, None
    policy = EnginePolicy.from_json(file.policy_body)
    return policy.mode, policy


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _fail(factory: sessionmaker[Session], job_id: str, token: str, message: str, started: float, *,
          code: str, detected_type: str | None = None) -> Outcome:
    now = utcnow()
    file_values: dict[str, object] = {
        "status": FileStatus.FAILED, "error_message": message, "error_code": str(code),
        "verdict": Verdict.REFUSED,  # no copy: refused by the engine or not processed
        "processing_completed_at": now,
        "processing_duration": round(time.monotonic() - started, 3)}
    if detected_type:
        file_values["detected_type"] = detected_type
    _finish(factory, job_id, token,
            job_values={"state": JobState.FAILED, "finished_at": now, "error": message},
            file_values=file_values)
    return "failed"


def _retry_or_fail(factory: sessionmaker[Session], settings: Settings, job_id: str, token: str,
                   attempts: int, exc: Exception, started: float) -> Outcome:
    if attempts >= settings.job_max_attempts:
        log.error("job %s failed after %d attempts: %s", job_id, attempts, exc)
        return _fail(factory, job_id, token, INFRA_FAILURE_MESSAGE, started,
                     code=JobFailure.INFRASTRUCTURE)
    delay = settings.job_retry_delay_seconds * (2 ** max(0, attempts - 1))
    log.warning("job %s: infrastructure fault (%s); retry %d in %ss", job_id, exc,
                attempts + 1, delay)
    _finish(factory, job_id, token,
            job_values={"state": JobState.WAITING, "worker_id": None, "heartbeat_at": None,
                        "run_after": utcnow() + timedelta(seconds=delay),
                        "error": f"{type(exc).__name__}: {exc}"[:1000]},
            file_values={"status": FileStatus.PENDING})
    return "retry"


def expire_files(factory: sessionmaker[Session], storage: Storage, *, batch: int = 200) -> int:
    """Delete both blobs of files past expiresAt and mark them expired (the row is kept for
    history). Blobs are deleted before the row is marked, so a crash leaves it to the next
    sweep rather than leaking a blob. Returns the number of files expired."""
    count = 0
    while True:
        before = count
        with factory() as s:
            # A file being processed expires at the next sweep, after its job has finished.
            files = s.scalars(select(File).where(File.is_expired.is_(False),
                                                 File.expires_at <= utcnow(),
                                                 File.status != FileStatus.PROCESSING)
                              .order_by(File.expires_at).limit(batch)).all()
            if not files:
                return count
            for f in files:
                try:
                    for key in (f.original_key, f.sanitized_key,
                                preview_key(f.id) if f.sanitized_key else None):
                        if key:
                            storage.delete(key)
                except StorageError:
                    log.warning("expiry: could not delete blobs of file %s", f.id, exc_info=True)
                    continue
                f.is_expired = True
                f.original_key = None
                f.sanitized_key = None
                if f.status in (FileStatus.PENDING, FileStatus.PROCESSING):
                    f.status, f.verdict = FileStatus.FAILED, Verdict.REFUSED
                    f.error_message = "The file expired before it could be processed."
                    f.error_code = JobFailure.EXPIRED
                count += 1
            expired_ids = [f.id for f in files if f.is_expired]
            s.execute(delete(Job).where(Job.state == JobState.WAITING,
                                        Job.file_id.in_(expired_ids)))
            s.execute(update(Job).where(Job.file_id.in_(expired_ids),
                                        Job.password_secret.is_not(None))
                      .values(password_secret=None).execution_options(synchronize_session=False))
            queued = _add_webhook_events(s, "file.expired", expired_ids)
            s.commit()
            if queued:
                _wake_webhook_senders()
            if len(files) < batch or count == before:
                return count


def queue_counts(session: Session) -> dict[str, int]:
    rows = session.execute(select(Job.state, func.count()).group_by(Job.state)).all()
    counts: dict[str, int] = {state: 0 for state in JobState}
    counts.update({state: n for state, n in rows})
    return counts


def clear_job_records(session: Session, state: JobState, *, actor: User | None = None,
                      ip: str | None = None) -> int:
    """Delete the job records in `state` (completed or failed); the files and their downloads
    are untouched. Returns how many went. An admin's clearing (`actor`) is written to the
    audit log in the same transaction."""
    result = session.execute(delete(Job).where(Job.state == state))
    cleared = rows_matched(result) or 0
    if actor is not None:
        record(session, action=AuditAction.QUEUE_CLEARED, actor=actor, ip=ip,
               detail={"state": state.value, "cleared": cleared})
    session.commit()
    return cleared


class OrphanSweeper:
    """Removes blobs no file row names: what a crash leaves between storing a blob and
    committing its row (an upload's original, a job's sanitized copy). A blob is removed only
    once it has been seen orphaned for `min_age` seconds (an upload or a job may still be about
    to commit), and storage is listed at most every `interval` seconds (listing a large bucket
    is not free). Local storage's half-written `.put-*` files of that age go too."""

    PREFIXES = ("originals/", "sanitized/", "previews/")

    def __init__(self, interval: float = 3600.0, min_age: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self.min_age, self.clock = interval, min_age, clock
        self.first_seen: dict[str, float] = {}
        self.last_run: float | None = None

    def maybe_run(self, factory: sessionmaker[Session], storage: Storage) -> int:
        now = self.clock()
        if self.last_run is not None and now - self.last_run < self.interval:
            return 0
        self.last_run = now
        try:
            return self.run(factory, storage, now)
        except Exception:  # a listing or a query that fails is tried at the next interval
            log.warning("orphan blob sweep failed", exc_info=True)
            return 0

    def run(self, factory: sessionmaker[Session], storage: Storage, now: float) -> int:
        keys = [k for prefix in self.PREFIXES for k in storage.keys(prefix)]
        named: set[str] = set()
        with factory() as s:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                named.update(k for k in s.scalars(select(File.original_key).where(
                    File.original_key.in_(chunk))) if k)
                named.update(k for k in s.scalars(select(File.sanitized_key).where(
                    File.sanitized_key.in_(chunk))) if k)
                # a preview lives as long as the sanitized copy beside it
                named.update(preview_key(i) for i in s.scalars(select(File.id).where(
                    File.id.in_([k.removeprefix("previews/") for k in chunk
                                 if k.startswith("previews/")]),
                    File.sanitized_key.is_not(None))))
        orphans = set(keys) - named
        self.first_seen = {k: self.first_seen.get(k, now) for k in orphans}
        removed = 0
        for key, seen in list(self.first_seen.items()):
            if now - seen >= self.min_age:
                try:
                    storage.delete(key)
                    removed += 1
                    del self.first_seen[key]
                except StorageError:
                    log.warning("could not remove orphan blob %s", key, exc_info=True)
        sweep_partials = getattr(storage, "sweep_partials", None)
        if sweep_partials is not None:
            removed += sweep_partials(self.min_age)
        if removed:
            log.info("removed %d orphan blob(s) a crash left in storage", removed)
        return removed
