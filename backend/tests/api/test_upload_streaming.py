"""Against a real HTTP server: an oversized upload without Content-Length (chunked) is refused
with 413 while it is still being sent: the server does not read (or buffer) the rest."""

from __future__ import annotations

import select
import socket

import pytest

from tests.factories import auth_headers, make_user
from tests.live_server import app_server

LIMIT = 256 * 1024


@pytest.fixture
def server(settings):
    settings.plans["GUEST"].limits = settings.plans["GUEST"].limits.model_copy(
        update={"max_file_size": LIMIT})
    with app_server(settings) as port:
        yield port


def test_chunked_oversized_upload_is_cut_short(server, settings, db_session):
    token = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    head = (b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\n"
            b"Content-Type: text/plain\r\n\r\n")
    sock = socket.create_connection(("127.0.0.1", server))
    sock.sendall(b"POST /api/upload/single HTTP/1.1\r\nHost: x\r\n"
                 b"Authorization: " + token["Authorization"].encode() + b"\r\n"
                 b"Content-Type: multipart/form-data; boundary=B\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")

    def chunk(data: bytes) -> bytes:
        return b"%x\r\n" % len(data) + data + b"\r\n"

    sock.sendall(chunk(head))
    sent, total, piece = 0, 64 * 1024 * 1024, b"a" * 16384
    response = b""
    try:
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            sock.sendall(chunk(piece))
            sent += len(piece)
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(10)
    try:
        while b"\r\n\r\n" not in response or not response.rstrip().endswith(b"}"):
            data = sock.recv(65536)
            if not data:
                break
            response += data
    finally:
        sock.close()
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert b'"big.txt\\" is larger than the 256 KB limit' in response
    assert sent < 8 * 1024 * 1024, f"the server read {sent} bytes before refusing"
    assert not any((settings.data_dir / "tmp").rglob("upload-*"))
