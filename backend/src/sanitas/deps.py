"""FastAPI dependencies shared by every route: settings, DB session, the signed-in user, the
client's address, blob storage and the job executor."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from sanitas.config import Settings
from sanitas.errors import ApiError
from sanitas.executor import Executor
from sanitas.models import AuthSession, Role, User
from sanitas.storage import Storage, make_storage


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
    if user.role != Role.ADMIN:
        raise ApiError(403, "Admin privileges are required for this action.", "forbidden")
    return user


AdminUser = Annotated[User, Depends(require_admin)]


def _is_trusted(address: str, trusted: list[str]) -> bool:
    for entry in trusted:
        if address == entry:
            return True
        try:
            if ipaddress.ip_address(address) in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def client_ip(request: Request) -> str:
    """The client's address: the TCP peer, or, when the peer is a trusted proxy, the
    nearest untrusted hop of X-Forwarded-For (headers from anyone else are ignored)."""
    peer = request.client.host if request.client else "unknown"
    trusted = request.app.state.settings.trusted_proxies
    if not trusted or not _is_trusted(peer, trusted):
        return peer
    hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",")
            if h.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop, trusted):
            return hop[:64]
    return hops[0][:64] if hops else peer


def get_storage(request: Request) -> Storage:
    """The app's blob storage (made on first use when no background services started it)."""
    state = request.app.state
    if getattr(state, "storage", None) is None:
        state.storage = make_storage(state.settings)
    return state.storage


def get_executor(request: Request) -> Executor | None:
    """The executor this process talks to; None when it runs none (tests, background off)."""
    return getattr(request.app.state, "executor", None)


StorageDep = Annotated[Storage, Depends(get_storage)]
ExecutorDep = Annotated[Executor | None, Depends(get_executor)]
