"""/api/process/queue/*: the processing queue, for admins (counts, pause and resume, clearing
finished job records)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from sanitas.models import JobState
from sanitas.processing import queue
from sanitas.processing.schemas import QueueCleared, QueuePaused, QueueStats
from sanitas.web.deps import AdminUser, ExecutorDep, SessionDep, SettingsDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/process/queue", tags=["queue"],
                   responses={401: {"model": ErrorEnvelope}})


@router.get("/stats", response_model=Envelope[QueueStats])
def queue_stats(_: AdminUser, session: SessionDep, settings: SettingsDep,
                executor: ExecutorDep) -> dict[str, object]:
    stats = QueueStats(**queue.queue_counts(session), paused=queue.is_paused(session),
                       workers=executor.workers() if executor is not None else 0,
                       executor=settings.executor)
    return ok(stats, "Queue statistics")


@router.post("/pause", response_model=Envelope[QueuePaused])
def queue_pause(request: Request, admin: AdminUser, session: SessionDep) -> dict[str, object]:
    queue.set_paused(session, True, actor=admin, ip=client_ip(request))
    return ok(QueuePaused(paused=True),
              "Queue paused: no new jobs will start; running jobs finish.")


@router.post("/resume", response_model=Envelope[QueuePaused])
def queue_resume(request: Request, admin: AdminUser, session: SessionDep,
                 executor: ExecutorDep) -> dict[str, object]:
    queue.set_paused(session, False, actor=admin, ip=client_ip(request))
    if executor is not None:
        executor.kick()
    return ok(QueuePaused(paused=False), "Queue resumed")


@router.post("/clear-completed", response_model=Envelope[QueueCleared])
def queue_clear_completed(request: Request, admin: AdminUser,
                          session: SessionDep) -> dict[str, object]:
    n = queue.clear_job_records(session, JobState.COMPLETED, actor=admin, ip=client_ip(request))
    return ok(QueueCleared(cleared=n), f"Cleared {n} completed job record(s)")


@router.post("/clear-failed", response_model=Envelope[QueueCleared])
def queue_clear_failed(request: Request, admin: AdminUser,
                       session: SessionDep) -> dict[str, object]:
    n = queue.clear_job_records(session, JobState.FAILED, actor=admin, ip=client_ip(request))
    return ok(QueueCleared(cleared=n), f"Cleared {n} failed job record(s)")
