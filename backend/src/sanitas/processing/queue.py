"""The queue: its rows are the jobs (claimed in a fair order: priority, then accounts taking
turns, models/job.py `fair_order`), its state one row (paused or not), and what an admin does
to it (the routes in routes.py)."""

from __future__ import annotations

from datetime import timedelta
from functools import cache

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Select,
    and_,
    bindparam,
    delete,
    func,
    select,
)
from sqlalchemy.orm import Session

from sanitas.audit.service import record
from sanitas.channels.fairgate import share_cap
from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.engine import formats
from sanitas.engine.modes import Mode
from sanitas.models import AuditAction, File, Job, JobState, QueueState, User
from sanitas.models.job import fair_order, fair_order_by, is_paused

__all__ = ["claim_order", "clear_job_records", "express_kinds", "find_runnable", "is_paused",
           "queue_counts", "set_paused"]


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


@cache
def express_kinds() -> tuple[str, ...]:
    """The kinds whose basic clean runs without LibreOffice (`formats.libreoffice_expected`):
    the ones an express worker may take, when the file is small."""
    return tuple(sorted(name for name in formats.KINDS
                        if not formats.libreoffice_expected(name, Mode.BASIC)))


def _express() -> ColumnElement[bool]:
    """The jobs an express worker takes: a basic clean of a small file (at most the bound
    parameter `express_max` bytes: SANITAS_EXECUTOR_EXPRESS_MAX_BYTES) of a kind cleaned
    without LibreOffice, as the upload's sniff named it (a file the sniff could not name is
    not one). Short by what it is, not by a promise: such a job still has its own limits."""
    return and_(File.mode == Mode.BASIC.value,
                File.original_size <= bindparam("express_max", type_=BigInteger),
                File.detected_type.in_(express_kinds()))


@cache
def _fair_statement(express: bool) -> Select[tuple[str, int, str, int]]:
    """The query `find_runnable` makes, built once (each dispatch after an upload or a job's
    end would pay its construction and cache key): the fair order's head, `rows` rows."""
    fair = fair_order(only=_express() if express else None)
    return (select(fair.c.id, fair.c.priority, fair.c.user_id, fair.c.running)
            .order_by(*fair_order_by(fair)).limit(bindparam("rows", type_=Integer)))


def find_runnable(session: Session, settings: Settings, limit: int,
                  exclude: set[str] | frozenset[str] = frozenset(),
                  workers: int | None = None, express: bool = False) -> list[tuple[str, int]]:
    """(job id, priority) of up to `limit` runnable jobs to start now, in the fair order
    (models/job.py `fair_order`: priority, then accounts taking turns). `exclude`: jobs this
    executor has just handed to a worker (not claimed yet: they count as running). While
    other accounts' jobs wait, an account that holds its share of the workers
    (`executor_max_share` of `workers`, by default `executor_workers`, at least one) gets no
    more; what is left over then goes in order, so no worker idles while jobs wait.
    `express`: only the small quick jobs an express worker takes (`_express`)."""
    now = utcnow()
    rows = session.execute(_fair_statement(express), {
        "now": now, "stale": now - timedelta(seconds=settings.job_heartbeat_timeout_seconds),
        "rows": 4 * limit + len(exclude) + 8,
        "express_max": settings.executor_express_max_bytes}).all()
    if workers is None:
        workers = settings.executor_workers
    share = share_cap(settings.executor_max_share, workers)
    held: dict[str, int] = {}
    for row in rows:
        held.setdefault(row.user_id, row.running)
        if row.id in exclude:
            held[row.user_id] += 1
    waiting = [row for row in rows if row.id not in exclude]
    chosen: list[str] = []
    for row in waiting:  # first the accounts under their share
        if len(chosen) < limit and held[row.user_id] < share:
            chosen.append(row.id)
            held[row.user_id] += 1
    for row in waiting:  # then, nobody under it waiting, the rest in order
        if len(chosen) < limit and row.id not in chosen:
            chosen.append(row.id)
    order = {row.id: i for i, row in enumerate(waiting)}
    priorities = {row.id: row.priority for row in waiting}
    return [(job_id, priorities[job_id]) for job_id in sorted(chosen, key=order.__getitem__)]


def claim_order(session: Session, settings: Settings, handed: str) -> list[str]:
    """The jobs a Celery worker handed the message of job `handed` tries to claim, in this
    order: the fair order's head (up to two, in case another worker takes the first at the
    same moment), then `handed`. A message is a worker's turn, not a promise of which job:
    the broker's queues are first in, first out, so running the handed job would let one
    account's burst hold every worker. The share is counted over the workers busy now plus
    this one (Celery workers are not counted anywhere: a busy one has a fresh heartbeat)."""
    stale = utcnow() - timedelta(seconds=settings.job_heartbeat_timeout_seconds)
    running = session.scalar(select(func.count()).select_from(Job).where(
        Job.state == JobState.ACTIVE, Job.heartbeat_at >= stale)) or 0
    heads = [job_id for job_id, _ in find_runnable(session, settings, 2, workers=running + 1)]
    return [*heads, handed] if handed not in heads else heads[:heads.index(handed) + 1]


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

