"""Sending webhook deliveries: claim what is due, POST it signed, record the attempt,
schedule the next one.

The rows are the queue, as for jobs. A sender claims a due delivery with one conditional
UPDATE that sets a claim token and a lease (claimed_until), so two senders (another process,
a Celery worker on another machine) never make the same attempt; the attempt's outcome is
written only while the token still matches. A sender that dies mid-attempt leaves a lease that
lapses, and the delivery is due again: delivery is at least once, and receivers recognise a
repeat by its `webhook-id`.

Each attempt resolves the endpoint's host again, refuses it unless every address is allowed
(ssrf.py), and connects to the address it checked (the URL's name still goes in `Host` and
in TLS's server name, so certificates are verified against it). Redirects are not followed
(a 3xx is a failed attempt), proxies from the environment are not used, and every step of
the request has a short timeout. The response body is never read.

Retries back off: RETRY_MULTIPLIERS times SANITAS_WEBHOOK_RETRY_BASE_SECONDS (30 s: 30 s,
2, 5, 15, 30 min, 1, 2, 4, 8, 8 h, about a day in all), then the delivery is given up.
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import ssl
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement
from standardwebhooks import Webhook as Signer

from sanitas import metrics
from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.executor import job_secret
from sanitas.models.webhook import DeliveryState, Webhook, WebhookDelivery
from sanitas.schemas import iso
from sanitas.webhooks import service, ssrf

log = logging.getLogger(__name__)

# Delay before retry n (n = 1, 2, ...), in units of webhook_retry_base_seconds.
RETRY_MULTIPLIERS = (1, 4, 10, 30, 60, 120, 240, 480, 960, 960)
MAX_ATTEMPTS = len(RETRY_MULTIPLIERS) + 1
USER_AGENT = "Sanitas-Webhooks/1"
ERROR_MAX = 300
PRUNE_INTERVAL = 3600.0  # seconds between removals of deliveries past their keeping time


def retry_delay(settings: Settings, attempts: int) -> float | None:
    """Seconds to wait after `attempts` failed attempts; None once they are used up. Up to
    10% is added at random, so deliveries that failed together do not all retry together."""
    if attempts >= MAX_ATTEMPTS:
        return None
    base = settings.webhook_retry_base_seconds * RETRY_MULTIPLIERS[attempts - 1]
    return base * (1 + random.random() / 10)  # noqa: S311 - spreading retries, not a secret


def lease_seconds(settings: Settings) -> float:
    """How long a claim holds: longer than any attempt can take (name resolution and each
    step of the request)."""
    return 60 + 6 * settings.webhook_timeout_seconds


def _claim_token() -> str:
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:16]}"


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(WebhookDelivery.state == DeliveryState.PENDING,
                WebhookDelivery.next_attempt_at <= now,
                or_(WebhookDelivery.claimed_until.is_(None),
                    WebhookDelivery.claimed_until < now))


def claim_due(factory: sessionmaker[Session], settings: Settings,
              limit: int) -> list[tuple[str, str]]:
    """Claim up to `limit` due deliveries, oldest due first: (delivery id, claim token)."""
    if limit <= 0:
        return []
    now = utcnow()
    taken: list[tuple[str, str]] = []
    with factory() as s:
        ids = s.scalars(select(WebhookDelivery.id).where(_due(now))
                        .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
                        .limit(limit * 2)).all()
        for delivery_id in ids:
            token = _claim_token()
            result = s.execute(
                update(WebhookDelivery).where(WebhookDelivery.id == delivery_id, _due(now))
                .values(claim_token=token,
                        claimed_until=now + timedelta(seconds=lease_seconds(settings)))
                .execution_options(synchronize_session=False))
            s.commit()
            if rows_matched(result) == 1:
                taken.append((delivery_id, token))
                if len(taken) >= limit:
                    break
    return taken


@dataclass(frozen=True)
class AttemptResult:
    status_code: int | None
    error: str | None
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def signed_headers(secret: str, event_id: str, body: str,
                   moment: datetime | None = None) -> dict[str, str]:
    """The Standard Webhooks headers for one attempt."""
    moment = (moment or datetime.now(UTC)).replace(microsecond=0)
    return {"webhook-id": event_id,
            "webhook-timestamp": str(int(moment.timestamp())),
            "webhook-signature": Signer(secret).sign(event_id, moment, body)}


def _describe(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "The endpoint did not answer in time."
    if isinstance(exc, httpx.ConnectError):
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return "The endpoint's TLS certificate could not be verified."
        return "Could not connect to the endpoint."
    return f"The request failed ({type(exc).__name__})."


_tls_contexts: dict[str, ssl.SSLContext] = {}


def tls_context(settings: Settings) -> ssl.SSLContext:
    """What an HTTPS endpoint's certificate is checked against: httpx's default (the public
    CAs of certifi's bundle; no SSL_CERT_FILE from the environment) plus
    SANITAS_WEBHOOK_CA_BUNDLE's, built once per bundle. Raises OSError or ssl.SSLError when
    the bundle cannot be read."""
    bundle = str(settings.webhook_ca_bundle or "")
    context = _tls_contexts.get(bundle)
    if context is None:
        context = httpx.create_ssl_context(trust_env=False)
        if bundle:
            context.load_verify_locations(cafile=bundle)
        _tls_contexts[bundle] = context
    return context


def post(settings: Settings, url: str, body: str, headers: dict[str, str]) -> AttemptResult:
    """POST `body` to `url`, at an address checked just now. Never raises."""
    started = time.monotonic()

    def done(status: int | None, error: str | None) -> AttemptResult:
        return AttemptResult(status, error and error[:ERROR_MAX],
                             int((time.monotonic() - started) * 1000))

    try:
        target = ssrf.resolve_target(url, settings.webhook_allow_private)
    except ssrf.UnsafeUrl as exc:
        return done(None, exc.message)
    extensions: dict[str, Any] = {}
    verify: ssl.SSLContext | bool = True
    if target.url.scheme == "https":
        extensions["sni_hostname"] = target.host  # and the certificate is checked against it
        try:
            verify = tls_context(settings)
        except (OSError, ssl.SSLError) as exc:
            return done(None, "SANITAS_WEBHOOK_CA_BUNDLE could not be read "
                              f"({settings.webhook_ca_bundle}: {exc}).")
    status: int | None = None
    error: str | None = None
    # The checked addresses in turn, while one cannot be connected to (at most three).
    for address in target.addresses[:3]:
        shown = f"[{address}]" if address.version == 6 else str(address)
        request_url = target.url._replace(netloc=f"{shown}:{target.port}").geturl()
        try:
            with httpx.Client(timeout=httpx.Timeout(settings.webhook_timeout_seconds),
                              follow_redirects=False, trust_env=False,
                              verify=verify) as client, client.stream(
                    "POST", request_url, content=body.encode("utf-8"), extensions=extensions,
                    headers={**headers, "Host": target.url.netloc,
                             "Content-Type": "application/json", "User-Agent": USER_AGENT},
            ) as response:
                status, error = response.status_code, None
                break
        except httpx.ConnectError as exc:
            error = _describe(exc)
            if "certificate" in error:
                break
        except httpx.HTTPError as exc:
            error = _describe(exc)
            break
    if status is None:
        return done(None, error)
    if 200 <= status < 300:
        return done(status, None)
    if 300 <= status < 400:
        return done(status, f"The endpoint answered a redirect ({status}), which is not "
                            "followed.")
    return done(status, f"The endpoint answered {status}.")


def body_of(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def attempt(factory: sessionmaker[Session], settings: Settings, delivery_id: str,
            token: str) -> str | None:
    """Make the claimed delivery's next attempt and record it. Returns its new state (None
    when the claim was lost or the delivery is gone)."""
    with factory() as s:
        delivery = s.get(WebhookDelivery, delivery_id)
        if delivery is None or delivery.claim_token != token:
            return None
        webhook = s.get(Webhook, delivery.webhook_id)
        if webhook is None:
            return None
        event_id, payload, url = delivery.event_id, delivery.payload, webhook.url
        try:
            secret: str | None = service.open_secret(settings, webhook)
        except job_secret.SecretUnavailable:
            secret = None
    if secret is None:
        log.error("webhook delivery %s: the signing secret cannot be opened with this "
                  "process's secret key (SANITAS_SECRET_KEY differs?)", delivery_id)
        result = AttemptResult(None, "The signing secret could not be read by the server.", 0)
    else:
        body = body_of(payload)
        result = post(settings, url, body, signed_headers(secret, event_id, body))
    return record_attempt(factory, settings, delivery_id, token, result)


def record_attempt(factory: sessionmaker[Session], settings: Settings, delivery_id: str,
                   token: str, result: AttemptResult) -> str | None:
    now = utcnow()
    with factory() as s:
        delivery = s.get(WebhookDelivery, delivery_id)
        if delivery is None or delivery.claim_token != token:
            return None
        attempts = delivery.attempts + 1
        entry = {"attempt": attempts, "at": iso(now), "statusCode": result.status_code,
                 "error": result.error, "durationMs": result.duration_ms}
        attempt_log = [*list(delivery.attempt_log or [])[-(MAX_ATTEMPTS - 1):], entry]
        values: dict[str, Any] = {
            "attempts": attempts, "attempt_log": attempt_log, "claim_token": None,
            "claimed_until": None, "last_status_code": result.status_code,
            "last_error": result.error}
        if result.succeeded:
            state, outcome = DeliveryState.SUCCEEDED, "succeeded"
            values.update(next_attempt_at=None, finished_at=now)
        else:
            delay = retry_delay(settings, attempts)
            if delay is None:
                state, outcome = DeliveryState.FAILED, "failed"
                values.update(next_attempt_at=None, finished_at=now)
            else:
                state, outcome = DeliveryState.PENDING, "retrying"
                values["next_attempt_at"] = now + timedelta(seconds=delay)
        values["state"] = state
        written = s.execute(update(WebhookDelivery)
                            .where(WebhookDelivery.id == delivery_id,
                                   WebhookDelivery.claim_token == token)
                            .values(**values).execution_options(synchronize_session=False))
        s.commit()
        if rows_matched(written) != 1:
            return None
    metrics.webhook_delivery(outcome)
    log.info("webhook delivery %s: attempt %d %s%s", delivery_id, attempts, outcome,
             f" ({result.error})" if result.error else "")
    return state


class WebhookSender:
    """A thread that sends due deliveries, a few at once: in the process that runs the local
    executor, and in each Celery worker. Safe to run in many processes at once."""

    def __init__(self, settings: Settings, factory: sessionmaker[Session],
                 concurrency: int = 4) -> None:
        self.settings, self.factory, self.concurrency = settings, factory, concurrency
        self.pool = ThreadPoolExecutor(max_workers=concurrency,
                                       thread_name_prefix="sanitas-webhook")
        self.inflight = 0
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="sanitas-webhooks", daemon=True)

    def start(self) -> None:
        service.register_waker(self.wake)
        self.thread.start()

    def stop(self) -> None:
        service.unregister_waker(self.wake)
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=10)
        # Attempts under way finish (each is short); a claim left behind lapses anyway.
        self.pool.shutdown(wait=True, cancel_futures=True)

    def alive(self) -> bool:
        return self.thread.is_alive()

    def _loop(self) -> None:
        last_prune = 0.0
        while not self.stopping.is_set():
            try:
                self.send_due()
                if time.monotonic() - last_prune >= PRUNE_INTERVAL:
                    last_prune = time.monotonic()
                    service.prune_deliveries(self.factory)
            except Exception:
                log.exception("webhook sending failed; retrying")
            self.wake.wait(self.settings.webhook_poll_interval_seconds)
            self.wake.clear()

    def send_due(self) -> int:
        with self.lock:
            free = self.concurrency - self.inflight
        claimed = claim_due(self.factory, self.settings, free)
        for delivery_id, token in claimed:
            with self.lock:
                self.inflight += 1
            self.pool.submit(self._attempt, delivery_id, token)
        return len(claimed)

    def _attempt(self, delivery_id: str, token: str) -> None:
        try:
            attempt(self.factory, self.settings, delivery_id, token)
        except Exception:
            log.exception("webhook delivery %s: unexpected error", delivery_id)
        finally:
            with self.lock:
                self.inflight -= 1
            self.wake.set()  # a slot is free: look for more
