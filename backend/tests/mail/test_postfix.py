"""The mail filter behind Debian's Postfix (issue 24), as a mail administrator sets it up: a
private Postfix instance on loopback ports (postfixkit.py: content_filter in main.cf, the
`scan` transport and the re-injection listener in master.cf, docs/mail.md's lines), `sanitas
mail` as its content filter, a local SMTP sink as the final destination and swaks as the
sender. A hostile message arrives cleaned with the header; killing the filter mid-message
leaves the message queued in Postfix, and it is delivered exactly once after the filter is
back. A recipient the final destination refuses is bounced (550) or kept queued and
delivered later (450) by Postfix itself, while the others get the message once."""

from __future__ import annotations

import email
import email.policy
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.mail.mailkit import TRACKING_HTML, Sink, free_port, start_filter, stop_filter
from tests.mail.postfixkit import Postfix, start_postfix

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="Postfix's master runs as root")


def need(binary: str) -> str:
    for folder in ("/usr/sbin", "/usr/bin"):
        if Path(folder, binary).exists():
            return str(Path(folder, binary))
    pytest.fail(f"{binary} is missing: scripts/install.sh --with-test-tools installs Postfix "
                "and swaks", pytrace=False)


def swaks(postfix: Postfix, folder: Path, files: dict[str, bytes], subject: str,
          to: str = "bob@example.net,carol@example.net") -> str:
    """Send one message with swaks: an HTML body with a tracking pixel and `files`."""
    (folder / "body.html").write_text(TRACKING_HTML)
    argv = [need("swaks"), "--server", f"127.0.0.1:{postfix.smtp_port}",
            "--from", "alice@example.org", "--to", to,
            "--header", f"Subject: {subject}", "--attach-type", "text/html",
            "--attach-body", f"@{folder / 'body.html'}",
            "--attach-type", "application/octet-stream"]
    for name, data in files.items():
        (folder / name).write_bytes(data)
        argv += ["--attach", f"@{folder / name}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def chain(tmp_path):
    need("postfix")
    filter_port, sink_port = free_port(), free_port()
    # Postfix's own user must reach its folders: not under pytest's private tmp_path.
    root = Path(tempfile.mkdtemp(prefix="sanitas-postfix-"))
    root.chmod(0o755)
    with Sink(sink_port) as sink:
        postfix = start_postfix(root / "postfix", smtp_port=free_port(),
                                reinject_port=free_port(), filter_port=filter_port,
                                sink_port=sink_port)
        mail = start_filter(tmp_path / "sanitas", postfix.reinject_port, port=filter_port)
        state = {"mail": mail}
        try:
            yield postfix, sink, state, tmp_path
        finally:
            stop_filter(state["mail"])
            postfix.stop()
            shutil.rmtree(root, ignore_errors=True)


def test_hostile_message_through_postfix(chain, attachments):
    postfix, sink, _, folder = chain
    files = {k: attachments[k] for k in ("macro.docm", "photo.jpg", "script.pdf", "bundle.zip",
                                         "tool.exe")}
    swaks(postfix, folder, files, "through postfix")
    [got] = sink.handler.wait(1, timeout=180)
    assert got.sender == "alice@example.org"
    assert sorted(got.recipients) == ["bob@example.net", "carol@example.net"]
    msg = email.message_from_bytes(got.data, policy=email.policy.default)
    assert "verdict=partial" in msg["X-Sanitas"] and "attachments=5" in msg["X-Sanitas"]
    # Postfix's own Received fields (the first receipt and the re-injection) are kept.
    received = msg.get_all("Received")
    assert any("mx.sanitas.test" in r for r in received), received
    names = {part.get_filename() for part in msg.walk() if part.get_filename()}
    assert {"macro.docx", "photo.jpg", "script.pdf", "bundle.zip", "tool.removed.txt"} <= names
    note = next(p for p in msg.walk() if p.get_filename() == "tool.removed.txt")
    assert "Sanitas removed the attachment" in note.get_content()
    assert b"tracker.example" not in got.data and b"alert(1)" not in got.data
    assert "Mail queue is empty" in wait_for(
        lambda: "empty" in postfix.queue() and postfix.queue(), 30, "an empty queue")


def test_files_written_into_a_text_body_through_postfix(chain, attachments, tmp_path):
    """uuencode and BinHex blocks (real encoders) in a plain-text message sent by swaks: the
    filter takes them out of the text and delivers them cleaned, or as notes."""
    from tests.engine.test_mail_inline_files import _binhex, _uuencode

    postfix, sink, _, folder = chain
    body = (b"Hello Bob,\n" + _uuencode(attachments["macro.docm"], "report.docm")
            + _binhex(tmp_path, attachments["tool.exe"], "tool.exe") + b"\nRegards\n")
    (folder / "body.txt").write_bytes(body)
    done = subprocess.run([need("swaks"), "--server", f"127.0.0.1:{postfix.smtp_port}",
                           "--from", "alice@example.org", "--to", "bob@example.net",
                           "--header", "Subject: encoded in the text",
                           "--body", f"@{folder / 'body.txt'}"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    [got] = sink.handler.wait(1, timeout=180)
    msg = email.message_from_bytes(got.data, policy=email.policy.default)
    assert "verdict=partial" in msg["X-Sanitas"], msg["X-Sanitas"]
    names = {part.get_filename() for part in msg.walk() if part.get_filename()}
    assert {"report.docx", "tool.removed.txt"} <= names, names
    text = msg.get_body(("plain",)).get_content()
    assert "Hello Bob," in text and 'took the uuencoded file "report.docm"' in text
    assert 'took the BinHex file "tool.exe"' in text
    assert b"begin 644" not in got.data and b"This file must be converted" not in got.data


def test_encrypted_mail_through_postfix_is_held_back(chain, tmp_path):
    """An S/MIME message (openssl) and a PGP/MIME one (gpg) sent by swaks as they are: no
    longer passed as "clean" text, but held back with a note, `verdict=encrypted`."""
    from tests.engine.test_encrypted_content import _pgp_mime_message, _smime_message

    postfix, sink, _, folder = chain
    (tmp_path / "pgp").mkdir()
    for name, data in [("smime.eml", _smime_message(tmp_path)),
                       ("pgp.eml", _pgp_mime_message(tmp_path / "pgp"))]:
        (folder / name).write_bytes(data)
        done = subprocess.run([need("swaks"), "--server", f"127.0.0.1:{postfix.smtp_port}",
                               "--from", "alice@example.org", "--to", "bob@example.net",
                               "--data", f"@{folder / name}"],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    got = sink.handler.wait(2, timeout=180)
    notes = []
    for item in got:
        msg = email.message_from_bytes(item.data, policy=email.policy.default)
        assert "verdict=encrypted;" in msg["X-Sanitas"], msg["X-Sanitas"]
        assert "encryptedHeld=1" in msg["X-Sanitas"]
        assert b"BEGIN PGP MESSAGE" not in item.data and b"pkcs7" not in item.data.lower()
        notes.append(item.data)
    assert any(b"held back S/MIME" in n for n in notes)
    assert any(b"held back PGP/MIME" in n for n in notes)


def test_killed_mid_message_stays_queued_and_is_delivered_once(chain, attachments):
    postfix, sink, state, folder = chain
    files = {k: attachments[k] for k in ("macro.docm", "script.pdf", "bundle.zip")}
    swaks(postfix, folder, files, "kill me")
    database = state["mail"].data_dir / "sanitas.db"

    def being_cleaned() -> bool:
        try:
            with sqlite3.connect(database) as db:
                return bool(db.execute("SELECT 1 FROM held_messages WHERE subject = 'kill me' "
                                       "AND status = 'received'").fetchall())
        except sqlite3.Error:
            return False

    wait_for(being_cleaned, 60, "the filter to take the message")
    os.killpg(state["mail"].proc.pid, signal.SIGKILL)  # the filter and its sandbox, at once
    state["mail"].proc.wait(10)
    queued = wait_for(lambda: "kill me" not in postfix.queue() and "alice@example.org" in
                      postfix.queue() and postfix.queue(), 30, "the message in the queue")
    assert "Mail queue is empty" not in queued
    time.sleep(3)  # Postfix retries (backoff 1-2 s) while the filter is down: nothing goes out
    assert sink.handler.messages == []
    assert "alice@example.org" in postfix.queue()

    state["mail"] = start_filter(state["mail"].data_dir, postfix.reinject_port,
                                 port=state["mail"].port)
    postfix.flush()
    [got] = sink.handler.wait(1, timeout=180)
    assert b"X-Sanitas: sanitized" in got.data and b"Subject: kill me" in got.data
    wait_for(lambda: "Mail queue is empty" in postfix.queue(), 60, "an empty queue")
    time.sleep(4)  # more queue runs: no second copy
    assert len(sink.handler.messages) == 1


def test_refused_recipients_are_bounced_or_retried_by_postfix(chain, attachments):
    postfix, sink, _, folder = chain
    sink.handler.refuse = {"gone@example.net": "550 5.1.1 <gone@example.net>: no such user",
                           "later@example.net": "450 4.2.1 <later@example.net>: mailbox busy"}
    swaks(postfix, folder, {"photo.jpg": attachments["photo.jpg"]}, "some refused",
          to="bob@example.net,gone@example.net,later@example.net")

    def to(rcpt: str) -> list:
        return [m for m in sink.handler.messages if m.recipients == [rcpt]]

    [got] = wait_for(lambda: to("bob@example.net"), 180, "the message to bob")
    assert b"X-Sanitas: sanitized" in got.data and b"Subject: some refused" in got.data
    # The 550: Postfix bounces it to the sender (through the filter too), naming the answer.
    [bounce] = wait_for(lambda: to("alice@example.org"), 180, "the bounce to alice")
    assert bounce.sender in ("", "<>")
    assert b"gone@example.net" in bounce.data and b"no such user" in bounce.data
    # The 450: still queued in Postfix, for that recipient only.
    queued = wait_for(lambda: "later@example.net" in postfix.queue() and postfix.queue(), 30,
                      "the deferred recipient in the queue")
    assert "bob@example.net" not in queued and "gone@example.net" not in queued
    assert to("later@example.net") == []
    del sink.handler.refuse["later@example.net"]
    postfix.flush()
    [later] = wait_for(lambda: to("later@example.net"), 180, "the retried recipient")
    assert b"Subject: some refused" in later.data and b"X-Sanitas: sanitized" in later.data
    wait_for(lambda: "Mail queue is empty" in postfix.queue(), 60, "an empty queue")
    time.sleep(3)
    assert len(to("bob@example.net")) == 1 and len(to("later@example.net")) == 1
    assert not any("gone@example.net" in m.recipients for m in sink.handler.messages)
