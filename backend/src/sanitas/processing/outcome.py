"""A job's outcome, written once: the job and file rows, the wiped password and the owner's
webhook events, in one transaction guarded by the claim token (a worker that lost its claim
writes nothing)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import timedelta
from functools import partial
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.engine.verdict import ENCRYPTED_CODES, Verdict
from sanitas.models import File, FileStatus, Job, JobState
from sanitas.models.job import JobFailure

log = logging.getLogger(__name__)

Outcome = Literal["completed", "failed", "retry", "skipped", "paused"]

INFRA_FAILURE_MESSAGE = ("Processing failed because of a temporary server problem. "
                         "Please upload the file again later.")

INTERNAL_FAILURE_MESSAGE = "Processing failed because of an internal error."

PASSWORD_LOST_MESSAGE = ("The password given with the upload could not be read back by the "  # noqa: S105 - a message, not a password
                         "processing server (its secret key differs); upload the file again.")

INTERRUPTED_MESSAGE = ("Processing of this file was interrupted several times (the worker "
                       "stopped while it ran), so it was not tried again.")



def file_payload(file: File) -> dict[str, Any]:
    """An event's data: the file as the status call shows it (`data.file` of
    GET /api/process/status/{id})."""
    from sanitas.files.service import file_out

    return {"file": file_out(file).model_dump(mode="json", by_alias=True)}


def queue_file_events(s: Session, event: str, file_ids: Iterable[str]) -> int:
    """Hand the files' `event` (file.completed, file.failed, file.expired) to webhooks, each
    with its payload, in `s`'s transaction: the deliveries are committed with the outcome that
    caused them. A failure to build them is logged and undone alone (a savepoint), never the
    outcome's. Returns the deliveries added: when any, call `wake_webhook_senders` after the
    commit."""
    try:
        from sanitas.models.webhook import WebhookEvent
        from sanitas.webhooks.service import add_events

        with s.begin_nested():
            s.flush()  # the pending changes are what the payload shows
            ids = list(dict.fromkeys(file_ids))
            files = s.scalars(select(File).where(File.id.in_(ids))).all() if ids else []
            events = [(f.user_id, partial(file_payload, f)) for f in files]
            return add_events(s, WebhookEvent(event), events)
    except Exception:
        log.warning("could not queue webhook event %s", event, exc_info=True)
        return 0


def send_file_events(factory: sessionmaker[Session], event: str, file_ids: Iterable[str]) -> int:
    """`queue_file_events` in a transaction of its own, committed, and the senders woken.
    Returns the deliveries queued; never raises (a failure is logged, the event is lost)."""
    with factory() as s:
        queued = queue_file_events(s, event, file_ids)
        if queued:
            s.commit()
    if queued:
        wake_webhook_senders()
    return queued


def wake_webhook_senders() -> None:
    from sanitas.webhooks.service import wake_senders

    wake_senders()


def finish(factory: sessionmaker[Session], job_id: str, token: str, *,
            job_values: dict[str, object], file_values: dict[str, object]) -> bool:
    """Write the outcome if we still own the job; False when the claim was lost. A final
    state wipes the job's sealed password (sealing.py) and queues the owner's webhook
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
                  and queue_file_events(s, "file.completed" if final == JobState.COMPLETED
                                          else "file.failed", [file_id]))
        s.commit()
    if queued:
        wake_webhook_senders()
    return True


def fail(factory: sessionmaker[Session], job_id: str, token: str, message: str,
         started: float, *, code: str, detected_type: str | None = None) -> Outcome:
    now = utcnow()
    file_values: dict[str, object] = {
        "status": FileStatus.FAILED, "error_message": message, "error_code": str(code),
        # No copy: refused by the engine or not processed, or encrypted and held back (a file
        # no password opened is "not inspected", never "refused": engine/verdict.py).
        "verdict": Verdict.ENCRYPTED if str(code) in ENCRYPTED_CODES else Verdict.REFUSED,
        "processing_completed_at": now,
        "processing_duration": round(time.monotonic() - started, 3)}
    if detected_type:
        file_values["detected_type"] = detected_type
    finish(factory, job_id, token,
            job_values={"state": JobState.FAILED, "finished_at": now, "error": message},
            file_values=file_values)
    return "failed"


def retry_or_fail(factory: sessionmaker[Session], settings: Settings, job_id: str, token: str,
                   attempts: int, exc: Exception, started: float) -> Outcome:
    if attempts >= settings.job_max_attempts:
        log.error("job %s failed after %d attempts: %s", job_id, attempts, exc)
        return fail(factory, job_id, token, INFRA_FAILURE_MESSAGE, started,
                     code=JobFailure.INFRASTRUCTURE)
    delay = settings.job_retry_delay_seconds * (2 ** max(0, attempts - 1))
    log.warning("job %s: infrastructure fault (%s); retry %d in %ss", job_id, exc,
                attempts + 1, delay)
    finish(factory, job_id, token,
            job_values={"state": JobState.WAITING, "worker_id": None, "heartbeat_at": None,
                        "run_after": utcnow() + timedelta(seconds=delay),
                        "error": f"{type(exc).__name__}: {exc}"[:1000]},
            file_values={"status": FileStatus.PENDING})
    return "retry"

