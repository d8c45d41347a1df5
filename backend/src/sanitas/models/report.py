"""Compliance reports: a request for the files of a period and scope, generated in the
background into a CSV or PDF blob (see sanitas/reports/)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column


class ReportStatus(StrEnum):
    PENDING = "PENDING"  # waiting for the report worker
    PROCESSING = "PROCESSING"  # a worker holds it (claimed_at is its heartbeat)
    COMPLETED = "COMPLETED"  # the blob can be downloaded
    FAILED = "FAILED"  # error_message says why


class ReportFormat(StrEnum):
    CSV = "csv"
    PDF = "pdf"


class Report(Base):
    __tablename__ = "reports"

    id: Mapped[str] = id_column()
    # Who asked for it (the owner: they and admins may download it).
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # Whose files: None for everyone's, else one account's (the owner's for scope "own").
    scope_user_id: Mapped[str | None] = mapped_column(String(36))
    period_start: Mapped[datetime]  # inclusive
    period_end: Mapped[datetime]  # exclusive
    format: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16), default=ReportStatus.PENDING, index=True)
    storage_key: Mapped[str | None] = mapped_column(String(255))
    size: Mapped[int | None] = mapped_column(BigInteger)
    file_count: Mapped[int | None] = mapped_column(Integer)
    error_message: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_at: Mapped[datetime | None]  # set on claim, renewed while it is generated
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    completed_at: Mapped[datetime | None]
    # When the expiry sweep deletes the row and its blob (requested + the report TTL).
    expires_at: Mapped[datetime] = mapped_column(index=True)
