"""Outlook's own message formats, turned into MIME messages that `mail.clean_message` cleans.

- `.msg` (an OLE compound file of MAPI properties) is read with extract-msg, after its
  directory is counted (`check_msg`: attached messages nested at most `MAX_MSG_DEPTH`, at most
  `MAX_MSG_EMBEDDED` of them, recipients and attachments bounded; extract-msg opens them all at
  once): its plain-text and HTML bodies (an RTF-only body is attached as `body.rtf`, which the
  engine converts like any RTF), its attachments by value, and attached messages (`.msg`
  inside `.msg`, converted the same way one level deeper). Reference attachments (links to
  files in the cloud) and OLE-embedded objects have no file to clean: each is replaced by a
  note. Its headers are read from the property streams here (`_msg_properties`), Unicode and
  8-bit strings alike, and built by `message_headers`.
- TNEF (`winmail.dat`, `application/ms-tnef`) is read with tnefparse: its body (text or HTML,
  or the compressed RTF as `body.rtf`), its attachments, and its headers (`message_headers`
  again, from its MAPI properties and recipient table, then attFrom, attSubject and
  attDateSent). Before tnefparse sees the bytes they are walked here (`check_tnef`): the number
  of objects and the bytes tnefparse copies while it walks them are bounded (`MAX_TNEF_OBJECTS`,
  `MAX_TNEF_COPY`), and every count and length in the MAPI lists it decodes must fit the bytes
  left (tnefparse loops as many times as a count says).
- `message_headers`: the transport headers when the message was received, then every field
  they lack from the properties (From, Sender, Reply-To, To, Cc, Bcc, Subject, Date,
  Message-ID, In-Reply-To, References), each one line without control characters; an Exchange
  (EX) address, a directory name, never becomes an address.

The MIME message built here is only an intermediate: everything in it is cleaned by the mail
cleaner (headers filtered, bodies cleaned, every attachment sanitized by its own family) and the
output is an `.eml`.
"""

from __future__ import annotations

import codecs
import datetime
import email.message
import email.parser
import email.policy
import email.utils
import re
import struct
from email.mime.application import MIMEApplication
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path
from typing import Any

from sanitas.engine.report import Rejected, RejectionCode

MAX_MSG_DEPTH = 4  # .msg attached in .msg (the mail cleaner's budget applies on top)
MAX_MSG_ATTACHMENTS = 500
MAX_MSG_EMBEDDED = 200  # attached messages, at any depth
_EMBEDDED_MSG = "__SUBSTG1.0_3701000D"  # the storage of an attached message
TNEF_SIGNATURE = b"\x78\x9f\x3e\x22"
MAX_TNEF_OBJECTS = 5_000
MAX_TNEF_COPY = 1 << 31  # bytes tnefparse copies as it walks the objects (it slices the rest)
MAX_TNEF_EMBEDDED = 50  # messages embedded in the stream, at any depth
MAX_TNEF_DEPTH = 8  # messages embedded in messages
MAX_TNEF_VALUES = 200_000  # MAPI properties and values tnefparse builds
# An attachment that is a message: MAPI's IMessage GUID, then the message's own TNEF stream.
_EMBEDDED_TNEF = (b"\x07\x03\x02\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x46"
                  + TNEF_SIGNATURE)


def msg_to_mime(path: Path) -> tuple[bytes, list[tuple[str, str]]]:
    """The `.msg` file at `path` as a MIME message (bytes), with the attachments that had no
    file to clean (name, why), each replaced by a note. Rejected when it is not a message
    extract-msg can read (damaged), or when it is encrypted or nested too deeply."""
    import extract_msg

    check_msg(path)
    try:
        msg = extract_msg.openMsg(str(path), delayAttachments=False, strict=False)
    except Exception as exc:  # noqa: BLE001 - extract-msg raises its own errors and olefile's
        raise Rejected(f"The Outlook message cannot be read ({type(exc).__name__}: "
                       f"{str(exc)[:120]}).", RejectionCode.DAMAGED) from None
    try:
        removed: list[tuple[str, str]] = []
        message = _mime_of_msg(msg, 1, removed)
        return message.as_bytes(policy=email.policy.compat32), removed
    except Rejected:
        raise
    except RecursionError:
        raise Rejected("The Outlook message nests too deeply to process safely.",
                       RejectionCode.TOO_COMPLEX) from None
    except Exception as exc:  # noqa: BLE001 - olefile's errors surface as streams are read
        raise Rejected(f"The Outlook message cannot be read ({type(exc).__name__}: "
                       f"{str(exc)[:120]}).", RejectionCode.DAMAGED) from None
    finally:
        msg.close()


def check_msg(path: Path) -> None:
    """Count, in the compound file's directory, what extract-msg would open at once and refuse
    a file over the limits before it does: it opens every attached message (at any depth) as it
    opens the file, each costing more than the last (150 levels in 220 KB took 8 s of CPU before
    a RecursionError), and reads every recipient and attachment of each."""
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            entries = ole.listdir(streams=True, storages=True)
    except Exception as exc:  # noqa: BLE001 - olefile raises OSError, struct.error...
        raise Rejected(f"The Outlook message cannot be read ({type(exc).__name__}: "
                       f"{str(exc)[:120]}).", RejectionCode.DAMAGED) from None
    messages: set[tuple[str, ...]] = set()
    children: dict[tuple[str, ...], int] = {}
    for entry in entries:
        parts = tuple(part.upper() for part in entry)
        nested = [i for i, part in enumerate(parts) if part == _EMBEDDED_MSG]
        if len(nested) + 1 > MAX_MSG_DEPTH:
            raise Rejected(f"The Outlook message holds messages nested more than "
                           f"{MAX_MSG_DEPTH} levels deep.", RejectionCode.TOO_COMPLEX)
        owner = parts[:nested[-1] + 1] if nested else ()
        messages.add(owner)
        rest = parts[len(owner):]
        if len(rest) == 1 and rest[0].startswith(("__RECIP_VERSION1.0_#",
                                                  "__ATTACH_VERSION1.0_#")):
            children[owner] = children.get(owner, 0) + 1
            if children[owner] > MAX_RECIPIENTS + MAX_MSG_ATTACHMENTS:
                raise Rejected(f"The Outlook message has more than {MAX_RECIPIENTS} "
                               f"recipients or {MAX_MSG_ATTACHMENTS} attachments.",
                               RejectionCode.TOO_COMPLEX)
    if len(messages) > MAX_MSG_EMBEDDED + 1:
        raise Rejected(f"The Outlook message holds more than {MAX_MSG_EMBEDDED} attached "
                       "messages.", RejectionCode.TOO_COMPLEX)


def _mime_of_msg(msg: Any, depth: int, removed: list[tuple[str, str]]) -> email.message.Message:
    if depth > MAX_MSG_DEPTH:
        raise Rejected(f"The Outlook message holds messages nested more than {MAX_MSG_DEPTH} "
                       "levels deep.", RejectionCode.TOO_COMPLEX)
    if not hasattr(type(msg), "body") or not hasattr(type(msg), "attachments"):  # not read
        raise Rejected("The Outlook item is not an e-mail message (a calendar item, contact, "
                       "task or note), which is not a supported type.",
                       RejectionCode.UNSUPPORTED_TYPE)
    if getattr(msg, "isEncrypted", False):
        raise Rejected("The Outlook message is encrypted (S/MIME); encrypted messages cannot "
                       "be inspected and are not accepted.", RejectionCode.ENCRYPTED)
    out = MIMEMultipart("mixed")
    props, recipients = _msg_properties(msg)
    for name, value in message_headers(props, recipients):
        out[name] = value
    body = _body(_safe(lambda: msg.body), _safe(lambda: msg.htmlBody),
                 None if _safe(lambda: msg.body) or _safe(lambda: msg.htmlBody)
                 else _safe(lambda: msg.rtfBody))
    for part in body:
        out.attach(part)
    attachments = list(msg.attachments)
    if len(attachments) > MAX_MSG_ATTACHMENTS:
        raise Rejected(f"The Outlook message has more than {MAX_MSG_ATTACHMENTS} attachments.",
                       RejectionCode.TOO_COMPLEX)
    for index, attachment in enumerate(attachments):
        out.attach(_attachment(attachment, index, depth, removed))
    return out


def _msg_properties(msg: Any) -> tuple[dict[int, Any], list[dict[int, Any]]]:
    """The properties of a `.msg` message (or of a message attached to one) that become its
    headers, and its recipients', read from the property streams themselves. extract-msg reads
    a string property under one type only, PT_UNICODE or PT_STRING8, chosen for the whole file
    by a flag (PR_STORE_SUPPORT_MASK) or by the first stream it sees; a file whose writer mixed
    them, or set the flag wrongly, lost its subject and sender. Here both types are read."""
    entries = _safe(lambda: msg.listDir(streams=True, storages=False, includePrefix=False)) or ()
    top = 32 if not _safe(lambda: msg.prefix) else 24  # an attached message's header is shorter
    props = _fixed_properties(_safe(lambda: msg.getStream("__properties_version1.0")), top)
    folders: dict[str, list[str]] = {}
    for entry in entries:
        if len(entry) == 1:
            folders.setdefault("", []).append(entry[0])
        elif len(entry) == 2 and entry[0].lower().startswith("__recip_version1.0_#"):
            folders.setdefault(entry[0], []).append(entry[1])
    if len(folders) > MAX_RECIPIENTS + 1:
        raise Rejected(f"The Outlook message has more than {MAX_RECIPIENTS} recipients.",
                       RejectionCode.TOO_COMPLEX)
    codepage = _codepage(props)
    props.update(_string_properties(msg, "", folders.get("", []), codepage))
    recipients = []
    for folder in sorted(f for f in folders if f):
        recipient = _fixed_properties(
            _safe(lambda f=folder: msg.getStream(f"{f}/__properties_version1.0")), 8)
        recipient.update(_string_properties(msg, folder + "/", folders[folder], codepage))
        recipients.append(recipient)
    return props, recipients


def _fixed_properties(stream: Any, header: int) -> dict[int, Any]:
    """id -> value of the fixed-size properties of a __properties_version1.0 stream (after its
    `header`): 16-byte entries (tag, flags, value); integers and times only."""
    props: dict[int, Any] = {}
    if not isinstance(stream, bytes):
        return props
    for offset in range(header, len(stream) - 15, 16):
        tag, _flags, value = struct.unpack_from("<IIQ", stream, offset)
        prop_id, prop_type = tag >> 16, tag & 0xFFFF
        if prop_type == 0x0003:  # PT_LONG
            props.setdefault(prop_id, struct.unpack_from("<i", stream, offset + 8)[0])
        elif prop_type == 0x0040 and value:  # PT_SYSTIME: 100 ns since 1601, UTC
            try:
                props.setdefault(prop_id, datetime.datetime(1601, 1, 1, tzinfo=datetime.UTC)
                                 + datetime.timedelta(microseconds=value // 10))
            except OverflowError:
                continue
    return props


def _codepage(props: dict[int, Any]) -> str:
    """The codec of the message's PT_STRING8 strings (its code page; Windows-1252 if none)."""
    for prop in (PR_MESSAGE_CODEPAGE, PR_INTERNET_CPID):
        number = props.get(prop)
        if isinstance(number, int) and number > 0:
            name = {65001: "utf-8", 20127: "ascii", 28591: "latin-1", 1200: "utf-16-le"}.get(
                number, f"cp{number}")
            try:
                return codecs.lookup(name).name
            except LookupError:
                continue
    return "cp1252"


def _string_properties(msg: Any, folder: str, names: list[str],
                       codepage: str) -> dict[int, Any]:
    """id -> value of the header properties stored as streams in `folder`: PT_UNICODE and
    PT_STRING8 strings (the Unicode one wins when both are there) and the reply-to entries."""
    found: dict[int, Any] = {}
    for name in sorted(names, key=lambda n: n.upper().endswith("001E")):  # 001F first
        upper = name.upper()
        if not upper.startswith("__SUBSTG1.0_") or len(upper) != 20:
            continue
        try:
            prop_id, prop_type = int(upper[12:16], 16), int(upper[16:20], 16)
        except ValueError:
            continue
        wanted = (prop_id in HEADER_STRINGS and prop_type in (0x001F, 0x001E)) or (
            prop_id == PR_REPLY_RECIPIENT_ENTRIES and prop_type == 0x0102)
        if not wanted or prop_id in found:
            continue
        data = _safe(lambda n=name: msg.getStream(folder + n))
        if not isinstance(data, bytes):
            continue
        limit = MAX_TRANSPORT_HEADER_BYTES if prop_id == PR_TRANSPORT_MESSAGE_HEADERS \
            else MAX_HEADER_TEXT * 4
        data = data[:limit]
        if prop_type == 0x0102:
            found[prop_id] = data
        elif prop_type == 0x001F:
            found[prop_id] = data.decode("utf-16-le", "replace").rstrip("\x00")
        else:
            found[prop_id] = data.decode(codepage, "replace").rstrip("\x00")
    return found


def _safe(read: Any) -> Any:
    """A property of the message, or None when extract-msg cannot decode it. A stream the
    compound file cannot give (its sectors out of range, its size past the file) is damage to
    the file itself, not a missing property: the message would lose its body unannounced."""
    from olefile.olefile import OleFileError

    try:
        return read()
    except OleFileError as exc:
        raise Rejected(f"The Outlook message is damaged (a stream cannot be read: "
                       f"{str(exc)[:120]}).", RejectionCode.DAMAGED) from None
    except Exception:  # noqa: BLE001 - a property extract-msg cannot decode is a missing one
        return None


def _body(text: str | bytes | None, html: str | bytes | None,
          rtf: bytes | None) -> list[email.message.Message]:
    from sanitas.engine.text_encoding import decode, decode_markup

    bodies: list[email.message.Message] = []
    if isinstance(text, bytes):
        text = decode(text)[0]
    if isinstance(html, bytes):
        html = decode_markup(html)[0]
    if text or html:
        alternative = MIMEMultipart("alternative")
        if text:
            alternative.attach(MIMEText(text.replace("\x00", ""), "plain", "utf-8"))
        if html:
            alternative.attach(MIMEText(html.replace("\x00", ""), "html", "utf-8"))
        bodies.append(alternative)
    elif rtf:
        bodies.append(_file("body.rtf", bytes(rtf), "application/rtf"))
    return bodies


def _file(name: str, data: bytes, media_type: str | None,
          content_id: str | None = None) -> email.message.Message:
    maintype, _, subtype = (media_type or "application/octet-stream").partition("/")
    if maintype == "text" or not subtype:
        maintype, subtype = "application", "octet-stream"
    part: email.message.Message = MIMEApplication(data, subtype) if maintype == "application" \
        else MIMEBase(maintype, subtype)
    if maintype != "application":
        part.set_payload(data)
        from email import encoders

        encoders.encode_base64(part)
    part.add_header("Content-Disposition", "attachment",
                    filename=name if name.isascii() else ("utf-8", "", name))
    if content_id:
        part["Content-ID"] = f"<{content_id.strip('<>')}>"
    return part


def _note(name: str, why: str, removed: list[tuple[str, str]]) -> email.message.Message:
    """The note that stands for an attachment with no file to clean (recorded in `removed`)."""
    removed.append((name, why))
    part = MIMEText(f"Sanitas removed the attachment \"{name[:200]}\": {why}\n", "plain",
                    "utf-8")
    note = f"{name[:150]}.removed.txt"
    part.add_header("Content-Disposition", "attachment",
                    filename=note if note.isascii() else ("utf-8", "", note))
    return part


def _attachment(attachment: Any, index: int, depth: int,
                removed: list[tuple[str, str]]) -> email.message.Message:
    from extract_msg.enums import AttachmentType

    kind = _safe(lambda: attachment.type)
    name = str(_safe(lambda: attachment.getFilename()) or f"attachment-{index + 1}")
    data = _safe(lambda: attachment.data)
    if kind == AttachmentType.MSG and data is not None:
        inner = MIMEBase("message", "rfc822")
        inner.set_payload([_mime_of_msg(data, depth + 1, removed)])
        inner.add_header("Content-Disposition", "attachment",
                         filename=(name[:-4] if name.lower().endswith(".msg") else name)
                         + ".eml")
        return inner
    if isinstance(data, bytes) and data:
        return _file(name, data, _safe(lambda: attachment.mimetype),
                     _safe(lambda: attachment.contentId))
    if kind in (AttachmentType.WEB, getattr(AttachmentType, "REFERENCE", None)):
        return _note(name, "a link to a file stored elsewhere (a cloud attachment)", removed)
    return _note(name, "an attachment Outlook stores as an embedded object or in a form this "
                 "reader cannot extract", removed)


# --- headers from MAPI properties (both formats) ------------------------------------------
# Property ids ([MS-OXPROPS]); a string property is stored as PT_UNICODE (001F) or PT_STRING8
# (001E), whichever the writer chose, and both are read.
PR_TRANSPORT_MESSAGE_HEADERS, PR_SUBJECT, PR_SUBJECT_PREFIX, PR_NORMALIZED_SUBJECT = \
    0x007D, 0x0037, 0x003D, 0x0E1D
PR_SENDER_NAME, PR_SENDER_ADDRTYPE, PR_SENDER_EMAIL_ADDRESS, PR_SENDER_SMTP_ADDRESS = \
    0x0C1A, 0x0C1E, 0x0C1F, 0x5D01
PR_SENT_REPRESENTING_NAME, PR_SENT_REPRESENTING_ADDRTYPE, PR_SENT_REPRESENTING_EMAIL_ADDRESS, \
    PR_SENT_REPRESENTING_SMTP_ADDRESS = 0x0042, 0x0064, 0x0065, 0x5D02
PR_DISPLAY_BCC, PR_DISPLAY_CC, PR_DISPLAY_TO = 0x0E02, 0x0E03, 0x0E04
PR_CLIENT_SUBMIT_TIME, PR_MESSAGE_DELIVERY_TIME = 0x0039, 0x0E06
PR_INTERNET_MESSAGE_ID, PR_IN_REPLY_TO_ID, PR_INTERNET_REFERENCES = 0x1035, 0x1042, 0x1039
PR_REPLY_RECIPIENT_ENTRIES = 0x004F
PR_MESSAGE_CODEPAGE, PR_INTERNET_CPID = 0x3FFD, 0x3FDE
PR_RECIPIENT_TYPE, PR_DISPLAY_NAME, PR_ADDRTYPE, PR_EMAIL_ADDRESS, PR_SMTP_ADDRESS = \
    0x0C15, 0x3001, 0x3002, 0x3003, 0x39FE
HEADER_STRINGS = frozenset({
    PR_TRANSPORT_MESSAGE_HEADERS, PR_SUBJECT, PR_SUBJECT_PREFIX, PR_NORMALIZED_SUBJECT,
    PR_SENDER_NAME, PR_SENDER_ADDRTYPE, PR_SENDER_EMAIL_ADDRESS, PR_SENDER_SMTP_ADDRESS,
    PR_SENT_REPRESENTING_NAME, PR_SENT_REPRESENTING_ADDRTYPE,
    PR_SENT_REPRESENTING_EMAIL_ADDRESS, PR_SENT_REPRESENTING_SMTP_ADDRESS, PR_DISPLAY_BCC,
    PR_DISPLAY_CC, PR_DISPLAY_TO, PR_INTERNET_MESSAGE_ID, PR_IN_REPLY_TO_ID,
    PR_INTERNET_REFERENCES, PR_DISPLAY_NAME, PR_ADDRTYPE,
    PR_EMAIL_ADDRESS, PR_SMTP_ADDRESS})
MAX_RECIPIENTS = 2_000  # of one message (the mail cleaner's 64 KB header field comes first)
MAX_HEADER_TEXT = 4_000  # characters kept of one property that becomes a header
MAX_TRANSPORT_HEADER_BYTES = 1 << 20  # transport headers read (the mail cleaner allows 512 KB)
_RECIPIENT_FIELDS = {1: ("To", PR_DISPLAY_TO), 2: ("Cc", PR_DISPLAY_CC),
                     3: ("Bcc", PR_DISPLAY_BCC)}
_HEADER_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ADDRESS = re.compile(r"[^\s<>()\[\],;:\"\\@]{1,200}@[^\s<>()\[\],;:\"\\@]{1,255}")
_NAME_SPECIALS = re.compile(r"[<>()\[\],;:\"\\@]")
_HEADER_LINE = re.compile(r"[!-9;-~]{1,100}:")
# The one-off entry identifier of an address outside any address book ([MS-OXCDATA] 2.2.5.1).
_ONE_OFF_PROVIDER = bytes.fromhex("812b1fa4bea310199d6e00dd010f5402")
FIELD_ORDER = ("From", "Sender", "Reply-To", "To", "Cc", "Bcc", "Subject", "Date",
               "Message-ID", "In-Reply-To", "References")


def _text(value: Any) -> str:
    """A property's text as one line: control characters (CR and LF among them, so that a value
    can never start a header of its own) and bidirectional overrides become spaces."""
    if not isinstance(value, str):
        return ""
    return " ".join(_HEADER_CONTROL.sub(" ", value[:MAX_HEADER_TEXT]).split())


def _mailbox(name: Any, address: Any) -> str:
    """One mailbox, `"Name" <address>`; the name alone when no usable Internet address is known
    (an Exchange legacy DN is not one), cleaned of the characters that would make it read as an
    address or a group; "" when neither. A non-ASCII name is written as an RFC 2047 encoded
    word of its own beside the address: the mail cleaner reads the addresses before it decodes
    the names (a name with a comma stays one name)."""
    name, address = _text(name), _text(address)
    if not _ADDRESS.fullmatch(address):
        address = ""
    if name == address:
        name = ""
    if not address:
        return " ".join(_NAME_SPECIALS.sub(" ", name).split())
    return email.utils.formataddr((name, address), charset="utf-8")


def _smtp(props: dict[int, Any], smtp: int, addrtype: int, address: int) -> str:
    """The Internet address of a sender or recipient: its SMTP address property, else its
    address when that is of type SMTP (an EX address is a legacy DN, never an address)."""
    value = _text(props.get(smtp))
    if _ADDRESS.fullmatch(value):
        return value
    kind = _text(props.get(addrtype)).upper()
    value = _text(props.get(address))
    return value if kind in ("SMTP", "") and _ADDRESS.fullmatch(value) else ""


def _one_off_addresses(entries: Any) -> list[tuple[str, str]]:
    """(name, address) of the one-off entries of a FlatEntryList (PR_REPLY_RECIPIENT_ENTRIES);
    other entries (address-book references) carry no address and are skipped."""
    if not isinstance(entries, bytes) or len(entries) < 8:
        return []
    (count,) = struct.unpack_from("<I", entries, 0)
    out, offset = [], 8
    for _ in range(min(count, MAX_RECIPIENTS, len(entries) // 4)):
        if offset + 4 > len(entries):
            break
        (size,) = struct.unpack_from("<I", entries, offset)
        entry = entries[offset + 4:offset + 4 + size]
        offset += 4 + size + (-size % 4)
        if len(entry) < 24 or entry[4:20] != _ONE_OFF_PROVIDER:
            continue
        (flags,) = struct.unpack_from("<H", entry, 22)
        if flags & 0x8000:  # MAPI_UNICODE: UTF-16 strings
            texts = entry[24:].decode("utf-16-le", "replace").split("\x00")
        else:
            texts = entry[24:].decode("cp1252", "replace").split("\x00")
        if len(texts) >= 3 and texts[1].upper() == "SMTP":
            out.append((texts[0], texts[2]))
    return out


def _transport_headers(text: Any) -> list[tuple[str, str]]:
    """The fields of PR_TRANSPORT_MESSAGE_HEADERS. Exchange starts the block with a line of its
    own ("Microsoft Mail Internet Headers Version 2.0"), which is not a header field: a parser
    given it takes the whole block for a body, so lines before the first field are skipped."""
    if not isinstance(text, str) or not text.strip():
        return []
    lines = text.replace("\x00", "").lstrip().splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if _HEADER_LINE.match(line)), len(lines))
    parsed = email.parser.HeaderParser(policy=email.policy.compat32).parsestr(
        "".join(lines[first:]))
    return [(name, str(value)) for name, value in parsed.items()
            if name.lower() not in ("content-type", "content-transfer-encoding",
                                    "mime-version")]


def _mapi_date(value: Any, *, utc: bool = True) -> str:
    """A Date field: a MAPI time is UTC; a TNEF attDateSent is the sender's local time, its zone
    unknown (written -0000)."""
    if not isinstance(value, datetime.datetime) or not 1980 <= value.year <= 9000:
        return ""
    if value.tzinfo is None and utc:
        value = value.replace(tzinfo=datetime.UTC)
    return email.utils.format_datetime(value)


def message_headers(props: dict[int, Any], recipients: list[dict[int, Any]],
                    extra: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """The header fields of a message from its MAPI properties (`props`: id -> str, datetime,
    int or bytes) and its recipients' (each with PR_RECIPIENT_TYPE): the transport headers when
    it was received, and every field they lack taken from the properties. `extra` holds fields
    a format keeps outside its MAPI properties (TNEF's attFrom, attSubject...), used last.
    Every value is one line, free of control characters."""
    fields = _transport_headers(props.get(PR_TRANSPORT_MESSAGE_HEADERS))
    have = {name.lower() for name, value in fields if value.strip()}
    fields = [(name, value) for name, value in fields if value.strip()]
    own: dict[str, str] = {}
    sender = _mailbox(props.get(PR_SENDER_NAME),
                      _smtp(props, PR_SENDER_SMTP_ADDRESS, PR_SENDER_ADDRTYPE,
                            PR_SENDER_EMAIL_ADDRESS))
    representing = _mailbox(props.get(PR_SENT_REPRESENTING_NAME),
                            _smtp(props, PR_SENT_REPRESENTING_SMTP_ADDRESS,
                                  PR_SENT_REPRESENTING_ADDRTYPE,
                                  PR_SENT_REPRESENTING_EMAIL_ADDRESS))
    own["From"] = representing or sender
    if representing and sender and sender != representing:
        own["Sender"] = sender  # sent on behalf of someone else
    reply = [_mailbox(n, a) for n, a in _one_off_addresses(props.get(PR_REPLY_RECIPIENT_ENTRIES))]
    own["Reply-To"] = ", ".join(m for m in reply if m)
    kinds: dict[str, list[str]] = {"To": [], "Cc": [], "Bcc": []}
    for recipient in recipients:
        kind = recipient.get(PR_RECIPIENT_TYPE)
        if not isinstance(kind, int) or kind & 0x10000000:  # MAPI_P1: a resend copy
            continue
        field, _ = _RECIPIENT_FIELDS.get(kind & 0x0FFFFFFF, ("", 0))
        mailbox = _mailbox(recipient.get(PR_DISPLAY_NAME),
                           _smtp(recipient, PR_SMTP_ADDRESS, PR_ADDRTYPE, PR_EMAIL_ADDRESS))
        if field and mailbox:
            kinds[field].append(mailbox)
    for field, display in _RECIPIENT_FIELDS.values():
        names = kinds[field] or [_mailbox(n, "") for n in _text(props.get(display)).split(";")]
        own[field] = ", ".join(m for m in names if m)
    subject = _text(props.get(PR_SUBJECT)) or _text(
        f"{props.get(PR_SUBJECT_PREFIX) or ''}{props.get(PR_NORMALIZED_SUBJECT) or ''}")
    own["Subject"] = subject
    own["Date"] = (_mapi_date(props.get(PR_CLIENT_SUBMIT_TIME))
                   or _mapi_date(props.get(PR_MESSAGE_DELIVERY_TIME)))
    for field, prop in (("Message-ID", PR_INTERNET_MESSAGE_ID),
                        ("In-Reply-To", PR_IN_REPLY_TO_ID),
                        ("References", PR_INTERNET_REFERENCES)):
        own[field] = _text(props.get(prop)).encode("ascii", "ignore").decode("ascii")
    for field, value in (extra or {}).items():
        own[field] = own.get(field) or value
    for field in FIELD_ORDER:
        if own.get(field) and field.lower() not in have:
            fields.append((field, own[field]))
    return fields


# --- TNEF ------------------------------------------------------------------------------------
def is_tnef(data: bytes) -> bool:
    return data[:4] == TNEF_SIGNATURE


def check_tnef(data: bytes) -> None:
    """Walk the TNEF objects (level, id, type, length, data, checksum) of the stream and of the
    messages embedded in it (tnefparse parses those too, recursively) and refuse a stream
    tnefparse would take too long over, before it parses anything: it copies the rest of the
    stream for every object it reads, and it loops as many times as a MAPI property list or a
    recipient table says, whether or not the bytes are there (a 100-byte file declaring 2**32
    properties kept it busy until the job's time limit). Every count and length of the MAPI
    lists it will decode is checked here against the bytes left, the way tnefparse reads them."""
    if len(data) < 6 or not is_tnef(data):
        raise Rejected("The TNEF data does not start with its signature.",
                       RejectionCode.DAMAGED)
    objects, copied = _walk_tnef(data, 6, strict=True, mapi=_MapiBudget())
    at, embedded = 0, 0
    while (found := data.find(_EMBEDDED_TNEF, at)) >= 0:
        embedded += 1
        if embedded > MAX_TNEF_EMBEDDED:
            raise Rejected(f"The TNEF data (winmail.dat) embeds more than {MAX_TNEF_EMBEDDED} "
                           "messages.", RejectionCode.TOO_COMPLEX)
        more, cost = _walk_tnef(data, found + len(_EMBEDDED_TNEF) + 2, strict=False)
        objects, copied = objects + more, copied + cost
        at = found + 1
    if objects > MAX_TNEF_OBJECTS or copied > MAX_TNEF_COPY:
        raise Rejected(f"The TNEF data (winmail.dat) has more than {MAX_TNEF_OBJECTS} objects "
                       "or is too large for them.", RejectionCode.TOO_COMPLEX)


class _MapiBudget:
    """What the MAPI lists of one TNEF stream (embedded messages included) cost tnefparse."""

    def __init__(self) -> None:
        self.values = 0  # properties and values it will build
        self.embedded = 0  # messages it will parse as attachments

    def spend(self, count: int) -> None:
        self.values += count
        if self.values > MAX_TNEF_VALUES:
            raise Rejected(f"The TNEF data (winmail.dat) holds more than {MAX_TNEF_VALUES} MAPI "
                           "property values.", RejectionCode.TOO_COMPLEX)


def _tnef_damaged(what: str) -> Rejected:
    return Rejected(f"The TNEF data (winmail.dat) is damaged ({what}).", RejectionCode.DAMAGED)


def _walk_tnef(data: bytes, offset: int, *, strict: bool, mapi: _MapiBudget | None = None,
               depth: int = 0) -> tuple[int, int]:
    """(objects, bytes tnefparse copies) from `offset` to the end of the objects; an object
    running past the end is damaged (`strict`) or is the last one, cut where the data ends (an
    embedded message, whose own end is not known here; tnefparse reads it so). With `mapi`, the
    MAPI lists in the objects are checked too (`_check_object`)."""
    objects, copied = 0, 0
    codepage: str | None = None  # tnefparse's, as it changes while it walks
    attachment_codepage: str | None = None
    while offset + 12 < len(data):
        objects += 1
        copied += len(data) - offset
        if objects > MAX_TNEF_OBJECTS or copied > MAX_TNEF_COPY:
            raise Rejected(f"The TNEF data (winmail.dat) has more than {MAX_TNEF_OBJECTS} "
                           "objects or is too large for them.", RejectionCode.TOO_COMPLEX)
        level, attr_id, attr_type, length = struct.unpack_from("<BHHI", data, offset)
        end = offset + 11 + length
        if end > len(data):
            if strict:
                raise Rejected("The TNEF data (winmail.dat) is truncated (an object runs past "
                               "its end).", RejectionCode.DAMAGED)
            end = len(data)
        if mapi is not None:
            body = data[offset + 9:end - 2]
            if attr_id == 0x9002:  # rendering data: tnefparse opens an attachment
                attachment_codepage = codepage
            if level == 2:
                if attr_id == 0x9005:  # attAttachment: the attachment's MAPI properties
                    _check_mapi_list(body, 0, attachment_codepage, mapi, depth, strict=False)
            elif attr_id == 0x9003:  # attMsgProps: the message's MAPI properties
                _check_mapi_list(body, 0, codepage, mapi, depth, strict=False)
            elif attr_id == 0x9007 and len(body) >= 4:  # attOemCodepage
                import tnefparse  # its package imports its codepage module

                codepage = tnefparse.codepage.Codepage(
                    struct.unpack_from("<I", body)[0]).codepage()
            elif attr_id == 0x9004 and attr_type not in (1, 7):  # attRecipTable
                _check_recipients(body, codepage, mapi, depth)
        offset = end
    return objects, copied


def _check_recipients(body: bytes, codepage: str | None, mapi: _MapiBudget,
                      depth: int) -> None:
    """attRecipTable: a row count, then one MAPI list per row. tnefparse reads as many rows as
    the count says, each from where the last one stopped: a row it cannot decode to its end
    would leave the next one reading garbage, so every row must decode, and the count must be
    one the bytes can hold."""
    if len(body) < 4:
        raise _tnef_damaged("a recipient table without its row count")
    (rows,) = struct.unpack_from("<I", body)
    if rows > (len(body) - 4) // 4:
        raise _tnef_damaged(f"a recipient table declaring {rows} rows in {len(body)} bytes")
    offset = 4
    for _ in range(rows):
        offset = _check_mapi_list(body, offset, codepage, mapi, depth, strict=True)


_MAPI_FIXED = {0x0002: 2, 0x000B: 2, 0x0003: 4, 0x0004: 4, 0x000A: 4, 0x0005: 8, 0x0006: 8,
               0x0007: 8, 0x0014: 8, 0x0040: 8, 0x0048: 16}  # tnefparse's sizes
_MAPI_VARIABLE = frozenset({0x0000, 0x000D, 0x001E, 0x001F, 0x0102})


def _check_mapi_list(data: bytes, offset: int, codepage: str | None, mapi: _MapiBudget,
                     depth: int, *, strict: bool) -> int:
    """Walk a MAPI property list ([MS-OXTNEF] 2.1.3.4) at `offset` as tnefparse's decode_mapi
    reads it and return where it ends. Each count must fit the bytes left (a property takes at
    least 4 bytes, a value 2), each length too. Where tnefparse would stop decoding the list
    (an unknown type, a string it cannot decode) the walk stops too, or, `strict` (a recipient
    row, which the next row follows), the data is damaged. Messages embedded as attachments
    (PR_ATTACH_DATA_OBJ holding a TNEF stream) are walked in turn."""
    end = len(data)

    def need(size: int, what: str) -> None:
        if size < 0 or offset + size > end:
            raise _tnef_damaged(f"{what} runs past the end of its attribute")

    def u32() -> int:
        nonlocal offset
        need(4, "a MAPI count or length")
        value = int(struct.unpack_from("<I", data, offset)[0])
        offset += 4
        return value

    count = u32()
    if count > (end - offset) // 4:
        raise _tnef_damaged(f"a MAPI property list declaring {count} properties in "
                            f"{end - offset} bytes")
    mapi.spend(count)
    for _ in range(count):
        need(4, "a MAPI property tag")
        prop_type, prop_id = struct.unpack_from("<HH", data, offset)
        offset += 4
        if prop_id >= 0x8000:  # a named property: GUID, kind, then an id or a name
            need(20, "a MAPI property name")
            (kind,) = struct.unpack_from("<I", data, offset + 16)
            offset += 20
            if kind == 0:
                need(4, "a MAPI property name")
                offset += 4
            else:
                size = u32()
                need(size, "a MAPI property name")
                name = data[offset:offset + size + (-size % 4)]
                offset += size + (-size % 4)
                try:
                    name.decode("utf-16")
                except UnicodeError:
                    if strict:
                        raise _tnef_damaged("a MAPI property name that is not UTF-16") from None
                    return offset
        multi = prop_type & 0x1000
        prop_type &= ~0x1000
        values = 1
        if multi:
            values = u32()
            if values > (end - offset) // 2:
                raise _tnef_damaged(f"a MAPI property declaring {values} values in "
                                    f"{end - offset} bytes")
            mapi.spend(values)
        for _ in range(values):
            if prop_type in _MAPI_FIXED:
                need(_MAPI_FIXED[prop_type], "a MAPI value")
                offset += _MAPI_FIXED[prop_type]
                continue
            if prop_type not in _MAPI_VARIABLE:
                if strict:
                    raise _tnef_damaged(f"a MAPI property of unknown type {prop_type:#06x}")
                return offset  # where tnefparse stops decoding the list
            items = 1 if multi else u32()
            if items > (end - offset) // 4:
                raise _tnef_damaged(f"a MAPI property declaring {items} values in "
                                    f"{end - offset} bytes")
            mapi.spend(items)
            objects = []
            for _ in range(items):
                size = u32()
                need(size, "a MAPI value")
                item = data[offset:offset + size + (-size % 4)]
                offset = min(offset + size + (-size % 4), end)  # the last padding may be cut
                try:
                    if prop_type == 0x001F:
                        item.decode("utf-16")
                    elif prop_type == 0x001E:
                        item.decode(codepage)  # type: ignore[arg-type] # None fails there too
                except (UnicodeError, LookupError, TypeError):
                    if strict:
                        raise _tnef_damaged("a MAPI string that cannot be decoded") from None
                    return offset
                objects.append(item.rstrip(b"\x00"))
            if prop_type == 0x000D and prop_id == 0x3701:  # PR_ATTACH_DATA_OBJ
                _check_embedded(b"".join(objects), mapi, depth)
        if values % 2 and prop_type in (0x0002, 0x000B):
            offset += 2  # tnefparse's padding after an odd number of 16-bit values
    return offset


def _check_embedded(value: bytes, mapi: _MapiBudget, depth: int) -> None:
    """An attachment's data object: when it is a message (IMessage GUID, then a TNEF stream),
    tnefparse parses it as one, so its MAPI lists are checked as well."""
    if not value.startswith(_EMBEDDED_TNEF[:16]):
        return
    mapi.embedded += 1
    if mapi.embedded > MAX_TNEF_EMBEDDED or depth + 1 > MAX_TNEF_DEPTH:
        raise Rejected(f"The TNEF data (winmail.dat) embeds more than {MAX_TNEF_EMBEDDED} "
                       f"messages, or nests them more than {MAX_TNEF_DEPTH} deep.",
                       RejectionCode.TOO_COMPLEX)
    stream = value[16:]
    if is_tnef(stream):
        _walk_tnef(stream, 6, strict=False, mapi=mapi, depth=depth + 1)


def tnef_to_mime(data: bytes) -> tuple[email.message.Message, list[tuple[str, str]]]:
    """TNEF bytes as a multipart/mixed message part (body, then attachments), with the
    attachments that had no data (name, why)."""
    import tnefparse

    check_tnef(data)
    removed: list[tuple[str, str]] = []
    try:
        tnef = tnefparse.TNEF(data, do_checksum=False)
        out = MIMEMultipart("mixed")
        for name, value in message_headers(*_tnef_properties(tnef)):
            out[name] = value
        rtf = tnef.rtfbody if not (tnef.body or tnef.htmlbody) else None
        for part in _body(tnef.body, tnef.htmlbody, rtf):
            out.attach(part)
        if len(tnef.attachments) > MAX_MSG_ATTACHMENTS:
            raise Rejected(f"The TNEF data has more than {MAX_MSG_ATTACHMENTS} attachments.",
                           RejectionCode.TOO_COMPLEX)
        for index, attachment in enumerate(tnef.attachments):
            name = (_safe(attachment.long_filename) or _safe(lambda a=attachment: a.name)
                    or f"attachment-{index + 1}")
            payload = attachment.data
            if isinstance(payload, bytes) and payload:
                out.attach(_file(str(name), payload, None))
            else:
                out.attach(_note(str(name), "an attachment with no data", removed))
    except Rejected:
        raise
    except RecursionError:
        raise Rejected("The TNEF data nests messages too deeply to process safely.",
                       RejectionCode.TOO_COMPLEX) from None
    except Exception as exc:  # noqa: BLE001 - tnefparse raises ValueError, IndexError...
        raise Rejected(f"The TNEF data (winmail.dat) cannot be read ({type(exc).__name__}).",
                       RejectionCode.DAMAGED) from None
    return out, removed


def _tnef_properties(tnef: Any) -> tuple[dict[int, Any], list[dict[int, Any]], dict[str, str]]:
    """The MAPI properties of a parsed TNEF stream (attMsgProps) that become headers, its
    recipients (attRecipTable rows) and the fields TNEF keeps in attributes of its own
    (attFrom, attSubject, attDateSent), for `message_headers`."""
    import tnefparse

    props: dict[int, Any] = {}
    for prop in tnef.mapiprops:
        if prop.name < 0x8000:  # named properties (ids of 0x8000 up) are not these
            props.setdefault(prop.name, _tnef_value(prop))
    recipients: list[dict[int, Any]] = []
    extra: dict[str, str] = {}
    codepage = tnef.codepage or "cp1252"
    for attribute in tnef.msgprops:
        if attribute.name == tnefparse.TNEF.ATTRECIPTABLE:
            for row in attribute.data[:MAX_RECIPIENTS]:
                recipients.append({p.name: _tnef_value(p) for p in row if p.name < 0x8000})
        elif attribute.name == tnefparse.TNEF.ATTSUBJECT:
            extra["Subject"] = _text(attribute.data)
        elif attribute.name == tnefparse.TNEF.ATTFROM and len(attribute.data) == 3:
            name, kind, address = (_safe(lambda v=v: v.decode(codepage, "replace")) or ""
                                   for v in attribute.data)
            extra["From"] = _mailbox(name, address if kind.upper() == "SMTP" else "")
        elif attribute.name == tnefparse.TNEF.ATTDATESENT:
            extra["Date"] = _mapi_date(attribute.data, utc=False)
    if len(recipients) >= MAX_RECIPIENTS:
        raise Rejected(f"The TNEF data has more than {MAX_RECIPIENTS} recipients.",
                       RejectionCode.TOO_COMPLEX)
    return props, recipients, extra


def _tnef_value(prop: Any) -> Any:
    """A tnefparse MAPI value as `message_headers` takes it: text, an int, bytes, or a time
    (tnefparse gives a naive time in UTC)."""
    value = _safe(lambda: prop.data)
    if isinstance(value, datetime.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)
    return value
