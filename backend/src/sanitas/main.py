"""The FastAPI application: API routes under /api, /health, and the web UI at /."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from sanitas import plans_routes
from sanitas.apikeys import routes as apikeys_routes
from sanitas.apikeys import service as apikeys_service
from sanitas.audit import routes as audit_routes
from sanitas.auth import routes as auth_routes
from sanitas.auth.tokens import AccessTokenCache
from sanitas.config import Settings, get_settings
from sanitas.contact import routes as contact_routes
from sanitas.db import make_engine, make_sessionmaker
from sanitas.files import admin_routes as files_admin_routes
from sanitas.files import download_routes as files_download_routes
from sanitas.files import routes as files_routes
from sanitas.logs import RequestIdMiddleware, install_record_factory
from sanitas.mailfilter import routes as mail_routes
from sanitas.policies import routes as policies_routes
from sanitas.processing import executor_connections
from sanitas.processing import routes as queue_routes
from sanitas.reports import routes as reports_routes
from sanitas.usage import routes as usage_routes
from sanitas.users import routes as users_routes
from sanitas.web import health
from sanitas.web.admission import DatabaseGate, KnownKeys, PerCallerLimit
from sanitas.web.api_docs import install_docs
from sanitas.web.errors import error_body, install_error_handlers
from sanitas.web.http_limits import BodyLimitMiddleware, UnknownMethodMiddleware, upload_caps
from sanitas.web.metrics import MetricsMiddleware
from sanitas.web.metrics import router as metrics_routes_router
from sanitas.web.openapi import allowed_methods, install_openapi
from sanitas.web.schemas import ErrorEnvelope
from sanitas.web.security_headers import SecurityHeadersMiddleware
from sanitas.web.validation import reject_unstorable_text
from sanitas.webhooks import routes as webhooks_routes

log = logging.getLogger(__name__)

# Any API call may be refused by admission control (admission.py), or meet a full disk.
COMMON_RESPONSES: dict[int | str, dict] = {
    429: {"model": ErrorEnvelope, "description": "Too many calls under way at once from this "
          "user or address (`too_many_concurrent`), or a brute-force limit; see Retry-After"},
    503: {"model": ErrorEnvelope, "description": "The server is busy (`server_busy`); "
          "see Retry-After"},
    507: {"model": ErrorEnvelope, "description": "The server is out of storage space "
          "(`insufficient_storage`)"},
}

FRONTEND_DIST = Path(__file__).resolve().parents[3] / "frontend" / "dist"


def create_app(settings: Settings | None = None, *, start_background: bool = True,
               executor_in_supervisor: bool = False) -> FastAPI:
    settings = settings or get_settings()
    install_record_factory()  # request and job ids on every log record (logs.py)
    # One connection per database slot, plus what the local executor may hold.
    engine = make_engine(str(settings.database_url),
                         pool_size=settings.api_concurrency + executor_connections(settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        hooks = []
        if start_background:
            from sanitas.processing import start_background_services
            from sanitas.reports.worker import start_report_worker

            hooks = start_background_services(
                app, executor_in_supervisor=executor_in_supervisor)
            # Reports are generated in every API process, whichever executor runs the jobs.
            hooks.append(start_report_worker(app))
        try:
            yield
        finally:
            for stop in reversed(hooks):
                stop()
            engine.dispose()

    # Every route first refuses text no database can store (a NUL...): validation.py.
    app = FastAPI(title="Sanitas", version="0.1.0", lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url="/api/openapi.json",
                  dependencies=[Depends(reject_unstorable_text)])
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.db_gate = DatabaseGate(settings.api_concurrency, settings.api_queue_seconds)
    app.state.access_tokens = AccessTokenCache(settings)
    app.state.known_keys = KnownKeys()
    app.state.key_check = apikeys_service.authenticate  # web/deps.py's KeyCheck
    install_error_handlers(app)
    app.add_middleware(PerCallerLimit, settings=settings, tokens=app.state.access_tokens,
                       keys=app.state.known_keys)
    # Outermost last: the security headers also go on the body limit's 413.
    app.add_middleware(BodyLimitMiddleware, path_caps=upload_caps(settings))
    app.add_middleware(UnknownMethodMiddleware)  # 501 before routing (any token is a method)
    app.add_middleware(SecurityHeadersMiddleware,
                       hsts=settings.public_url.lower().startswith("https://"))
    app.add_middleware(MetricsMiddleware, settings=settings)
    app.add_middleware(RequestIdMiddleware)  # outermost: every answer carries the id

    app.include_router(health.router)
    app.include_router(metrics_routes_router)
    for module in (auth_routes, users_routes, files_routes, files_download_routes,
                   files_admin_routes, queue_routes,
                   usage_routes, contact_routes, policies_routes, audit_routes, reports_routes,
                   apikeys_routes, webhooks_routes, plans_routes, mail_routes):
        app.include_router(module.router, prefix="/api", responses=COMMON_RESPONSES)
    app.include_router(apikeys_routes.admin_router, prefix="/api", responses=COMMON_RESPONSES)
    install_docs(app)  # Swagger UI from a local copy, before the /api catch-all below

    install_openapi(app)

    @app.api_route("/api/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                   include_in_schema=False)
    def api_not_found(rest: str, request: Request):
        allowed = allowed_methods(app, request.scope)
        if allowed:
            return JSONResponse(
                error_body(405, f"{request.method} is not allowed on /api/{rest[:200]}; use "
                                f"{', '.join(allowed)}.", "method_not_allowed"),
                status_code=405, headers={"Allow": ", ".join(allowed)})
        return JSONResponse(error_body(404, f"No API route /api/{rest[:200]}"), status_code=404)

    _mount_frontend(app, FRONTEND_DIST)
    return app


def api_worker_app() -> FastAPI:
    """The app of each API process of `sanitas serve --workers N` (an import-string factory
    for uvicorn): the local executor runs once, in the supervising process."""
    return create_app(get_settings(), executor_in_supervisor=True)


def _mount_frontend(app: FastAPI, dist: Path) -> None:
    """Serve the built SPA with a fallback to index.html for client-side routes."""
    index = dist / "index.html"
    if not index.exists():
        return
    if (dist / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=dist / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False)
    def spa(path: str):
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(dist.resolve()):
            return FileResponse(candidate)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
