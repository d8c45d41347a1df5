from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Integer
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow


class QueueState(Base):
    """A single row (id 1) shared by every executor process: is the queue paused?"""

    __tablename__ = "queue_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
