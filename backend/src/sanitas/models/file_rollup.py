from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import BigInteger, Date, Float, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base

EVERYONE = "*"  # the user_id of the rows that add up every user's files


class FileRollup(Base):
    """Files per UTC day of creation, per user and for EVERYONE, by their current status,
    verdict, error code and detected type (NULLs as ''), with the sums of their sizes and
    processing times. Written only by the triggers on `files` (migration b3d5f7a9c1e2), in
    the transaction of each write: read it, never write it. Rows whose files moved on keep
    a count of 0."""

    __tablename__ = "file_rollup"

    user_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), primary_key=True)
    verdict: Mapped[str] = mapped_column(String(16), primary_key=True)
    error_code: Mapped[str] = mapped_column(String(32), primary_key=True)
    detected_type: Mapped[str] = mapped_column(String(64), primary_key=True)
    files: Mapped[int] = mapped_column(BigInteger)
    bytes_in: Mapped[int] = mapped_column(BigInteger)
    bytes_out: Mapped[int] = mapped_column(BigInteger)
    duration_sum: Mapped[float] = mapped_column(Float)
    timed: Mapped[int] = mapped_column(BigInteger)


class ReportRollup(Base):
    """Files with a report (not NULL, not JSON null) per UTC day of creation, per user and for
    EVERYONE. Written only by the triggers on `files` (migration b2d4f6a8c0e3): read it,
    never write it."""

    __tablename__ = "report_rollup"

    user_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    reports: Mapped[int] = mapped_column(BigInteger)


class ThreatRollup(Base):
    """The reports' threat findings (action removed, converted or blocked) per UTC day of the
    file's creation, per user and for EVERYONE, by kind (cut to 100 characters) and, for a
    finding that may be one of the engine's summary lines, its detail ('' otherwise): count
    one row's findings with engine/verdict.weight. Written only by the triggers on `files`
    (migration b2d4f6a8c0e3): read it, never write it."""

    __tablename__ = "threat_rollup"

    user_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    kind: Mapped[str] = mapped_column(String(100), primary_key=True)
    detail: Mapped[str] = mapped_column(String(64), primary_key=True)
    findings: Mapped[int] = mapped_column(BigInteger)


class DurationRollup(Base):
    """The processing times of everyone's files COMPLETED with one, per UTC day of creation
    and detected type ('' for none), in no order: 8-byte big-endian floats one after another
    on PostgreSQL (bytea), a JSON array on SQLite. Written only by the triggers on `files`
    (migration b2d4f6a8c0e3): read it, never write it. Empty once its files moved on."""

    __tablename__ = "duration_rollup"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    detected_type: Mapped[str] = mapped_column(String(64), primary_key=True)
    durations: Mapped[Any] = mapped_column(
        Text().with_variant(LargeBinary(), "postgresql"))
