from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow


class QueueState(Base):
    """A single row (id 1) shared by every executor process: is the queue paused?"""

    __tablename__ = "queue_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class AccountTurn(Base):
    """When an executor last started a job of this account (written with the claim): accounts
    whose turns are equal go least recently served first, so accounts take turns even when
    one worker serves them all (models/job.py `fair_order`)."""

    __tablename__ = "account_turns"

    user_id: Mapped[str] = mapped_column(String(36), ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    served_at: Mapped[datetime]
