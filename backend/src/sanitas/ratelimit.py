"""Fixed-window attempt counting in the database, so limits hold across API processes."""

from __future__ import annotations

import math
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from sanitas.db import utcnow
from sanitas.errors import ApiError
from sanitas.models import RateLimitHit


def hit(session: Session, keys: list[tuple[str, int]], window_seconds: int) -> None:
    """Count one attempt under every key; raise 429 if any key is already at its limit.

    keys: (key, limit) pairs, e.g. [("login:ip:1.2.3.4", 20), ("login:acct:a@b.c", 10)].
    """
    now = utcnow()
    since = now - timedelta(seconds=window_seconds)
    session.execute(delete(RateLimitHit).where(RateLimitHit.created_at < since))
    for key, limit in keys:
        count, oldest = session.execute(
            select(func.count(), func.min(RateLimitHit.created_at))
            .where(RateLimitHit.key == key, RateLimitHit.created_at >= since)).one()
        if count >= limit:
            session.commit()
            retry = max(1, math.ceil((oldest + timedelta(seconds=window_seconds) - now)
                                     .total_seconds()))
            raise ApiError(429, "Too many attempts. Please try again later.",
                           "too_many_requests", headers={"Retry-After": str(retry)})
    for key, _ in keys:
        session.add(RateLimitHit(key=key, created_at=now))
    session.commit()


def clear(session: Session, key: str) -> None:
    session.execute(delete(RateLimitHit).where(RateLimitHit.key == key))
    session.commit()
