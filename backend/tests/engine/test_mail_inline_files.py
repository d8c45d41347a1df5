"""Files written into the text of a mail body (uuencode, yEnc, BinHex), made by the real
encoders of Debian's sharutils (`uuencode`), macutils (`binhex`) and python3-yenc: each is
taken out of the text and cleaned as an attachment, or replaced by a note (engine/mail_inline.py,
engine/mail.py)."""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

from sanitas.engine import formats
from tests.engine import corpus_office
from tests.engine.test_mail_files import HEADERS, _attachments, _clean, _parsed

EXE = b"MZ\x90\x00 inert test program" + bytes(range(256))
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, where python3-yenc is installed


def _uuencode(data: bytes, name: str, *, base64: bool = False) -> bytes:
    args = ["uuencode", "-m", name] if base64 else ["uuencode", name]
    return subprocess.run(args, input=data, capture_output=True, check=True).stdout


def _binhex(tmp_path: Path, data: bytes, name: str) -> bytes:
    folder = tmp_path / f"binhex-{name}"
    folder.mkdir()
    (folder / name).write_bytes(data)
    return subprocess.run(["binhex", "-d", name], cwd=folder, capture_output=True,
                          check=True).stdout


def _yenc(data: bytes, name: str, *, declared_size: int | None = None) -> bytes:
    """A single-part yEnc block: the encoded lines by python3-yenc, the header and trailer as
    yEnc 1.3 writes them."""
    script = ("import sys, yenc; e = yenc.Encoder(); e.feed(sys.stdin.buffer.read()); "
              "e.terminate(); sys.stdout.buffer.write(e.getEncoded())")
    encoded = subprocess.run([SYSTEM_PYTHON, "-c", script], input=data, capture_output=True,
                             check=True).stdout
    size = len(data) if declared_size is None else declared_size
    return (f"=ybegin line=128 size={size} name={name}\r\n".encode() + encoded
            + f"=yend size={len(data)} crc32={zlib.crc32(data):08x}\r\n".encode())


def _text_message(body: bytes, charset: str = "us-ascii", encoding: str = "7bit") -> bytes:
    return (HEADERS.encode() + b"MIME-Version: 1.0\r\n"
            + f"Content-Type: text/plain; charset={charset}\r\n".encode()
            + f"Content-Transfer-Encoding: {encoding}\r\n\r\n".encode() + body)


def _check_docm_and_exe(result, encoding: str) -> None:
    assert result.status == "ok", result.reason
    parsed = _parsed(result)
    files = _attachments(parsed)
    assert "report.docx" in files, files.keys()
    cleaned = files["report.docx"].get_payload(decode=True)
    assert files["report.docx"].get_content_type() == formats.KINDS["docx"].media_type
    assert cleaned.startswith(b"PK") and b"vbaProject" not in cleaned
    assert "invoice.exe" in files["invoice.removed.txt"].get_content()
    text = parsed.get_body(("plain",)).get_content()
    assert "Hello Bob," in text and "Regards, Alice" in text
    assert f'took the {encoding} file "report.docm" out of this text' in text
    assert "see the attachment report.docx" in text
    assert "see the attachment invoice.removed.txt" in text
    findings = {(f.kind, f.location.split(":")[0], f.action) for f in result.findings}
    assert ("encoded_attachment", "report.docm", "converted") in findings
    assert ("encoded_attachment", "invoice.exe", "converted") in findings
    assert ("macro", "report.docm", "removed") in findings
    assert ("archive_member", "invoice.exe", "removed") in findings
    assert result.outcome().verdict.value == "partial"
    assert b"MZ\x90" not in Path(result.output).read_bytes()


def test_uuencoded_macro_document_and_executable_are_taken_out_of_the_text(tmp_path):
    body = (b"Hello Bob,\r\nthe report is below.\r\n\r\n"
            + _uuencode(corpus_office.hostile_docm(), "report.docm")
            + b"\r\nand the tool:\r\n" + _uuencode(EXE, "invoice.exe")
            + b"\r\nRegards, Alice\r\n")
    result = _clean(tmp_path, _text_message(body))
    _check_docm_and_exe(result, "uuencoded")
    assert b"begin 644" not in Path(result.output).read_bytes()


def test_begin_base64_blocks_are_decoded_too(tmp_path):
    body = (b"Hello Bob,\n" + _uuencode(corpus_office.hostile_docm(), "report.docm",
                                        base64=True)
            + _uuencode(EXE, "invoice.exe", base64=True) + b"Regards, Alice\n")
    _check_docm_and_exe(_clean(tmp_path, _text_message(body)), "uuencoded")


def test_yenc_blocks_in_an_8bit_body_are_decoded(tmp_path):
    body = (b"Hello Bob,\r\n" + _yenc(corpus_office.hostile_docm(), "report.docm")
            + _yenc(EXE, "invoice.exe") + b"Regards, Alice\r\n")
    result = _clean(tmp_path, _text_message(body, "iso-8859-1", "8bit"))
    _check_docm_and_exe(result, "yEnc")


def test_binhex_blocks_are_decoded_with_their_checksums(tmp_path):
    body = (b"Hello Bob,\r\n" + _binhex(tmp_path, corpus_office.hostile_docm(), "report.docm")
            + b"\r\n" + _binhex(tmp_path, EXE, "invoice.exe") + b"\r\nRegards, Alice\r\n")
    _check_docm_and_exe(_clean(tmp_path, _text_message(body)), "BinHex")


def test_encoded_files_inside_a_multipart_body_become_its_attachments(tmp_path):
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    outer = MIMEMultipart("alternative")
    text = (b"Hello Bob,\n" + _uuencode(corpus_office.hostile_docm(), "report.docm")
            + _uuencode(EXE, "invoice.exe") + b"Regards, Alice\n").decode("ascii")
    outer.attach(MIMEText(text, "plain", "utf-8"))
    outer.attach(MIMEText("<p>Hello Bob, see the text part.</p>", "html", "utf-8"))
    data = HEADERS.encode() + outer.as_bytes()
    result = _clean(tmp_path, data)
    _check_docm_and_exe(result, "uuencoded")
    assert "Hello Bob, see the text part." in _parsed(result).get_body(("html",)).get_content()


def test_damaged_blocks_are_removed_with_the_reason(tmp_path):
    docm = corpus_office.hostile_docm()
    uu = _uuencode(docm, "cut.docm")
    cut = uu[:uu.index(b"\nend")]  # no end line
    multipart_post = _yenc(docm[:1000], "part1.docm", declared_size=len(docm))
    binhex = bytearray(_binhex(tmp_path, EXE, "flipped.exe"))
    middle = binhex.index(b":", 10) + 90  # in the data fork, past the header
    binhex[middle] = ord("A") if binhex[middle] != ord("A") else ord("B")
    body = (b"Text first.\r\n" + multipart_post + bytes(binhex) + b"\r\nText between.\r\n"
            + cut)
    result = _clean(tmp_path, _text_message(body, "iso-8859-1", "8bit"))
    assert result.status == "ok", result.reason
    parsed = _parsed(result)
    files = _attachments(parsed)
    assert {"part1.removed.txt", "flipped.removed.txt", "cut.removed.txt"} <= set(files)
    assert "only a part of the file" in files["part1.removed.txt"].get_content()
    assert "checksum does not match" in files["flipped.removed.txt"].get_content()
    assert "no end line" in files["cut.removed.txt"].get_content()
    text = parsed.get_body(("plain",)).get_content()
    assert "Text first." in text and "Text between." in text
    removed = {f.location for f in result.findings
               if f.kind == "archive_member" and f.action == "removed"}
    assert {"part1.docm", "flipped.exe", "cut.docm"} <= removed
    output = Path(result.output).read_bytes()
    assert b"=ybegin" not in output and b"begin 644" not in output
    assert result.outcome().verdict.value == "partial"


def test_text_that_only_looks_like_a_header_is_kept(tmp_path):
    body = (b"We begin at 9 in room 644.\r\nbegin 9x9 notes\r\n=ybeginner notes\r\n"
            b"(This file is fine)\r\nend\r\n")
    result = _clean(tmp_path, _text_message(body))
    assert result.status == "ok", result.reason
    parsed = _parsed(result)
    assert not _attachments(parsed)
    assert parsed.get_body(("plain",)).get_content().replace("\r\n", "\n") == \
        body.decode().replace("\r\n", "\n")
    assert not [f for f in result.findings if f.kind == "encoded_attachment"]
