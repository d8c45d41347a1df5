"""The error envelope `{success: false, message, error}` and the handlers that produce it.

A 422 (`validation_error`) also carries `fields: [{field, message, code}]`: each refused
field by its camelCase path in the request (`name`, `rules.macros`, `allowedTypes.0`; null for
the request as a whole) with a message in plain words, so a form shows it next to the input.
`message` keeps the one-line summary ("Invalid request: name: ...") for older clients."""

from __future__ import annotations

import errno
import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from sanitas.plans import Capability, PlanTable

log = logging.getLogger(__name__)


class ApiError(Exception):
    """Raise anywhere in a request to answer with the error envelope."""

    def __init__(self, status_code: int, message: str, error: str | None = None,
                 headers: dict[str, str] | None = None,
                 fields: list[dict[str, str | None]] | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.error = error or _default_codes.get(status_code, "error")
        self.headers = headers
        self.fields = fields


def field_error(field: str | None, message: str, code: str = "invalid") -> dict[str, str | None]:
    """One entry of a 422's `fields`."""
    return {"field": field, "message": message, "code": code}


def invalid_field(field: str, message: str, code: str = "invalid") -> ApiError:
    """A 422 about one body field: `message` both as the summary and next to the field."""
    return ApiError(422, message, "validation_error", fields=[field_error(field, message, code)])


_default_codes = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 409: "conflict", 410: "gone", 413: "payload_too_large",
    415: "unsupported_media_type", 422: "validation_error", 429: "too_many_requests",
    500: "internal_error", 503: "service_unavailable", 507: "insufficient_storage",
}

INSUFFICIENT_STORAGE_MESSAGE = "The server is out of storage space; try again later."
_SQLITE_FULL = 13  # SQLITE_FULL: "database or disk is full"
_PG_DISK_FULL = "53100"  # SQLSTATE disk_full
FULL_DISK_BYTES = 1024 * 1024  # less free than this (for an unprivileged writer): full


def insufficient_storage() -> ApiError:
    """507: a disk (or the database's, or the bucket) is full; nothing was kept."""
    return ApiError(507, INSUFFICIENT_STORAGE_MESSAGE, "insufficient_storage")


def require_plan(plans: PlanTable, role: str, capability: Capability) -> None:
    """403 `plan_required` unless `role`'s plan includes `capability`, naming the plans that
    do (the check behind `Requires(Capability.X)`, web/deps.py)."""
    if not plans.plan(role).has(capability):
        raise ApiError(403, plans.refusal_message(capability), "plan_required")


def is_out_of_space(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) says a disk, quota, database or bucket is full:
    ENOSPC/EDQUOT, SQLite's SQLITE_FULL, PostgreSQL's disk_full, or a storage error that
    marks itself `out_of_space` (an S3 507)."""
    stack, seen = [exc], set()
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if getattr(e, "out_of_space", False) is True:
            return True
        if getattr(e, "sqlite_errorcode", None) == _SQLITE_FULL or \
                getattr(e, "sqlstate", None) == _PG_DISK_FULL:
            return True
        stack += [getattr(e, "orig", None), e.__cause__, e.__context__]
    return False


_SQLITE_IOERR = 10


def sqlite_io_error_on_full_disk(exc: BaseException, database_url: str | None) -> bool:
    """SQLite reports some writes that fail for want of space as an I/O error (e.g. creating
    its shared-memory file: SQLITE_IOERR_SHMSIZE): such an error while the database's disk
    has (almost) no room left is a full disk."""
    orig = getattr(exc, "orig", None)
    code = getattr(orig, "sqlite_errorcode", None)
    if code is None or code & 0xFF != _SQLITE_IOERR:
        return False
    from sanitas.datadir import sqlite_path
    from sanitas.datadir.diskspace import room

    path = sqlite_path(database_url)
    try:
        return path is not None and room(path.parent).free_bytes < FULL_DISK_BYTES
    except OSError:
        return False


def error_body(status_code: int, message: str, error: str | None = None,
               fields: list[dict[str, str | None]] | None = None) -> dict:
    body: dict = {"success": False, "message": message,
                  "error": error or _default_codes.get(status_code, "error")}
    if fields is not None:
        body["fields"] = fields
    return body


_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str) -> str:
    """Text of a validation message (a field name comes from the client's JSON keys or query
    string): controls and unpaired surrogates as \\uXXXX escapes, so the answer stays valid
    UTF-8 and a NUL never travels back."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _plural(n: object, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


_COLLECTIONS = ("List", "Tuple", "Set", "Dictionary", "Dict", "Frozenset")


def _human(err: dict) -> str:
    """A Pydantic error in plain words, for a person filling a form."""
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    # A length limit on text ("too_short" too when a validator wraps the string type) or on a
    # list; a required text left empty is simply "required".
    text = kind.startswith("string_") or (
        kind in ("too_short", "too_long") and ctx.get("field_type") not in _COLLECTIONS)
    if kind == "missing" or (text and kind.endswith("too_short") and ctx.get("min_length") == 1):
        return "This field is required."
    if kind.endswith("too_short"):
        unit = "character" if text else "item"
        return f"Must {'be' if text else 'have'} at least {_plural(ctx.get('min_length'), unit)}."
    if kind.endswith("too_long"):
        unit = "character" if text else "item"
        return f"Must {'be' if text else 'have'} at most {_plural(ctx.get('max_length'), unit)}."
    for key, words in (("ge", "at least"), ("gt", "more than"), ("le", "at most"),
                       ("lt", "less than")):
        if key in ctx and kind.startswith(("greater", "less")):
            return f"Must be {words} {ctx[key]}."
    if kind in ("literal_error", "enum") and "expected" in ctx:
        return f"Must be one of {ctx['expected']}."
    if kind == "extra_forbidden":
        return "This field is not accepted."
    msg = str(err.get("msg", "is invalid"))
    if kind == "value_error" and msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    return msg[:1].upper() + msg[1:] + ("" if msg.endswith(".") else ".")


def _field_path(err: dict) -> str | None:
    loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "form")]
    return ".".join(loc) or None


def validation_fields(exc: RequestValidationError) -> list[dict[str, str | None]]:
    """The `fields` of a 422: each refused field's camelCase path (the body's own names) and a
    message in plain words; null for the request as a whole."""
    fields = []
    for err in exc.errors():
        path = _field_path(err)
        fields.append(field_error(None if path is None else printable(path),
                                  printable(_human(err)), str(err.get("type", "invalid"))))
    return fields


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "form")]
        where = ".".join(loc) or "request"
        msg = err.get("msg", "is invalid")
        parts.append(printable(f"{where}: {msg}"))
    return "Invalid request: " + "; ".join(parts) if parts else "Invalid request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError):
        fields = exc.fields if exc.fields is not None else [] if exc.status_code == 422 else None
        return JSONResponse(error_body(exc.status_code, exc.message, exc.error, fields),
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError):
        return JSONResponse(error_body(422, _describe_validation(exc), None,
                                       validation_fields(exc)), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException):
        message = exc.detail if isinstance(exc.detail, str) else "Request failed"
        return JSONResponse(error_body(exc.status_code, message), status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    async def _out_of_space_or_unhandled(request: Request, exc: Exception):
        settings = getattr(request.app.state, "settings", None)
        if is_out_of_space(exc) or (settings is not None and sqlite_io_error_on_full_disk(
                exc, settings.database_url)):
            log.error("out of storage space during %s %s: %s: %s", request.method,
                      request.url.path, type(exc).__name__, exc)
            return JSONResponse(error_body(507, INSUFFICIENT_STORAGE_MESSAGE,
                                           "insufficient_storage"), status_code=507)
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse(error_body(500, "Internal server error"), status_code=500)

    # Writes that fail for want of space (a file, the database, the bucket) answer 507.
    from sanitas.storage import StorageError

    for cls in (OSError, SQLAlchemyError, StorageError):
        app.add_exception_handler(cls, _out_of_space_or_unhandled)
    app.add_exception_handler(Exception, _out_of_space_or_unhandled)
