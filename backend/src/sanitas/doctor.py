"""`sanitas doctor`: everything a deployment needs, checked with this process's settings, each
with what to do when it fails.

A check is `ok`, `warn` (works, but not as a production service should) or `fail` (files will
not be cleaned, or the service will not run). The exit code is 1 when any check fails, else 0,
so scripts and container health checks can use it; `--json` prints the same as one object.
"""

from __future__ import annotations

import ipaddress
import shutil
import smtplib
import socket
import ssl
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from sanitas.config import Settings

Status = Literal["ok", "warn", "fail"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def _sandbox(settings: Settings) -> Check:
    from sanitas.sandbox import SandboxError, require_working_sandbox

    if settings.sandbox == "none":
        return Check("sandbox", "fail", "SANITAS_SANDBOX=none: files are cleaned without "
                     "isolation", "Unset SANITAS_SANDBOX (bubblewrap is the default).")
    try:
        require_working_sandbox(settings)
    except SandboxError as exc:
        return Check("sandbox", "fail", str(exc), "See docs/deploying.md, 'What the sandbox "
                     "needs'.")
    from sanitas.sandbox import bwrap

    # Isolation, not only start-up: no network and no view of the host's files.
    escaped = bwrap.probe(
        "import socket, os\n"
        "try:\n socket.create_connection(('1.1.1.1', 53), timeout=2); print('net')\n"
        "except OSError: pass\n"
        "print('host' if os.path.exists('/etc/shadow') else 'sealed')", settings, timeout=60)
    out = escaped.stdout.decode(errors="replace").split()
    if "net" in out or "host" in out:
        return Check("sandbox", "fail", f"the sandbox starts but leaks ({' '.join(out)})",
                     "Report this: the sandbox must have no network and no host files.")
    return Check("sandbox", "ok", "bubblewrap starts, has no network and no host files")


def _ocr(settings: Settings) -> Check:
    """Advanced mode's OCR text layer: tesseract and the language data SANITAS_OCR_LANGUAGES
    names (without them, rebuilt pages keep no text and the report says so)."""
    if not settings.ocr:
        return Check("tesseract", "ok", "OCR text layer off (SANITAS_OCR=false)")
    packages = " ".join(f"tesseract-ocr-{lang.lower().replace('_', '-')}"
                        for lang in settings.ocr_languages.split("+"))
    found = shutil.which("tesseract")
    if not found:
        return Check("tesseract", "warn", "OCR text layer: tesseract is not installed, so "
                     "pages rebuilt from pixels keep no text", f"apt-get install tesseract-ocr "
                     f"{packages} (or SANITAS_OCR=false)")
    from sanitas.engine.ocr import missing_languages

    missing = missing_languages(settings.ocr_languages)
    if missing:
        return Check("tesseract", "warn", "OCR text layer: no language data for "
                     + ", ".join(missing), f"apt-get install {packages}")
    return Check("tesseract", "ok", f"OCR text layer ({settings.ocr_languages}): {found}")


def _libreoffice(settings: Settings) -> Check:
    from sanitas.engine.libreoffice import soffice_path

    try:
        path = soffice_path()
    except Exception as exc:  # noqa: BLE001 - any reason it cannot be found is the answer
        return Check("libreoffice", "fail", f"office files cannot be cleaned ({exc})",
                     "apt-get install libreoffice-writer-nogui libreoffice-calc-nogui "
                     "libreoffice-impress-nogui libreoffice-draw-nogui")
    return Check("libreoffice", "ok", f"office conversion: {path}")


def _fonts(settings: Settings) -> Check:
    if not shutil.which("fc-list"):
        return Check("fonts", "warn", "fc-list is missing; fonts cannot be listed",
                     "apt-get install fontconfig fonts-liberation2 fonts-dejavu-core")
    listed = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True,  # noqa: S607 - a fixed tool name looked up on PATH
                            timeout=30, check=False).stdout
    wanted = [f for f in ("Liberation Serif", "Liberation Sans", "DejaVu Sans") if f in listed]
    if len(wanted) < 2:
        return Check("fonts", "warn", f"few document fonts ({', '.join(wanted) or 'none'}): "
                     "office documents and advanced mode render with substitutes",
                     "apt-get install fonts-liberation2 fonts-dejavu-core")
    return Check("fonts", "ok", ", ".join(wanted))


# Run from another folder, the default ./data is not the installation's: say so, create nothing.
_WHERE = ("Run it from the folder `sanitas serve` (`make run`) was started in, or with its "
          "SANITAS_DATA_DIR (or SANITAS_DATABASE_URL); a new installation: run `sanitas migrate`.")


def _database(settings: Settings) -> Check:
    from alembic.script import ScriptDirectory

    from sanitas.datadir import sqlite_path
    from sanitas.migrate import alembic_config, current_revision

    url = str(settings.database_url)
    shown = url.split("@")[-1] if "@" in url else url  # never the password
    db = sqlite_path(url)
    if db is not None and not db.is_file():
        return Check("database", "fail", f"no database at {db}", _WHERE)
    try:
        current = current_revision(url)
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the answer
        return Check("database", "fail", f"{shown}: cannot connect ({type(exc).__name__})",
                     "Check SANITAS_DATABASE_URL and that the server is up.")
    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    if current != head:
        return Check("database", "fail", f"{shown}: at migration {current}, code needs {head}",
                     "Run `sanitas migrate`.")
    return Check("database", "ok", f"{shown}: reachable, migrated ({head})")


def _storage(settings: Settings) -> Check:
    from sanitas.storage import make_storage

    key = "doctor/probe"
    if settings.storage == "local" and not settings.data_dir.is_dir():
        return Check("storage", "fail", f"local: {settings.data_dir} does not exist", _WHERE)
    try:
        storage = make_storage(settings)
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe"
            probe.write_bytes(b"sanitas doctor")
            storage.put_file(key, probe)
            back = Path(folder) / "back"
            storage.get_to_path(key, back)
            same = back.read_bytes() == b"sanitas doctor"
        storage.delete(key)
    except Exception as exc:  # noqa: BLE001 - any failure to write is the answer
        return Check("storage", "fail", f"{settings.storage}: cannot write and read back "
                     f"({type(exc).__name__}: {str(exc)[:200]})",
                     "Check SANITAS_STORAGE and its S3 settings or the data directory.")
    if not same:
        return Check("storage", "fail", "a blob read back differs from what was written")
    return Check("storage", "ok", f"{settings.storage}: writable")


def _broker(settings: Settings) -> Check:
    if settings.executor != "celery":
        return Check("broker", "ok", "not needed (embedded executor)")
    parts = urlsplit(settings.broker_url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379),
                                      timeout=5):
            pass
    except OSError as exc:
        return Check("broker", "fail", f"{parts.hostname}:{parts.port}: {exc}",
                     "Check SANITAS_BROKER_URL and that Redis is up.")
    return Check("broker", "ok", f"{parts.hostname}:{parts.port} reachable")


def _secret_key(settings: Settings) -> Check:
    key = settings.secret_key
    if not key:
        return Check("secret key", "warn", "generated and kept in the data directory; every "
                     "API process and worker must share it",
                     "Set SANITAS_SECRET_KEY (48+ random characters) for several processes.")
    if len(key) < 32 or len(set(key)) < 10:
        return Check("secret key", "fail", "SANITAS_SECRET_KEY is short or repetitive",
                     "python3 -c 'import secrets; print(secrets.token_urlsafe(48))'")
    return Check("secret key", "ok", f"{len(key)} characters")


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost" or host.endswith(".localhost")


def _public_url(settings: Settings) -> Check:
    """Beside being a URL: when it names this machine's loopback or the address `serve` is
    bound to, it must reach `serve` there (a public host name is taken for a reverse proxy)."""
    from sanitas.config import WILDCARD_HOSTS, listen_url

    parts = urlsplit(settings.public_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = 0
    if parts.scheme not in ("http", "https") or not parts.hostname or not port:
        return Check("public url", "fail", f"{settings.public_url!r} is not a URL",
                     "Set SANITAS_PUBLIC_URL to the address users open.")
    host, bound = parts.hostname.lower(), settings.host.strip("[]").lower()
    listening = (f"every interface, port {settings.port}" if bound in WILDCARD_HOSTS
                 else listen_url(settings.host, settings.port).removeprefix("http://"))
    # Does the URL name the socket `serve` binds (the same host, or loopback it listens on)?
    here = host == bound or (_loopback(host) and (bound in WILDCARD_HOSTS or _loopback(bound)))
    if (here and port != settings.port) or (_loopback(host) and not here):
        return Check("public url", "warn", f"links in e-mails go to {settings.public_url}, but "
                     f"`sanitas serve` listens on {listening} (SANITAS_HOST, SANITAS_PORT)",
                     "Set SANITAS_PUBLIC_URL to the address users open, or unset it to "
                     "follow SANITAS_HOST and SANITAS_PORT.")
    if _loopback(host) and bound in WILDCARD_HOSTS:
        return Check("public url", "warn", f"`sanitas serve` listens on {listening}, but links "
                     f"in e-mails go to {settings.public_url}, which only this machine opens",
                     "Set SANITAS_PUBLIC_URL to the address other machines open (e.g. "
                     f"http://<this machine's name>:{settings.port}).")
    if parts.hostname in ("127.0.0.1", "localhost") and settings.env == "production":
        return Check("public url", "warn", f"{settings.public_url}: links in e-mails point to "
                     "this machine", "Set SANITAS_PUBLIC_URL to the public address.")
    if parts.scheme == "http" and settings.env == "production":
        return Check("public url", "warn", f"{settings.public_url}: not HTTPS",
                     "Serve through HTTPS (deploy/nginx.conf.example).")
    return Check("public url", "ok", settings.public_url)


def _smtp(settings: Settings) -> Check:
    if not settings.smtp_host:
        return Check("smtp", "warn", "no SMTP server: e-mails go to the outbox folder",
                     "Set SANITAS_SMTP_HOST (and port, user, password).")
    try:
        kind = smtplib.SMTP_SSL if settings.smtp_ssl else smtplib.SMTP
        with kind(settings.smtp_host, settings.smtp_port, timeout=10) as smtp:
            smtp.noop()
    except (OSError, smtplib.SMTPException) as exc:
        return Check("smtp", "fail", f"{settings.smtp_host}:{settings.smtp_port}: {exc}",
                     "Check the SMTP settings.")
    return Check("smtp", "ok", f"{settings.smtp_host}:{settings.smtp_port} answers")


def _webhook_ca_bundle(settings: Settings) -> Check:
    if settings.webhook_ca_bundle is None:
        return Check("webhook CAs", "ok", "public CAs only")
    from sanitas.webhooks.sender import tls_context

    try:
        tls_context(settings)
    except (OSError, ssl.SSLError) as exc:
        return Check("webhook CAs", "fail", f"{settings.webhook_ca_bundle}: {exc}",
                     "Point SANITAS_WEBHOOK_CA_BUNDLE at a readable PEM file of CA "
                     "certificates, or unset it.")
    return Check("webhook CAs", "ok", f"public CAs and {settings.webhook_ca_bundle}")


def _icap_tls(settings: Settings) -> Check:
    """The files `sanitas icap` would load for TLS: loadable, matching, not expired."""
    from sanitas.icap.tls import TlsSetupError, describe, expiry, server_context

    try:
        context = server_context(settings)
    except TlsSetupError as exc:
        return Check("icap tls", "fail", str(exc),
                     "Fix or unset SANITAS_ICAP_TLS_CERT, SANITAS_ICAP_TLS_KEY and "
                     "SANITAS_ICAP_TLS_CLIENT_CA (docs/icap.md, 'TLS'); `sanitas icap` will "
                     "not start as they are.")
    if context is None:
        return Check("icap tls", "ok", describe(settings))
    assert settings.icap_tls_cert is not None
    ends = expiry(settings.icap_tls_cert)
    left = ends - datetime.now(UTC)
    if left.total_seconds() <= 0:
        return Check("icap tls", "fail", f"{settings.icap_tls_cert} expired on {ends:%Y-%m-%d}",
                     "Renew the certificate, then restart `sanitas icap`.")
    if left.days < 30:
        return Check("icap tls", "warn", f"{describe(settings)}; it expires on {ends:%Y-%m-%d}",
                     "Renew the certificate, then restart `sanitas icap`.")
    return Check("icap tls", "ok", f"{describe(settings)} (valid until {ends:%Y-%m-%d})")


CHECKS: list[Callable[[Settings], Check]] = [
    _sandbox, _libreoffice, _fonts,
    _ocr,
    _database, _storage, _broker, _secret_key, _public_url, _smtp, _webhook_ca_bundle,
    _icap_tls]


def run(settings: Settings) -> list[Check]:
    return [check(settings) for check in CHECKS]


def as_json(checks: list[Check]) -> dict[str, object]:
    return {"ok": all(c.status != "fail" for c in checks),
            "checks": [asdict(c) for c in checks]}
