"""ICAP over TLS (SANITAS_ICAP_TLS_*): `sanitas icap` with a certificate of a CA made here,
driven by Python's ssl and by c-icap-client -tls; plain and stalled clients; client
certificates (mutual TLS); bad files stop the server at start; `sanitas doctor`'s check.

Squid over icaps:// needs a Squid built with OpenSSL: Debian's squid package (the GnuTLS
build) ignores icap_service's tls-* options ("requires --with-openssl") and fails an
assertion on the first icaps transaction. The Squid tests run with squid-openssl's binary
(installed, or SANITAS_TEST_SQUID_OPENSSL) and are skipped, saying so, without one."""

from __future__ import annotations

import io
import shutil
import socket
import ssl
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sanitas import doctor
from sanitas.config import Settings
from sanitas.icap.tls import TlsSetupError, server_context
from tests.icap.icapkit import (
    Icap,
    TlsFiles,
    WebServer,
    make_tls_files,
    need,
    openssl_squid,
    start_icap,
    start_squid,
    stop_icap,
    stop_squid,
)

TIMEOUT = 3  # the server's read timeout, so also its handshake timeout


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("icap-tls"))


@pytest.fixture(scope="module")
def tls_icap(tmp_path_factory, tls) -> Iterator[Icap]:
    server = start_icap(tmp_path_factory.mktemp("icap-tls-data"), icap_tls_cert=tls.server_cert,
                        icap_tls_key=tls.server_key, icap_timeout_seconds=TIMEOUT)
    try:
        yield server
    finally:
        stop_icap(server)


@pytest.fixture(scope="module")
def mutual_icap(tmp_path_factory, tls) -> Iterator[Icap]:
    server = start_icap(tmp_path_factory.mktemp("icap-mtls-data"),
                        icap_tls_cert=tls.server_cert, icap_tls_key=tls.server_key,
                        icap_tls_client_ca=tls.client_ca, icap_timeout_seconds=TIMEOUT)
    try:
        yield server
    finally:
        stop_icap(server)


def _context(tls: TlsFiles, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(tls.ca))
    if cert is not None:
        context.load_cert_chain(cert, key)
    return context


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    """Send `request`, read the answer up to the end of its body (or of its head when it has
    none), or until the server closes."""
    sock.sendall(request)
    data = b""
    while True:
        piece = sock.recv(65536)
        if not piece:
            return data
        data += piece
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep and b"null-body=" in head:
            return data
        if sep and b"res-body=" in head:
            # the body starts at its Encapsulated offset (a header value may end in "0")
            offset = int(head.split(b"res-body=")[1].split(b"\r\n")[0].split(b",")[0])
            if rest[offset:].endswith(b"0\r\n\r\n"):
                return data


def _options(port: int, context: ssl.SSLContext) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as sock:
        assert sock.version() in ("TLSv1.2", "TLSv1.3")
        return _exchange(sock, f"OPTIONS icap://127.0.0.1:{port}/sanitize ICAP/1.0\r\n"
                               f"Host: 127.0.0.1\r\n\r\n".encode())


def _respmod(port: int, name: str, body: bytes) -> bytes:
    req = f"GET /{name} HTTP/1.1\r\nHost: files.example\r\n\r\n".encode()
    res = (f"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode()
    return (f"RESPMOD icap://127.0.0.1:{port}/sanitize ICAP/1.0\r\nHost: 127.0.0.1\r\n"
            f"Allow: 204\r\nEncapsulated: req-hdr=0, res-hdr={len(req)}, "
            f"res-body={len(req) + len(res)}\r\n\r\n").encode() + req + res + \
        f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"


def _dechunk(data: bytes) -> bytes:
    out = b""
    while True:
        size, _, data = data.partition(b"\r\n")
        length = int(size.split(b";")[0], 16)
        if length == 0:
            return out
        out, data = out + data[:length], data[length + 2:]


def test_options_over_tls(tls_icap: Icap, tls):
    answer = _options(tls_icap.port, _context(tls))
    assert answer.startswith(b"ICAP/1.0 200 "), answer[:200]
    assert b"Methods: RESPMOD, REQMOD" in answer


def test_respmod_over_tls_returns_the_document_without_macros(tls_icap: Icap, tls, samples):
    with socket.create_connection(("127.0.0.1", tls_icap.port), timeout=60) as raw, \
            _context(tls).wrap_socket(raw, server_hostname="localhost") as sock:
        answer = _exchange(sock, _respmod(tls_icap.port, "macro.docm",
                                          samples["macro.docm"].read_bytes()))
    icap_head, _, rest = answer.partition(b"\r\n\r\n")
    assert icap_head.startswith(b"ICAP/1.0 200 "), icap_head
    http_head, _, chunked = rest.partition(b"\r\n\r\n")
    assert b"X-Sanitas: sanitized" in http_head
    with zipfile.ZipFile(io.BytesIO(_dechunk(chunked))) as archive:
        names = archive.namelist()
    assert "word/document.xml" in names
    assert not any("vbaproject" in n.lower() for n in names), names


def test_c_icap_client_over_tls(tls_icap: Icap, tls, samples, tmp_path):
    """Debian's c-icap-client (built with OpenSSL) checks the certificate against
    SSL_CERT_FILE; it fails without the CA and gets the sanitized document with it."""
    binary = need("c-icap-client", "c-icap")
    out = tmp_path / "out"
    argv = [binary, "-tls", "-i", "localhost", "-p", str(tls_icap.port), "-s", "sanitize",
            "-resp", "http://files.example/macro.docm", "-f", str(samples["macro.docm"]),
            "-o", str(out), "-v"]
    untrusted = subprocess.run(argv, capture_output=True, timeout=60, check=False,
                               env={"SSL_CERT_FILE": "/nonexistent"})
    assert b"certificate verify failed" in untrusted.stderr, untrusted
    assert not out.exists() or out.stat().st_size == 0
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False,
                          env={"SSL_CERT_FILE": str(tls.ca)})
    text = (done.stdout + done.stderr).decode("latin-1")
    assert "ICAP/1.0 200" in text, text
    with zipfile.ZipFile(out) as archive:
        assert not any("vbaproject" in n.lower() for n in archive.namelist())


def test_plain_client_gets_no_icap_answer_and_others_are_served(tls_icap: Icap, tls):
    with socket.create_connection(("127.0.0.1", tls_icap.port), timeout=10) as sock:
        sock.sendall(f"OPTIONS icap://127.0.0.1:{tls_icap.port}/sanitize ICAP/1.0\r\n"
                     "Host: 127.0.0.1\r\n\r\n".encode())
        received = b""
        with _reset_is_closed():
            while piece := sock.recv(4096):
                received += piece
    assert b"ICAP/1.0" not in received, received  # at most a TLS alert, then closed
    assert _options(tls_icap.port, _context(tls)).startswith(b"ICAP/1.0 200 ")


class _reset_is_closed:
    """Lets a connection reset end a read like a close does."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, value, tb) -> bool:
        return kind is not None and issubclass(kind, ConnectionResetError)


def test_stalled_handshake_does_not_hold_up_others_and_is_dropped(tls_icap: Icap, tls):
    with socket.create_connection(("127.0.0.1", tls_icap.port), timeout=TIMEOUT * 4) as stalled:
        started = time.monotonic()
        for _ in range(3):
            assert _options(tls_icap.port, _context(tls)).startswith(b"ICAP/1.0 200 ")
        assert time.monotonic() - started < TIMEOUT  # not behind the silent one
        with _reset_is_closed():
            assert stalled.recv(4096) == b""  # closed by the server once the timeout passed
        assert TIMEOUT - 1 < time.monotonic() - started < TIMEOUT * 3


def test_mutual_tls_needs_a_certificate_of_the_client_ca(mutual_icap: Icap, tls):
    assert _options(mutual_icap.port, _context(tls, tls.client_cert, tls.client_key)) \
        .startswith(b"ICAP/1.0 200 ")
    for context in (_context(tls), _context(tls, tls.stranger_cert, tls.stranger_key)):
        # TLS 1.3 reports the refusal on the first read rather than in the handshake
        try:
            answer = _options(mutual_icap.port, context)
        except (ssl.SSLError, ConnectionResetError) as exc:
            answer = repr(exc).encode()
        assert b"ICAP/1.0" not in answer, answer
    tls12 = _context(tls)
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2  # where the handshake itself fails
    with socket.create_connection(("127.0.0.1", mutual_icap.port), timeout=10) as raw, \
            pytest.raises(ssl.SSLError):  # the server drops it (EOF)
        tls12.wrap_socket(raw, server_hostname="localhost")
    assert _options(mutual_icap.port, _context(tls, tls.client_cert, tls.client_key)) \
        .startswith(b"ICAP/1.0 200 ")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ssl.TLSVersion.TLSv1_1
def test_tls_before_1_2_is_refused(tls_icap: Icap, tls):
    old = _context(tls)
    old.minimum_version = ssl.TLSVersion.TLSv1
    old.maximum_version = ssl.TLSVersion.TLSv1_1
    old.set_ciphers("DEFAULT:@SECLEVEL=0")  # this client would speak TLS 1.1
    with socket.create_connection(("127.0.0.1", tls_icap.port), timeout=10) as raw, \
            pytest.raises(ssl.SSLError, match=r"EOF|UNSUPPORTED_PROTOCOL|VERSION"):
        old.wrap_socket(raw, server_hostname="localhost")  # the server closes on its hello
    assert _options(tls_icap.port, _context(tls)).startswith(b"ICAP/1.0 200 ")


@pytest.mark.parametrize(("settings", "message"), [
    ({"icap_tls_cert": "{dir}/missing.pem", "icap_tls_key": "{tls.server_key}"},
     "SANITAS_ICAP_TLS_CERT ({dir}/missing.pem) and SANITAS_ICAP_TLS_KEY"),
    ({"icap_tls_cert": "{tls.server_cert}"}, "go together"),
    ({"icap_tls_cert": "{tls.client_cert}", "icap_tls_key": "{tls.server_key}"},
     "cannot be loaded"),
    ({"icap_tls_cert": "{tls.server_cert}", "icap_tls_key": "{tls.server_key}",
      "icap_tls_client_ca": "{tls.server_key}"}, "SANITAS_ICAP_TLS_CLIENT_CA"),
])
def test_bad_tls_settings_stop_the_server_at_start(tmp_path, tls, settings, message):
    values = {k: v.format(dir=tmp_path, tls=tls) for k, v in settings.items()}
    with pytest.raises(RuntimeError) as failed:
        start_icap(tmp_path / "data", **values)
    assert message.format(dir=tmp_path) in str(failed.value)
    with pytest.raises(TlsSetupError, match="SANITAS_ICAP_TLS"):
        server_context(Settings(data_dir=tmp_path, **values))  # type: ignore[arg-type]


def test_a_key_with_a_passphrase_is_refused_without_a_prompt(tmp_path, tls):
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(tls.server_key.read_bytes(), None)
    locked = tmp_path / "locked.key"
    locked.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret")))
    with pytest.raises(TlsSetupError, match="protected by a passphrase"):
        server_context(Settings(data_dir=tmp_path, icap_tls_cert=tls.server_cert,
                                icap_tls_key=locked))


def test_doctor_checks_the_tls_files(tmp_path, tls):
    def check(**values: object) -> doctor.Check:
        return doctor._icap_tls(Settings(data_dir=tmp_path, **values))  # type: ignore[arg-type]

    assert check().status == "ok" and "no TLS" in check().detail
    good = check(icap_tls_cert=tls.server_cert, icap_tls_key=tls.server_key,
                 icap_tls_client_ca=tls.client_ca)
    assert good.status == "warn"  # the test certificate expires in two days
    assert "client certificates" in good.detail and "expires on" in good.detail
    bad = check(icap_tls_cert=tmp_path / "missing.pem", icap_tls_key=tls.server_key)
    assert bad.status == "fail" and "SANITAS_ICAP_TLS_CERT" in bad.detail


@pytest.mark.parametrize(("required", "client_cert"), [(False, False), (True, True), (True, False)],
                         ids=["tls", "mutual-tls", "mutual-tls-without-certificate"])
def test_squid_over_icaps_delivers_the_document_sanitized(tmp_path, tls, samples, required,
                                                          client_cert):
    """Squid with icaps:// and tls-cafile (and tls-cert/tls-key for mutual TLS): the macro
    document arrives without its macros. A Squid without a certificate is refused by a server
    that requires one: ICAP fails, and with bypass=off so does the download. Needs a Squid
    built with OpenSSL."""
    binary = openssl_squid()
    if binary is None:
        pytest.skip("no Squid built with OpenSSL (Debian's squid is the GnuTLS build; "
                    "squid-openssl, or SANITAS_TEST_SQUID_OPENSSL=/path/to/squid)")
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(samples["macro.docm"], site / "macro.docm")
    web = WebServer(site)
    settings: dict[str, object] = {"icap_tls_cert": tls.server_cert,
                                   "icap_tls_key": tls.server_key}
    if required:
        settings["icap_tls_client_ca"] = tls.client_ca
    icap = start_icap(tmp_path / "data", **settings)
    squid = None
    try:
        squid = start_squid(icap.port, tls=tls, client_cert=client_cert, binary=binary)
        with httpx.Client(proxy=squid.proxy, timeout=60, trust_env=False) as http:
            response = http.get(web.url("macro.docm"))
        if required and not client_cert:
            assert response.status_code == 500
            assert response.headers["x-squid-error"].startswith("ERR_ICAP_FAILURE")
            return
        assert response.status_code == 200, response.text[:500]
        assert response.headers["x-sanitas"].startswith("sanitized")
        with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
            names = archive.namelist()
        assert "word/document.xml" in names
        assert not any("vbaproject" in n.lower() for n in names), names
    finally:
        if squid is not None:
            stop_squid(squid)
        stop_icap(icap)
        web.close()
