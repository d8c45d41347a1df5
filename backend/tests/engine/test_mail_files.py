"""E-mail files (.eml): bodies, headers and attachments cleaned by engine/mail.py, recursively
through attached messages, under the MIME limits. Every output is parsed back with the email
package."""

from __future__ import annotations

import email
import email.policy
import io
from email.message import EmailMessage
from email.mime.application import MIMEApplication
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import pytest

from sanitas.engine import formats, mail, sanitize_file
from sanitas.engine.detect import detect, sniff
from sanitas.engine.policy import Policy
from tests.engine import corpus, corpus_office

HEADERS = (
    "Received: from mail.internal.example (10.1.2.3) by mx.example.org; Mon, 1 Jan 2024\r\n"
    "Return-Path: <alice@example.org>\r\n"
    "From: Alice <alice@example.org>\r\n"
    "To: Bob <bob@example.com>\r\n"
    "Subject: Quarterly figures\r\n"
    "Date: Mon, 1 Jan 2024 10:00:00 +0000\r\n"
    "Message-ID: <1234@example.org>\r\n"
    "X-Mailer: Contoso Mail 7.1\r\n"
    "X-Originating-IP: [192.0.2.44]\r\n"
    "Disposition-Notification-To: alice@example.org\r\n"
)


def _message(*parts: MIMEBase, subtype: str = "mixed") -> bytes:
    outer = MIMEMultipart(subtype)
    for part in parts:
        outer.attach(part)
    body = outer.as_bytes(policy=email.policy.compat32.clone(linesep="\r\n"))
    return HEADERS.encode() + body


def _attachment(data: bytes, name: str, maintype: str = "application",
                subtype: str = "octet-stream") -> MIMEBase:
    part = MIMEApplication(data, subtype) if maintype == "application" else MIMEBase(
        maintype, subtype)
    if maintype != "application":
        part.set_payload(data)
        email.encoders.encode_base64(part)
    filename: str | tuple[str, str, str] = name if name.isascii() else ("utf-8", "", name)
    part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _clean(tmp_path: Path, data: bytes, name: str = "message.eml", **kwargs):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    result = sanitize_file(src, out, original_name=name, workdir=tmp_path, **kwargs)
    return result


def _parsed(result) -> email.message.Message:
    data = Path(result.output).read_bytes()
    data.decode("ascii")  # 7-bit output
    parsed = email.message_from_bytes(data, policy=email.policy.default)
    assert all(not part.defects for part in parsed.walk()), [p.defects for p in parsed.walk()]
    return parsed


def _attachments(parsed: email.message.Message) -> dict[str, email.message.Message]:
    return {part.get_filename(): part for part in parsed.walk() if part.get_filename()}


def _pdf_with_javascript() -> bytes:
    buffer = io.BytesIO()
    corpus.hostile_pdf().save(buffer)
    return buffer.getvalue()


def test_macro_document_becomes_docx_and_executable_becomes_a_note(tmp_path):
    data = _message(MIMEText("Hello Bob,\nthe figures are attached.\n", "plain", "utf-8"),
                    _attachment(corpus_office.hostile_docm(), "figures.docm"),
                    _attachment(b"MZ\x90\x00 inert test program", "invoice.exe"))
    result = _clean(tmp_path, data)
    assert result.status == "ok", result.reason
    assert result.detected_type == "eml" and result.output_type == "eml"
    parsed = _parsed(result)
    files = _attachments(parsed)
    assert "figures.docx" in files and "figures.docm" not in files
    assert files["figures.docx"].get_content_type() == formats.KINDS["docx"].media_type
    cleaned_docx = files["figures.docx"].get_payload(decode=True)
    assert cleaned_docx.startswith(b"PK") and b"vbaProject" not in cleaned_docx
    note = files["invoice.removed.txt"]
    assert "invoice.exe" in note.get_content() and "executable" in note.get_content()
    assert b"MZ\x90" not in Path(result.output).read_bytes()
    kinds = {(f.kind, f.location.split(":")[0]) for f in result.findings}
    assert ("macro", "figures.docm") in kinds
    assert ("renamed", "figures.docm") in kinds
    assert any(f.kind == "archive_member" and f.location == "invoice.exe"
               and f.action == "removed" for f in result.findings)
    assert "the figures are attached" in parsed.get_body(("plain",)).get_content()


def test_headers_keep_the_visible_message_and_lose_routing_and_tracking(tmp_path):
    result = _clean(tmp_path, _message(MIMEText("Body.\n", "plain", "utf-8")))
    parsed = _parsed(result)
    assert parsed["From"] == "Alice <alice@example.org>"
    assert parsed["To"] == "Bob <bob@example.com>"
    assert parsed["Subject"] == "Quarterly figures"
    assert parsed["Message-ID"] == "<1234@example.org>"
    assert parsed["Date"].datetime.isoformat() == "2024-01-01T10:00:00+00:00"
    for gone in ("Received", "Return-Path", "X-Mailer", "X-Originating-IP",
                 "Disposition-Notification-To"):
        assert parsed[gone] is None, gone
    assert b"10.1.2.3" not in Path(result.output).read_bytes()
    removed = {f.location for f in result.findings if f.action == "removed"}
    assert {"header Received", "header X-Mailer", "header X-Originating-IP",
            "header Disposition-Notification-To"} <= removed
    # documentMetadata keep keeps the routing and client headers (read receipts follow
    # externalReferences, removed here)
    (tmp_path / "keep").mkdir()
    kept = _clean(tmp_path / "keep", _message(MIMEText("Body.\n", "plain", "utf-8")),
                  policy=Policy().with_rules(documentMetadata="keep"))
    parsed = _parsed(kept)
    assert parsed["X-Mailer"] == "Contoso Mail 7.1" and parsed["Received"]
    assert parsed["Disposition-Notification-To"] is None


def test_address_fields_are_rebuilt_from_their_addresses(tmp_path):
    body = MIMEText("Body.\n", "plain", "utf-8").as_bytes(
        policy=email.policy.compat32.clone(linesep="\r\n"))
    data = (
        b"From: =?utf-8?q?M=C3=BCller=2C_J=C3=B6rg?= <jm@example.org>\r\n"
        b'To: "Bob Cc: z@evil.example"\r\n'
        b'Cc: "Smith, Al" <al@example.com>, =?utf-8?q?Eve_=3Cz=40evil=2Eexample=3E?='
        b" <eve@example.com>\r\n"
        b"Bcc: undisclosed-recipients:;\r\n"
        b"Reply-To: x <a@b@c>\r\n"
        b"Subject: Addresses\r\n" + body)
    parsed = _parsed(_clean(tmp_path, data))
    # a comma inside an encoded display name is part of the name, not a second address
    assert parsed["From"].addresses[0].display_name == "M\u00fcller, J\u00f6rg"
    assert [a.addr_spec for a in parsed["From"].addresses] == ["jm@example.org"]
    # a quoted name without an address does not come out unquoted, where a reader would
    # take its words for a field and an address of their own
    assert parsed["To"] is None
    assert [(a.display_name, a.addr_spec) for a in parsed["Cc"].addresses] == [
        ("Smith, Al", "al@example.com"), ("Eve <z@evil.example>", "eve@example.com")]
    assert str(parsed["Bcc"]) == "undisclosed-recipients:;"
    assert parsed["Reply-To"] is None
    assert {name for name in parsed if not name.startswith(("MIME", "Content"))} == {
        "From", "Cc", "Bcc", "Subject"}


def test_html_body_loses_script_and_tracking_pixel_and_keeps_inline_picture(tmp_path):
    html = ('<html><body><p onclick="steal()">Hi Bob</p><script>alert(1)</script>'
            '<img src="https://tracker.example/open.gif?id=42" width="1" height="1">'
            '<img src="cid:logo@example"></body></html>')
    related = MIMEMultipart("related")
    related.attach(MIMEText(html, "html", "utf-8"))
    logo = MIMEBase("image", "jpeg")
    logo.set_payload(corpus_office.jpeg_with_gps())
    email.encoders.encode_base64(logo)
    logo["Content-ID"] = "<logo@example>"
    logo.add_header("Content-Disposition", "inline", filename="logo.jpg")
    related.attach(logo)
    result = _clean(tmp_path, _message(related, subtype="alternative"))
    assert result.status == "ok", result.reason
    parsed = _parsed(result)
    cleaned = parsed.get_body(("html",)).get_content()
    assert "Hi Bob" in cleaned
    assert "<script" not in cleaned and "onclick" not in cleaned and "alert(1)" not in cleaned
    assert "tracker.example" not in cleaned
    assert "data:image/jpeg;base64," in cleaned  # the cleaned logo, taken in
    assert "cid:" not in cleaned
    kinds = {f.kind for f in result.findings}
    assert {"javascript", "event_handler", "external_reference"} <= kinds
    assert any(f.kind in ("exif", "gps_location") for f in result.findings)


def test_attached_message_with_a_javascript_pdf_is_cleaned_recursively(tmp_path):
    inner = EmailMessage()
    inner["From"] = "carol@example.net"
    inner["Subject"] = "Invoice"
    inner["X-Mailer"] = "Inner Mailer"
    inner.set_content("See the invoice.\n")
    inner.add_attachment(_pdf_with_javascript(), maintype="application", subtype="pdf",
                         filename="invoice.pdf")
    forwarded = MIMEBase("message", "rfc822")
    forwarded.set_payload([email.message_from_bytes(inner.as_bytes(),
                                                    policy=email.policy.compat32)])
    result = _clean(tmp_path, _message(MIMEText("Forwarding.\n", "plain", "utf-8"),
                                       forwarded))
    assert result.status == "ok", result.reason
    parsed = _parsed(result)
    attached = [p for p in parsed.walk() if p.get_content_type() == "message/rfc822"]
    assert len(attached) == 1
    inner_out = attached[0].get_payload()[0]
    assert inner_out["Subject"] == "Invoice" and inner_out["X-Mailer"] is None
    pdf = next(p for p in inner_out.walk() if p.get_filename() == "invoice.pdf")
    cleaned_pdf = pdf.get_payload(decode=True)
    assert cleaned_pdf.startswith(b"%PDF-") and b"/JavaScript" not in cleaned_pdf
    assert any(f.kind == "javascript" and "invoice.pdf" in f.location for f in result.findings)


def test_rfc2231_names_are_kept(tmp_path):
    name = "Überweisung März €.pdf"
    result = _clean(tmp_path, _message(MIMEText("x\n", "plain", "utf-8"),
                                       _attachment(_pdf_with_javascript(), name)))
    raw = Path(result.output).read_bytes()
    assert b"filename*=utf-8''" in raw  # RFC 2231 on the wire
    assert name in _attachments(_parsed(result))


def test_malformed_base64_is_replaced_by_a_note(tmp_path):
    part = MIMEBase("application", "pdf")
    part["Content-Transfer-Encoding"] = "base64"
    part.add_header("Content-Disposition", "attachment", filename="broken.pdf")
    part.set_payload("JVBERi0xLjQK!!!*** not base64 at all ***\r\nAAA\r\n")
    result = _clean(tmp_path, _message(MIMEText("x\n", "plain", "utf-8"), part))
    assert result.status == "ok", result.reason
    files = _attachments(_parsed(result))
    assert "broken.removed.txt" in files and "broken.pdf" not in files
    assert any(f.kind == "archive_member" and "base64" in f.detail for f in result.findings)


def test_too_many_parts_refuse_the_message(tmp_path):
    parts = [MIMEText(f"part {i}\n", "plain", "utf-8") for i in range(1000)]
    result = _clean(tmp_path, _message(*parts))
    assert result.status == "rejected"
    assert result.code == "too_complex" and "500 parts" in result.reason


def test_deeply_nested_multiparts_refuse_the_message(tmp_path):
    part: MIMEBase = MIMEText("deep\n", "plain", "utf-8")
    for _ in range(40):
        outer = MIMEMultipart("mixed")
        outer.attach(part)
        part = outer
    result = _clean(tmp_path, _message(part))
    assert result.status == "rejected" and result.code == "too_complex"


def test_messages_nested_past_the_archive_depth_are_replaced_by_a_note(tmp_path):
    message = email.message_from_bytes(_message(MIMEText("innermost\n", "plain", "utf-8")),
                                       policy=email.policy.compat32)
    for _ in range(5):
        wrapper = MIMEBase("message", "rfc822")
        wrapper.set_payload([message])
        message = email.message_from_bytes(_message(wrapper), policy=email.policy.compat32)
    result = _clean(tmp_path, message.as_bytes())
    assert result.status == "ok", result.reason
    assert b"innermost" not in Path(result.output).read_bytes()
    assert any(f.kind == "archive_member" and "nested" in f.detail for f in result.findings)
    _parsed(result)


def test_over_long_lines_and_headers_refuse_the_message(tmp_path):
    long_line = HEADERS.encode() + b"\r\n" + b"a" * (mail.MAX_LINE_BYTES + 1) + b"\r\n"
    result = _clean(tmp_path, long_line)
    assert (result.status, result.code) == ("rejected", "too_complex")
    long_header = HEADERS.encode() + b"X-Big: " + b"b " * mail.MAX_HEADER_FIELD_BYTES + \
        b"\r\n\r\nbody\r\n"
    result = _clean(tmp_path, long_header, name="big.eml")
    assert (result.status, result.code) == ("rejected", "too_complex")


def test_line_check_finds_a_long_line_across_windows():
    limit = mail.MAX_LINE_BYTES
    mail.check_limits(b"x" * limit + b"\n" + b"y" * limit)
    with pytest.raises(mail.Rejected):
        mail.check_limits(b"\n" * (limit - 10) + b"z" * (limit + 20) + b"\n")


def test_detection_by_content():
    head = HEADERS.encode() + b"\r\n<html><body>hi</body></html>"
    assert sniff(head, "message.eml").kind == "eml"
    assert sniff(head, None).kind == "eml"
    assert sniff(b"from: x\nto: y\nname: z\n\nplain", "notes.yml").kind == "yaml"
    assert sniff(b"Subject: hello\n\nJust a note\n", "note.txt").kind == "txt"


def test_eml_detected_in_the_sandbox_path(tmp_path):
    src = tmp_path / "saved"
    src.write_bytes(_message(MIMEText("x\n", "plain", "utf-8")))
    assert detect(src, "saved").kind == "eml"
