from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column


class RateLimitHit(Base):
    """One counted attempt (e.g. a login) under a key such as 'login:ip:1.2.3.4'. Kept in the
    DB so limits hold across every API process."""

    __tablename__ = "rate_limit_hits"

    id: Mapped[str] = id_column()
    key: Mapped[str] = mapped_column(String(400), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
