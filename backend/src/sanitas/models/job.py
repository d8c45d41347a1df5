from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String, Text, and_, func, or_, select
from sqlalchemy.orm import Mapped, Session, mapped_column
from sqlalchemy.sql.elements import ColumnElement

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column
from sanitas.models.queue_state import QueueState


class JobState(StrEnum):
    """Where a job is in the queue."""

    WAITING = "waiting"
    ACTIVE = "active"  # claimed by a worker
    COMPLETED = "completed"
    FAILED = "failed"


JOB_STATES = tuple(JobState)

HIGH_PRIORITY = 10  # a job of a plan with the high-priority capability
NORMAL_PRIORITY = 0


class JobFailure(StrEnum):
    """Why a job failed when the file itself was not refused (then the engine's
    RejectionCode says why): the file's `error_code`."""

    INTERRUPTED = "interrupted"  # the worker died on it too many times
    EXPIRED = "expired"  # the file expired (or its upload vanished) before it ran
    INFRASTRUCTURE = "infrastructure_error"  # retries exhausted on server faults
    INTERNAL = "internal_error"  # a bug


class Job(Base):
    """The processing of one file. Jobs are rows, so nothing is lost on a restart."""

    __tablename__ = "jobs"

    id: Mapped[str] = id_column()
    file_id: Mapped[str] = mapped_column(
        ForeignKey("files.id", ondelete="CASCADE"), unique=True, index=True
    )
    state: Mapped[str] = mapped_column(String(16), default=JobState.WAITING, index=True)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    progress: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker_id: Mapped[str | None] = mapped_column(String(128))
    heartbeat_at: Mapped[datetime | None]
    # Not started before this moment (a retry after an infrastructure fault backs off).
    run_after: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)
    # The password given with the upload, sealed (AES-GCM, key from the app's secret key) and
    # wiped when the job ends: see sealing.py. Never in an API answer or a log.
    password_secret: Mapped[str | None] = mapped_column(Text)
    # The API call that created the job (its X-Request-ID), on the job's log lines: logs.py.
    request_id: Mapped[str | None] = mapped_column(String(128))


# What the queue holds, read by the processing package (which claims jobs in this order) and by
# the file status answer (a waiting job's place in the queue): one definition for both.

def runnable_condition(heartbeat_timeout: float, now: datetime) -> ColumnElement[bool]:
    """Jobs an executor may start now: waiting and due, or active with a heartbeat older than
    `heartbeat_timeout` seconds (its worker died)."""
    stale = now - timedelta(seconds=heartbeat_timeout)
    return or_(
        and_(Job.state == JobState.WAITING, or_(Job.run_after.is_(None), Job.run_after <= now)),
        and_(Job.state == JobState.ACTIVE,
             or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < stale)),
    )


AHEAD_COUNT_CAP = 10_000  # jobs_ahead counts at most this many rows


def jobs_ahead(session: Session, heartbeat_timeout: float, job: Job) -> int:
    """How many runnable jobs an executor would claim before `job`, in the claim order
    (priority, then created time, then id); one COUNT over at most AHEAD_COUNT_CAP rows."""
    before = or_(
        Job.priority > job.priority,
        and_(Job.priority == job.priority,
             or_(Job.created_at < job.created_at,
                 and_(Job.created_at == job.created_at, Job.id < job.id))),
    )
    ahead = (select(Job.id).where(runnable_condition(heartbeat_timeout, utcnow()), before,
                                  Job.id != job.id)
             .limit(AHEAD_COUNT_CAP).subquery())
    return session.scalar(select(func.count()).select_from(ahead)) or 0


def is_paused(session: Session) -> bool:
    """Whether an admin paused the queue (no job starts until it is resumed)."""
    return bool(session.scalar(select(QueueState.paused).where(QueueState.id == 1)))
