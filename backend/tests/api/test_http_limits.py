"""Request size limits (http_limits.py): 64 KB bodies outside the upload routes, refused by
Content-Length before reading and by count when streamed; 32 KB request heads on the real
`sanitas serve` (uvicorn h11). The real-server tests start `sanitas serve` as a subprocess
(tests/live_server.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import time

import httpx
import psutil
import pytest

from sanitas.web.http_limits import (
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    SANITIZE_NOW,
    UPLOAD_MULTIPLE,
    UPLOAD_SINGLE,
    BodyLimitMiddleware,
    upload_caps,
)
from tests.factories import auth_headers, make_user
from tests.live_server import free_port, make_users, start_server, stop_server

MB = 1024 * 1024
CONTACT = {"name": "Ann", "email": "ann@example.com", "subject": "Hello",
           "message": "A perfectly ordinary message."}


def assert_413(answer) -> None:
    assert answer.status_code == 413
    body = answer.json()
    assert body["success"] is False and body["error"] == "payload_too_large"
    assert "64 KB" in body["message"]


# -- in process (TestClient), both databases ----------------------------------------------------
def test_oversized_json_is_refused_by_content_length(client):
    padded = dict(CONTACT, message="x" * MAX_BODY_BYTES)
    answer = client.post("/api/contact", json=padded)
    assert_413(answer)
    assert answer.headers["connection"] == "close"
    assert answer.headers["x-content-type-options"] == "nosniff"  # outer middleware too


def test_oversized_streamed_json_is_refused_by_count(client):
    def body():  # no Content-Length: sent chunked
        yield b'{"name": "Ann", "message": "'
        for _ in range(8):
            yield b"x" * 16384
        yield b'"}'

    answer = client.post("/api/contact", content=body(),
                         headers={"Content-Type": "application/json"})
    assert_413(answer)


def test_bodies_under_the_cap_are_read(client, db_session):
    answer = client.post("/api/contact", json=dict(CONTACT, message="y" * 4000))
    assert answer.status_code == 201, answer.text

    def body():
        yield json.dumps(CONTACT).encode()

    streamed = client.post("/api/contact", content=body(),
                           headers={"Content-Type": "application/json"})
    assert streamed.status_code == 201, streamed.text


def test_uploads_keep_their_own_role_limit(client, settings, db_session):
    headers = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    big = b"plain text line\n" * (5 * MB // 16)  # 5 MB: far past 64 KB, within GUEST's 10 MB
    answer = client.post(UPLOAD_SINGLE, headers=headers,
                         files={"file": ("big.txt", big, "text/plain")})
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"]["size"] == len(big)
    too_big = client.post(UPLOAD_SINGLE, headers=headers,
                          files={"file": ("huge.txt", b"z" * (11 * MB), "text/plain")})
    assert too_big.status_code == 413 and too_big.json()["error"] == "file_too_large"


def test_upload_routes_have_an_overall_cap(settings):
    caps = upload_caps(settings)
    largest = max(lim.max_file_size for lim in (p.limits for p in settings.plans.plans))
    most = max(lim.max_file_size * lim.max_files_per_upload
               for lim in (p.limits for p in settings.plans.plans))
    assert caps == {UPLOAD_SINGLE: largest + MB, SANITIZE_NOW: largest + MB,
                    UPLOAD_MULTIPLE: most + MB}


@pytest.mark.parametrize("path, limit", [("/api/contact", MAX_BODY_BYTES),
                                         (UPLOAD_SINGLE, 5 * MB)])
def test_the_middleware_refuses_without_calling_the_app(path, limit):
    asyncio.run(_refuses_without_calling_the_app(path, limit))


async def _refuses_without_calling_the_app(path: str, limit: int) -> None:
    called, sent = [], []

    async def app(scope, receive, send):
        called.append(scope["path"])

    async def receive():
        raise AssertionError("the body must not be read")

    async def send(message):
        sent.append(message)

    middleware = BodyLimitMiddleware(app, path_caps={UPLOAD_SINGLE: 5 * MB})
    scope = {"type": "http", "path": path, "headers": [
        (b"content-length", str(limit + 1).encode())]}
    await middleware(scope, receive, send)
    assert called == [] and sent[0]["status"] == 413
    scope["headers"] = [(b"content-length", str(limit).encode())]
    await middleware(scope, receive, send)
    assert called == [path]


# -- against the real server --------------------------------------------------------------------
@pytest.fixture(scope="module")
def live(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("serve")
    port = free_port()
    proc = start_server(data_dir, port)
    try:
        yield port, proc, data_dir
    finally:
        stop_server(proc)


def raw_exchange(port: int, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head)
    return sock


def read_response(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    data = b""
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
            head, _, body = data.partition(b"\r\n\r\n")
            if b"content-length:" in head.lower():
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(body) >= length:
                    break
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        sock.close()
    return data


def envelope(response: bytes) -> dict:
    return json.loads(response.partition(b"\r\n\r\n")[2])


def test_live_server_refuses_an_oversized_head(live):
    port, _, _ = live
    # h11 refuses an unfinished head past the cap; one that arrives whole in a single read
    # (100 KB often does) is measured once parsed. Either way: 431.
    for size in (100 * 1024, 200 * 1024, 4 * MB):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size
                         + b"\r\n\r\n")
        response = read_response(sock)
        assert response.startswith(b"HTTP/1.1 431 "), (size, response[:100])
        assert envelope(response)["error"] == "headers_too_large"
    # Complete heads of 100 KB sent whole, over a kept-alive connection after a first call:
    # refused once parsed.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"GET /health HTTP/1.1\r\nHost: x\r\n"
                     + b"".join(b"X-Big-%d: %s\r\n" % (i, b"b" * 1000) for i in range(100))
                     + b"\r\n")
        response = b""
        with contextlib.suppress(ConnectionResetError):
            while piece := sock.recv(65536):  # until the server closes
                response += piece
    assert response.startswith(b"HTTP/1.1 200 "), response[:100]
    assert b"HTTP/1.1 431 " in response
    # Heads within the cap are served: 30 KB in one header, or in many.
    assert 30 * 1024 < MAX_HEADER_BYTES < 100 * 1024
    for headers in ({"X-Padding": "p" * (30 * 1024)},
                    {f"X-Pad-{i}": "q" * 1000 for i in range(30)}):
        ok = httpx.get(f"http://127.0.0.1:{port}/health", headers=headers, timeout=10)
        assert ok.status_code == 200


def test_live_server_refuses_by_content_length_without_reading(live):
    port, proc, _ = live
    rss = psutil.Process(proc.pid).memory_info().rss
    started = time.monotonic()
    sock = raw_exchange(port, b"POST /api/contact HTTP/1.1\r\nHost: x\r\n"
                              b"Content-Type: application/json\r\n"
                              b"Content-Length: %d\r\n\r\n{\"name\": \"" % (100 * MB))
    response = read_response(sock)  # answered although 100 MB were announced and not sent
    assert time.monotonic() - started < 5
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert envelope(response)["error"] == "payload_too_large"
    assert psutil.Process(proc.pid).memory_info().rss - rss < 20 * MB


def test_live_server_cuts_a_streamed_body_short(live):
    port, proc, _ = live
    rss = psutil.Process(proc.pid).memory_info().rss
    sock = raw_exchange(port, b"POST /api/contact HTTP/1.1\r\nHost: x\r\n"
                              b"Content-Type: application/json\r\n"
                              b"Transfer-Encoding: chunked\r\n\r\n")
    piece = b"a" * 16384
    chunk = b"%x\r\n" % len(piece) + piece + b"\r\n"
    sent, total = 0, 100 * MB
    started = time.monotonic()
    try:
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            sock.sendall(chunk)
            sent += len(piece)
    except (BrokenPipeError, ConnectionResetError):
        pass
    response = read_response(sock)
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert envelope(response)["error"] == "payload_too_large"
    assert sent < 8 * MB, f"the server read {sent} bytes before refusing"
    assert time.monotonic() - started < 10
    assert psutil.Process(proc.pid).memory_info().rss - rss < 20 * MB


def test_live_server_takes_a_big_upload_within_the_role_limit(live):
    port, _, data_dir = live
    headers = make_users(data_dir, 1)[0]  # ENTERPRISE: 1 GB per file
    content = b"".join(b"line %08d of a big plain text file\n" % i
                       for i in range(24 * MB // 36))  # 24 MB: past GUEST's 10 MB

    def chunks():  # streamed (chunked), as a browser behind a proxy may send it
        boundary = b"sanitasboundary"
        yield (b"--" + boundary + b'\r\nContent-Disposition: form-data; name="file"; '
               b'filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n')
        for start in range(0, len(content), MB):
            yield content[start:start + MB]
        yield b"\r\n--" + boundary + b"--\r\n"

    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers,
                      timeout=120) as http:
        answer = http.post(UPLOAD_SINGLE, files={"file": ("big.txt", content, "text/plain")})
        assert answer.status_code == 201, answer.text
        assert answer.json()["data"]["size"] == len(content)
        streamed = http.post(UPLOAD_SINGLE, content=chunks(), headers={
            "Content-Type": "multipart/form-data; boundary=sanitasboundary"})
        assert streamed.status_code == 201, streamed.text
        assert streamed.json()["data"]["size"] == len(content)
