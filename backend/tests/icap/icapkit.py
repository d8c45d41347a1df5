"""Helpers for the ICAP tests: `sanitas icap` as a subprocess, Debian's c-icap-client, Squid in
a temporary folder, a local web server, and sample files. bench/bench_icap.py uses them too."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.live_server import BIN, free_port, stop_server


def read_head(sock: socket.socket) -> bytes:
    """What the server sent up to the end of its first head (or until it closed)."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        if not piece:
            break
        data += piece
    return data


def need(binary: str, package: str) -> str:
    """The path of `binary`; a clear failure (not a skip) when it is missing: the test tools
    are installed by scripts/install.sh --with-test-tools."""
    found = shutil.which(binary) or next(
        (str(p) for p in (Path("/usr/sbin") / binary, Path("/usr/bin") / binary)
         if p.exists()), None)
    if found is None:
        pytest.fail(f"{binary} is missing: install Debian's {package} "
                    "(scripts/install.sh --with-test-tools)", pytrace=False)
    return found


# -- the server ----------------------------------------------------------------------------------
@dataclass
class Icap:
    port: int
    data_dir: Path
    proc: subprocess.Popen

    @property
    def log(self) -> str:
        return (self.data_dir / "icap.log").read_text(errors="replace")


def start_icap(data_dir: Path, **settings: object) -> Icap:
    """`sanitas icap` on a free port with its own data dir; `settings` become SANITAS_*
    variables (e.g. icap_max_body_bytes=1000). Returns once the port accepts connections."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SANITAS_") or k.startswith("SANITAS_EXECUTOR_")}
    env.update(SANITAS_DATA_DIR=str(data_dir), SANITAS_LOG_LEVEL="INFO")
    env.update({f"SANITAS_{k.upper()}": str(v) for k, v in settings.items()})
    log = open(data_dir / "icap.log", "ab")  # noqa: SIM115 (kept open for the child)
    proc = subprocess.Popen([str(BIN / "sanitas"), "icap", "--port", str(port)], env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sanitas icap exited: {(data_dir / 'icap.log').read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return Icap(port, data_dir, proc)
        except OSError:
            time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError("sanitas icap did not start")


def stop_icap(icap: Icap) -> None:
    stop_server(icap.proc)


# -- c-icap-client -------------------------------------------------------------------------------
@dataclass
class Answer:
    status: int | None  # the ICAP status line's code
    text: str  # what the client printed (-v: the ICAP and HTTP heads)
    body: bytes | None  # the HTTP body it saved (-o), if any

    def header(self, name: str) -> str | None:
        found = re.search(rf"^\s*{re.escape(name)}:\s?([^\n]*)$", self.text,
                          re.MULTILINE | re.IGNORECASE)
        return found.group(1).strip() if found else None


def client(port: int, service: str, *args: str, body: Path | None = None,
           out: Path | None = None, timeout: float = 60, host: str = "127.0.0.1") -> Answer:
    """One c-icap-client call (-v) against `host`:`port`; `args` are its other options
    (e.g. "-resp", url, "-nopreview")."""
    binary = need("c-icap-client", "c-icap")
    argv = [binary, "-i", host, "-p", str(port), "-s", service, "-v", *args]
    if body is not None:
        argv += ["-f", str(body)]
    if out is not None:
        out.unlink(missing_ok=True)
        argv += ["-o", str(out)]
    done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    text = done.stdout.decode("latin-1") + done.stderr.decode("latin-1")
    codes = re.findall(r"ICAP/1\.0 (\d{3})", text)
    return Answer(status=int(codes[-1]) if codes else None, text=text,
                  body=out.read_bytes() if out is not None and out.exists() else None)


# -- TLS -----------------------------------------------------------------------------------------
@dataclass
class TlsFiles:
    """PEM files made at test time: a CA, the server's certificate for 127.0.0.1/localhost
    and its key; a second CA for clients and a client certificate it signed, with its key;
    and a client certificate of an unrelated CA (`stranger_cert`/`stranger_key`)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_ca: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path
    stranger_key: Path


def make_tls_files(folder: Path) -> TlsFiles:
    from datetime import UTC, datetime, timedelta
    from ipaddress import ip_address

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.now(UTC)
    folder.mkdir(parents=True, exist_ok=True)

    def write(name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey | None
              ) -> None:
        (folder / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        if key is not None:
            (folder / f"{name}.key").write_bytes(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption()))

    def authority(common_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - timedelta(days=1))
                .not_valid_after(now + timedelta(days=2))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(
                    digital_signature=True, key_cert_sign=True, crl_sign=True,
                    content_commitment=False, key_encipherment=False, data_encipherment=False,
                    key_agreement=False, encipher_only=False, decipher_only=False),
                    critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                               critical=False)
                .sign(key, hashes.SHA256()))
        return cert, key

    def leaf(common_name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
             usage: x509.ObjectIdentifier, names: list[x509.GeneralName]
             ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                               common_name)]))
                   .issuer_name(issuer[0].subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - timedelta(days=1))
                   .not_valid_after(now + timedelta(days=2))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                  critical=True)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                       issuer[1].public_key()), critical=False)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names),
                                            critical=False)
        return builder.sign(issuer[1], hashes.SHA256()), key

    ca = authority("Sanitas test ICAP CA")
    write("ca", ca[0], None)
    server = leaf("localhost", ca, ExtendedKeyUsageOID.SERVER_AUTH,
                  [x509.DNSName("localhost"), x509.IPAddress(ip_address("127.0.0.1"))])
    write("server", *server)
    client_ca = authority("Sanitas test proxies CA")
    write("client-ca", client_ca[0], None)
    write("client", *leaf("proxy-1", client_ca, ExtendedKeyUsageOID.CLIENT_AUTH, []))
    stranger_ca = authority("Someone else's CA")
    write("stranger", *leaf("proxy-x", stranger_ca, ExtendedKeyUsageOID.CLIENT_AUTH, []))
    return TlsFiles(folder / "ca.pem", folder / "server.pem", folder / "server.key",
                    folder / "client-ca.pem", folder / "client.pem", folder / "client.key",
                    folder / "stranger.pem", folder / "stranger.key")


# -- a web server and Squid ----------------------------------------------------------------------
@dataclass
class Received:
    """A POST or PUT as the web server got it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class _Handler(SimpleHTTPRequestHandler):
    """Serves the folder's files; a POST or PUT is recorded (`WebServer.received`) and
    answered with the body it received (so a test sees what REQMOD made of an upload)."""

    received: list[Received]

    def log_message(self, *args: object) -> None:
        pass

    def _echo(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        self.received.append(Received(self.command, self.path,
                                      {k.lower(): v for k, v in self.headers.items()}, data))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Received-Type", self.headers.get("Content-Type", ""))
        self.end_headers()
        self.wfile.write(data)

    do_POST = _echo
    do_PUT = _echo


class WebServer:
    def __init__(self, folder: Path) -> None:
        self.received: list[Received] = []
        handler = type("Handler", (_Handler,), {"received": self.received})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0),
                                          partial(handler, directory=str(folder)))
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


SQUID_CONF = """\
http_port 127.0.0.1:{port}
pid_filename {dir}/squid.pid
cache deny all
cache_mem 4 MB
access_log stdio:{dir}/access.log
cache_log {dir}/cache.log
coredump_dir {dir}
pinger_enable off
http_access allow localhost
http_access deny all
icap_enable on
icap_preview_enable on
icap_service sanitas_resp respmod_precache {scheme}://{host}:{icap}/{service} bypass=off{tls}
adaptation_access sanitas_resp allow all
icap_service sanitas_req reqmod_precache {scheme}://{host}:{icap}/{service} bypass=off{tls}
adaptation_access sanitas_req allow all
shutdown_lifetime 1 seconds
"""


@dataclass
class Squid:
    port: int
    folder: Path
    proc: subprocess.Popen

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def start_squid(icap_port: int, service: str = "sanitize", *, tls: TlsFiles | None = None,
                client_cert: bool = False, binary: str | None = None) -> Squid:
    """Squid (no disk cache, own port, its files in a fresh folder under /tmp) adapting every
    request and response through the ICAP server; returns once its port accepts
    connections. Started as root, Squid writes its logs as its own user ('proxy'), which
    owns the folder then. With `tls`, it reaches the server by icaps:// trusting `tls.ca`
    (and presents `tls.client_cert` with `client_cert`), which needs a Squid built with
    OpenSSL (`binary`, see openssl_squid)."""
    binary = binary or need("squid", "squid")
    folder = Path(tempfile.mkdtemp(prefix="sanitas-squid-"))
    if os.geteuid() == 0:
        proxy_user = pwd.getpwnam("proxy")
        os.chown(folder, proxy_user.pw_uid, proxy_user.pw_gid)
    port = free_port()
    conf = folder / "squid.conf"
    options = ""
    if tls is not None:
        for source in (tls.ca, tls.client_cert, tls.client_key):
            shutil.copy(source, folder / source.name)
            if os.geteuid() == 0:
                os.chown(folder / source.name, proxy_user.pw_uid, proxy_user.pw_gid)
        options = f" tls-cafile={folder / tls.ca.name}"
        if client_cert:
            options += (f" tls-cert={folder / tls.client_cert.name}"
                        f" tls-key={folder / tls.client_key.name}")
    conf.write_text(SQUID_CONF.format(port=port, dir=folder, icap=icap_port, service=service,
                                      scheme="icaps" if tls is not None else "icap",
                                      # Squid 5 matches a certificate's DNS names only
                                      host="localhost" if tls is not None else "127.0.0.1",
                                      tls=options))
    log = open(folder / "squid.out", "ab")  # noqa: SIM115 (kept open for the child)
    proc = subprocess.Popen([binary, "-N", "-f", str(conf)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("squid exited: " + (folder / "squid.out").read_text()
                               + _read(folder / "cache.log"))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return Squid(port, folder, proc)
        except OSError:
            time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError("squid did not start: " + _read(folder / "cache.log"))


def openssl_squid() -> str | None:
    """A Squid that can speak icaps://: one built with OpenSSL (Debian's squid-openssl), from
    SANITAS_TEST_SQUID_OPENSSL or as the installed squid; Debian's plain squid package is the
    GnuTLS build, which ignores icap_service's tls-* options and aborts on icaps://."""
    for candidate in (os.environ.get("SANITAS_TEST_SQUID_OPENSSL"), shutil.which("squid"),
                      "/usr/sbin/squid"):
        if candidate and Path(candidate).exists():
            version = subprocess.run([candidate, "-v"], capture_output=True, text=True,
                                     timeout=30, check=False).stdout
            if "--with-openssl" in version:
                return candidate
    return None


def stop_squid(squid: Squid) -> None:
    stop_server(squid.proc)
    shutil.rmtree(squid.folder, ignore_errors=True)


# -- multipart/form-data -------------------------------------------------------------------------
BOUNDARY = "----WebKitFormBoundary7MA4YWxkTrZu0gW"


def form_part(name: str, data: bytes, filename: str | None = None,
              content_type: str | None = None) -> bytes:
    """One part (headers, blank line, data) as a browser writes it."""
    disposition = f'form-data; name="{name}"'
    if filename is not None:
        disposition += f'; filename="{filename}"'
    head = f"Content-Disposition: {disposition}\r\n"
    if content_type is not None:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"\r\n" + data


def form_body(*parts: bytes, boundary: str = BOUNDARY) -> bytes:
    """A multipart/form-data body of `parts` (from form_part)."""
    delimiter = b"--" + boundary.encode()
    return b"".join(delimiter + b"\r\n" + p + b"\r\n" for p in parts) + delimiter + b"--\r\n"


@dataclass
class FormPart:
    raw: bytes  # headers, blank line and data, as sent
    headers: dict[str, str]  # lower-case names
    data: bytes

    @property
    def filename(self) -> str | None:
        found = re.search(r'filename="([^"]*)"', self.headers.get("content-disposition", ""))
        return found.group(1) if found else None


def form_parts(body: bytes, boundary: str = BOUNDARY) -> list[FormPart]:
    """The parts of a form the tests built (their data never holds the delimiter); an
    AssertionError when the body is not framed by `boundary`."""
    delimiter = b"--" + boundary.encode()
    assert body.startswith(delimiter + b"\r\n"), body[:100]
    assert body.endswith(b"\r\n" + delimiter + b"--\r\n"), body[-100:]
    inner = body[len(delimiter) + 2:-(len(delimiter) + 6)]
    parts = []
    for raw in inner.split(b"\r\n" + delimiter + b"\r\n"):
        head, _, data = raw.partition(b"\r\n\r\n")
        headers = {}
        for line in head.decode("utf-8").split("\r\n"):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        parts.append(FormPart(raw, headers, data))
    return parts


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
