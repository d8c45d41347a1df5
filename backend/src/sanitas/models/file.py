from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column


class FileStatus(StrEnum):
    """Where a file is in its processing."""

    PENDING = "PENDING"  # waiting for its job
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"  # the sanitized copy can be downloaded
    FAILED = "FAILED"  # refused or not processed: error_code and error_message say why


FILE_STATUSES = tuple(FileStatus)


class ProcessingMode(StrEnum):
    """How thoroughly a file is cleaned; each plan allows some modes (config)."""

    BASIC = "basic"
    ADVANCED = "advanced"


class File(Base):
    __tablename__ = "files"

    id: Mapped[str] = id_column()
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    original_name: Mapped[str] = mapped_column(String(255))
    original_size: Mapped[int] = mapped_column(BigInteger)
    detected_type: Mapped[str | None] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(16), default=ProcessingMode.BASIC)
    original_key: Mapped[str | None] = mapped_column(String(255))
    sanitized_key: Mapped[str | None] = mapped_column(String(255))
    sanitized_name: Mapped[str | None] = mapped_column(String(255))
    sanitized_size: Mapped[int | None] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=FileStatus.PENDING, index=True)
    error_message: Mapped[str | None] = mapped_column(Text)
    error_code: Mapped[str | None] = mapped_column(String(32))  # RejectionCode or JobFailure
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    processing_started_at: Mapped[datetime | None]
    processing_completed_at: Mapped[datetime | None]
    processing_duration: Mapped[float | None] = mapped_column(Float)
    compression_ratio: Mapped[float | None] = mapped_column(Float)
    expires_at: Mapped[datetime] = mapped_column(index=True)
    is_expired: Mapped[bool] = mapped_column(Boolean, default=False)
    download_count: Mapped[int] = mapped_column(Integer, default=0)
