"""Sliding-window attempt counting in the database, so limits hold across API processes.

Counting and recording one attempt happen in one transaction that is serialised per key: on
PostgreSQL with a transaction-scoped advisory lock per key, on SQLite by the database write
lock, which the transaction takes first. So concurrent requests in any number of processes
let exactly `limit` attempts through per window. Refused attempts are not recorded: waiting
out the Retry-After is enough.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import random
from datetime import timedelta

from sqlalchemy import String, delete, func, select
from sqlalchemy.orm import Session

from sanitas.db import utcnow
from sanitas.models import RateLimitHit
from sanitas.web.errors import ApiError

TOO_MANY = "Too many attempts. Please try again later."
SWEEP_PROBABILITY = 0.01  # now and then remove expired hits of every key
_KEY_TYPE = RateLimitHit.__table__.c.key.type
assert isinstance(_KEY_TYPE, String) and _KEY_TYPE.length is not None  # String(400), the model
KEY_LENGTH = _KEY_TYPE.length


def source(address: str) -> str:
    """The unit a client is counted by: its IPv4 address, or the /64 network of an IPv6
    address (one subscriber's allocation, whose addresses its owner may rotate at will)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _fit(key: str) -> str:
    """The key as stored: one longer than the column (an address that grew when lower-cased)
    keeps its start and ends in a digest of the whole."""
    if len(key) <= KEY_LENGTH:
        return key
    return f"{key[:KEY_LENGTH - 65]}#{hashlib.sha256(key.encode()).hexdigest()}"


def hit(session: Session, keys: list[tuple[str, int]], window_seconds: int) -> None:
    """Count one attempt under every key; raise 429 (with Retry-After) if any key is already
    at its limit.

    keys: (key, limit) pairs, e.g. [("login:ip:1.2.3.4", 20), ("login:acct:a@b.c", 10)].
    """
    keys = [(_fit(key), limit) for key, limit in keys]
    session.commit()  # start from a clean transaction
    now = utcnow()
    since = now - timedelta(seconds=window_seconds)
    names = sorted({key for key, _ in keys})  # one lock order everywhere: no deadlocks
    if session.get_bind().dialect.name == "postgresql":
        for key in names:
            session.execute(select(func.pg_advisory_xact_lock(func.hashtext(key))))
    # A write first: on SQLite this takes the database write lock for the whole check.
    session.execute(delete(RateLimitHit).where(RateLimitHit.key.in_(names),
                                               RateLimitHit.created_at < since))
    retry_after = 0
    for key, limit in keys:
        in_window = (RateLimitHit.key == key, RateLimitHit.created_at >= since)
        count = session.scalar(select(func.count()).where(*in_window)) or 0
        if count >= limit:
            # The next attempt is allowed once count-limit+1 of these have left the window.
            freeing = session.scalar(select(RateLimitHit.created_at).where(*in_window)
                                     .order_by(RateLimitHit.created_at)
                                     .offset(count - limit).limit(1)) or now
            wait = (freeing + timedelta(seconds=window_seconds) - now).total_seconds()
            retry_after = max(retry_after, 1, math.ceil(wait))
    if retry_after:
        session.commit()
        raise ApiError(429, TOO_MANY, "too_many_requests",
                       headers={"Retry-After": str(retry_after)})
    session.add_all([RateLimitHit(key=key, created_at=now) for key in names])
    session.commit()
    if random.random() < SWEEP_PROBABILITY:  # noqa: S311 - only spreads the sweeps, no secret
        sweep(session, window_seconds)


def sweep(session: Session, window_seconds: int, batch: int = 1000) -> None:
    """Remove expired hits of all keys, skipping rows another transaction holds."""
    since = utcnow() - timedelta(seconds=window_seconds)
    expired = (select(RateLimitHit.id).where(RateLimitHit.created_at < since).limit(batch)
               .with_for_update(skip_locked=True))
    session.execute(delete(RateLimitHit).where(RateLimitHit.id.in_(expired.scalar_subquery())))
    session.commit()


def clear(session: Session, key: str) -> None:
    session.execute(delete(RateLimitHit).where(RateLimitHit.key == _fit(key)))
    session.commit()
