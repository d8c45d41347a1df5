"""Outlook .msg files and TNEF (winmail.dat), as files and as attachments (issue 22, breadth):
converted to MIME and cleaned by the mail cleaner, so their bodies and attachments get what an
.eml gets."""

from __future__ import annotations

import email
import email.policy
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import pytest

from sanitas.engine import detect, sanitize_file
from sanitas.engine.report import RejectionCode
from tests.engine.breadth_corpus import embedded_msg_streams, msg_bytes, tnef_bytes

EXE = b"MZ\x90\x00" + b"\x00" * 200


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _parsed(result) -> email.message.Message:
    assert result.status == "ok", result.reason
    assert result.output_type == "eml"
    return email.message_from_bytes(Path(result.output).read_bytes(),
                                    policy=email.policy.compat32)


def _attachments(message: email.message.Message) -> dict[str, bytes]:
    return {part.get_filename(): part.get_payload(decode=True) for part in message.walk()
            if part.get_filename()}


def test_msg_clean_becomes_eml_with_its_content(tmp_path, out_dir):
    src = _write(tmp_path, "Figures.msg", msg_bytes(attachments=[("notes.txt", b"Notes.\n")]))
    assert detect.sniff(src.read_bytes()[:4096], "Figures.msg").kind == "msg"
    result = sanitize_file(src, out_dir)
    assert result.detected_type == "msg" and Path(result.output).name == "Figures.eml"
    message = _parsed(result)
    assert message["Subject"] == "Quarterly figures"
    assert "alice@example.org" in message["From"] and "bob@example.com" in message["To"]
    bodies = [p.get_payload(decode=True) for p in message.walk()
              if p.get_content_type() == "text/plain" and not p.get_filename()]
    assert bodies == [b"Hello Bob,\r\nsee attached."]
    assert _attachments(message) == {"notes.txt": b"Notes.\n"}
    assert [f.kind for f in result.findings] == ["legacy_format"]


def test_msg_hostile_parts_cleaned_recursively(tmp_path, out_dir):
    inner = embedded_msg_streams(subject="Inner", attachments=[("inner.csv", b"a,b\n=cmd(),2\n")])
    data = msg_bytes(
        html=(b"<html><body><p onclick='x()'>Hi<script>alert(1)</script>"
              b"<img src='https://track.example/p.gif'></p></body></html>"),
        headers=("Received: from mx.example.org ([10.1.2.3])\r\nFrom: Alice <alice@example.org>"
                 "\r\nTo: bob@example.com\r\nSubject: Quarterly figures\r\n"
                 "X-Originating-IP: [10.9.8.7]\r\n"),
        attachments=[("notes.txt", b"Notes.\n"), ("tool.exe", EXE)], embedded=inner)
    result = sanitize_file(_write(tmp_path, "evil.msg", data), out_dir)
    message = _parsed(result)
    raw = Path(result.output).read_bytes()
    for gone in (b"10.1.2.3", b"10.9.8.7", b"track.example", b"alert(1)", b"onclick", b"MZ\x90"):
        assert gone not in raw, gone
    files = _attachments(message)
    assert files["notes.txt"] == b"Notes.\n"
    assert b"tool.exe" in files["tool.removed.txt"]
    inner_csv = [p for p in message.walk() if p.get_filename() == "inner.csv"]
    assert inner_csv and inner_csv[0].get_payload(decode=True) == b"a,b\n'=cmd(),2\n"
    kinds = {(f.kind, f.location) for f in result.findings}
    assert ("archive_member", "tool.exe") in kinds
    assert ("metadata", "header Received") in kinds
    assert any(k == "javascript" for k, _ in kinds) and any(k == "csv_formula" for k, _ in kinds)


def test_damaged_msg_is_refused(tmp_path, out_dir):
    data = msg_bytes()
    result = sanitize_file(_write(tmp_path, "cut.msg", data[:1536]), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED


def test_winmail_dat_becomes_eml_with_its_attachments(tmp_path, out_dir):
    data = tnef_bytes([("notes.txt", b"Notes.\n"), ("setup.exe", EXE)])
    assert detect.sniff(data, "winmail.dat").kind == "tnef"
    result = sanitize_file(_write(tmp_path, "winmail.dat", data), out_dir)
    assert result.detected_type == "tnef" and Path(result.output).name == "winmail.eml"
    message = _parsed(result)
    assert message["Subject"] == "Figures"
    files = _attachments(message)
    assert files["notes.txt"] == b"Notes.\n" and "setup.removed.txt" in files
    assert b"MZ\x90" not in Path(result.output).read_bytes()


def test_tnef_part_of_an_eml_is_unpacked_in_place(tmp_path, out_dir):
    outer = MIMEMultipart("mixed")
    for name, value in (("From", "Alice <alice@example.org>"), ("To", "bob@example.com"),
                        ("Subject", "Rich text"), ("Date", "Mon, 1 Jan 2024 10:00:00 +0000")):
        outer[name] = value
    outer.attach(MIMEText("See the attachments.", "plain"))
    part = MIMEApplication(tnef_bytes([("table.csv", b"a,b\n=1+1,2\n"), ("run.exe", EXE)]),
                           "ms-tnef")
    part.add_header("Content-Disposition", "attachment", filename="winmail.dat")
    outer.attach(part)
    result = sanitize_file(_write(tmp_path, "rich.eml", outer.as_bytes()), out_dir)
    message = _parsed(result)
    files = _attachments(message)
    assert "winmail.dat" not in files
    assert files["table.csv"] == b"a,b\n'=1+1,2\n" and "run.removed.txt" in files
    assert any(f.kind == "legacy_format" and f.location == "winmail.dat"
               for f in result.findings)


TINY_OBJECT = b"\x01\x04\x80\x01\x00\x00\x00\x00\x00\x00\x00"  # an empty subject, 11 bytes
EMBEDDED_MESSAGE = (b"\x07\x03\x02\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x46"
                    b"\x78\x9f\x3e\x22\x01\x00")  # MAPI's IMessage GUID, then a TNEF stream


@pytest.mark.parametrize("data,code", [
    (tnef_bytes([("a.txt", b"x" * 100)])[:-30], RejectionCode.DAMAGED),
    (b"\x78\x9f\x3e\x22\x01\x00" + TINY_OBJECT * 6000, RejectionCode.TOO_COMPLEX),
    # tnefparse reads an embedded message too: its objects count against the same bound
    (tnef_bytes([("fwd", EMBEDDED_MESSAGE + TINY_OBJECT * 6000)]), RejectionCode.TOO_COMPLEX),
], ids=["truncated", "too-many-objects", "too-many-in-embedded-message"])
def test_hostile_tnef_refused(tmp_path, out_dir, data, code):
    result = sanitize_file(_write(tmp_path, "winmail.dat", data), out_dir)
    assert result.status == "rejected" and result.code == code, result.reason
