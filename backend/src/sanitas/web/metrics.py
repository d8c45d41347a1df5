"""Prometheus metrics at `GET /metrics`: the service's own names start with `sanitas_`
(beside prometheus-client's standard `process_` and `python_` ones when not multiprocess).

Served only when `SANITAS_METRICS_TOKEN` is set, and then only to `Authorization: Bearer
<token>`; otherwise the path answers 404 like any unknown one. Three sources:

- this process's HTTP calls: `sanitas_http_requests_total{method,route,status}` and
  `sanitas_http_request_duration_seconds{method,route}`, counted only while metrics are on;
- the jobs this process ran (the embedded executor; a Celery worker, whose jobs run in its
  child processes, counts them in one multiprocess view and serves them on its own
  `SANITAS_METRICS_PORT`, with the same token rule):
  `sanitas_job_duration_seconds{family,mode,result}`,
  `sanitas_findings_total{kind}`, `sanitas_rejections_total{code}`,
  `sanitas_sandbox_failures_total`, `sanitas_sandbox_starts_total`,
  `sanitas_sandbox_timeouts_total{phase}`, and the webhook attempts this process made:
  `sanitas_webhook_deliveries_total{result}`;
- the database, read at each scrape (the same for every process): `sanitas_jobs{state,priority}`,
  `sanitas_queue_depth`, `sanitas_files{status}`, `sanitas_storage_bytes{kind}`.

Every label has a bounded set of values, whatever a client or a file sends (an unbounded one
would let anyone grow the process's memory and the scrape, one series per new value):

- `method`: the standard methods (http_limits.HTTP_METHODS), any other token is `other`
  (the app answers those 501 before routing);
- `route`: the matched route's template, never the raw path (ids do not make series); no
  route, or the API's catch-all, is `unmatched`;
- `status`: the answer's status code, 100-599 (anything else would be `other`);
- `family`: formats.KINDS's families or `unknown`; `mode`: basic, advanced or `other`;
  `result`: ok or rejected; `code`: a RejectionCode or `unknown`;
- `kind` (findings): a kind declared in engine/kinds.py or `other` (the sandbox's answer
  is untrusted, and Result.from_json keeps any short text as a kind);
- `phase`: start or job; webhook `result`: succeeded, retrying or failed;
- the database gauges' `state`, `priority`, `status`: the models' enumerations.

Several API processes (`serve --workers N`) share one view through prometheus-client's
multiprocess mode: `serve` points PROMETHEUS_MULTIPROC_DIR at a fresh folder in the data
directory before the processes start.
"""

from __future__ import annotations

import hmac
import os
import threading
import time
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sanitas.engine.policy import Mode
from sanitas.sandbox.bwrap import SANDBOX_STARTS as SANDBOX_STARTS  # counted by the sandbox
from sanitas.sandbox.bwrap import SANDBOX_TIMEOUTS as SANDBOX_TIMEOUTS
from sanitas.web.errors import error_body
from sanitas.web.http_limits import HTTP_METHODS
from sanitas.web.schemas import ErrorEnvelope

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from sanitas.config import Settings
    from sanitas.engine.report import Result

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
JOB_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)

REQUESTS = Counter("sanitas_http_requests", "HTTP calls answered",
                   ["method", "route", "status"])
LATENCY = Histogram("sanitas_http_request_duration_seconds", "Time to answer an HTTP call",
                    ["method", "route"], buckets=LATENCY_BUCKETS)
JOB_SECONDS = Histogram("sanitas_job_duration_seconds",
                        "Time a job spent in the sandbox, by the file's family and mode",
                        ["family", "mode", "result"], buckets=JOB_BUCKETS)
FINDINGS = Counter("sanitas_findings", "Findings reported by finished jobs", ["kind"])
REJECTIONS = Counter("sanitas_rejections", "Files refused, by rejection code", ["code"])
SANDBOX_FAILURES = Counter("sanitas_sandbox_failures",
                           "Jobs the sandbox itself failed (retried; not the file's fault)")
WEBHOOK_DELIVERIES = Counter("sanitas_webhook_deliveries",
                             "Webhook delivery attempts, by result: succeeded, retrying (failed, "
                             "tried again later) or failed (the last attempt failed)",
                             ["result"])


MODES = frozenset(Mode)
RESULTS = frozenset(("ok", "rejected"))


def bounded(value: object, allowed: Iterable[str], other: str = "other") -> str:
    """`value` as a label when it is one of `allowed`, else `other`: the one way every label
    made from something a client or a file chose stays within a fixed set."""
    text = str(value)
    return text if text in allowed else other


def family_of(kind: str | None) -> str:
    from sanitas.engine import formats

    found = formats.KINDS.get(kind or "")
    return found.family if found else "unknown"


def job_finished(result: Result, mode: str, seconds: float) -> None:
    """Count a job the sandbox answered (cleaned or refused)."""
    from sanitas.engine.kinds import FINDING_KINDS
    from sanitas.engine.report import RejectionCode

    JOB_SECONDS.labels(family_of(result.detected_type), bounded(mode, MODES),
                       bounded(result.status, RESULTS)).observe(seconds)
    for finding in result.findings or []:
        kind = finding["kind"] if isinstance(finding, dict) else finding.kind
        FINDINGS.labels(bounded(kind, FINDING_KINDS)).inc()
    if result.status != "ok":
        REJECTIONS.labels(bounded(result.code, set(RejectionCode), "unknown")).inc()


def sandbox_failed() -> None:
    SANDBOX_FAILURES.inc()


def webhook_delivery(result: str) -> None:
    """Count one webhook delivery attempt (sanitas/webhooks/sender.py)."""
    WEBHOOK_DELIVERIES.labels(result).inc()


class DatabaseCollector(Collector):
    """Gauges read from the database at scrape time."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.factory = factory

    def collect(self) -> Iterator[Metric]:
        from sanitas.models import File, Job, JobState

        with self.factory() as session:
            jobs = GaugeMetricFamily("sanitas_jobs", "Jobs by state and priority",
                                     labels=["state", "priority"])
            rows = session.execute(select(Job.state, Job.priority, func.count())
                                   .group_by(Job.state, Job.priority)).all()
            for state, priority, count in rows:
                jobs.add_metric([str(state), str(priority)], count)
            yield jobs
            waiting = sum(c for state, _p, c in rows if state == JobState.WAITING)
            yield GaugeMetricFamily("sanitas_queue_depth", "Jobs waiting to run", value=waiting)
            files = GaugeMetricFamily("sanitas_files", "Files by status", labels=["status"])
            for status, count in session.execute(select(File.status, func.count())
                                                 .group_by(File.status)):
                files.add_metric([str(status)], count)
            yield files
            live = File.is_expired.is_(False)
            originals, outputs = session.execute(
                select(func.coalesce(func.sum(File.original_size), 0),
                       func.coalesce(func.sum(File.sanitized_size), 0)).where(live)).one()
            stored = GaugeMetricFamily("sanitas_storage_bytes",
                                       "Bytes held in storage for files not yet expired",
                                       labels=["kind"])
            stored.add_metric(["original"], float(originals or 0))
            stored.add_metric(["sanitized"], float(outputs or 0))
            yield stored


def exposition(factory: sessionmaker[Session]) -> tuple[bytes, str]:
    """The metrics text: this process's (every API process's, in multiprocess mode) and the
    database's gauges."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        shared = CollectorRegistry()
        multiprocess.MultiProcessCollector(shared)
        own = generate_latest(shared)
    else:
        own = generate_latest(REGISTRY)
    database = CollectorRegistry()
    database.register(DatabaseCollector(factory))
    return own + generate_latest(database), CONTENT_TYPE_LATEST


router = APIRouter()


@router.get("/metrics", response_class=Response, responses={
    200: {"description": "Prometheus text format", "content": {CONTENT_TYPE_LATEST: {}}},
    404: {"model": ErrorEnvelope, "description": "Metrics are off (no SANITAS_METRICS_TOKEN), "
          "or the bearer token is missing or wrong"}})
def metrics(request: Request) -> Response:
    settings = request.app.state.settings
    if not token_matches(settings.metrics_token, request.headers.get("authorization")):
        return JSONResponse(error_body(404, "Not found."), status_code=404)
    body, content_type = exposition(request.app.state.sessionmaker)
    return Response(body, media_type=content_type)


def serve_worker_metrics(settings: Settings) -> ThreadingHTTPServer:
    """`GET /metrics` for a Celery worker (it has no API): on SANITAS_METRICS_HOST:PORT in a
    thread, with the same bearer-token rule; anything else answers 404."""
    from sanitas.db import make_engine, make_sessionmaker

    factory = make_sessionmaker(make_engine(str(settings.database_url)))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/metrics" or not token_matches(
                    settings.metrics_token, self.headers.get("Authorization")):
                self.send_error(404)
                return
            body, content_type = exposition(factory)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # scrapes are not worth a log line each

    server = ThreadingHTTPServer((settings.metrics_host, settings.metrics_port), Handler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server


def token_matches(expected: str | None, authorization: str | None) -> bool:
    if not expected or not authorization or not authorization.startswith("Bearer "):
        return False
    return hmac.compare_digest(authorization[7:].encode(), expected.encode())


class MetricsMiddleware:
    """Counts each HTTP call by its route's template, method and status, while metrics are on
    (SANITAS_METRICS_TOKEN set; read at each call): off, a call makes no series at all."""

    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.settings.metrics_token:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def keep_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, keep_status)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None)
            # The API's routers are included under /api, and the matched route knows only its
            # own part of the path.
            if (template and scope["path"].startswith("/api/")
                    and not template.startswith("/api")):
                template = "/api" + template
            if not template or template == "/api/{rest:path}":  # no such call
                template = "unmatched"
            method = bounded(scope["method"], HTTP_METHODS)
            code = str(status[0]) if 100 <= status[0] <= 599 else "other"
            REQUESTS.labels(method, template, code).inc()
            LATENCY.labels(method, template).observe(time.perf_counter() - started)
