"""API keys: create, list, revoke, and authenticate a call that presents one.

A key is `sk_live_` followed by 40 random letters and digits (about 238 bits), so secret
scanners can match it and a plain SHA-256 of it is a safe thing to store. Keys are for the
file calls only (sanitas.web.deps.FileReader / FileWriter); accounts whose plan lacks
Capability.API_KEYS (sanitas/plans.py: the Free plan by default) cannot have or use them.
Each key's calls are counted in the database (sanitas.web.ratelimit), so the per-key limit holds
across API processes.
"""

from __future__ import annotations

import secrets
import string
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from sanitas.apikeys.schemas import ApiKeyIn, ApiKeyOut
from sanitas.audit.service import record
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.models import ApiKey, AuditAction, User
from sanitas.models.api_key import ApiKeyScope, hash_secret, looks_like_key
from sanitas.plans import Capability
from sanitas.users.service import lock_user
from sanitas.web import ratelimit
from sanitas.web.errors import ApiError, require_plan

SECRET_PREFIX = "sk_live_"  # noqa: S105 - the public prefix of every key, not a secret
_ALPHABET = string.ascii_letters + string.digits
SECRET_CHARS = 40
SHOWN_CHARS = 6  # of the random part, in `prefix`
MAX_KEYS_PER_USER = 25  # unrevoked keys per account
LAST_USED_PRECISION = timedelta(seconds=60)  # last_used_at is written at most this often
RATE_WINDOW_SECONDS = 60
INVALID_KEY = "The API key is not valid (unknown, revoked or expired)."
TOO_MANY_CALLS = "Too many calls with this API key. Please slow down and try again later."


def _new_secret() -> str:
    return SECRET_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(SECRET_CHARS))


def _not_found() -> ApiError:
    return ApiError(404, "API key not found.", "not_found")


def key_out(key: ApiKey) -> ApiKeyOut:
    return ApiKeyOut.model_validate(key)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# -- managing keys --------------------------------------------------------------------------
def create_key(session: Session, user: User, body: ApiKeyIn, *,
               ip: str | None) -> tuple[ApiKeyOut, str]:
    """A new key for `user` (routes.py: only on a plan with Capability.API_KEYS); returns it
    and its secret (the only time the secret exists)."""
    if body.expires_at is not None and _aware(body.expires_at) <= utcnow():
        raise ApiError(422, "expiresAt: must be in the future.", "validation_error")
    # Counted and added in one transaction serialised per account (concurrent creations
    # cannot all see room for one more), as upload quotas are.
    lock_user(session, user)
    live = session.scalar(select(func.count()).select_from(ApiKey).where(
        ApiKey.user_id == user.id, ApiKey.revoked_at.is_(None))) or 0
    if live >= MAX_KEYS_PER_USER:
        raise ApiError(409, f"An account can have at most {MAX_KEYS_PER_USER} API keys; revoke "
                            "one you no longer use.", "too_many_keys")
    secret = _new_secret()
    key = ApiKey(user_id=user.id, name=body.name,
                 prefix=secret[:len(SECRET_PREFIX) + SHOWN_CHARS],
                 secret_hash=hash_secret(secret), scopes=[s.value for s in body.scopes],
                 expires_at=body.expires_at)
    session.add(key)
    session.flush()
    record(session, action=AuditAction.API_KEY_CREATED, actor=user, ip=ip,
           target=("api_key", key.id),
           detail={"name": key.name, "prefix": key.prefix, "scopes": key.scopes,
                   "expiresAt": body.expires_at.isoformat() if body.expires_at else None})
    session.commit()
    return key_out(key), secret


def list_keys(session: Session, user_id: str) -> list[ApiKeyOut]:
    """The account's unrevoked keys (expired ones too, so their owner sees why they fail),
    newest first."""
    keys = session.scalars(select(ApiKey).where(ApiKey.user_id == user_id,
                                                ApiKey.revoked_at.is_(None))
                           .order_by(ApiKey.created_at.desc(), ApiKey.id)).all()
    return [key_out(k) for k in keys]


def revoke_key(session: Session, actor: User, owner_id: str, key_id: str, *,
               ip: str | None) -> None:
    """Revoke `owner_id`'s key `key_id` (the owner, or an admin for anyone's). Effective on
    the next call, in every process: nothing caches a key."""
    key = session.get(ApiKey, key_id)
    if key is None or key.user_id != owner_id or key.revoked_at is not None:
        raise _not_found()
    key.revoked_at = utcnow()
    record(session, action=AuditAction.API_KEY_REVOKED, actor=actor, ip=ip,
           target=("api_key", key.id),
           detail={"name": key.name, "prefix": key.prefix, "ownerId": owner_id})
    session.commit()


def user_exists(session: Session, user_id: str) -> None:
    if session.get(User, user_id) is None:
        raise ApiError(404, "User not found.", "not_found")


# -- authenticating a call ------------------------------------------------------------------
def authenticate(session: Session, settings: Settings, secret: str,
                 scope: ApiKeyScope) -> User:
    """The account behind `secret` when the key may make a call needing `scope`; counts the
    call against the key's rate limit. Raises 401 (unknown/revoked/expired key, deactivated
    account), 403 (plan, scope) or 429. The web side calls it as `app.state.key_check`
    (web/deps.py's KeyCheck, installed by main.py)."""
    unauthorized = ApiError(401, INVALID_KEY, "invalid_api_key",
                            headers={"WWW-Authenticate": "Bearer"})
    if not looks_like_key(secret) or len(secret) > 200:
        raise unauthorized
    key = session.scalar(select(ApiKey).where(ApiKey.secret_hash == hash_secret(secret)))
    now = utcnow()
    if key is None or key.revoked_at is not None:
        raise unauthorized
    if key.expires_at is not None and _aware(key.expires_at) <= now:
        raise ApiError(401, "The API key has expired.", "api_key_expired",
                       headers={"WWW-Authenticate": "Bearer"})
    user = session.get(User, key.user_id)
    if user is None or not user.is_active:
        raise ApiError(401, "The account this API key belongs to is deactivated.",
                       "account_deactivated", headers={"WWW-Authenticate": "Bearer"})
    require_plan(settings.plans, user.role, Capability.API_KEYS)  # a downgraded owner's keys stop
    if scope.value not in key.scopes:
        raise ApiError(403, f"This API key lacks the '{scope.value}' scope this call needs.",
                       "insufficient_scope")
    try:
        ratelimit.hit(session, [(f"apikey:{key.id}", settings.api_key_calls_per_minute)],
                      RATE_WINDOW_SECONDS)
    except ApiError as exc:
        if exc.status_code == 429:
            raise ApiError(429, TOO_MANY_CALLS, "too_many_requests",
                           headers=exc.headers) from None
        raise
    if key.last_used_at is None or now - _aware(key.last_used_at) >= LAST_USED_PRECISION:
        session.execute(update(ApiKey).where(ApiKey.id == key.id).values(last_used_at=now))
        session.commit()
    return user
