"""Outlook's own message formats, turned into MIME messages that `mail.clean_message` cleans.

- `.msg` (an OLE compound file of MAPI properties) is read with extract-msg: its transport
  headers when it was received (else From, To, Cc, Subject, Date and Message-ID from its
  properties), its plain-text and HTML bodies (an RTF-only body is attached as `body.rtf`, which
  the engine converts like any RTF), its attachments by value, and attached messages (`.msg`
  inside `.msg`, converted the same way one level deeper, at most `MAX_MSG_DEPTH`). Reference
  attachments (links to files in the cloud) and OLE-embedded objects have no file to clean:
  each is replaced by a note.
- TNEF (`winmail.dat`, `application/ms-tnef`) is read with tnefparse: its body (text or HTML,
  or the compressed RTF as `body.rtf`), its subject and its attachments. Before tnefparse sees
  the bytes, its top-level objects are walked here (`check_tnef`): their number and the bytes
  tnefparse copies while it walks them are bounded (`MAX_TNEF_OBJECTS`, `MAX_TNEF_COPY`).

The MIME message built here is only an intermediate: everything in it is cleaned by the mail
cleaner (headers filtered, bodies cleaned, every attachment sanitized by its own family) and the
output is an `.eml`.
"""

from __future__ import annotations

import email.message
import email.policy
import email.utils
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
TNEF_SIGNATURE = b"\x78\x9f\x3e\x22"
MAX_TNEF_OBJECTS = 5_000
MAX_TNEF_COPY = 1 << 31  # bytes tnefparse copies as it walks the objects (it slices the rest)
MAX_TNEF_EMBEDDED = 50  # messages embedded in the stream, at any depth
# An attachment that is a message: MAPI's IMessage GUID, then the message's own TNEF stream.
_EMBEDDED_TNEF = (b"\x07\x03\x02\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x46"
                  + TNEF_SIGNATURE)
_TEXT_HEADERS = (("From", "sender"), ("To", "to"), ("Cc", "cc"), ("Subject", "subject"),
                 ("Message-ID", "messageId"), ("In-Reply-To", "inReplyTo"))


def msg_to_mime(path: Path) -> tuple[bytes, list[tuple[str, str]]]:
    """The `.msg` file at `path` as a MIME message (bytes), with the attachments that had no
    file to clean (name, why), each replaced by a note. Rejected when it is not a message
    extract-msg can read (damaged), or when it is encrypted or nested too deeply."""
    import extract_msg

    try:
        msg = extract_msg.openMsg(str(path), delayAttachments=False, strict=False)
    except Exception as exc:  # noqa: BLE001 - extract-msg raises its own errors and olefile's
        raise Rejected(f"The Outlook message cannot be read ({type(exc).__name__}: "
                       f"{str(exc)[:120]}).", RejectionCode.DAMAGED) from None
    try:
        removed: list[tuple[str, str]] = []
        message = _mime_of_msg(msg, 1, removed)
        return message.as_bytes(policy=email.policy.compat32), removed
    finally:
        msg.close()


def _mime_of_msg(msg: Any, depth: int, removed: list[tuple[str, str]]) -> email.message.Message:
    if depth > MAX_MSG_DEPTH:
        raise Rejected(f"The Outlook message holds messages nested more than {MAX_MSG_DEPTH} "
                       "levels deep.", RejectionCode.TOO_COMPLEX)
    if not hasattr(msg, "body") or not hasattr(msg, "attachments"):
        raise Rejected("The Outlook item is not an e-mail message (a calendar item, contact, "
                       "task or note), which is not a supported type.",
                       RejectionCode.UNSUPPORTED_TYPE)
    if getattr(msg, "isEncrypted", False):
        raise Rejected("The Outlook message is encrypted (S/MIME); encrypted messages cannot "
                       "be inspected and are not accepted.", RejectionCode.ENCRYPTED)
    out = MIMEMultipart("mixed")
    headers = _safe(lambda: msg.headerText) or ""
    if headers.strip():
        parsed = email.message_from_string(headers.lstrip(), policy=email.policy.compat32)
        for name, value in parsed.items():
            if name.lower() not in ("content-type", "content-transfer-encoding",
                                    "mime-version"):
                out[name] = value
    else:
        for header, attribute in _TEXT_HEADERS:
            value = _safe(lambda a=attribute: getattr(msg, a))
            if value:
                out[header] = " ".join(str(value).split())
        date = _safe(lambda: msg.date)
        if date is not None and hasattr(date, "timetuple"):
            out["Date"] = email.utils.format_datetime(date)
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


def _safe(read: Any) -> Any:
    """A property of the message, or None when extract-msg cannot decode it."""
    try:
        return read()
    except Exception:  # noqa: BLE001 - a damaged property is a missing one
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


# --- TNEF ------------------------------------------------------------------------------------
def is_tnef(data: bytes) -> bool:
    return data[:4] == TNEF_SIGNATURE


def check_tnef(data: bytes) -> None:
    """Walk the TNEF objects (level, id, type, length, data, checksum) of the stream and of the
    messages embedded in it (tnefparse parses those too, recursively) and refuse a stream
    tnefparse would take too long over, before it parses anything: it copies the rest of the
    stream for every object it reads."""
    if len(data) < 6 or not is_tnef(data):
        raise Rejected("The TNEF data does not start with its signature.",
                       RejectionCode.DAMAGED)
    objects, copied = _walk_tnef(data, 6, strict=True)
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


def _walk_tnef(data: bytes, offset: int, *, strict: bool) -> tuple[int, int]:
    """(objects, bytes tnefparse copies) from `offset` to the end of the objects; an object
    running past the end is damaged (`strict`) or ends the walk (an embedded message, whose
    own end is not known here)."""
    objects, copied = 0, 0
    while offset + 12 < len(data):
        objects += 1
        copied += len(data) - offset
        if objects > MAX_TNEF_OBJECTS or copied > MAX_TNEF_COPY:
            raise Rejected(f"The TNEF data (winmail.dat) has more than {MAX_TNEF_OBJECTS} "
                           "objects or is too large for them.", RejectionCode.TOO_COMPLEX)
        (length,) = struct.unpack_from("<I", data, offset + 5)
        if offset + 11 + length > len(data):
            if strict:
                raise Rejected("The TNEF data (winmail.dat) is truncated (an object runs past "
                               "its end).", RejectionCode.DAMAGED)
            break
        offset += 11 + length
    return objects, copied


def tnef_to_mime(data: bytes) -> tuple[email.message.Message, list[tuple[str, str]]]:
    """TNEF bytes as a multipart/mixed message part (body, then attachments), with the
    attachments that had no data (name, why)."""
    import tnefparse

    check_tnef(data)
    removed: list[tuple[str, str]] = []
    try:
        tnef = tnefparse.TNEF(data, do_checksum=False)
        out = MIMEMultipart("mixed")
        subject = next((str(p.data) for p in tnef.msgprops
                        if p.name == tnefparse.TNEF.ATTSUBJECT), "")
        if subject.strip():
            out["Subject"] = " ".join(subject.replace("\x00", "").split())
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
