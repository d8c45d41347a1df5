from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.engine.policy import Mode
from sanitas.models._common import id_column


class FileStatus(StrEnum):
    """Where a file is in its processing."""

    PENDING = "PENDING"  # waiting for its job
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"  # the sanitized copy can be downloaded
    FAILED = "FAILED"  # refused or not processed: error_code and error_message say why


FILE_STATUSES = tuple(FileStatus)
LIVE_BLOBS = "original_key IS NOT NULL OR sanitized_key IS NOT NULL"


class StatusFilter(StrEnum):
    """A file list's `status` query: ALL, or only the files of one FileStatus."""

    ALL = "ALL"
    COMPLETED = FileStatus.COMPLETED.value
    PROCESSING = FileStatus.PROCESSING.value
    PENDING = FileStatus.PENDING.value
    FAILED = FileStatus.FAILED.value

    @property
    def file_status(self) -> FileStatus | None:
        """The status to keep, or None for every status."""
        return None if self is StatusFilter.ALL else FileStatus(self.value)


class File(Base):
    __tablename__ = "files"
    # The hot queries' indexes (migration a865aa90bf0e; docs/deploying.md): the expiry sweep
    # reads only rows not yet expired (its WHERE spells the predicate exactly so), a user's
    # history and counts, and the admin list in its default order.
    __table_args__ = (
        Index("ix_files_expiry_due", "expires_at",
              postgresql_where=text("is_expired IS false"), sqlite_where=text("is_expired IS 0")),
        Index("ix_files_user_created", "user_id", text("created_at DESC"), "id"),
        Index("ix_files_user_status", "user_id", "status"),
        Index("ix_files_created_id", text("created_at DESC"), "id"),
        Index("ix_files_detected_type", "detected_type"),
        # The rows whose blobs still count in storage_used (migration c6e8f0a2b4d6, which
        # also adds the GIN trigram index of lower(original_name) on PostgreSQL; the charts'
        # timed files have ix_files_timed, migration e8a0c2e4f6a8).
        Index("ix_files_live_blobs", "user_id", postgresql_where=text(LIVE_BLOBS),
              sqlite_where=text(LIVE_BLOBS)),
    )

    id: Mapped[str] = id_column()
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    original_name: Mapped[str] = mapped_column(String(255))
    original_size: Mapped[int] = mapped_column(BigInteger)
    detected_type: Mapped[str | None] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(16), default=Mode.BASIC)  # its policy's mode
    original_key: Mapped[str | None] = mapped_column(String(255))
    sanitized_key: Mapped[str | None] = mapped_column(String(255))
    sanitized_name: Mapped[str | None] = mapped_column(String(255))
    sanitized_size: Mapped[int | None] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=FileStatus.PENDING, index=True)
    error_message: Mapped[str | None] = mapped_column(Text)
    error_code: Mapped[str | None] = mapped_column(String(32))  # RejectionCode or JobFailure
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    processing_started_at: Mapped[datetime | None]
    processing_completed_at: Mapped[datetime | None]
    processing_duration: Mapped[float | None] = mapped_column(Float)
    compression_ratio: Mapped[float | None] = mapped_column(Float)
    expires_at: Mapped[datetime]
    is_expired: Mapped[bool] = mapped_column(Boolean, default=False)
    download_count: Mapped[int] = mapped_column(Integer, default=0)
    # The policy the file is (to be) cleaned with: a built-in id ("basic", "advanced") or a
    # stored policy's id, its version (NULL for built-ins), its name then, and the exact JSON
    # (Policy.to_json()) the job uses. NULL for files uploaded before policies existed: their
    # `mode` says which built-in cleaned them.
    policy_id: Mapped[str | None] = mapped_column(String(36), index=True)
    policy_version: Mapped[int | None] = mapped_column(Integer)
    policy_name: Mapped[str | None] = mapped_column(String(100))
    policy_body: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # SHA-256 (hex) of the bytes received and of the sanitized copy stored.
    sha256_original: Mapped[str | None] = mapped_column(String(64))
    sha256_sanitized: Mapped[str | None] = mapped_column(String(64))
    # The verdict on the file once finished (engine/verdict.py: clean, cleaned, partial,
    # refused), kept beside the report for the history's filter; NULL while it is pending or
    # processing, and for an ICAP transaction the engine never saw (passed as it came).
    verdict: Mapped[str | None] = mapped_column(String(16), index=True)
