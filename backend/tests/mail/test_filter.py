"""The mail filter at its own level (issue 24): `sanitas mail` as a process, driven with
smtplib as Postfix's smtp client would, re-injecting to a real SMTP server (the sink). What
arrives is cleaned (macros, GPS data, PDF JavaScript, the executable, the tracking pixel),
under the original envelope, with `X-Sanitas` and the trace fields received; the answer is
250 only once the next hop took the message, 451 when it did not; hostile or broken input
gets a clear reply or a clean pass while the filter keeps serving others."""

from __future__ import annotations

import email
import email.policy
import io
import smtplib
import socket
import sqlite3
import threading
import time
import zipfile

import pikepdf
import pytest
from PIL import Image

from tests.mail.mailkit import TRACKING_HTML, message

RCPTS = ["bob@example.net", "carol@example.net"]


def send(port: int, data: bytes, *, sender: str = "alice@example.org",
         rcpts: list[str] = RCPTS, options: tuple[str, ...] = ("BODY=8BITMIME",),
         ) -> tuple[int, str]:
    """One transaction; the DATA reply (code, text)."""
    with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
        client.ehlo("postfix.test")
        client.mail(sender, list(options))
        for rcpt in rcpts:
            client.rcpt(rcpt)
        code, text = client.data(data)
        return code, text.decode("utf-8", "replace")


def parts(data: bytes) -> dict[str, bytes]:
    """The attachments of a delivered message by name."""
    msg = email.message_from_bytes(data, policy=email.policy.default)
    out = {}
    for part in msg.walk():
        name = part.get_filename()
        if name:
            out[name] = part.get_payload(decode=True)
    return out


def held_rows(mail_filter) -> list[sqlite3.Row]:
    with sqlite3.connect(mail_filter.data_dir / "sanitas.db") as db:
        db.row_factory = sqlite3.Row
        return db.execute("SELECT * FROM held_messages ORDER BY created_at").fetchall()


def test_a_hostile_message_arrives_clean(mail_filter, sink, attachments):
    data = message(attachments)
    code, text = send(mail_filter.port, data)
    assert code == 250, text
    assert "verdict partial" in text  # tool.exe went
    [got] = sink.handler.wait(1)
    assert got.sender == "alice@example.org" and got.recipients == RCPTS
    assert "BODY=8BITMIME" in got.mail_options
    head = got.data.split(b"\r\n\r\n", 1)[0].decode()
    assert "Authentication-Results: mx.example.net; spf=pass" in head
    assert "Received:\r\n from client.example.org" in head
    assert "X-Sanitas: sanitized; findings=" in head
    assert "verdict=partial" in head and "filesDropped=" in head
    assert "attachments=5" in head
    files = parts(got.data)
    # The macro document: no VBA project left.
    docm = next(v for k, v in files.items() if k.startswith("macro."))
    with zipfile.ZipFile(io.BytesIO(docm)) as zf:
        assert not any("vbaproject" in n.lower() for n in zf.namelist())
    # The photo: no GPS data.
    photo = Image.open(io.BytesIO(files["photo.jpg"]))
    assert 0x8825 not in photo.getexif()
    # The PDF: no JavaScript.
    pdf = pikepdf.open(io.BytesIO(files["script.pdf"]))
    assert "/OpenAction" not in pdf.Root and "/JavaScript" not in str(pdf.Root.get("/Names"))
    # The executable: replaced by the note saying why.
    note = next(v for k, v in files.items() if k.startswith("tool."))
    assert b"Sanitas removed the attachment" in note and b"MZ" not in note
    # The ZIP: its executable member dropped.
    bundle = zipfile.ZipFile(io.BytesIO(files["bundle.zip"]))
    assert "notes.txt" in bundle.namelist() and "tool.exe" not in bundle.namelist()
    # ... and its other members cleaned: the macro document inside it lost its VBA project.
    [report] = [n for n in bundle.namelist() if n.startswith("report.")]
    with zipfile.ZipFile(io.BytesIO(bundle.read(report))) as zf:
        assert "word/document.xml" in zf.namelist()
        assert not any("vbaproject" in n.lower() for n in zf.namelist())
    # The HTML body: no script, no tracking pixel.
    assert b"tracker.example" not in got.data and b"alert(1)" not in got.data
    assert "pixel" in TRACKING_HTML
    row = held_rows(mail_filter)[-1]
    assert row["status"] == "delivered" and row["verdict"] == "partial"
    assert row["subject"] == "Quarterly figures" and row["original_key"]
    assert row["message_id"] == "<test-1@example.org>"
    listed = {a["name"]: a["verdict"] for a in __import__("json").loads(row["attachments"])}
    assert listed["tool.exe"] == "refused" and listed["macro.docm"] == "cleaned"
    assert listed["photo.jpg"] == "cleaned"


def test_winmail_dat_is_unpacked_and_cleaned(mail_filter, sink, attachments):
    """A TNEF attachment (Outlook's winmail.dat) is opened in place: its files are cleaned
    like any attachment (the executable becomes the note)."""
    from tests.engine.breadth_corpus import tnef_bytes

    tnef = tnef_bytes([("table.csv", b"a,b\n=1+1,2\n"), ("run.exe", attachments["tool.exe"])])
    code, text = send(mail_filter.port, message({"winmail.dat": tnef}, subject="tnef"))
    assert code == 250, text
    [got] = sink.handler.wait(1)
    files = parts(got.data)
    assert "winmail.dat" not in files
    assert files["table.csv"] == b"a,b\n'=1+1,2\n"  # the formula neutralised
    assert "run.removed.txt" in files and b"MZ" not in got.data


def test_smtputf8_envelope_kept(mail_filter, sink):
    data = message({}, html=None, subject="Grüße").replace(b"bob@example.net", b"bob@example.net")
    code, text = send(mail_filter.port, data, sender="jürgen@example.org",
                      rcpts=["zoë@example.net"], options=("SMTPUTF8", "BODY=8BITMIME"))
    assert code == 250, text
    [got] = sink.handler.wait(1)
    assert got.sender == "jürgen@example.org" and got.recipients == ["zoë@example.net"]
    assert "SMTPUTF8" in got.mail_options


def test_next_hop_down_is_451_then_delivered_once(mail_filter, sink, attachments):
    data = message({"photo.jpg": attachments["photo.jpg"]}, subject="retry me")
    sink.handler.answer = "451 4.3.0 busy"
    code, text = send(mail_filter.port, data)
    assert code == 451 and "try again later" in text
    assert sink.handler.messages == []
    sink.handler.answer = None
    code, text = send(mail_filter.port, data)  # Postfix's retry: the same bytes
    assert code == 250, text
    code, text = send(mail_filter.port, data)  # a retry after a lost 250: not sent twice
    assert code == 250 and "already delivered" in text
    assert len(sink.handler.wait(1)) == 1
    time.sleep(0.5)
    assert len(sink.handler.messages) == 1
    row = [r for r in held_rows(mail_filter) if r["subject"] == "retry me"]
    assert len(row) == 1 and row[0]["attempts"] == 2 and row[0]["status"] == "delivered"


def transaction(port: int, data: bytes, rcpts: list[str]) -> tuple[dict[str, tuple[int, str]],
                                                                    tuple[int, str]]:
    """As Postfix's smtp client: each RCPT TO's answer, then the DATA answer."""
    with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
        client.ehlo("postfix.test")
        assert client.mail("alice@example.org", ["BODY=8BITMIME"])[0] == 250
        answers = {}
        for rcpt in rcpts:
            code, text = client.rcpt(rcpt)
            answers[rcpt] = (code, text.decode("utf-8", "replace"))
        code, text = client.data(data)
        return answers, (code, text.decode("utf-8", "replace"))


def test_each_recipient_gets_the_next_hops_answer(mail_filter, sink, attachments):
    """The next hop refuses one recipient for good (550) and one for now (450): the filter
    passes each answer back at RCPT TO, so Postfix bounces the first and retries the second
    itself; the others get the message once, and the retry reaches the deferred one once."""
    sink.handler.refuse = {"gone@example.net": "550 5.1.1 <gone@example.net>: no such user",
                           "later@example.net": "450 4.2.1 <later@example.net>: mailbox busy"}
    data = message({"photo.jpg": attachments["photo.jpg"]}, subject="per recipient")
    rcpts = ["bob@example.net", "gone@example.net", "later@example.net", "carol@example.net"]
    answers, done = transaction(mail_filter.port, data, rcpts)
    assert answers["bob@example.net"][0] == 250 and answers["carol@example.net"][0] == 250
    assert answers["gone@example.net"] == (550, "5.1.1 <gone@example.net>: no such user")
    assert answers["later@example.net"] == (450, "4.2.1 <later@example.net>: mailbox busy")
    assert done[0] == 250, done
    [got] = sink.handler.wait(1)
    assert got.recipients == ["bob@example.net", "carol@example.net"]
    row = [r for r in held_rows(mail_filter) if r["subject"] == "per recipient"][-1]
    assert row["status"] == "delivered"
    assert __import__("json").loads(row["recipients"]) == got.recipients
    refused = " ".join(__import__("json").loads(row["refused_recipients"]))
    assert "gone@example.net: 550" in refused and "later@example.net: 450" in refused
    # Postfix's retry of the deferred recipient alone, once the next hop takes it.
    del sink.handler.refuse["later@example.net"]
    answers, done = transaction(mail_filter.port, data, ["later@example.net"])
    assert answers["later@example.net"][0] == 250 and done[0] == 250, (answers, done)
    assert len(sink.handler.wait(2)) == 2
    time.sleep(0.5)
    assert [m.recipients for m in sink.handler.messages] == [
        ["bob@example.net", "carol@example.net"], ["later@example.net"]]


def test_every_recipient_refused_then_rset_then_delivered_once(mail_filter, sink):
    """No recipient taken: Postfix sends no DATA but RSET, and the next transaction on the
    same connection (a new one with the next hop) delivers once."""
    sink.handler.refuse = {"bob@example.net": "450 4.2.1 busy"}
    data = message({}, subject="after rset")
    with smtplib.SMTP("127.0.0.1", mail_filter.port, timeout=300) as client:
        client.ehlo("postfix.test")
        assert client.mail("alice@example.org")[0] == 250
        assert client.rcpt("bob@example.net")[0] == 450
        assert client.rset()[0] == 250
        assert client.mail("alice@example.org")[0] == 250
        assert client.rcpt("carol@example.net")[0] == 250
        code, text = client.data(data)
        assert code == 250, text
    [got] = sink.handler.wait(1)
    assert got.recipients == ["carol@example.net"]
    time.sleep(0.5)
    assert len(sink.handler.messages) == 1


def test_next_hop_ending_the_session_while_cleaning(mail_filter, sink, attachments):
    """The next hop closes the idle session before the cleaned copy is ready: the filter opens
    a new one with the same envelope and delivers once; when the next hop then refuses a
    recipient it had taken, the whole message is answered 451 and nothing is delivered."""
    data = message({"photo.jpg": attachments["photo.jpg"]}, subject="session ended")
    sink.handler.drop_after = "carol@example.net"
    code, text = send(mail_filter.port, data)
    assert code == 250, text
    [got] = sink.handler.wait(1)
    assert got.recipients == RCPTS
    assert sink.handler.rcpts_seen == RCPTS + RCPTS  # the same recipients, in a new session
    time.sleep(0.5)
    assert len(sink.handler.messages) == 1

    sink.handler.messages.clear()
    data = message({"photo.jpg": attachments["photo.jpg"]}, subject="session ended, refused")
    sink.handler.drop_after = "carol@example.net"
    sink.handler.then_refuse = {"carol@example.net": "452 4.2.2 carol is over quota now"}
    code, text = send(mail_filter.port, data)
    assert code == 451 and "over quota now" in text, text
    time.sleep(0.5)
    assert sink.handler.messages == []
    sink.handler.refuse.clear()
    code, text = send(mail_filter.port, data)  # Postfix's retry
    assert code == 250, text
    assert [m.recipients for m in sink.handler.wait(1)] == [RCPTS]


def test_next_hop_ending_the_session_between_recipients(mail_filter, sink):
    """The session ends after the first recipient: the later ones are answered 451 (Postfix
    keeps them queued), and the first gets the message once, in a new session."""
    sink.handler.drop_after = "bob@example.net"
    rcpts = ["bob@example.net", "carol@example.net", "dave@example.net"]
    answers, done = transaction(mail_filter.port, message({}, subject="ended early"), rcpts)
    assert answers["bob@example.net"][0] == 250
    assert answers["carol@example.net"][0] == 451 and answers["dave@example.net"][0] == 451
    assert done[0] == 250, done
    [got] = sink.handler.wait(1)
    assert got.recipients == ["bob@example.net"]
    time.sleep(0.5)
    assert len(sink.handler.messages) == 1


def test_postfix_gone_while_the_next_hop_answers(mail_filter, sink):
    """Postfix drops the connection after the next hop kept the message but before it
    answered: the filter lets that hand-over end and records it, so Postfix's retry is
    answered `already delivered` and the message is not delivered twice."""
    sink.handler.delay = 3.0
    data = message({}, subject="gone meanwhile")
    client = smtplib.SMTP("127.0.0.1", mail_filter.port, timeout=300)
    client.ehlo("postfix.test")
    client.mail("alice@example.org", ["BODY=8BITMIME"])
    for rcpt in RCPTS:
        client.rcpt(rcpt)
    failed: list[BaseException] = []

    def data_phase() -> None:
        try:
            client.data(data)
        except (OSError, smtplib.SMTPException) as exc:
            failed.append(exc)

    worker = threading.Thread(target=data_phase)
    worker.start()
    assert len(sink.handler.wait(1)) == 1  # the next hop has it and takes 3 s to answer
    client.sock.shutdown(socket.SHUT_RDWR)  # Postfix gives up
    worker.join(30)
    client.close()
    assert failed
    sink.handler.delay = 0.0

    def answered() -> bool:
        rows = [r for r in held_rows(mail_filter) if r["subject"] == "gone meanwhile"]
        return bool(rows) and rows[0]["status"] == "delivered"

    deadline = time.monotonic() + 30
    while not answered() and time.monotonic() < deadline:
        time.sleep(0.1)
    code, text = send(mail_filter.port, data)  # Postfix's retry
    assert code == 250 and "already delivered" in text, text
    time.sleep(0.5)
    assert len(sink.handler.messages) == 1


def test_next_hop_refusing_for_good_is_554(mail_filter, sink):
    sink.handler.answer = "554 5.7.1 no thanks"
    code, text = send(mail_filter.port, message({}, subject="refused"))
    assert code == 554 and "no thanks" in text


def _nested(levels: int) -> bytes:
    inner = b"Content-Type: text/plain\r\n\r\ndeep\r\n"
    for level in range(levels):
        boundary = f"b{level}".encode()
        inner = (b"Content-Type: multipart/mixed; boundary=" + boundary + b"\r\n\r\n--" +
                 boundary + b"\r\n" + inner + b"\r\n--" + boundary + b"--\r\n")
    return (b"From: a@example.org\r\nTo: b@example.net\r\nSubject: nested\r\n"
            b"MIME-Version: 1.0\r\n" + inner)


def _many_parts(count: int) -> bytes:
    body = b"".join(b"--x\r\nContent-Type: text/plain\r\n\r\npart %d\r\n" % i
                    for i in range(count))
    return (b"From: a@example.org\r\nTo: b@example.net\r\nSubject: parts\r\n"
            b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n" +
            body + b"--x--\r\n")


HEAD = (b"From: a@example.org\r\nTo: b@example.net\r\nSubject: %s\r\nMIME-Version: 1.0\r\n")
BAD_INPUTS = {
    "malformed MIME": HEAD % b"malformed" +
    b"Content-Type: multipart/mixed; boundary=\"zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n"
    b"\r\nno end\r\n--zz\r\nContent-Type",
    "bad base64": HEAD % b"base64" +
    b"Content-Type: multipart/mixed; boundary=q\r\n\r\n--q\r\nContent-Type: text/plain\r\n\r\n"
    b"hi\r\n--q\r\nContent-Type: application/pdf; name=a.pdf\r\n"
    b"Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=a.pdf\r\n"
    b"\r\n!!!!not*base64$$$===\r\n--q--\r\n",
    "1,000 parts": _many_parts(1000),
    "50 levels of nesting": _nested(50),
    "1 MB header": HEAD % b"big header" + b"X-Big: " +
    b"\r\n ".join([b"y" * 900] * 1200) + b"\r\n\r\nbody\r\n",
    "NUL bytes": HEAD % b"nul" + b"Content-Type: text/plain\r\n\r\nbefore\x00after\x00\r\n",
    "encoded-word names with path separators": HEAD % b"names" +
    b"Content-Type: multipart/mixed; boundary=q\r\n\r\n--q\r\nContent-Type: text/plain\r\n\r\n"
    b"hi\r\n--q\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; "
    b"filename=\"=?utf-8?q?=2E=2E=2F=2E=2E=2Fetc=2Fpasswd=5C..=5Cboot.txt?=\"\r\n\r\n"
    b"root:x:0:0\r\n--q--\r\n",
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_gets_a_clear_answer(mail_filter, sink, case):
    code, text = send(mail_filter.port, BAD_INPUTS[case])
    assert code in (250, 554), text
    if code == 554:
        assert text.startswith("5.6.0 Refused by Sanitas: ") and len(text) > 30, text
        assert sink.handler.messages == []
    else:
        [got] = sink.handler.wait(1)
        assert b"X-Sanitas: sanitized" in got.data
        assert b"\x00" not in got.data
        for name in parts(got.data):
            assert "/" not in name and "\\" not in name
    if case in ("1,000 parts", "50 levels of nesting", "1 MB header"):
        assert code == 554, text
    if case == "NUL bytes" and code == 250:  # if it passes, the NULs are gone
        assert b"beforeafter" in sink.handler.messages[0].data.replace(b"=\r\n", b"")
    # and the next message passes
    sink.handler.messages.clear()
    code, text = send(mail_filter.port, message({}, subject="after " + case))
    assert code == 250, text


def test_over_the_size_limit_is_552_while_others_are_served(mail_filter, sink):
    big = HEAD % b"huge" + b"Content-Type: text/plain\r\n\r\n" + \
        (b"z" * 998 + b"\r\n") * (100 * 1024)  # 100 MB
    answers: dict[str, tuple[int, str]] = {}

    def send_big() -> None:
        try:
            answers["big"] = send(mail_filter.port, big)
        except smtplib.SMTPException as exc:
            answers["big"] = (getattr(exc, "smtp_code", 0), str(exc))

    worker = threading.Thread(target=send_big)
    worker.start()
    time.sleep(0.2)
    small = send(mail_filter.port, message({}, subject="small meanwhile"))
    worker.join(300)
    assert small[0] == 250, small
    assert answers["big"][0] == 552, answers
    with smtplib.SMTP("127.0.0.1", mail_filter.port, timeout=30) as client:
        _, features = client.ehlo()
        assert b"SIZE 52428800" in features  # announced
        code, _ = client.mail("a@example.org", ["SIZE=104857600"])  # refused before DATA
        assert code == 552


def test_metrics(mail_filter, sink, attachments):
    """sanitas_mail_* on the filter's metrics port (bounded labels): what three messages add."""
    import httpx

    from tests.mail.conftest import METRICS_TOKEN

    url = f"http://127.0.0.1:{mail_filter.metrics_port}/metrics"

    def scrape() -> dict[str, float]:
        text = httpx.get(url, headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
                         timeout=10).text
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
                for line in text.splitlines() if line.startswith("sanitas_mail_")}

    before = scrape()
    assert send(mail_filter.port, message({"tool.exe": attachments["tool.exe"],
                                           "photo.jpg": attachments["photo.jpg"]},
                                          subject="metrics"))[0] == 250
    assert send(mail_filter.port, BAD_INPUTS["1,000 parts"])[0] == 554
    sink.handler.answer = "451 4.3.0 busy"
    assert send(mail_filter.port, message({}, subject="metrics deferred"))[0] == 451
    after = scrape()

    def added(name: str) -> float:
        return after.get(name, 0) - before.get(name, 0)

    assert added('sanitas_mail_messages_total{outcome="delivered"}') == 1
    assert added('sanitas_mail_messages_total{outcome="refused"}') == 1
    assert added('sanitas_mail_messages_total{outcome="deferred"}') == 1
    assert added('sanitas_mail_message_verdicts_total{verdict="partial"}') == 1
    assert added('sanitas_mail_attachments_total{verdict="refused"}') == 1
    assert added('sanitas_mail_attachments_total{verdict="cleaned"}') == 1
    assert added('sanitas_mail_next_hop_failures_total{kind="temporary"}') == 1
    assert added('sanitas_mail_duration_seconds_count{outcome="delivered"}') == 1
    names = {key.split("{", 1)[1].split("=", 1)[0] for key in after if "{" in key}
    assert names <= {"outcome", "verdict", "kind", "le"}
    assert httpx.get(url, timeout=10).status_code == 404  # no token, no metrics


def test_encrypted_mail_is_held_back_by_default_and_passed_by_policy(mail_filter, sink,
                                                                     tmp_path):
    """An S/MIME message made by openssl and a message with an encrypted PDF attached: the
    default filter delivers notes in their place with `verdict=encrypted`; a filter whose
    policy passes encrypted content delivers them as they came, the recipient's key still
    opening the S/MIME body."""
    from email.mime.text import MIMEText

    from tests.engine.test_encrypted_content import (
        SECRET_TEXT,
        _encrypted_pdf,
        _smime_message,
    )
    from tests.engine.test_mail_files import _attachment, _message
    from tests.factories import stored_policy
    from tests.mail.mailkit import start_filter, stop_filter

    smime = _smime_message(tmp_path)
    secret = _encrypted_pdf()
    attached = _message(MIMEText("The figures are attached.\n", "plain", "utf-8"),
                        _attachment(secret, "figures.pdf"))

    code, text = send(mail_filter.port, smime)
    assert code == 250 and "verdict encrypted" in text, text
    [got] = sink.handler.wait(1)
    msg = email.message_from_bytes(got.data, policy=email.policy.default)
    assert "verdict=encrypted;" in msg["X-Sanitas"] and "encryptedHeld=1" in msg["X-Sanitas"]
    assert "held back S/MIME encrypted content" in msg.get_content()
    assert b"pkcs7" not in got.data.lower()
    assert held_rows(mail_filter)[-1]["verdict"] == "encrypted"
    sink.handler.messages.clear()
    code, text = send(mail_filter.port, attached)
    assert code == 250, text
    [got] = sink.handler.wait(1)
    assert "figures.pdf" not in parts(got.data) and "figures.removed.txt" in parts(got.data)
    listed = {a["name"]: a for a in __import__("json").loads(
        held_rows(mail_filter)[-1]["attachments"])}
    assert listed["figures.pdf"]["verdict"] == "encrypted"
    assert listed["figures.pdf"]["summary"].startswith("Not inspected: encrypted: ")
    sink.handler.messages.clear()

    data_dir = tmp_path / "passing"
    policy_id = stored_policy(data_dir, "Pass encrypted mail", encryptedContent="pass")
    passing = start_filter(data_dir, sink.port, mail_policy=policy_id, mail_footer="true")
    try:
        code, text = send(passing.port, smime)
        assert code == 250 and "verdict encrypted" in text, text
        [got] = sink.handler.wait(1)
        msg = email.message_from_bytes(got.data, policy=email.policy.default)
        assert msg.get_content_type() == "application/pkcs7-mime"  # no footer wrapped round
        assert "encryptedPassed=1" in msg["X-Sanitas"]
        import subprocess

        decrypted = subprocess.run(
            ["openssl", "cms", "-decrypt", "-inkey", str(tmp_path / "key.pem"), "-recip",
             str(tmp_path / "cert.pem")], input=got.data, check=True,
            capture_output=True).stdout
        assert SECRET_TEXT in email.message_from_bytes(
            decrypted, policy=email.policy.default).get_content()
        sink.handler.messages.clear()
        code, text = send(passing.port, attached)
        assert code == 250, text
        [got] = sink.handler.wait(1)
        assert parts(got.data)["figures.pdf"] == secret
    finally:
        stop_filter(passing)
