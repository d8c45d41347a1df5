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


# --- headers (issue 29): every address and subject field the message holds --------------------
PT_STRING8, PT_UNICODE, PT_LONG, PT_SYSTIME = 0x001E, 0x001F, 0x0003, 0x0040
SENT = (1_705_591_200 + 11_644_473_600) * 10_000_000  # FILETIME of 2024-01-18 15:20 UTC


def _msg_with(props: dict[int, tuple[int, str | bytes]],
              recipients: list[dict[int, tuple[int, str]]],
              *, fixed: dict[int, tuple[int, int]] | None = None,
              recipient_types: list[int] = ()) -> bytes:  # type: ignore[assignment]
    """A .msg whose string properties are each stored as the type given (PT_UNICODE or
    PT_STRING8, cp1252), with fixed properties (tag type, value) and recipients."""
    import struct

    from tests.engine.cfb_office import write_cfb

    def strings(values: dict[int, tuple[int, str | bytes]], folder: str = ""
                ) -> dict[str, bytes]:
        return {f"{folder}__substg1.0_{prop:04X}{kind:04X}":
                text if isinstance(text, bytes)
                else text.encode("utf-16-le" if kind == PT_UNICODE else "cp1252")
                for prop, (kind, text) in values.items()}

    def fixed_stream(header: bytes, values: dict[int, tuple[int, int]]) -> bytes:
        return header + b"".join(struct.pack("<IIQ", (prop << 16) | kind, 6, value)
                                 for prop, (kind, value) in values.items())

    streams = strings({0x001A: (PT_UNICODE, "IPM.Note"), 0x1000: (PT_UNICODE, "Hello."),
                       **props})
    streams["__properties_version1.0"] = fixed_stream(
        struct.pack("<8sIIII8s", b"", len(recipients), 0, len(recipients), 0, b""),
        {0x340D: (PT_LONG, 0x40000), **(fixed or {})})  # STORE_UNICODE_OK
    for index, recipient in enumerate(recipients):
        folder = f"__recip_version1.0_#{index:08X}/"
        streams.update(strings(recipient, folder))
        streams[folder + "__properties_version1.0"] = fixed_stream(
            b"\x00" * 8, {0x0C15: (PT_LONG, recipient_types[index])})
    streams["__nameid_version1.0/__substg1.0_00020102"] = b""
    return write_cfb(streams)


def _headers_of(tmp_path, out_dir, name: str, data: bytes) -> email.message.Message:
    return _parsed(sanitize_file(_write(tmp_path, name, data), out_dir))


@pytest.mark.parametrize("kind", [PT_UNICODE, PT_STRING8], ids=["unicode", "string8"])
def test_msg_headers_from_properties_of_either_string_type(tmp_path, out_dir, kind):
    """Outlook stores a string as PT_UNICODE or PT_STRING8; a file that says it is Unicode
    (PR_STORE_SUPPORT_MASK) may still hold PT_STRING8 strings, which were lost."""
    props = {0x0037: (kind, "Budget 2024"), 0x0042: (kind, "Alice Example"),
             0x0064: (kind, "SMTP"), 0x0065: (kind, "alice@example.org"),
             0x0C1A: (kind, "Alice Example"), 0x0C1F: (kind, "alice@example.org"),
             0x1035: (kind, "<id-7@example.org>"), 0x1042: (kind, "<id-6@example.org>")}
    recipients = [{0x3001: (kind, "Bob"), 0x3002: (kind, "SMTP"),
                   0x3003: (kind, "bob@example.com")},
                  {0x3001: (kind, "Carol"), 0x39FE: (kind, "carol@example.net")},
                  {0x3001: (kind, "Dave"), 0x3003: (kind, "dave@example.com")}]
    data = _msg_with(props, recipients, recipient_types=[1, 2, 3],
                     fixed={0x0039: (PT_SYSTIME, SENT)})
    message = _headers_of(tmp_path, out_dir, "budget.msg", data)
    assert list(message.keys())[:8] == ["From", "To", "Cc", "Bcc", "Subject", "Date",
                                        "Message-ID", "In-Reply-To"]
    assert message["From"] == "Alice Example <alice@example.org>"
    assert message["To"] == "Bob <bob@example.com>"
    assert message["Cc"] == "Carol <carol@example.net>"
    assert message["Bcc"] == "Dave <dave@example.com>"
    assert message["Subject"] == "Budget 2024"
    assert message["Date"] == "Thu, 18 Jan 2024 15:20:00 +0000"
    assert message["Message-ID"] == "<id-7@example.org>"
    assert message["In-Reply-To"] == "<id-6@example.org>"


def test_msg_exchange_sender_and_recipients_get_their_smtp_addresses(tmp_path, out_dir):
    """An Exchange (EX) address is a legacy DN, not an Internet address: the SMTP address is
    in PR_SENDER_SMTP_ADDRESS / PR_SMTP_ADDRESS. The DN never becomes an address."""
    dn = "/O=EXAMPLE/OU=EXCHANGE ADMINISTRATIVE GROUP/CN=RECIPIENTS/CN=ALICE"
    props = {0x0037: (PT_UNICODE, "Internal"), 0x0C1A: (PT_UNICODE, "Alice Example"),
             0x0C1E: (PT_UNICODE, "EX"), 0x0C1F: (PT_UNICODE, dn),
             0x5D01: (PT_UNICODE, "alice@corp.example"),
             0x0E04: (PT_UNICODE, "Bob Builder; Someone Else")}
    recipients = [{0x3001: (PT_UNICODE, "Bob Builder"), 0x3002: (PT_UNICODE, "EX"),
                   0x3003: (PT_UNICODE, dn.replace("ALICE", "BOB")),
                   0x39FE: (PT_UNICODE, "bob@corp.example")},
                  {0x3001: (PT_UNICODE, "Eve"), 0x3002: (PT_UNICODE, "EX"),
                   0x3003: (PT_UNICODE, dn.replace("ALICE", "EVE"))}]
    data = _msg_with(props, recipients, recipient_types=[1, 2])
    message = _headers_of(tmp_path, out_dir, "internal.msg", data)
    raw = Path(sorted(out_dir.glob("*.eml"))[0]).read_bytes()
    assert message["From"] == "Alice Example <alice@corp.example>"
    assert message["To"] == "Bob Builder <bob@corp.example>"
    assert "Eve" in message["Cc"] and "@" not in message["Cc"]  # no address known, only a name
    assert b"EXCHANGE ADMINISTRATIVE" not in raw


def test_msg_display_fields_when_no_recipient_storage(tmp_path, out_dir):
    """No recipient storages, no PR_SUBJECT, no submit time: the display lists (names only),
    the subject's prefix and normalized subject, the delivery time."""
    props = {0x003D: (PT_UNICODE, "RE: "), 0x0E1D: (PT_STRING8, "Names only"),
             0x0C1A: (PT_UNICODE, "Alice"), 0x5D01: (PT_UNICODE, "alice@example.org"),
             0x0E04: (PT_UNICODE, "Bob; Carol"), 0x0E03: (PT_STRING8, "Dave")}
    data = _msg_with(props, [], fixed={0x0E06: (PT_SYSTIME, SENT)})
    message = _headers_of(tmp_path, out_dir, "names.msg", data)
    assert message["To"] == "Bob, Carol" and message["Cc"] == "Dave"
    assert message["Subject"] == "RE: Names only"
    assert message["Date"] == "Thu, 18 Jan 2024 15:20:00 +0000"


def test_msg_subject_with_controls_stays_one_header(tmp_path, out_dir):
    props = {0x0037: (PT_UNICODE, "Invoice\r\nBcc: x@evil.example\r\n\r\nbody?\x07\x1b[31m"),
             0x0C1A: (PT_UNICODE, "Mallory\r\nTo: y@evil.example"),
             0x5D01: (PT_UNICODE, "mallory@example.org")}
    recipients = [{0x3001: (PT_UNICODE, "Bob\nCc: z@evil.example"),
                   0x39FE: (PT_UNICODE, "bob@example.com>\r\nBcc: w@evil.example")}]
    message = _headers_of(tmp_path, out_dir, "inject.msg",
                          _msg_with(props, recipients, recipient_types=[1]))
    raw = Path(sorted(out_dir.glob("*.eml"))[0]).read_bytes()
    assert message["Bcc"] is None and message["Cc"] is None
    assert message.get_all("To") == [message["To"]] and "@" not in message["To"]
    assert message["Subject"] == "Invoice Bcc: x@evil.example body? [31m"
    assert message["From"] == '"Mallory To: y@evil.example" <mallory@example.org>'
    header_block = raw.split(b"\r\n\r\n", 1)[0]
    assert not any(line.lower().startswith((b"bcc:", b"cc:"))
                   for line in header_block.split(b"\r\n"))
    assert b"\x07" not in raw and b"\x1b" not in raw


def test_msg_non_ascii_names_are_encoded_words(tmp_path, out_dir):
    props = {0x0037: (PT_UNICODE, "Résumé für Zoë ✓"),
             0x0C1A: (PT_UNICODE, "Jörg Müller, Dr."), 0x5D01: (PT_UNICODE, "jm@example.de"),
             0x0042: (PT_STRING8, "Jörg Müller, Dr."), 0x5D02: (PT_STRING8, "jm@example.de")}
    recipients = [{0x3001: (PT_STRING8, "Anaïs"), 0x39FE: (PT_STRING8, "anais@example.fr")},
                  {0x3001: (PT_UNICODE, "李小龍"), 0x39FE: (PT_UNICODE, "lee@example.cn")}]
    data = _msg_with(props, recipients, recipient_types=[1, 1])
    _headers_of(tmp_path, out_dir, "intl.msg", data)
    raw = Path(sorted(out_dir.glob("*.eml"))[0]).read_bytes()
    assert raw.split(b"\r\n\r\n", 1)[0].isascii()
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert str(message["Subject"]) == "Résumé für Zoë ✓"
    assert message["From"].addresses[0].display_name == "Jörg Müller, Dr."
    assert message["From"].addresses[0].addr_spec == "jm@example.de"
    assert [(a.display_name, a.addr_spec) for a in message["To"].addresses] == [
        ("Anaïs", "anais@example.fr"), ("李小龍", "lee@example.cn")]


def test_msg_exchange_transport_headers_are_read_past_their_preamble(tmp_path, out_dir):
    """Exchange writes "Microsoft Mail Internet Headers Version 2.0" before the fields; read as
    a header block, that line turned the whole block into a body and every field was lost."""
    headers = ("Microsoft Mail Internet Headers Version 2.0\r\nReceived: from mx.example.org\r\n"
               "From: Alice <alice@example.org>\r\nTo: Bob <bob@example.com>\r\n"
               "Subject: From the wire\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n"
               "Reply-To: Desk <desk@example.org>\r\n\r\n")
    data = msg_bytes(subject="From the properties", headers=headers)
    message = _headers_of(tmp_path, out_dir, "received.msg", data)
    assert message["From"] == "Alice <alice@example.org>"
    assert message["To"] == "Bob <bob@example.com>"
    assert message["Subject"] == "From the wire"
    assert message["Reply-To"] == "Desk <desk@example.org>"
    assert message["Date"] == "Mon, 1 Jan 2024 10:00:00 +0000"
    assert message["Received"] is None  # metadata, removed by the mail cleaner


def test_msg_transport_headers_after_a_long_preamble_are_read_quickly(tmp_path, out_dir):
    import time

    from sanitas.engine import outlook

    headers = "x\n" * 200_000 + "Subject: After the noise\r\n\r\n"  # 800 KB in UTF-16
    path = _write(tmp_path, "noise.msg", msg_bytes(headers=headers))
    started = time.process_time()
    data, _ = outlook.msg_to_mime(path)
    assert time.process_time() - started < 1.0
    assert email.message_from_bytes(data)["Subject"] == "After the noise"


def test_msg_fields_missing_from_transport_headers_come_from_properties(tmp_path, out_dir):
    data = msg_bytes(headers="Received: from mx.example.org by mx2.example.org\r\n\r\n")
    message = _headers_of(tmp_path, out_dir, "partial.msg", data)
    assert message["From"] == "Alice Example <alice@example.org>"
    assert message["To"] == "Bob <bob@example.com>"
    assert message["Subject"] == "Quarterly figures"
    assert message["Message-ID"] == "<msg-1@example.org>"


def _one_off(name: str, address: str) -> bytes:
    """A one-off entry identifier ([MS-OXCDATA] 2.2.5.1), Unicode strings."""
    import struct

    strings = "\x00".join((name, "SMTP", address, "")).encode("utf-16-le")
    return (b"\x00" * 4 + bytes.fromhex("812b1fa4bea310199d6e00dd010f5402")
            + struct.pack("<HH", 0, 0x9001) + strings)  # as Outlook: Unicode


def test_msg_reply_to_and_on_behalf_sender(tmp_path, out_dir):
    import struct

    entries = [_one_off("Help Desk", "desk@example.org"), _one_off("Zoë", "zoe@example.org")]
    flat = b"".join(struct.pack("<I", len(e)) + e + b"\x00" * (-len(e) % 4) for e in entries)
    props = {0x0037: (PT_UNICODE, "On behalf"),
             0x0042: (PT_UNICODE, "The Boss"), 0x5D02: (PT_UNICODE, "boss@example.org"),
             0x0C1A: (PT_UNICODE, "Assistant"), 0x5D01: (PT_UNICODE, "pa@example.org"),
             0x004F: (0x0102, struct.pack("<II", len(entries), len(flat)) + flat)}
    message = _headers_of(tmp_path, out_dir, "behalf.msg", _msg_with(props, []))
    assert message["From"] == "The Boss <boss@example.org>"
    assert message["Sender"] == "Assistant <pa@example.org>"
    reply = email.message_from_bytes(Path(sorted(out_dir.glob("*.eml"))[0]).read_bytes(),
                                     policy=email.policy.default)["Reply-To"]
    assert [(a.display_name, a.addr_spec) for a in reply.addresses] == [
        ("Help Desk", "desk@example.org"), ("Zoë", "zoe@example.org")]


# --- TNEF headers and damaged TNEF (issue 29) -------------------------------------------------
def _mapi_list(props: list[tuple[int, int, object]]) -> bytes:
    """A MAPI property list as TNEF stores it ([MS-OXTNEF] 2.1.3.4): count, then each
    property's type, id and value (strings and binaries counted, sized, padded to 4 bytes)."""
    import struct

    out = struct.pack("<I", len(props))
    for prop_type, prop_id, value in props:
        out += struct.pack("<HH", prop_type, prop_id)
        if prop_type == PT_LONG:
            out += struct.pack("<i", value)
        elif prop_type == PT_SYSTIME:
            out += struct.pack("<Q", value)
        else:
            raw = value if isinstance(value, bytes) else (
                (value + "\x00").encode("utf-16-le") if prop_type == PT_UNICODE
                else (value + "\x00").encode("cp1252"))
            out += struct.pack("<II", 1, len(raw)) + raw + b"\x00" * (-len(raw) % 4)
    return out


def _rich_tnef(*, props=None, recipients=None, att_from: tuple[str, str] | None = None) -> bytes:
    """A winmail.dat with attFrom, attDateSent, the message's MAPI properties (attMsgProps), a
    recipient table and one attachment."""
    import struct

    from tests.engine.breadth_corpus import _tnef_attr

    out = tnef_bytes([], subject="Subject from attSubject")
    if att_from:
        name, address = (v.encode("cp1252") + b"\x00" for v in att_from)
        typed = b"SMTP:" + address
        out += _tnef_attr(1, 0x8000, 0x0000, struct.pack("<HHHH", 4, 8 + len(name) + len(typed),
                                                         len(name), len(typed)) + name + typed)
    out += _tnef_attr(1, 0x8005, 0x0003, struct.pack("<7H", 2024, 3, 4, 9, 30, 0, 1))
    if props is not None:
        out += _tnef_attr(1, 0x9003, 0x0006, _mapi_list(props))
    if recipients is not None:
        out += _tnef_attr(1, 0x9004, 0x0006, struct.pack("<I", len(recipients))
                          + b"".join(_mapi_list(r) for r in recipients))
    out += _tnef_attr(2, 0x9002, 0x0006, b"\xff" * 14)
    out += _tnef_attr(2, 0x8010, 0x0001, b"notes.txt\x00")
    out += _tnef_attr(2, 0x800F, 0x0006, b"Notes.\n")
    return out


TNEF_PROPS = [(PT_UNICODE, 0x0037, "Réunion\r\nBcc: x@evil.example"),
              (PT_STRING8, 0x0C1A, "Jörg Müller"), (PT_STRING8, 0x0C1E, "EX"),
              (PT_STRING8, 0x0C1F, "/O=EXAMPLE/OU=FIRST/CN=RECIPIENTS/CN=JOERG"),
              (PT_UNICODE, 0x5D01, "jm@example.de"),
              (PT_SYSTIME, 0x0039, SENT), (PT_UNICODE, 0x1035, "<tnef-1@example.de>"),
              (PT_STRING8, 0x1042, "<tnef-0@example.de>")]
TNEF_RECIPIENTS = [
    [(PT_LONG, 0x0C15, 1), (PT_UNICODE, 0x3001, "Anaïs"), (PT_UNICODE, 0x3002, "SMTP"),
     (PT_UNICODE, 0x3003, "anais@example.fr")],
    [(PT_LONG, 0x0C15, 2), (PT_STRING8, 0x3001, "Bob"), (PT_STRING8, 0x3002, "EX"),
     (PT_STRING8, 0x3003, "/O=EXAMPLE/CN=BOB"), (PT_STRING8, 0x39FE, "bob@example.com")],
    [(PT_LONG, 0x0C15, 3), (PT_UNICODE, 0x3001, "Carol"),
     (PT_UNICODE, 0x39FE, "carol@example.net")]]


def test_tnef_headers_from_its_mapi_properties_and_recipient_table(tmp_path, out_dir):
    data = _rich_tnef(props=TNEF_PROPS, recipients=TNEF_RECIPIENTS,
                      att_from=("Someone Else", "else@example.org"))
    result = sanitize_file(_write(tmp_path, "winmail.dat", data), out_dir)
    _parsed(result)
    raw = Path(result.output).read_bytes()
    head = raw.split(b"\r\n\r\n", 1)[0]
    assert head.isascii() and b"/O=EXAMPLE" not in raw
    assert not any(line.lower().startswith(b"bcc: x") for line in head.split(b"\r\n"))
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert str(message["Subject"]) == "Réunion Bcc: x@evil.example"  # MAPI wins over attSubject
    assert [(a.display_name, a.addr_spec) for a in message["From"].addresses] == [
        ("Jörg Müller", "jm@example.de")]
    assert [(a.display_name, a.addr_spec) for a in message["To"].addresses] == [
        ("Anaïs", "anais@example.fr")]
    assert str(message["Cc"]) == "Bob <bob@example.com>"
    assert str(message["Bcc"]) == "Carol <carol@example.net>"
    assert str(message["Date"]) == "Thu, 18 Jan 2024 15:20:00 +0000"
    assert str(message["Message-ID"]) == "<tnef-1@example.de>"
    assert str(message["In-Reply-To"]) == "<tnef-0@example.de>"
    assert _attachments(message) == {"notes.txt": b"Notes.\n"}


def test_tnef_headers_from_its_own_attributes(tmp_path, out_dir):
    """No MAPI properties: attFrom, attSubject and attDateSent (local time, zone unknown)."""
    data = _rich_tnef(att_from=("Alice Example", "alice@example.org"))
    message = _parsed(sanitize_file(_write(tmp_path, "winmail.dat", data), out_dir))
    assert message["From"] == "Alice Example <alice@example.org>"
    assert message["Subject"] == "Subject from attSubject"
    assert message["Date"] == "Mon, 04 Mar 2024 09:30:00 -0000"


def _damaged_tnef_inputs() -> list[tuple[str, bytes]]:
    """Small damaged winmail.dat files: a valid rich one cut at every length and with bytes
    flipped (seeded), and lists declaring far more entries than their bytes hold."""
    import random
    import struct

    from tests.engine.breadth_corpus import _tnef_attr

    valid = _rich_tnef(props=TNEF_PROPS, recipients=TNEF_RECIPIENTS,
                       att_from=("Alice", "alice@example.org"))
    head = tnef_bytes([])
    huge = 0xFFFFFFFF
    inputs = [
        ("props-count", head + _tnef_attr(1, 0x9003, 6, struct.pack("<I", huge))),
        ("recipient-rows", head + _tnef_attr(1, 0x9004, 6, struct.pack("<I", huge))),
        ("row-props", head + _tnef_attr(1, 0x9004, 6, struct.pack("<II", 1, huge))),
        ("multi-values", head + _tnef_attr(1, 0x9003, 6, struct.pack("<IHHI", 1, 0x1003,
                                                                       0x3001, huge))),
        ("string-values", head + _tnef_attr(1, 0x9003, 6, struct.pack("<IHHI", 1, 0x001F,
                                                                        0x0037, huge))),
        ("string-length", head + _tnef_attr(1, 0x9003, 6, struct.pack("<IHHII", 1, 0x001F,
                                                                        0x0037, 1, huge))),
        ("named-length", head + _tnef_attr(1, 0x9003, 6, struct.pack("<IHH16sII", 1, 0x001F,
                                                                       0x8001, b"g" * 16, 1,
                                                                       huge))),
        ("attachment-props", head + _tnef_attr(2, 0x9002, 6, b"\xff" * 14)
         + _tnef_attr(2, 0x9005, 6, struct.pack("<I", huge))),
        # a message attached as a data object: tnefparse parses its stream as well
        ("embedded-props-count", head + _tnef_attr(2, 0x9002, 6, b"\xff" * 14)
         + _tnef_attr(2, 0x9005, 6, _mapi_list([(0x000D, 0x3701, EMBEDDED_MESSAGE[:16] + head
                                                 + _tnef_attr(1, 0x9003, 6, struct.pack(
                                                     "<I", huge)))]))),
        # a row tnefparse stops decoding (an unknown type): the next row would read garbage
        ("row-unknown-type", head + _tnef_attr(1, 0x9004, 6, struct.pack("<I", 2)
                                               + struct.pack("<IHHI", 1, 0x0999, 0x3001, 0)
                                               + struct.pack("<I", huge) + b"\x00" * 8)),
    ]
    inputs += [(f"cut-{n}", valid[:n]) for n in range(7, len(valid), 7)]
    rng = random.Random(29)
    for index in range(60):
        flipped = bytearray(valid)
        for _ in range(rng.randint(1, 3)):
            flipped[rng.randrange(6, len(flipped))] = rng.choice((0x00, 0xFF, rng.randrange(256)))
        inputs.append((f"flip-{index}", bytes(flipped)))
    return inputs


def test_damaged_tnef_refused_or_cleaned_within_a_second(tmp_path, out_dir):
    """tnefparse loops as many times as a list declares: a 100-byte file declaring 2**32
    properties ran until the job's 30 s limit. Each of these must end in well under a second of
    CPU, refused as damaged (or cleaned, where the flipped byte does no harm)."""
    import time

    from sanitas.engine import outlook

    slow, outcomes = [], set()
    for name, data in _damaged_tnef_inputs():
        started = time.process_time()
        try:
            outlook.tnef_to_mime(data)
            outcome = "cleaned"
        except outlook.Rejected as exc:
            outcome = exc.code.value
        spent = time.process_time() - started
        outcomes.add(outcome)
        if spent > 1.0:
            slow.append((name, round(spent, 2)))
        if not name.startswith(("cut-", "flip-")):
            assert outcome == RejectionCode.DAMAGED, name
    assert not slow
    assert RejectionCode.DAMAGED.value in outcomes


def test_damaged_tnef_file_refused_quickly_with_its_code(tmp_path, out_dir):
    import struct
    import time

    from tests.engine.breadth_corpus import _tnef_attr

    data = tnef_bytes([]) + _tnef_attr(1, 0x9003, 6, struct.pack("<I", 0xFFFFFFFF))
    started = time.process_time()
    result = sanitize_file(_write(tmp_path, "winmail.dat", data), out_dir)
    assert time.process_time() - started < 1.0
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED
    assert "MAPI property list" in result.reason


def _nested_msg(depth: int) -> bytes:
    """A .msg whose attachment is a message whose attachment is a message... `depth` deep."""
    import struct

    from tests.engine.cfb_office import write_cfb

    streams: dict[str, bytes] = {}
    prefix = ""
    for level in range(depth + 1):
        header = struct.pack("<8sIIII8s", b"", 0, 1, 0, 1, b"")[:32 if level == 0 else 24]
        streams[prefix + "__properties_version1.0"] = header
        streams[prefix + "__substg1.0_001A001F"] = "IPM.Note".encode("utf-16-le")
        streams[prefix + "__substg1.0_0037001F"] = f"Level {level}".encode("utf-16-le")
        streams[prefix + "__substg1.0_1000001F"] = b"B\x00"
        if level < depth:
            attach = prefix + "__attach_version1.0_#00000000/"
            streams[attach + "__properties_version1.0"] = b"\x00" * 8 + struct.pack(
                "<IIQ", 0x37050003, 6, 5)  # PR_ATTACH_METHOD: an embedded message
            streams[attach + "__substg1.0_3707001F"] = "Fwd.msg".encode("utf-16-le")
            prefix = attach + "__substg1.0_3701000D/"
    for stream in ("00020102", "00030102", "00040102"):  # named properties: none
        streams[f"__nameid_version1.0/__substg1.0_{stream}"] = b""
    return write_cfb(streams)


def test_msg_nested_too_deep_is_refused_before_it_is_opened(tmp_path, out_dir):
    """extract-msg opens every attached message when it opens the file, each one costing more
    than the last: 150 levels (220 KB) took 8 s of CPU before a RecursionError. The nesting
    is counted in the compound file's directory first."""
    import time

    from sanitas.engine import outlook

    path = _write(tmp_path, "deep.msg", _nested_msg(150))
    started = time.process_time()
    with pytest.raises(outlook.Rejected) as refused:
        outlook.msg_to_mime(path)
    assert time.process_time() - started < 1.0
    assert refused.value.code == RejectionCode.TOO_COMPLEX
    message = _parsed(sanitize_file(_write(tmp_path, "ok.msg", _nested_msg(3)), out_dir))
    assert message["Subject"] == "Level 0"
    inner = [p for p in message.walk() if p.get_content_type() == "message/rfc822"]
    assert len(inner) == 3


@pytest.mark.parametrize("field,value", [(116, 0x0000FFF0), (120, 0x00000F00)],
                         ids=["start-sector-out-of-range", "size-past-its-sectors"])
def test_msg_with_an_unreadable_body_stream_is_refused(tmp_path, out_dir, field, value):
    """The directory opens but the body's stream cannot be read: the file is damaged (it used
    to escape as an OleFileError, or to give a message without its body)."""
    import struct

    data = bytearray(msg_bytes())
    entry = data.find("__substg1.0_1000001F".encode("utf-16-le"))
    data[entry + field:entry + field + 4] = struct.pack("<I", value)
    result = sanitize_file(_write(tmp_path, "broken.msg", bytes(data)), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED, result.reason
    assert "stream" in result.reason
