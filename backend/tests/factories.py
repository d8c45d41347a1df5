"""Plain-function factories for tests: users and their bearer headers."""

from __future__ import annotations

import functools
import itertools
from datetime import timedelta

from sqlalchemy.orm import Session

from sanitas.auth.passwords import hash_password
from sanitas.auth.tokens import create_access_token, hash_token, new_opaque_token
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.models import AuthSession, User
from sanitas.models._common import new_id

_counter = itertools.count(1)
DEFAULT_PASSWORD = "correct horse battery"


@functools.lru_cache(maxsize=32)
def _password_hash(password: str) -> str:
    return hash_password(password)  # argon2 is deliberately slow: hash each password once


def make_user(session: Session, *, role: str = "USER", email: str | None = None,
              password: str = DEFAULT_PASSWORD, verified: bool = True, active: bool = True,
              **fields) -> User:
    n = next(_counter)
    user = User(email=email or f"user{n}@example.com", role=role, is_active=active,
                is_email_verified=verified, password_hash=_password_hash(password), **fields)
    session.add(user)
    session.commit()
    return user


def auth_headers(settings: Settings, session: Session, user: User) -> dict[str, str]:
    """A live session for `user` and the Authorization header of its access token."""
    family = new_id()
    session.add(AuthSession(user_id=user.id, family_id=family,
                            token_hash=hash_token(new_opaque_token()),
                            expires_at=utcnow() + timedelta(days=1)))
    session.commit()
    return {"Authorization": f"Bearer {create_access_token(settings, user.id, family)}"}
