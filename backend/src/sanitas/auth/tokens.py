"""Access tokens: short-lived HS256 JWTs carrying the user id and the session family id."""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import timedelta

import jwt

from sanitas.config import Settings
from sanitas.db import utcnow

ALGORITHM = "HS256"


def create_access_token(settings: Settings, user_id: str, family_id: str) -> str:
    now = utcnow()
    payload = {"sub": user_id, "sid": family_id, "type": "access", "iat": now,
               "exp": now + timedelta(seconds=settings.access_token_ttl_seconds)}
    return jwt.encode(payload, settings.signing_key(), algorithm=ALGORITHM)


def decode_access_token(settings: Settings, token: str) -> dict | None:
    try:
        payload = jwt.decode(token, settings.signing_key(), algorithms=[ALGORITHM],
                             options={"require": ["sub", "sid", "exp", "type"]})
    except jwt.PyJWTError:
        return None
    return payload if payload.get("type") == "access" else None


def new_opaque_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class AccessTokenCache:
    """Verified access tokens, remembered until they expire, so that one token is checked once
    per process rather than on every call (a burst repeats one token, and the signature check
    is the costliest part of refusing or admitting a call). What it answers is what
    `decode_access_token` would: the payload, or None. Revocation is not its business: the
    session family is looked up in the database for every call (deps.py)."""

    def __init__(self, settings: Settings, size: int = 4096) -> None:
        self.settings = settings
        self.size = size
        self._known: dict[str, dict] = {}

    def payload(self, token: str) -> dict | None:
        known = self._known.get(token)
        if known is not None and known["exp"] > time.time():
            return known
        payload = decode_access_token(self.settings, token)
        if payload is None:
            return None
        if len(self._known) >= self.size:
            self._known.clear()  # bounded; a cleared cache costs one verification per token
        self._known[token] = payload
        return payload
