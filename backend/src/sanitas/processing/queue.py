"""The queue: its rows are the jobs (claimed in priority, then age, order: models/job.py), its
state one row (paused or not), and what an admin does to it (the routes in routes.py)."""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.models import AuditAction, Job, JobState, QueueState, User
from sanitas.models.job import is_paused, runnable_condition

__all__ = ["clear_job_records", "find_runnable", "is_paused", "queue_counts", "set_paused"]


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


def find_runnable(session: Session, settings: Settings, limit: int,
                  exclude: set[str] | frozenset[str] = frozenset()) -> list[tuple[str, int]]:
    """(job id, priority) of runnable jobs, high priority first, oldest first."""
    runnable = runnable_condition(settings.job_heartbeat_timeout_seconds, utcnow())
    query = (select(Job.id, Job.priority).where(runnable)
             .order_by(Job.priority.desc(), Job.created_at, Job.id).limit(limit + len(exclude)))
    rows = [(r.id, r.priority) for r in session.execute(query)]
    return [r for r in rows if r[0] not in exclude][:limit]


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

