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
(a 3xx is a failed attempt), proxies from the environment are not used, and the response
body is never read.

Time: every step of an attempt (resolving, connecting, the TLS handshake, each write and each
read of the answer's head) has SANITAS_WEBHOOK_TIMEOUT_SECONDS, and the attempt as a whole
SANITAS_WEBHOOK_DEADLINE_SECONDS (`Deadline`): each blocking socket call is given at most what
is left of it, and a watchdog shuts the connection down when it runs out, so an endpoint that
answers one byte at a time cannot hold a sender longer than the deadline.

Sharing: a sender makes SANITAS_WEBHOOK_SENDERS attempts at once, and one account's attempts
take at most SANITAS_WEBHOOK_ACCOUNT_SHARE of them (`account_cap`): claiming skips the
deliveries of accounts already at their cap, so slow endpoints of one account delay its own
deliveries, never another account's.

Retries back off: RETRY_MULTIPLIERS times SANITAS_WEBHOOK_RETRY_BASE_SECONDS (30 s: 30 s,
2, 5, 15, 30 min, 1, 2, 4, 8, 8 h, about a day in all), then the delivery is given up.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import os
import random
import socket
import ssl
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple
from urllib.parse import quote

import httpcore
import httpx
from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement
from standardwebhooks import Webhook as Signer

from sanitas import sealing
from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.models.webhook import DeliveryState, Webhook, WebhookDelivery
from sanitas.web import metrics
from sanitas.web.schemas import iso
from sanitas.webhooks import service, ssrf

log = logging.getLogger(__name__)

# Delay before retry n (n = 1, 2, ...), in units of webhook_retry_base_seconds.
RETRY_MULTIPLIERS = (1, 4, 10, 30, 60, 120, 240, 480, 960, 960)
MAX_ATTEMPTS = len(RETRY_MULTIPLIERS) + 1
USER_AGENT = "Sanitas-Webhooks/1"
ERROR_MAX = 300
PRUNE_INTERVAL = 3600.0  # seconds between removals of deliveries past their keeping time
_PRINTABLE_ASCII = "".join(chr(c) for c in range(0x21, 0x7F))  # kept as is in the request line


def retry_delay(settings: Settings, attempts: int) -> float | None:
    """Seconds to wait after `attempts` failed attempts; None once they are used up. Up to
    10% is added at random, so deliveries that failed together do not all retry together."""
    if attempts >= MAX_ATTEMPTS:
        return None
    base = settings.webhook_retry_base_seconds * RETRY_MULTIPLIERS[attempts - 1]
    return base * (1 + random.random() / 10)  # noqa: S311 - spreading retries, not a secret


def lease_seconds(settings: Settings) -> float:
    """How long a claim holds: longer than any attempt can take (its deadline)."""
    return 60 + settings.webhook_deadline_seconds


def account_cap(settings: Settings, senders: int) -> int:
    """How many of `senders` attempts at once one account's deliveries may take."""
    return max(1, math.ceil(settings.webhook_account_share * senders - 1e-9))


def _claim_token() -> str:
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:16]}"


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(WebhookDelivery.state == DeliveryState.PENDING,
                WebhookDelivery.next_attempt_at <= now,
                or_(WebhookDelivery.claimed_until.is_(None),
                    WebhookDelivery.claimed_until < now))


class Claim(NamedTuple):
    delivery_id: str
    token: str
    account_id: str  # the endpoint's owner


def claim_due(factory: sessionmaker[Session], settings: Settings, limit: int,
              busy: Mapping[str, int] | None = None,
              per_account: int | None = None) -> list[Claim]:
    """Claim up to `limit` due deliveries, oldest due first. With `per_account`, an account
    that already has that many attempts under way (`busy`, by account id, plus those claimed
    here) is skipped: its deliveries wait and other accounts' are claimed instead."""
    if limit <= 0:
        return []
    now = utcnow()
    counts = Counter(busy or {})
    taken: list[Claim] = []
    with factory() as s:
        while len(taken) < limit:
            full = sorted(a for a, n in counts.items()
                          if per_account is not None and n >= per_account)
            query = (select(WebhookDelivery.id, Webhook.user_id)
                     .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
                     .where(_due(now))
                     .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
                     .limit((limit - len(taken)) * 2))
            if full:
                query = query.where(Webhook.user_id.not_in(full))
            candidates = s.execute(query).all()
            claimed_any = skipped = False
            for delivery_id, account_id in candidates:
                if per_account is not None and counts[account_id] >= per_account:
                    skipped = True
                    continue
                token = _claim_token()
                result = s.execute(
                    update(WebhookDelivery).where(WebhookDelivery.id == delivery_id, _due(now))
                    .values(claim_token=token,
                            claimed_until=now + timedelta(seconds=lease_seconds(settings)))
                    .execution_options(synchronize_session=False))
                s.commit()
                if rows_matched(result) == 1:
                    taken.append(Claim(delivery_id, token, account_id))
                    counts[account_id] += 1
                    claimed_any = True
                    if len(taken) >= limit:
                        break
            # Look again, past the accounts that have just reached their cap, unless nothing
            # was claimed (nothing is due, or other senders took it) or nothing was passed over.
            if not claimed_any or not skipped:
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


def _describe(exc: Exception, deadline: Deadline) -> str:
    if deadline.passed or isinstance(exc, httpcore.TimeoutException):
        if deadline.passed:
            return (f"The endpoint did not answer in time (an attempt may take "
                    f"{deadline.seconds:g} s in all).")
        return "The endpoint did not answer in time."
    if isinstance(exc, httpcore.ConnectError):
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return "The endpoint's TLS certificate could not be verified."
        return "Could not connect to the endpoint."
    return f"The request failed ({type(exc).__name__})."


class Deadline:
    """The time one attempt may take in all. Each blocking step of its connection is given at
    most what is left (`left`), and a watchdog thread shuts the connection's sockets down the
    moment it runs out (waking a call blocked in them), so no step outlives it however the
    endpoint sends, byte by byte or not at all."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.expired = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._watchdog = threading.Timer(seconds, self._expire)
        self._watchdog.daemon = True
        self._watchdog.start()

    @property
    def passed(self) -> bool:
        return self.expired.is_set() or time.monotonic() >= self.ends

    def left(self, step: float | None = None) -> float:
        """Seconds the next step may take: its own limit or what is left, whichever is less.
        Raises TimeoutError when nothing is left."""
        remaining = self.ends - time.monotonic()
        if remaining <= 0 or self.expired.is_set():  # (the watchdog may fire a little late)
            raise TimeoutError("the attempt's deadline has passed")
        return remaining if step is None else min(step, remaining)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired.is_set()
        if expired:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        # The plain socket's shutdown, also for a TLS socket: the TLS one's would drop its
        # SSL object under the thread that is using it. OSError: not connected, or closed.
        with suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def _expire(self) -> None:
        self.expired.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            self._shut(sock)

    def cancel(self) -> None:
        self._watchdog.cancel()


@contextmanager
def _mapped(deadline: Deadline, timeout: type[Exception],
            error: type[Exception]) -> Iterator[None]:
    """Socket errors as httpcore's: `timeout` when the step's limit or the deadline ran out."""
    try:
        yield
    except TimeoutError as exc:
        raise timeout(str(exc)) from exc
    except OSError as exc:
        if deadline.expired.is_set():
            raise timeout("the attempt's deadline has passed") from exc
        raise error(str(exc)) from exc


class _Stream(httpcore.NetworkStream):
    """A connection whose every call is bounded by the step's timeout and the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self.sock, self.deadline = sock, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(self.deadline, httpcore.ReadTimeout, httpcore.ReadError):
            self.sock.settimeout(self.deadline.left(timeout))
            data = self.sock.recv(max_bytes)
        if not data and self.deadline.expired.is_set():  # the watchdog shut it
            raise httpcore.ReadTimeout("the attempt's deadline has passed")
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _mapped(self.deadline, httpcore.WriteTimeout, httpcore.WriteError):
            while buffer:
                self.sock.settimeout(self.deadline.left(timeout))
                buffer = buffer[self.sock.send(buffer):]

    def close(self) -> None:
        self.sock.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        with _mapped(self.deadline, httpcore.ConnectTimeout, httpcore.ConnectError):
            try:
                self.sock.settimeout(self.deadline.left(timeout))
                tls = ssl_context.wrap_socket(self.sock, server_hostname=server_hostname,
                                              do_handshake_on_connect=False)
                self.deadline.watch(tls)
                tls.do_handshake()
            except BaseException:
                self.close()
                raise
        return _Stream(tls, self.deadline)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object" and isinstance(self.sock, ssl.SSLSocket):
            return self.sock._sslobj  # type: ignore[attr-defined]  # httpcore reads ALPN from it
        if info == "socket":
            return self.sock
        if info == "server_addr":
            return self.sock.getpeername()
        if info == "client_addr":
            return self.sock.getsockname()
        return None


class _Backend(httpcore.NetworkBackend):
    """Connections for one attempt: only to an address literal (a checked one), each socket
    watched by the attempt's deadline from before it connects."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        try:
            family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 \
                else socket.AF_INET
        except ValueError:
            raise httpcore.ConnectError(f"{host!r} is not a checked address") from None
        with _mapped(self.deadline, httpcore.ConnectTimeout, httpcore.ConnectError):
            sock = socket.socket(family, socket.SOCK_STREAM)
            self.deadline.watch(sock)
            try:
                sock.settimeout(self.deadline.left(timeout))
                sock.connect((host, port))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except BaseException:
                sock.close()
                raise
        return _Stream(sock, self.deadline)


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
    """POST `body` to `url`, at an address checked just now, within the attempt's deadline.
    Never raises."""
    started = time.monotonic()
    deadline = Deadline(settings.webhook_deadline_seconds)
    try:
        status, error = _post(settings, deadline, url, body, headers)
    finally:
        deadline.cancel()
    return AttemptResult(status, error and error[:ERROR_MAX],
                         int((time.monotonic() - started) * 1000))


def _post(settings: Settings, deadline: Deadline, url: str, body: str,
          headers: dict[str, str]) -> tuple[int | None, str | None]:
    step = settings.webhook_timeout_seconds
    try:
        target = ssrf.resolve_target(url, settings.webhook_allow_private, deadline.left(step))
    except ssrf.UnsafeUrl as exc:
        return None, exc.message
    extensions: dict[str, Any] = {}
    context: ssl.SSLContext | None = None
    if target.url.scheme == "https":
        extensions["sni_hostname"] = target.host  # and the certificate is checked against it
        try:
            context = tls_context(settings)
        except (OSError, ssl.SSLError) as exc:
            return None, ("SANITAS_WEBHOOK_CA_BUNDLE could not be read "
                          f"({settings.webhook_ca_bundle}: {exc}).")
    extensions["timeout"] = {"connect": step, "read": step, "write": step, "pool": step}
    path = target.url.path or "/"
    request_headers = [(k, v) for k, v in headers.items()] + [
        ("Host", target.url.netloc), ("Content-Type", "application/json"),
        ("User-Agent", USER_AGENT)]
    content = body.encode("utf-8")
    status: int | None = None
    error: str | None = None
    # The checked addresses in turn, while one cannot be connected to (at most three).
    for address in target.addresses[:3]:
        request_url = httpcore.URL(
            scheme=target.url.scheme.encode("ascii"), host=str(address).encode("ascii"),
            port=target.port,
            target=quote(path + (f"?{target.url.query}" if target.url.query else ""),
                         safe=_PRINTABLE_ASCII).encode("ascii"))
        try:
            with httpcore.ConnectionPool(ssl_context=context, retries=0,
                                         network_backend=_Backend(deadline)) as pool, \
                    pool.stream("POST", request_url, headers=request_headers, content=content,
                                extensions=extensions) as response:
                # The head is in; the body is not read (closing drops the connection).
                status, error = response.status, None
                break
        except httpcore.ConnectError as exc:
            error = _describe(exc, deadline)
            if "certificate" in error:
                break
        except Exception as exc:  # noqa: BLE001 - whatever the endpoint did, the attempt failed
            error = _describe(exc, deadline)
            break
    if status is None:
        return None, error
    if 200 <= status < 300:
        return status, None
    if 300 <= status < 400:
        return status, f"The endpoint answered a redirect ({status}), which is not followed."
    return status, f"The endpoint answered {status}."


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
        except sealing.SecretUnavailable:
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
                 concurrency: int | None = None) -> None:
        self.settings, self.factory = settings, factory
        self.concurrency = concurrency or settings.webhook_senders
        self.per_account = account_cap(settings, self.concurrency)
        self.pool = ThreadPoolExecutor(max_workers=self.concurrency,
                                       thread_name_prefix="sanitas-webhook")
        self.inflight = 0
        self.busy: Counter[str] = Counter()  # attempts under way, by account
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
        # Attempts under way finish (within their deadline); a claim left behind lapses anyway.
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
            busy = dict(self.busy)
        claimed = claim_due(self.factory, self.settings, free, busy, self.per_account)
        for claim in claimed:
            with self.lock:
                self.inflight += 1
                self.busy[claim.account_id] += 1
            self.pool.submit(self._attempt, claim)
        return len(claimed)

    def _attempt(self, claim: Claim) -> None:
        try:
            attempt(self.factory, self.settings, claim.delivery_id, claim.token)
        except Exception:
            log.exception("webhook delivery %s: unexpected error", claim.delivery_id)
        finally:
            with self.lock:
                self.inflight -= 1
                self.busy[claim.account_id] -= 1
                if self.busy[claim.account_id] <= 0:
                    del self.busy[claim.account_id]
            self.wake.set()  # a slot is free: look for more
