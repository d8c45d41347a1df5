from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, Date, Float, String
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
