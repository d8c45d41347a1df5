"""FastAPI dependencies shared by every route: settings, DB session, the signed-in user, the
client's address, blob storage and the job executor."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Protocol

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from sanitas.config import Settings
from sanitas.models import ApiKeyScope, AuthSession, Role, User
from sanitas.models.api_key import looks_like_key
from sanitas.plans import Capability
from sanitas.storage import Storage, make_storage
from sanitas.web.errors import ApiError, require_plan
from sanitas.web.schemas import ErrorEnvelope


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


async def get_session(request: Request) -> AsyncIterator[Session]:
    """A session for one call, inside one of the API's database slots (waiting for a slot
    holds no thread and no connection; see sanitas/web/admission.py)."""
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

_bearer = HTTPBearer(
    auto_error=False,
    description="A session's access token (from /api/auth/login), or on the file calls an API "
                "key (sk_live_...)")
_api_key_header = APIKeyHeader(
    name="X-API-Key", auto_error=False, scheme_name="apiKey",
    description="An API key (sk_live_...), accepted on the file calls only")


def _user_from_token(request: Request, session: Session, token: str | None) -> User | None:
    if not token:
        return None
    payload = request.app.state.access_tokens.payload(token)  # verified once per process
    if payload is None:
        return None
    return session.scalar(_token_user_statement(),
                          {"user_id": payload["sub"], "family_id": payload["sid"]})


@functools.cache
def _token_user_statement() -> Select[User]:
    """A token's user when the account is active and the token's session family is live (a
    logged-out, revoked family invalidates its access tokens at once): one query, built once,
    on every signed-in call."""
    live = (select(AuthSession.id)
            .where(AuthSession.family_id == bindparam("family_id"),
                   AuthSession.revoked_at.is_(None)).exists())
    return select(User).where(User.id == bindparam("user_id"), User.is_active.is_(True), live)


def _key_refused() -> ApiError:
    return ApiError(401, "API keys are accepted on the file calls only; this call needs a "
                         "signed-in session.", "api_key_not_accepted",
                    headers={"WWW-Authenticate": "Bearer"})


class KeyCheck(Protocol):
    """Who calls with an API key: the account behind `secret` when its key may make a call
    needing `scope`, else an ApiError (401, 403 or 429). main.py installs
    apikeys.service.authenticate as `app.state.key_check`, so this module names no domain."""

    def __call__(self, session: Session, settings: Settings, secret: str,
                 scope: ApiKeyScope) -> User: ...


def get_current_user(
    request: Request, session: SessionDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    """The signed-in user of an account call (a session token; API keys are refused)."""
    token = creds.credentials if creds else None
    if looks_like_key(token) or (token is None and request.headers.get("x-api-key")):
        raise _key_refused()
    user = _user_from_token(request, session, token)
    if user is None:
        raise ApiError(401, "Authentication required. Please sign in.", "unauthorized",
                       headers={"WWW-Authenticate": "Bearer"})
    return user


@dataclass(frozen=True)
class FileCaller:
    """Who makes a file call: the account, and whether it came with an API key rather than a
    signed-in session."""

    user: User
    by_api_key: bool

    @property
    def admin(self) -> bool:
        """Admin powers (other accounts' files) come with an admin's signed-in session only. A
        key acts as a plain owner of its account's files, whatever the owner's role, so a
        leaked key reaches nothing beyond them."""
        return self.user.role == Role.ADMIN and not self.by_api_key


def _file_caller(scope: ApiKeyScope) -> Callable[..., FileCaller]:
    """A dependency for a file call needing `scope` when made with an API key."""

    def caller(
        request: Request, session: SessionDep,
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        api_key: Annotated[str | None, Depends(_api_key_header)],
    ) -> FileCaller:
        """The caller of a file call: a signed-in session, or an API key with `scope` (as
        `X-API-Key` or `Authorization: Bearer sk_...`)."""
        token = creds.credentials if creds else None
        secret = api_key or (token if looks_like_key(token) else None)
        if secret is not None:
            known = request.app.state.known_keys
            try:
                check: KeyCheck = request.app.state.key_check
                owner = check(session, request.app.state.settings, secret, scope)
            except ApiError as exc:
                if exc.status_code == 401 or exc.error == "plan_required":
                    known.forget(secret)  # admission counts its calls by address again
                raise
            known.learn(secret, owner.id)
            return FileCaller(owner, by_api_key=True)
        user = _user_from_token(request, session, token)
        if user is None:
            raise ApiError(401, "Authentication required. Please sign in.", "unauthorized",
                           headers={"WWW-Authenticate": "Bearer"})
        return FileCaller(user, by_api_key=False)

    return caller


def get_optional_user(
    request: Request, session: SessionDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User | None:
    return _user_from_token(request, session, creds.credentials if creds else None)


CurrentUser = Annotated[User, Depends(get_current_user)]
# The file calls: a session or an API key with the scope (files:read / files:write).
FileReader = Annotated[FileCaller, Depends(_file_caller(ApiKeyScope.FILES_READ))]
FileWriter = Annotated[FileCaller, Depends(_file_caller(ApiKeyScope.FILES_WRITE))]
# What an API key may be refused with on a file call, for the routes' OpenAPI answers (429,
# the key's rate limit, is among every call's answers).
API_KEY_ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorEnvelope, "description": "An API key of an account whose plan has no "
          "API access (`plan_required`) or without the scope the call needs "
          "(`insufficient_scope`)"},
}
OptionalUser = Annotated[User | None, Depends(get_optional_user)]


def require_admin(user: CurrentUser) -> User:
    if user.role != Role.ADMIN:
        raise ApiError(403, "Admin privileges are required for this action.", "forbidden")
    return user


AdminUser = Annotated[User, Depends(require_admin)]


def _plan_gate(capability: StrEnum) -> Callable[..., User]:
    """The dependency `Requires` makes (one per capability): the signed-in user, when their
    plan has the capability (the settings' plan table, sanitas/plans.py), else 403
    `plan_required`. openapi.py documents that 403 on every route that depends on one."""
    gate = _PLAN_GATES.get(capability)
    if gate is None:
        def gate(user: CurrentUser, settings: SettingsDep) -> User:
            require_plan(settings.plans, user.role, Capability(capability))
            return user

        gate.__name__ = f"requires_{capability.value}"
        _PLAN_GATES[capability] = gate
    return gate


_PLAN_GATES: dict[StrEnum, Callable[..., User]] = {}


def Requires(capability: StrEnum) -> Any:
    """`user: Annotated[User, Requires(Capability.X)]`: the signed-in user whose plan
    includes `capability` (403 `plan_required` otherwise)."""
    return Depends(_plan_gate(capability))


def plan_gates(calls: Iterable[Callable[..., Any]]) -> list[StrEnum]:
    """The capabilities the given dependency calls require (for the OpenAPI document and the
    authorisation matrix test)."""
    found = set(calls)
    return [capability for capability, gate in _PLAN_GATES.items() if gate in found]


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


class Executor(Protocol):
    """Runs the jobs of committed uploads (the rows are the queue).
    The web side's one view of processing: app.state.executor implements it (processing/).."""

    name: str  # "local" or "celery", as SANITAS_EXECUTOR names it

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def submit(self, job_id: str, priority: int = 0) -> None:
        """A job was committed: run it when a worker is free (higher priority first)."""

    def kick(self) -> None:
        """Look for runnable jobs now (after the queue is resumed)."""

    def workers(self) -> int:
        """Workers that can take jobs now (0 when none answers)."""

    def healthy(self) -> bool: ...



def get_executor(request: Request) -> Executor | None:
    """The executor this process talks to; None when it runs none (tests, background off)."""
    return getattr(request.app.state, "executor", None)


StorageDep = Annotated[Storage, Depends(get_storage)]
ExecutorDep = Annotated[Executor | None, Depends(get_executor)]
