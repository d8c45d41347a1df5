"""Helpers for the mail tests: `sanitas mail` as a subprocess, an SMTP sink (aiosmtpd) that
stands for the next hop, sample attachments and messages. bench/bench_mail.py uses them too."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_server(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop a process started in its own session: `sig` to its group, SIGKILL after 30 s."""
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


@dataclass
class Received:
    sender: str
    recipients: list[str]
    data: bytes
    mail_options: list[str]


@dataclass
class SinkHandler:
    messages: list[Received] = field(default_factory=list)
    answer: str | None = None  # e.g. "451 4.3.0 busy" to refuse every message
    refuse: dict[str, str] = field(default_factory=dict)  # recipient -> its RCPT answer
    # Close the connection once this recipient was answered (as a next hop's smtpd_timeout
    # ends an idle session), then refuse the recipients of `then_refuse`.
    drop_after: str | None = None
    then_refuse: dict[str, str] = field(default_factory=dict)
    rcpts_seen: list[str] = field(default_factory=list)
    delay: float = 0.0  # seconds between keeping a message and answering 250
    arrived: threading.Event = field(default_factory=threading.Event)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        self.rcpts_seen.append(address)
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        if address == self.drop_after:
            self.drop_after = None
            self.refuse.update(self.then_refuse)
            asyncio.get_running_loop().call_soon(server.transport.close)  # after the answer
        return "250 2.1.5 Ok"

    async def handle_DATA(self, server, session, envelope) -> str:
        if self.answer:
            return self.answer
        self.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                      envelope.original_content, list(envelope.mail_options)))
        self.arrived.set()
        if self.delay:
            await asyncio.sleep(self.delay)
        return "250 2.0.0 Ok: sunk"

    def wait(self, count: int, timeout: float = 120) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.messages


class Sink:
    """An SMTP server on a free loopback port keeping what it receives."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.handler = SinkHandler()
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port,
                                     enable_SMTPUTF8=True, data_size_limit=200 * 2**20)

    def __enter__(self) -> Sink:
        self.controller.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.controller.stop()


@dataclass
class MailFilter:
    port: int
    data_dir: Path
    proc: subprocess.Popen
    metrics_port: int | None = None  # with metrics on (mail_metrics_port, metrics_token)

    @property
    def log(self) -> str:
        return (self.data_dir / "mail.log").read_text(errors="replace")


def start_filter(data_dir: Path, next_hop: int, *, port: int | None = None,
                 args: tuple[str, ...] = (), **settings: object) -> MailFilter:
    """`sanitas mail` on a free port (or `port`) with its own data dir, re-injecting to
    127.0.0.1:`next_hop`; `settings` become SANITAS_* variables."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SANITAS_") or k.startswith("SANITAS_EXECUTOR_")}
    env.update(SANITAS_DATA_DIR=str(data_dir), SANITAS_LOG_LEVEL="INFO",
               SANITAS_SECRET_KEY="mail-test-secret-key-long-enough-0123456789")
    env.update({f"SANITAS_{k.upper()}": str(v) for k, v in settings.items()})
    log = open(data_dir / "mail.log", "ab")  # noqa: SIM115 (kept open for the child)
    proc = subprocess.Popen([str(BIN / "sanitas"), "mail", "--listen", f"127.0.0.1:{port}",
                             "--next-hop", f"127.0.0.1:{next_hop}", *args], env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sanitas mail exited: {(data_dir / 'mail.log').read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                metrics = settings.get("mail_metrics_port")
                return MailFilter(port, data_dir, proc,
                                  int(str(metrics)) if metrics is not None else None)
        except OSError:
            time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError("sanitas mail did not start")


def stop_filter(mail: MailFilter) -> None:
    stop_server(mail.proc)


# -- samples ---------------------------------------------------------------------------------
def samples(folder: Path) -> dict[str, bytes]:
    """macro.docm (VBA), photo.jpg (GPS EXIF), script.pdf (JavaScript), bundle.zip (a text
    file, tool.exe and a macro report.docm), tool.exe."""
    from tests.engine.corpus import hostile_jpeg, hostile_pdf, save_pdf, zip_bytes
    from tests.engine.corpus_office import hostile_docm

    folder.mkdir(parents=True, exist_ok=True)
    hostile_jpeg(folder / "photo.jpg")
    save_pdf(hostile_pdf(), folder / "script.pdf")
    return {"macro.docm": hostile_docm(), "photo.jpg": (folder / "photo.jpg").read_bytes(),
            "script.pdf": (folder / "script.pdf").read_bytes(),
            "bundle.zip": zip_bytes({"notes.txt": b"hello\n", "tool.exe": b"MZ" + bytes(510),
                                     "report.docm": hostile_docm()}),
            "tool.exe": b"MZ" + bytes(510)}


TRACKING_HTML = ('<html><body><p>Hello <b>there</b></p>'
                 '<img src="https://tracker.example/pixel.gif?u=42" width="1" height="1">'
                 '<script>alert(1)</script></body></html>')


def message(attachments: dict[str, bytes], *, html: str | None = TRACKING_HTML,
            subject: str = "Quarterly figures") -> bytes:
    msg = EmailMessage()
    msg["From"] = "Alice <alice@example.org>"
    msg["To"] = "bob@example.net"
    msg["Subject"] = subject
    msg["Message-ID"] = "<test-1@example.org>"
    msg["Date"] = "Fri, 27 Nov 2026 10:00:00 +0000"
    msg["Authentication-Results"] = "mx.example.net; spf=pass smtp.mailfrom=example.org"
    msg["Received"] = "from client.example.org by mx.example.net; Fri, 27 Nov 2026 10:00:00 +0000"
    msg.set_content("The figures are attached.\n")
    if html is not None:
        msg.add_alternative(html, subtype="html")
    for name, data in attachments.items():
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))


def zip_of(names: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in names.items():
            zf.writestr(name, data)
    return buf.getvalue()
