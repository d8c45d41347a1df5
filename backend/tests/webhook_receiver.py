"""A webhook endpoint for tests: an HTTP server on a loopback port, in a thread of the test
process, that checks each request's signature with the standardwebhooks library's own
verifier and answers with scripted statuses (then 200)."""

from __future__ import annotations

import json
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
