"""Every well-formed RFC 3507 combination of Encapsulated sections gets a real answer
(issue 19): RESPMOD without the response head (c-icap-client -noreshdr), with or without the
request head and a preview, REQMOD with and without a body, and without its head. A body
without its HTTP head is judged as a 200 response (or a request) with no fields; the answer
then carries no head either, unless it is a block page (a whole new response)."""

from __future__ import annotations

import io
import socket
import zipfile

import pytest

from tests.icap.icapkit import Icap, client, read_head

URL = "http://files.example/in/upload"
COMBINATIONS = [
    ("-noreshdr",),
    ("-noreshdr", "-nopreview"),
    ("-noreshdr", "-resp", URL),
    ("-noreshdr", "-resp", URL, "-nopreview"),
    ("-resp", URL),
    ("-resp", URL, "-nopreview"),
    ("-req", URL, "-method", "POST"),
    ("-req", URL, "-method", "POST", "-nopreview"),
    ("-req", URL, "-method", "POST", "-noreshdr"),
]


@pytest.mark.parametrize("args", COMBINATIONS, ids=" ".join)
def test_c_icap_client_combinations_get_real_answers(icap: Icap, samples, tmp_path, args):
    clean = client(icap.port, "sanitize", *args, body=samples["clean.png"],
                   out=tmp_path / "clean")
    assert clean.status == 204, clean.text
    blocked = client(icap.port, "sanitize", *args, body=samples["tool.exe"],
                     out=tmp_path / "exe")
    assert blocked.status == 200, blocked.text
    assert "HTTP/1.1 403 Forbidden" in blocked.text
    assert blocked.header("X-Sanitas-Code") == "executable", blocked.text
    assert "not accepted" in (blocked.body or b"").decode()


@pytest.mark.parametrize("args", [("-noreshdr",), ("-noreshdr", "-resp", URL, "-nopreview")],
                         ids=" ".join)
def test_sanitized_body_without_a_response_head(icap: Icap, samples, tmp_path, args):
    """No head came, so none goes back: the answer is the cleaned body alone."""
    answer = client(icap.port, "sanitize", *args, body=samples["macro.docm"],
                    out=tmp_path / "out")
    assert answer.status == 200, answer.text
    assert (answer.header("Encapsulated") or "").replace(" ", "") == "res-body=0", answer.text
    assert (answer.header("X-Sanitas") or "").startswith("sanitized"), answer.text
    assert answer.body is not None and answer.body[:2] == b"PK"
    with zipfile.ZipFile(io.BytesIO(answer.body)) as archive:
        names = archive.namelist()
    assert "word/document.xml" in names
    assert not any("vbaproject" in n.lower() for n in names), names


def _exchange(icap: Icap, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", icap.port), timeout=30) as sock:
        sock.sendall(request)
        return read_head(sock)


def _request(method: str, sections: list[tuple[str, bytes]], body_name: str,
             body: bytes | None, *, allow_204: bool = True) -> bytes:
    offsets, at = [], 0
    for name, data in sections:
        offsets.append(f"{name}={at}")
        at += len(data)
    offsets.append(f"{body_name}={at}")
    lines = [f"{method} icap://127.0.0.1/sanitize ICAP/1.0", "Host: 127.0.0.1",
             f"Encapsulated: {', '.join(offsets)}", "Connection: close"]
    if allow_204:
        lines.append("Allow: 204")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + b"".join(d for _, d in sections)
    if body is not None:
        raw += b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    return raw


GET = b"GET /report HTTP/1.1\r\nHost: files.example\r\n\r\n"


@pytest.mark.parametrize("allow_204", [True, False])
def test_respmod_with_only_the_request_head_and_no_body(icap: Icap, allow_204):
    answer = _exchange(icap, _request("RESPMOD", [("req-hdr", GET)], "null-body", None,
                                      allow_204=allow_204))
    if allow_204:
        assert answer.startswith(b"ICAP/1.0 204 "), answer
    else:
        assert answer.startswith(b"ICAP/1.0 200 OK"), answer
        assert b"Encapsulated: null-body=0\r\n" in answer


@pytest.mark.parametrize("allow_204", [True, False])
def test_reqmod_without_any_section_but_a_null_body(icap: Icap, allow_204):
    answer = _exchange(icap, _request("REQMOD", [], "null-body", None, allow_204=allow_204))
    expected = b"ICAP/1.0 204 " if allow_204 else b"ICAP/1.0 200 OK"
    assert answer.startswith(expected), answer
    assert b"Encapsulated: null-body=0\r\n" in answer


def test_reqmod_body_without_its_request_head(icap: Icap, samples):
    clean = _exchange(icap, _request("REQMOD", [], "req-body",
                                     samples["clean.png"].read_bytes()))
    assert clean.startswith(b"ICAP/1.0 204 "), clean
    blocked = _exchange(icap, _request("REQMOD", [], "req-body",
                                       samples["tool.exe"].read_bytes()))
    assert blocked.startswith(b"ICAP/1.0 200 OK"), blocked
    assert b"X-Sanitas: blocked; executable" in blocked
