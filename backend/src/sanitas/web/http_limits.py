"""Size limits on what a client may send before the application looks at it.

* Request bodies: every body is capped at `MAX_BODY_BYTES` (64 KB: the largest JSON call, a
  contact message of 5,000 characters, fits several times over), except the two upload
  routes, whose per-role limits `files/multipart.py` enforces as the body streams; those get
  an overall cap of the largest upload any role may send. `BodyLimitMiddleware` refuses at
  once when Content-Length announces more than the cap (nothing is read), and counts the
  bytes of a body that arrives without one (chunked) so that reading stops with 413 as soon
  as the count passes the cap. Either way nothing past the cap is buffered.
* Request heads: `sanitas serve` runs uvicorn's h11 protocol (`EdgeProtocol`, below) with
  `h11_max_incomplete_event_size=MAX_HEADER_BYTES`: a request line plus headers still
  incomplete after 32 KB is refused (431) and the connection closed, so at most 32 KB plus
  one network read is ever buffered for a head. A head that arrives whole in one read (up to
  256 KB) is measured once parsed and refused (431) past the same 32 KB. uvicorn's httptools
  protocol has no such limit: it buffers headers of any size.
* Methods: a method that is not a standard one (`HTTP_METHODS`) is answered 501 before any
  routing (`UnknownMethodMiddleware`); metrics count it as `other`.

Connections (`EdgeProtocol`, `sanitas serve` only; settings in config.py):

* A request head must be complete within SANITAS_HTTP_HEAD_TIMEOUT_SECONDS (10) of the
  connection opening, or of the previous answer on a kept-alive one; otherwise the connection
  is closed (with a 408 if part of a head came). Slow senders cannot hold connections.
* At most SANITAS_HTTP_CONNECTIONS_PER_ADDRESS (64) connections at once per client address
  in each API process; one more is answered 429 (`too_many_connections`) and closed. The
  answer is followed by a lingering close: the write side is shut, what the client still sends
  (its request) is read and dropped for up to `REFUSAL_LINGER_SECONDS` or
  `REFUSAL_DRAIN_BYTES`, then the socket closes. Closing at once, with the request unread,
  makes the kernel reset the connection and the client may lose the 429 it was sent. The
  trusted proxies (SANITAS_TRUSTED_PROXIES) are not capped: they carry many clients.
* `serve` raises its open-file soft limit to the hard limit at start (`raise_open_file_limit`),
  so that the 1,024 of many systems does not cap it at about a thousand connections.

The reverse proxy example in deploy/nginx.conf.example applies the same numbers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
from collections import Counter
from typing import Any, ClassVar

import h11
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from sanitas.config import Settings, get_settings
from sanitas.web.errors import error_body

log = logging.getLogger(__name__)

KB = 1024
MB = 1024 * KB
MAX_BODY_BYTES = 64 * KB
MAX_HEADER_BYTES = 32 * KB
MULTIPART_OVERHEAD = MB  # part headers, boundaries and form fields around the files

UPLOAD_SINGLE = "/api/upload/single"
UPLOAD_MULTIPLE = "/api/upload/multiple"
SANITIZE_NOW = "/api/v1/sanitize"  # one file, like /api/upload/single
# RFC 9110's methods and PATCH: the app answers 405 where a route does not take one of them.
HTTP_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
                          "CONNECT", "TRACE"))


def upload_caps(settings: Settings) -> dict[str, int]:
    """The overall body cap of each upload route: the largest request any role may send
    there (the per-role limit is applied by the multipart reader)."""
    limits = [plan.limits for plan in settings.plans.plans]
    single = max(lim.max_file_size for lim in limits)
    multiple = max(lim.max_file_size * lim.max_files_per_upload for lim in limits)
    return {UPLOAD_SINGLE: single + MULTIPART_OVERHEAD,
            SANITIZE_NOW: single + MULTIPART_OVERHEAD,
            UPLOAD_MULTIPLE: multiple + MULTIPART_OVERHEAD}


def human_size(size: int) -> str:
    if size >= MB:
        return f"{size / MB:g} MB"
    return f"{size / KB:g} KB" if size >= KB else f"{size} bytes"


class BodyTooLarge(HTTPException):
    """Raised from `receive()` when a streamed body passes its cap. An HTTPException, so
    FastAPI's body reader re-raises it (other exceptions become a 400) and the app's
    handler answers with the error envelope; the middleware answers itself otherwise."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _message(limit), headers={"Connection": "close"})
        self.limit = limit


def _message(limit: int) -> str:
    return f"The request body is larger than the {human_size(limit)} limit."


async def send_413(send: Send, limit: int) -> None:
    body = json.dumps(error_body(413, _message(limit), "payload_too_large"),
                      separators=(",", ":")).encode()
    # Connection: close: the server stops reading the rest of an unwanted body.
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the HTTP server refuses a malformed Content-Length itself
    return None


class BodyLimitMiddleware:
    """Pure ASGI: caps each request body (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, max_body: int = MAX_BODY_BYTES,
                 path_caps: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_body = max_body
        self.path_caps = dict(path_caps or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.path_caps.get(scope["path"], self.max_body)
        length = _content_length(scope)
        if length is not None and length > limit:
            await send_413(send, limit)  # refused unread
            return

        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if started:
                raise
            await send_413(send, limit)


class UnknownMethodMiddleware:
    """Pure ASGI: a method outside `HTTP_METHODS` (any token is a valid method to the HTTP
    parser) is answered 501 at once, without routing: no route takes one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in HTTP_METHODS:
            await self.app(scope, receive, send)
            return
        body = json.dumps(error_body(501, "This method is not supported.", "not_implemented"),
                          separators=(",", ":")).encode()
        await send({"type": "http.response.start", "status": 501, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# -- the connections of `sanitas serve` ----------------------------------------------------------
def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's open-file soft limit to its hard limit (each connection is a file;
    the usual soft 1,024 would refuse new ones after about a thousand); the limits after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:  # e.g. an infinite hard limit past nr_open
            log.warning("open-file limit stays %d (hard %d): %s", soft, hard, exc)
    log.info("open-file limit %d", soft)
    return soft, hard


def _raw_answer(status: int, reason: str, message: str, error: str,
                extra: bytes = b"") -> bytes:
    """A whole HTTP/1.1 answer in the error envelope that closes the connection, for the
    refusals made before any request reaches the app."""
    body = json.dumps(error_body(status, message, error), separators=(",", ":")).encode()
    return (b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
            b"Connection: close\r\n%s\r\n%s" % (status, reason.encode(), len(body), extra, body))


TOO_MANY_CONNECTIONS = _raw_answer(
    429, "Too Many Requests", "Too many connections from this address; close some first.",
    "too_many_connections", b"Retry-After: 5\r\n")
HEAD_TIMEOUT = _raw_answer(408, "Request Timeout", "The request head took too long to arrive.",
                           "request_timeout")
HEAD_TOO_LARGE = _raw_answer(
    431, "Request Header Fields Too Large",
    f"The request line and headers are larger than the {human_size(MAX_HEADER_BYTES)} limit.",
    "headers_too_large")
BAD_HEAD = _raw_answer(400, "Bad Request", "The request is not valid HTTP/1.1.", "bad_request")
REFUSAL_LINGER_SECONDS = 2.0  # how long a refused connection is drained before it closes
REFUSAL_DRAIN_BYTES = 64 * KB  # the most of a refused connection's input read and dropped


def head_size(event: h11.Request) -> int:
    """The bytes of a parsed request head: request line, headers, blank line (at least: the
    parser drops optional whitespace around values)."""
    line = len(event.method) + len(event.target) + len(b"  HTTP/1.1\r\n")
    return line + sum(len(name) + len(value) + 4 for name, value in event.headers) + 2


class _Head(h11.Connection):
    """h11's connection that tells its protocol when a request head is parsed (too large:
    refused as a protocol error) and why the parser gave up (h11's status hint)."""

    def __init__(self, protocol: EdgeProtocol, max_incomplete_event_size: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_incomplete_event_size)
        self.protocol = protocol

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if isinstance(event, h11.Request):
                self.protocol.head_complete(event)
            return event
        except h11.RemoteProtocolError as exc:
            self.protocol.refusal = (HEAD_TOO_LARGE if exc.error_status_hint == 431
                                     else BAD_HEAD)
            raise


class EdgeProtocol(H11Protocol):
    """uvicorn's h11 protocol with the connection limits of the module docstring. uvicorn
    makes one per connection (`serve` passes the class as `http`); the settings are read
    from the environment (get_settings), as in each process of `serve --workers N`."""

    open_by_address: ClassVar[Counter[str]] = Counter()  # this process's connections

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        settings = get_settings()
        self.head_timeout = settings.http_head_timeout_seconds
        self.per_address = settings.http_connections_per_address
        self.trusted_proxies = settings.trusted_proxies
        self.conn = _Head(self, config.h11_max_incomplete_event_size or MAX_HEADER_BYTES)
        self.refusal = BAD_HEAD  # what send_400_response sends
        self.deadline: asyncio.TimerHandle | None = None
        self.head_started = False  # a byte of the awaited head came
        self.counted: str | None = None  # the address this connection is counted under
        self.refused = False  # answered 429 at once; only drained until it closes
        self.drained = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = self.client[0] if self.client else None
        if address is not None and self.per_address > 0 and not self._trusted(address):
            if self.open_by_address[address] >= self.per_address:
                self._refuse(transport)
                return
            self.open_by_address[address] += 1
            self.counted = address
        self._await_head()

    def _refuse(self, transport: asyncio.Transport) -> None:
        """Answer 429 and close lingering (module docstring): the 429 reaches the client
        instead of a reset."""
        self.refused = True
        transport.write(TOO_MANY_CONNECTIONS)
        if transport.can_write_eof():
            transport.write_eof()
        self.deadline = self.loop.call_later(REFUSAL_LINGER_SECONDS, transport.close)

    def _trusted(self, address: str) -> bool:
        from sanitas.web.deps import _is_trusted  # the one reading of SANITAS_TRUSTED_PROXIES

        return bool(self.trusted_proxies) and _is_trusted(address, self.trusted_proxies)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        if self.counted is not None:
            left = self.open_by_address[self.counted] - 1
            if left > 0:
                self.open_by_address[self.counted] = left
            else:
                del self.open_by_address[self.counted]  # the table holds only open ones
            self.counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.refused:  # dropped unread; enough of it ends the drain
            self.drained += len(data)
            if self.drained > REFUSAL_DRAIN_BYTES:
                self.transport.close()
            return
        if self.deadline is not None:
            self.head_started = True
        super().data_received(data)

    def eof_received(self) -> None:
        if self.refused:  # the client has read the 429 and closed its side
            self.transport.close()
            return
        super().eof_received()

    # the head deadline: armed while a head is awaited
    def _await_head(self) -> None:
        self._stop_waiting()
        self.head_started = False
        if self.head_timeout > 0:
            self.deadline = self.loop.call_later(self.head_timeout, self._head_too_slow)

    def _stop_waiting(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _head_too_slow(self) -> None:
        self.deadline = None
        if not self.transport.is_closing():
            if self.head_started:
                self.transport.write(HEAD_TIMEOUT)
            self.transport.close()

    def head_complete(self, event: h11.Request) -> None:
        """A request head was parsed (from _Head.next_event): the deadline is met; a head past
        the cap is a protocol error (431)."""
        self._stop_waiting()
        if head_size(event) > MAX_HEADER_BYTES:
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)

    def _should_upgrade(self) -> bool:
        """Never: the app serves no WebSocket, and an upgraded connection would leave this
        protocol (and its count) behind. An Upgrade header is ignored; the call is plain HTTP."""
        return False

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._await_head()  # the next request's head (a pipelined one stops it at once)
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a head the parser refused: 431 for one too large, else 400,
        in the error envelope."""
        self._stop_waiting()
        self.transport.write(self.refusal)
        self.transport.close()
