"""Admission control: how many API calls one caller, and the process as a whole, may have under
way at once. A burst from one signed-in user must not starve everybody else.

Two limits, both per API process:
- **Per caller** (`SANITAS_USER_CONCURRENCY`): calls of one verified identity, told apart
  without touching the database: the user of a valid access token, else the owner of an API
  key this process has seen accepted (KnownKeys); every other call (no credentials, a bad
  token, a made-up key) counts as its client address. A credential nobody has verified never
  buys a fresh allowance.
  The call over the limit is refused at once with 429 and `Retry-After`; it never queues.
- **Database slots** (`SANITAS_API_CONCURRENCY`): a call that needs the database waits for one
  of a fixed number of slots before it gets a session, for at most
  `SANITAS_API_QUEUE_SECONDS`, then answers 503. The connection pool is sized to the slots
  plus what the executor needs, so a call holding a session never waits for a connection
  while the threads it needs are blocked waiting for one (the starvation that made bursts
  take the whole API down for the pool's 30-second timeout).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sanitas.config import Settings
from sanitas.models.api_key import hash_secret, looks_like_key
from sanitas.web.deps import client_ip
from sanitas.web.errors import ApiError, error_body

BUSY_MESSAGE = "The server is busy; please try again in a moment."
TOO_MANY_AT_ONCE = ("Too many requests at once from your account or address; wait for the "
                    "ones under way to finish.")


class DatabaseGate:
    """A fixed number of database slots for API calls (an asyncio semaphore: waiting for a
    slot holds no thread and no connection)."""

    def __init__(self, slots: int, wait_seconds: float) -> None:
        self.slots = max(1, slots)
        self.wait_seconds = wait_seconds
        self._semaphore = asyncio.Semaphore(self.slots)

    async def _acquire(self) -> None:
        try:
            await asyncio.wait_for(self._semaphore.acquire(), self.wait_seconds)
        except TimeoutError:
            raise ApiError(503, BUSY_MESSAGE, "server_busy",
                           headers={"Retry-After": "1"}) from None

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        await self._acquire()
        held = Slot(self)
        try:
            yield held
        finally:
            if held.held:
                held.held = False
                self._semaphore.release()


class Slot:
    """One call's database slot, which a call may give back during slow work that needs no
    database (reading an upload's body) and take again afterwards."""

    def __init__(self, gate: DatabaseGate) -> None:
        self.gate = gate
        self.held = True

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        if not self.held:
            yield
            return
        self.held = False
        self.gate._semaphore.release()
        try:
            yield
        finally:
            await self.gate._acquire()
            self.held = True


@asynccontextmanager
async def database_paused(request: Request, session) -> AsyncIterator[None]:
    """End the session's transaction (its connection goes back to the pool) and give back the
    call's database slot for the duration of slow work; the session is usable again after."""
    from starlette.concurrency import run_in_threadpool

    await run_in_threadpool(session.commit)
    slot: Slot | None = getattr(request.state, "db_slot", None)
    if slot is None:
        yield
        return
    async with slot.paused():
        yield


class TokenPayloads(Protocol):
    """The verified access tokens of this process (auth.tokens.AccessTokenCache)."""

    def payload(self, token: str) -> dict | None: ...


class KnownKeys:
    """The API keys this process has lately seen accepted, by the SHA-256 of the secret, with
    their owner: so admission can count a key's calls as its owner's without reading the
    database, while a made-up key (which nobody has verified) counts as its sender's address.
    Knowing a key admits nothing: every call's key is still checked in the database (deps.py).

    Bounded (the least recently used goes first) and short-lived (`ttl` seconds), and a key
    that is revoked here, or refused anywhere, is forgotten at once. Filled and emptied from
    the threads that run routes, read by the event loop: guarded by a lock."""

    def __init__(self, size: int = 4096, ttl: float = 300.0) -> None:
        self.size = size
        self.ttl = ttl
        self._owners: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _digest(secret: str) -> str | None:
        return hash_secret(secret) if looks_like_key(secret) else None

    def learn(self, secret: str, owner_id: str) -> None:
        digest = self._digest(secret)
        if digest is None:
            return
        with self._lock:
            self._owners[digest] = (owner_id, time.monotonic() + self.ttl)
            self._owners.move_to_end(digest)
            while len(self._owners) > self.size:
                self._owners.popitem(last=False)

    def owner(self, secret: str) -> str | None:
        digest = self._digest(secret)
        if digest is None:
            return None
        with self._lock:
            known = self._owners.get(digest)
            if known is None:
                return None
            if known[1] <= time.monotonic():
                del self._owners[digest]
                return None
            self._owners.move_to_end(digest)
            return known[0]

    def forget(self, secret: str) -> None:
        digest = self._digest(secret)
        with self._lock:
            self._owners.pop(digest or "", None)

    def forget_owner(self, owner_id: str) -> None:
        """Forget every key of an account (one of them was revoked; the others are learnt
        again on their next call)."""
        with self._lock:
            for digest in [d for d, (owner, _) in self._owners.items() if owner == owner_id]:
                del self._owners[digest]


def caller_key(tokens: TokenPayloads, keys: KnownKeys, request: Request) -> str:
    """Who a call is counted as, without reading the database: the user of a valid access
    token; else the owner of an API key this process knows to exist (KnownKeys); else the
    client's address, which unknown credentials (a made-up key, a bad token) share."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    bearer = scheme.lower() == "bearer" and bool(token)
    if bearer and not looks_like_key(token):
        payload = tokens.payload(token)
        if payload is not None:
            return f"user:{payload['sub']}"
    key = request.headers.get("x-api-key") or (token if bearer and looks_like_key(token)
                                                else None)
    if key and (owner := keys.owner(key)) is not None:
        return f"user:{owner}"
    return f"ip:{client_ip(request)}"


class PerCallerLimit:
    """ASGI middleware: at most `limit` API calls under way per caller in this process."""

    def __init__(self, app: ASGIApp, settings: Settings, tokens: TokenPayloads,
                 keys: KnownKeys) -> None:
        self.app = app
        self.limit = settings.user_concurrency
        self.tokens = tokens
        self.keys = keys
        self.in_flight: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.limit <= 0 or not (
                scope["path"].startswith("/api/") or scope["path"] == "/health"):
            await self.app(scope, receive, send)
            return
        key = caller_key(self.tokens, self.keys, Request(scope))
        count = self.in_flight.get(key, 0)
        if count >= self.limit:
            answer = JSONResponse(error_body(429, TOO_MANY_AT_ONCE, "too_many_concurrent"),
                                  status_code=429, headers={"Retry-After": "1"})
            await answer(scope, receive, send)
            return
        self.in_flight[key] = count + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self.in_flight[key] - 1
            if left:
                self.in_flight[key] = left
            else:
                del self.in_flight[key]
