"""/api/process/queue/*: the processing queue, for admins (counts, pause and resume, clearing
finished job records)."""

from __future__ import annotations

from fastapi import APIRouter

from sanitas.deps import AdminUser, ExecutorDep, SessionDep, SettingsDep
from sanitas.executor import job as jobs
from sanitas.executor.schemas import QueueCleared, QueuePaused, QueueStats
from sanitas.models import JobState
from sanitas.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/process/queue", tags=["queue"],
                   responses={401: {"model": ErrorEnvelope}})


@router.get("/stats", response_model=Envelope[QueueStats])
def queue_stats(_: AdminUser, session: SessionDep, settings: SettingsDep,
                executor: ExecutorDep):
    stats = QueueStats(**jobs.queue_counts(session), paused=jobs.is_paused(session),
                       workers=executor.workers() if executor is not None else 0,
                       executor=settings.executor)
    return ok(stats, "Queue statistics")


@router.post("/pause", response_model=Envelope[QueuePaused])
def queue_pause(_: AdminUser, session: SessionDep):
    jobs.set_paused(session, True)
    return ok(QueuePaused(paused=True),
              "Queue paused: no new jobs will start; running jobs finish.")


@router.post("/resume", response_model=Envelope[QueuePaused])
def queue_resume(_: AdminUser, session: SessionDep, executor: ExecutorDep):
    jobs.set_paused(session, False)
    if executor is not None:
        executor.kick()
    return ok(QueuePaused(paused=False), "Queue resumed")


@router.post("/clear-completed", response_model=Envelope[QueueCleared])
def queue_clear_completed(_: AdminUser, session: SessionDep):
    n = jobs.clear_job_records(session, JobState.COMPLETED)
    return ok(QueueCleared(cleared=n), f"Cleared {n} completed job record(s)")


@router.post("/clear-failed", response_model=Envelope[QueueCleared])
def queue_clear_failed(_: AdminUser, session: SessionDep):
    n = jobs.clear_job_records(session, JobState.FAILED)
    return ok(QueueCleared(cleared=n), f"Cleared {n} failed job record(s)")
