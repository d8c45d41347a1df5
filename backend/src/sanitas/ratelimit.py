"""Sliding-window attempt counting in the database, so limits hold across API processes.

Each attempt is first recorded and committed, then counted. Counting after the commit means
concurrent requests (in any process) can never let more than `limit` attempts through: the
last one to commit sees every earlier one. An attempt that is refused removes its own record,
so waiting out the Retry-After is enough (refused attempts do not extend the block).
"""

from __future__ import annotations

import math
import random
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from sanitas.db import utcnow
from sanitas.errors import ApiError
from sanitas.models import RateLimitHit

TOO_MANY = "Too many attempts. Please try again later."


def hit(session: Session, keys: list[tuple[str, int]], window_seconds: int) -> None:
    """Count one attempt under every key; raise 429 (with Retry-After) if any key is over
    its limit.

    keys: (key, limit) pairs, e.g. [("login:ip:1.2.3.4", 20), ("login:acct:a@b.c", 10)].
    """
    now = utcnow()
    since = now - timedelta(seconds=window_seconds)
    names = [key for key, _ in keys]
    purge = delete(RateLimitHit).where(RateLimitHit.created_at < since)
    if random.random() >= 0.01:  # now and then sweep every key, else only these
        purge = purge.where(RateLimitHit.key.in_(names))
    session.execute(purge)
    mine = [RateLimitHit(key=key, created_at=now) for key in names]
    session.add_all(mine)
    session.commit()

    retry_after = 0
    for key, limit in keys:
        in_window = (RateLimitHit.key == key, RateLimitHit.created_at >= since)
        count = session.scalar(select(func.count()).where(*in_window)) or 0
        if count > limit:
            # Without this attempt there are count-1 >= limit; the next one is allowed once
            # count-limit of them have left the window.
            freeing = session.scalar(select(RateLimitHit.created_at).where(*in_window)
                                     .order_by(RateLimitHit.created_at)
                                     .offset(count - limit - 1).limit(1)) or now
            wait = (freeing + timedelta(seconds=window_seconds) - now).total_seconds()
            retry_after = max(retry_after, 1, math.ceil(wait))
    if retry_after:
        session.execute(delete(RateLimitHit).where(RateLimitHit.id.in_([r.id for r in mine])))
        session.commit()
        raise ApiError(429, TOO_MANY, "too_many_requests",
                       headers={"Retry-After": str(retry_after)})


def clear(session: Session, key: str) -> None:
    session.execute(delete(RateLimitHit).where(RateLimitHit.key == key))
    session.commit()
