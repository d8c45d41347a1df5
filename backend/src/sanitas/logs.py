"""Logging: JSON lines or readable text, and the request id that follows a call into its job.

`SANITAS_LOG_FORMAT=json` (the default when `SANITAS_ENV=production`) writes one JSON object a
line: `time` (UTC, ISO 8601), `level`, `logger`, `message`, and when known `requestId` and
`jobId`, `exception` (the traceback) on errors. `text` (the default elsewhere) keeps the
readable `time LEVEL logger: message` lines, with `[request-id]` when there is one.

Every API call has a request id: the caller's `X-Request-ID` when it is a sane one (1-128 of
letters, digits and `-_.:`), else a new one; it is answered in `X-Request-ID`, stored with the
jobs the call creates, and set again while such a job runs (whichever process or worker runs
it), so one id finds the call and its job in the logs.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

request_id: ContextVar[str | None] = ContextVar("sanitas_request_id", default=None)
job_id: ContextVar[str | None] = ContextVar("sanitas_job_id", default=None)

MAX_REQUEST_ID = 128
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s%(request_tag)s: %(message)s"


def sane_request_id(value: str | None) -> str | None:
    """`value` when it is usable as a request id, else None (a new one is made)."""
    if value and len(value) <= MAX_REQUEST_ID and all(c in _ALLOWED for c in value):
        return value
    return None


def _stamp(record: logging.LogRecord) -> None:
    current = request_id.get()
    record.request_id = current
    record.job_id = job_id.get()
    record.request_tag = f" [{current}]" if current else ""


def install_record_factory() -> None:
    """Stamp the current request and job ids on every record when it is made (in the thread
    that logs it), for every handler and format."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "sanitas_ids", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _stamp(record)
        return record

    factory.sanitas_ids = True  # type: ignore[attr-defined]  # marks it installed
    logging.setLogRecordFactory(factory)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if not hasattr(record, "request_tag"):  # made before the factory was installed
            _stamp(record)
        for key, attribute in (("requestId", "request_id"), ("jobId", "job_id")):
            value = getattr(record, attribute, None)
            if value:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def log_format(env: str, configured: str | None) -> Literal["json", "text"]:
    if configured in ("json", "text"):
        return configured  # type: ignore[return-value]  # narrowed by the test above
    return "json" if env == "production" else "text"


def configure(fmt: Literal["json", "text"], level: str | None = None) -> None:
    """Route every logger (uvicorn's and Celery's too) to one stderr handler in `fmt`."""
    install_record_factory()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level or os.environ.get("SANITAS_LOG_LEVEL", "INFO"))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "celery"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    logging.getLogger("alembic").setLevel(logging.WARNING)


@contextmanager
def job_context(job: str, request: str | None) -> Iterator[None]:
    """While a job runs: its id, and the id of the call that created it, on every log line."""
    job_token, request_token = job_id.set(job), request_id.set(request)
    try:
        yield
    finally:
        job_id.reset(job_token)
        request_id.reset(request_token)


class RequestIdMiddleware:
    """Gives each HTTP call its request id (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((value.decode("latin-1") for key, value in scope.get("headers", [])
                      if key == b"x-request-id"), None)
        current = sane_request_id(given) or uuid.uuid4().hex
        token = request_id.set(current)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != b"x-request-id"]
                headers.append((b"x-request-id", current.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id.reset(token)
