"""Webhook endpoints for tests, on loopback ports, in threads of the test process: `Receiver`
checks each request's signature with the standardwebhooks library's own verifier and answers
with scripted statuses (then 200); `Drip` answers one byte at a time, forever."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    verified: bool  # the library's verify() accepted it with the receiver's secret
    answered: int

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    port: int = 0
    secret: str | None = None  # set once the webhook is created
    statuses: list[int] = field(default_factory=list)  # answered in turn, then `default`
    default: int = 200
    location: str | None = None  # with a 3xx answer
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/sanitas"

    def handle(self, path: str, headers: dict[str, str], body: bytes) -> int:
        verified = False
        if self.secret is not None:
            try:
                Webhook(self.secret).verify(body, headers)
                verified = True
            except WebhookVerificationError:
                verified = False
        with self.lock:
            status = self.statuses.pop(0) if self.statuses else self.default
            self.received.append(Received(path, headers, body, verified, status))
        return status

    def of_type(self, event_type: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.payload.get("type") == event_type]

    def wait_for(self, event_type: str, count: int = 1, timeout: float = 60) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of_type(event_type)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"the receiver got {len(self.of_type(event_type))} {event_type} "
                             f"request(s), not {count}: {self.received}")


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status = self.receiver.handle(self.path, dict(self.headers.items()), body)
        self.send_response(status)
        if 300 <= status < 400 and self.receiver.location:
            self.send_header("Location", self.receiver.location)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_: object) -> None:
        pass


class running:
    """`with running(Receiver(...)) as receiver:` serves it on a free loopback port."""

    def __init__(self, receiver: Receiver) -> None:
        handler = type("Handler", (_Handler,), {"receiver": receiver})
        self.server = ThreadingHTTPServer(("127.0.0.1", receiver.port), handler)
        receiver.port = self.server.server_address[1]
        self.receiver = receiver
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self.receiver

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class Drip:
    """An endpoint that never finishes answering: on each connection it reads the request,
    then sends `prefix` and one more byte every `interval` seconds (a response head that never
    ends, or with a TLS record header as prefix, a handshake that never completes), until the
    client goes away, `stop()` is called, or `give_up_after` seconds have passed (so that a
    client without a deadline fails a test instead of hanging it).

    `with Drip() as drip:` serves it on a free loopback port."""

    HEAD = b"HTTP/1.1 200 OK\r\nX-Drip: "
    TLS_RECORD = b"\x16\x03\x03\x40\x00"  # a 16 KB handshake record that never arrives

    def __init__(self, prefix: bytes = HEAD, interval: float = 1.0,
                 give_up_after: float = 40.0) -> None:
        self.prefix, self.interval, self.give_up_after = prefix, interval, give_up_after
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.opened: list[float] = []  # monotonic time each connection was accepted
        self.closed: list[float] = []  # ... and when the client went away
        self.threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/drip"

    @property
    def open_connections(self) -> int:
        with self.lock:
            return len(self.opened) - len(self.closed)

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self.lock:
                self.opened.append(time.monotonic())
            thread = threading.Thread(target=self._drip, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _drip(self, conn: socket.socket) -> None:
        started = time.monotonic()
        try:
            conn.settimeout(2)
            with contextlib.suppress(TimeoutError):
                conn.recv(65536)  # the request (whatever of it has arrived)
            conn.sendall(self.prefix)
            while not self.stopping.wait(self.interval):
                if time.monotonic() - started > self.give_up_after:
                    break
                conn.sendall(b"a")
        except OSError:
            pass  # the client went away
        finally:
            with self.lock:
                self.closed.append(time.monotonic())
            conn.close()

    def __enter__(self) -> Drip:
        thread = threading.Thread(target=self._serve, daemon=True)
        self.threads.append(thread)
        thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.listener.close()
        for thread in list(self.threads):
            thread.join(timeout=10)

    def __exit__(self, *_: object) -> None:
        self.stop()
