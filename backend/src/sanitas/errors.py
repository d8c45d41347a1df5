"""The error envelope `{success: false, message, error}` and the handlers that produce it."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)


class ApiError(Exception):
    """Raise anywhere in a request to answer with the error envelope."""

    def __init__(self, status_code: int, message: str, error: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.error = error or _default_codes.get(status_code, "error")
        self.headers = headers


_default_codes = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 409: "conflict", 410: "gone", 413: "payload_too_large",
    415: "unsupported_media_type", 422: "validation_error", 429: "too_many_requests",
    500: "internal_error", 503: "service_unavailable",
}


def error_body(status_code: int, message: str, error: str | None = None) -> dict:
    return {"success": False, "message": message,
            "error": error or _default_codes.get(status_code, "error")}


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "form")]
        where = ".".join(loc) or "request"
        msg = err.get("msg", "is invalid")
        parts.append(f"{where}: {msg}")
    return "Invalid request: " + "; ".join(parts) if parts else "Invalid request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError):
        return JSONResponse(error_body(exc.status_code, exc.message, exc.error),
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError):
        return JSONResponse(error_body(422, _describe_validation(exc)), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException):
        message = exc.detail if isinstance(exc.detail, str) else "Request failed"
        return JSONResponse(error_body(exc.status_code, message), status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unhandled(_: Request, exc: Exception):
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse(error_body(500, "Internal server error"), status_code=500)
