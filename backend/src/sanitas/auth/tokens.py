"""Access tokens: short-lived HS256 JWTs carrying the user id and the session family id."""

from __future__ import annotations

import hashlib
import secrets
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
