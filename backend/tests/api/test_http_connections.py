"""The connections of the real `sanitas serve` (http_limits.EdgeProtocol), over real sockets:
a request head must be complete within SANITAS_HTTP_HEAD_TIMEOUT_SECONDS, a client address may
hold at most SANITAS_HTTP_CONNECTIONS_PER_ADDRESS connections, and the open-file soft limit is
raised to the hard one at start. Test clients connect from several loopback addresses
(127.0.0.x) to stand for several clients."""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.live_server import free_port, start_server, stop_server

HEAD_TIMEOUT = 2.0
PER_ADDRESS = 20
SLOW_CLIENTS = 300


@contextlib.contextmanager
def serving(tmp_path_factory, soft_files: int | None = None, **env: str):
    """`sanitas serve` with `env`, started with an open-file soft limit of `soft_files` (the
    child inherits it) when given."""
    data_dir = tmp_path_factory.mktemp("serve")
    port = free_port()
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft_files is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft_files, limits[1]), limits[1]))
    try:
        proc = start_server(data_dir, port, env)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    try:
        yield port, proc, data_dir
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def quick_deadline(tmp_path_factory):
    """A 2 s head deadline and no per-address cap (every slow client comes from 127.0.0.1)."""
    with serving(tmp_path_factory, soft_files=256,
                 SANITAS_HTTP_HEAD_TIMEOUT_SECONDS=str(HEAD_TIMEOUT),
                 SANITAS_HTTP_CONNECTIONS_PER_ADDRESS="0") as server:
        yield server


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    with serving(tmp_path_factory, SANITAS_HTTP_CONNECTIONS_PER_ADDRESS=str(PER_ADDRESS),
                 SANITAS_HTTP_HEAD_TIMEOUT_SECONDS="60") as server:
        yield server


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=20, source_address=(source, 0))


def closed_by_server(sock: socket.socket) -> bytes | None:
    """What the server sent before closing, or None while it keeps the connection open."""
    sock.setblocking(False)
    data = b""
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                return data
            data += piece
    except BlockingIOError:
        return None
    except ConnectionResetError:
        return data


def health(port: int, source: str = "127.0.0.1") -> int:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=20) as client:
        return client.get(f"http://127.0.0.1:{port}/health").status_code


def envelope(answer: bytes) -> dict:
    return json.loads(answer.partition(b"\r\n\r\n")[2])


def test_slow_heads_are_closed_at_the_deadline_while_others_are_served(quick_deadline):
    port, _, _ = quick_deadline
    started = time.monotonic()
    slow = []
    for _ in range(SLOW_CLIENTS):  # half a head each, then a byte now and then
        sock = connect(port)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(sock)
    silent = connect(port)  # never sends a byte
    opened = time.monotonic() - started
    closed_at: dict[int, float] = {}
    answers: dict[int, bytes] = {}
    served = 0
    deadline = started + HEAD_TIMEOUT + 30  # generous on a loaded machine
    while time.monotonic() < deadline and len(closed_at) < len(slow):
        if not closed_at and health(port) == 200:
            served += 1  # answered while every slow one is held
        for i, sock in enumerate(slow):
            if i in closed_at:
                continue
            answer = closed_by_server(sock)
            if answer is None:
                with contextlib.suppress(OSError):
                    sock.send(b"a")
            else:
                closed_at[i] = time.monotonic() - started
                answers[i] = answer
        time.sleep(0.2)
    silent_answer = closed_by_server(silent)
    for sock in (*slow, silent):
        sock.close()
    assert len(closed_at) == len(slow), f"{len(slow) - len(closed_at)} slow heads still held"
    assert min(closed_at.values()) >= HEAD_TIMEOUT - 0.5  # not before the deadline
    assert served >= 1
    assert max(closed_at.values()) < opened + HEAD_TIMEOUT + 30
    # Part of a head came: 408 in the error envelope (a byte crossing the close may reset the
    # connection before the client reads the answer: those come back empty).
    timed_out = [a for a in answers.values() if a]
    assert len(timed_out) >= len(slow) // 2
    for answer in timed_out:
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
        assert envelope(answer)["error"] == "request_timeout"
    assert silent_answer == b""  # nothing came: closed without an answer
    assert health(port) == 200


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_head(quick_deadline):
    port, _, _ = quick_deadline
    sock = connect(port)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    first = b""
    while b"\r\n\r\n" not in first:
        first += sock.recv(65536)
    assert first.startswith(b"HTTP/1.1 200 ")
    time.sleep(0.5)
    sock.sendall(b"GET /health HTTP/1.1\r\n")  # the next head, never finished
    started = time.monotonic()
    answer = None
    while answer is None and time.monotonic() - started < HEAD_TIMEOUT + 30:
        time.sleep(0.2)
        with contextlib.suppress(OSError):
            sock.send(b"X")
        answer = closed_by_server(sock)
        sock.setblocking(True)
    sock.close()
    assert answer is not None, "the unfinished second head was held"
    assert b"408 Request Timeout" in answer


def test_open_file_soft_limit_is_raised_to_the_hard_limit(quick_deadline):
    _, proc, _ = quick_deadline  # started with a soft limit of 256
    limits = Path(f"/proc/{proc.pid}/limits").read_text()
    line = next(x for x in limits.splitlines() if x.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    assert soft == hard == str(resource.getrlimit(resource.RLIMIT_NOFILE)[1]), line


def test_one_address_is_capped_while_another_is_served(capped):
    port, _, _ = capped
    held = [connect(port, "127.0.0.2") for _ in range(PER_ADDRESS)]
    try:
        time.sleep(0.5)
        assert all(closed_by_server(s) is None for s in held)  # all kept
        for s in held:
            s.setblocking(True)
        extra = connect(port, "127.0.0.2")
        extra.settimeout(20)
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while piece := extra.recv(65536):
                answer += piece
        extra.close()
        assert answer.startswith(b"HTTP/1.1 429 "), answer[:100]
        assert envelope(answer)["error"] == "too_many_connections"
        assert b"retry-after: 5" in answer.lower()
        assert health(port, "127.0.0.3") == 200  # another client is served
    finally:
        for s in held:
            s.close()
    # Closed connections are no longer counted: the address is served again.
    deadline = time.monotonic() + 20
    while health_or_refused(port, "127.0.0.2") != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert health(port, "127.0.0.2") == 200


def health_or_refused(port: int, source: str) -> int:
    try:
        return health(port, source)
    except httpx.HTTPError:
        return 0


def test_upgrade_requests_do_not_leak_the_count(capped):
    """The app serves no WebSocket: an Upgrade request is answered as plain HTTP, and its
    connection's count is given back when it closes (an upgraded one used to keep it)."""
    port, _, _ = capped
    answers = []
    for _ in range(PER_ADDRESS + 5):
        with connect(port, "127.0.0.4") as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                         b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                         b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            answers.append(sock.recv(65536).split(b"\r\n", 1)[0])
    deadline = time.monotonic() + 20
    while health_or_refused(port, "127.0.0.4") != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert health_or_refused(port, "127.0.0.4") == 200, answers[-5:]
    assert set(answers) == {b"HTTP/1.1 200 OK"}, set(answers)
