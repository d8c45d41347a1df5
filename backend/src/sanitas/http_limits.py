"""Size limits on what a client may send before the application looks at it.

* Request bodies: every body is capped at `MAX_BODY_BYTES` (64 KB: the largest JSON call, a
  contact message of 5,000 characters, fits several times over), except the two upload
  routes, whose per-role limits `files/multipart.py` enforces as the body streams; those get
  an overall cap of the largest upload any role may send. `BodyLimitMiddleware` refuses at
  once when Content-Length announces more than the cap (nothing is read), and counts the
  bytes of a body that arrives without one (chunked) so that reading stops with 413 as soon
  as the count passes the cap. Either way nothing past the cap is buffered.
* Request heads: `sanitas serve` runs uvicorn's h11 protocol with
  `h11_max_incomplete_event_size=MAX_HEADER_BYTES`: a request line plus headers still
  incomplete after 32 KB is refused (400) and the connection closed, so at most 32 KB plus
  one network read is ever buffered for a head (a 200 KB header is refused). uvicorn's
  httptools protocol has no such limit: it buffers headers of any size.

The reverse proxy example in deploy/nginx.conf.example applies the same numbers.
"""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sanitas.config import Settings
from sanitas.errors import error_body

KB = 1024
MB = 1024 * KB
MAX_BODY_BYTES = 64 * KB
MAX_HEADER_BYTES = 32 * KB
MULTIPART_OVERHEAD = MB  # part headers, boundaries and form fields around the files

UPLOAD_SINGLE = "/api/upload/single"
UPLOAD_MULTIPLE = "/api/upload/multiple"
SANITIZE_NOW = "/api/v1/sanitize"  # one file, like /api/upload/single


def upload_caps(settings: Settings) -> dict[str, int]:
    """The overall body cap of each upload route: the largest request any role may send
    there (the per-role limit is applied by the multipart reader)."""
    limits = settings.role_limits.values()
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
