"""The ICAP wire rules of `sanitas icap`, over raw sockets: malformed requests get an ICAP
error (and the connection closed when it is out of step), a kept-alive connection serves
several requests, and a preview is answered with 100 Continue before the rest is read."""

from __future__ import annotations

import io
import socket
import time
import zipfile

from tests.icap.icapkit import Icap, read_head


def _connect(icap: Icap) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", icap.port), timeout=30)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while piece := sock.recv(65536):
        data += piece
    return data


def _options(service: str = "sanitize", extra: str = "") -> bytes:
    return (f"OPTIONS icap://127.0.0.1/{service} ICAP/1.0\r\nHost: 127.0.0.1\r\n{extra}\r\n"
            ).encode()


def test_keep_alive_serves_several_requests_and_a_404_keeps_it(icap: Icap):
    with _connect(icap) as sock:
        sock.sendall(_options("nowhere"))
        assert read_head(sock).startswith(b"ICAP/1.0 404 ")
        sock.sendall(_options())
        assert read_head(sock).startswith(b"ICAP/1.0 200 OK")
        sock.sendall(_options(extra="Connection: close\r\n"))
        answer = _read_all(sock)
        assert answer.startswith(b"ICAP/1.0 200 OK")


def test_malformed_requests_are_refused_and_closed(icap: Icap):
    cases = {
        b"GET / HTTP/1.1\r\n\r\n": b"ICAP/1.0 505",  # HTTP sent to the ICAP port
        b"GET icap://h/sanitize ICAP/1.0\r\n\r\n": b"ICAP/1.0 501",
        b"OPTIONS icap://h/sanitize ICAP/2.0\r\n\r\n": b"ICAP/1.0 505",
        b"OPTIONS icap://h/sanitize ICAP/1.0\r\nBad header\r\n\r\n": b"ICAP/1.0 400",
        b"RESPMOD icap://h/sanitize ICAP/1.0\r\n\r\n": b"ICAP/1.0 400",  # no Encapsulated
        b"RESPMOD icap://h/sanitize ICAP/1.0\r\nEncapsulated: res-hdr=5, res-body=1\r\n\r\n":
            b"ICAP/1.0 400",
        b"OPTIONS icap://h/sanitize ICAP/1.0\r\nX: " + b"a" * 20000 + b"\r\n\r\n":
            b"ICAP/1.0 400",
    }
    for request, expected in cases.items():
        with _connect(icap) as sock:
            sock.sendall(request)
            answer = _read_all(sock)  # the server closes the connection
            assert answer.startswith(expected), (request[:60], answer[:200])
            assert b"X-Sanitas-Error: " in answer


def _respmod(body_start: bytes, *, preview: int | None, http_head: bytes,
             path: str = "/f.docm") -> bytes:
    head = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    enc = f"req-hdr=0, res-hdr={len(head)}, res-body={len(head) + len(http_head)}"
    lines = ["RESPMOD icap://127.0.0.1/sanitize ICAP/1.0", "Host: 127.0.0.1",
             f"Encapsulated: {enc}", "Allow: 204"]
    if preview is not None:
        lines.append(f"Preview: {preview}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + head + http_head + body_start


def test_bad_chunk_size_is_refused(icap: Icap, samples):
    http_head = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n"
    with _connect(icap) as sock:
        sock.sendall(_respmod(b"zz\r\nabc\r\n0\r\n\r\n", preview=None, http_head=http_head))
        answer = _read_all(sock)
    assert answer.startswith(b"ICAP/1.0 400") and b"bad_chunk" in answer


def test_preview_then_100_continue_then_the_rest(icap: Icap, samples):
    data = samples["macro.docm"].read_bytes()
    http_head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n").encode()
    first, rest = data[:1024], data[1024:]
    with _connect(icap) as sock:
        sock.sendall(_respmod(b"400\r\n" + first + b"\r\n0\r\n\r\n", preview=1024,
                              http_head=http_head))
        assert read_head(sock) == b"ICAP/1.0 100 Continue\r\n\r\n"
        sock.sendall(b"%x\r\n" % len(rest) + rest + b"\r\n0\r\n\r\n")
        head = read_head(sock)
        assert head.startswith(b"ICAP/1.0 200 OK")
        sock.shutdown(socket.SHUT_WR)
        answer = head + _read_all(sock)
    _, _, rest_bytes = answer.partition(b"\r\n\r\n")
    http_head_out, _, chunked = rest_bytes.partition(b"\r\n\r\n")
    assert b"Content-Type: application/vnd.openxmlformats" in http_head_out
    body = b""
    while chunked:
        size_line, _, chunked = chunked.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        body, chunked = body + chunked[:size], chunked[size + 2:]
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert not any("vbaproject" in n.lower() for n in archive.namelist())


def test_preview_of_an_unsupported_type_asks_for_the_rest_before_it_passes(icap: Icap, samples):
    """A type the engine does not take passes unchanged only once all of it was seen: a
    ZIP's end record, at the end, may make it an archive (issue 19)."""
    data = samples["font.woff2"].read_bytes()
    http_head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(data)}\r\n\r\n".encode()
    with _connect(icap) as sock:
        sock.sendall(_respmod(b"400\r\n" + data[:1024] + b"\r\n0\r\n\r\n", preview=1024,
                              http_head=http_head, path="/font.woff2"))
        assert read_head(sock) == b"ICAP/1.0 100 Continue\r\n\r\n"
        rest = data[1024:]
        sock.sendall(b"%x\r\n" % len(rest) + rest + b"\r\n0\r\n\r\n")
        head = read_head(sock)
    assert head.startswith(b"ICAP/1.0 204 No Content") and b"unsupported_type" in head


def test_silence_mid_request_is_408_and_idle_connections_are_closed(tmp_path):
    from tests.icap.icapkit import start_icap, stop_icap

    server = start_icap(tmp_path / "slow", icap_timeout_seconds="1")
    try:
        with _connect(server) as sock:  # idle between requests: closed, nothing said
            assert _read_all(sock) == b""
        head = b"GET /f HTTP/1.1\r\nHost: x\r\n\r\n"
        res = b"HTTP/1.1 200 OK\r\n\r\n"
        with _connect(server) as sock:  # the body stops coming mid-request
            sock.sendall(b"RESPMOD icap://127.0.0.1/sanitize ICAP/1.0\r\nHost: h\r\n"
                         b"Encapsulated: req-hdr=0, res-hdr=%d, res-body=%d\r\n\r\n"
                         % (len(head), len(head) + len(res)) + head + res + b"10\r\nabc")
            answer = _read_all(sock)
        assert answer.startswith(b"ICAP/1.0 408") and b"Connection: close" in answer
    finally:
        stop_icap(server)


def test_one_address_cannot_hold_every_connection(tmp_path):
    """Issue 19: slow connections from one address took the whole cap, and everyone else's
    OPTIONS got 503. With a cap of 4, one address may hold 2 (half, by default); a second
    address (127.0.0.2) is still answered while 127.0.0.1 holds its share, and the share is
    what OPTIONS advertises as Max-Connections."""
    from tests.icap.icapkit import start_icap, stop_icap

    server = start_icap(tmp_path / "cap", icap_max_connections="4", icap_timeout_seconds="20")
    held: list[socket.socket] = []
    try:
        for _ in range(2):  # silent connections: each waits up to the timeout for a request
            held.append(_connect(server))
        with _connect(server) as sock:  # a third from the same address: refused at once
            refused = _read_all(sock)
        assert refused.startswith(b"ICAP/1.0 503 "), refused
        assert b"client_overloaded" in refused
        for _ in range(3):  # another address is served, on fresh connections each time
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
                other.settimeout(30)
                other.bind(("127.0.0.2", 0))
                other.connect(("127.0.0.1", server.port))
                other.sendall(_options(extra="Connection: close\r\n"))
                answer = _read_all(other)
            assert answer.startswith(b"ICAP/1.0 200 OK"), answer
            assert b"Max-Connections: 2\r\n" in answer
        for sock in held:  # the address's share frees up when its connections end
            sock.close()
        held.clear()
        deadline = time.monotonic() + 20
        while True:
            with _connect(server) as sock:
                sock.sendall(_options(extra="Connection: close\r\n"))
                answer = _read_all(sock)
            if answer.startswith(b"ICAP/1.0 200 OK") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert answer.startswith(b"ICAP/1.0 200 OK"), answer
    finally:
        for sock in held:
            sock.close()
        stop_icap(server)
