"""FastAPI dependencies shared by every route: settings, DB session, the signed-in user."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from sanitas.config import Settings
from sanitas.errors import ApiError
from sanitas.models import AuthSession, User


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


async def get_session(request: Request) -> AsyncIterator[Session]:
    """A session for one call, inside one of the API's database slots (waiting for a slot
    holds no thread and no connection; see sanitas/admission.py)."""
    async with request.app.state.db_gate.slot() as slot:
        request.state.db_slot = slot
        session = request.app.state.sessionmaker()
        try:
            yield session
        finally:
            await run_in_threadpool(session.close)


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
# Closed as soon as the route function returns, before a streamed answer is sent: a slow
# download holds neither a connection nor a database slot.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]

_bearer = HTTPBearer(auto_error=False)


def _user_from_token(request: Request, session: Session, token: str | None) -> User | None:
    if not token:
        return None
    payload = request.app.state.access_tokens.payload(token)  # verified once per process
    if payload is None:
        return None
    user = session.get(User, payload["sub"])
    if user is None or not user.is_active:
        return None
    # A logged-out (revoked) session family invalidates its access tokens at once.
    live = session.scalar(
        select(AuthSession.id).where(AuthSession.family_id == payload["sid"],
                                     AuthSession.revoked_at.is_(None)).limit(1))
    return user if live else None


def get_current_user(
    request: Request, session: SessionDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    user = _user_from_token(request, session, creds.credentials if creds else None)
    if user is None:
        raise ApiError(401, "Authentication required. Please sign in.", "unauthorized",
                       headers={"WWW-Authenticate": "Bearer"})
    return user


def get_optional_user(
    request: Request, session: SessionDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User | None:
    return _user_from_token(request, session, creds.credentials if creds else None)


CurrentUser = Annotated[User, Depends(get_current_user)]
OptionalUser = Annotated[User | None, Depends(get_optional_user)]


def require_admin(user: CurrentUser) -> User:
    if user.role != "ADMIN":
        raise ApiError(403, "Admin privileges are required for this action.", "forbidden")
    return user


AdminUser = Annotated[User, Depends(require_admin)]
