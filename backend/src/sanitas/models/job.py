from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column


class JobState(StrEnum):
    """Where a job is in the queue."""

    WAITING = "waiting"
    ACTIVE = "active"  # claimed by a worker
    COMPLETED = "completed"
    FAILED = "failed"


JOB_STATES = tuple(JobState)


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
    # wiped when the job ends: see processing/job_secret.py. Never in an API answer or a log.
    password_secret: Mapped[str | None] = mapped_column(Text)
    # The API call that created the job (its X-Request-ID), on the job's log lines: logs.py.
    request_id: Mapped[str | None] = mapped_column(String(128))
