"""E-mail messages (.eml): the one place a MIME message is cleaned.

`clean_message(data, ctx)` takes a whole message (bytes), the job's context (policy, nested
budget) and returns the cleaned message's bytes; its findings go to `ctx`. The file family's
handler (`sanitize`) calls it for a saved `.eml`, and the mail channel will call it for each
message it filters. The rules:

- The message is parsed with the standard library's `email` package (compat32: header values
  stay raw, no header-parsing regular expressions run on hostile text) under limits checked
  before and after parsing: its size, the length of a line, of a header field and of a header
  block, the number of parts and how deeply they nest. Over a limit, the whole message is
  refused (`too_large`, `too_complex`).
- Declared types and names are hints: every attachment (a part that is not a plain-text or HTML
  body; also inside `message/rfc822` parts, which are cleaned as messages one level deeper) is
  decoded and goes through the engine like an archive member (`nested.nested_context`: the same
  policy, 3 levels, the upload's member count and size budget). The cleaned copy replaces it
  under the same name (the extension of its new type when the type changed; non-ASCII names are
  written with RFC 2231). One that cannot be made safe (an executable, an unknown type, damaged
  or undecodable content, over a limit) is replaced by a short text part saying what was removed
  and why, and reported (`archive_member`).
- HTML bodies are cleaned by the HTML family's cleaner (`text.sanitize_html`): scripts, event
  handlers, forms and remote loads (tracking pixels) go by policy. Pictures the HTML takes from
  the message itself (`cid:`) are cleaned first and put in as `data:` pictures. Plain-text bodies
  are kept as they are (re-encoded as UTF-8).
- Headers: the message's visible content (From, Sender, To, Cc, Bcc, Reply-To, Subject, Date,
  Message-ID, In-Reply-To, References) is kept. Everything else (Received chains, originating
  IP addresses, X-Mailer and other client and tracking headers, Return-Path, Thread-Index...)
  is metadata: removed unless the policy keeps `documentMetadata`. Read-receipt requests are
  external references (`externalReferences`); DKIM/ARC signatures no longer match a cleaned
  message and always go. Content headers are rebuilt, preambles and epilogues dropped.

The output is 7-bit: every part is written as quoted-printable or base64, with CRLF line ends.
"""

from __future__ import annotations

import base64
import email
import email.charset
import email.encoders
import email.errors
import email.generator
import email.header
import email.message
import email.policy
import email.utils
import io
import re
import secrets
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sanitas.engine import mail_inline
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Refused, Rejected, RejectionCode
from sanitas.engine.verdict import ENCRYPTED_CODES

if TYPE_CHECKING:
    from sanitas.engine.formats import Output

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a whole message, attachments encoded
MAX_LINE_BYTES = 1024 * 1024  # one line (RFC 5322 allows 998; real bodies run longer)
MAX_HEADER_FIELD_BYTES = 64 * 1024  # one header field, folded lines included
MAX_HEADER_BLOCK_BYTES = 512 * 1024  # all header fields of one part
MAX_PARTS = 500  # MIME parts of one message, nested messages' parts included
MAX_MIME_DEPTH = 16  # multiparts and messages inside each other

KEPT_HEADERS = ("from", "sender", "to", "cc", "bcc", "reply-to", "subject", "date",
                "message-id", "in-reply-to", "references")
ADDRESS_HEADERS = frozenset({"from", "sender", "to", "cc", "bcc", "reply-to"})
ID_HEADERS = frozenset({"message-id", "in-reply-to", "references"})
RECEIPT_HEADERS = frozenset({"disposition-notification-to", "return-receipt-to",
                             "x-confirm-reading-to", "generate-delivery-report",
                             "read-receipt-to"})
SIGNATURE_HEADERS = frozenset({"dkim-signature", "domainkey-signature", "arc-seal",
                               "arc-message-signature", "arc-authentication-results"})
# Rebuilt for every part (never copied).
CONTENT_HEADERS = frozenset({"mime-version", "content-type", "content-transfer-encoding",
                             "content-disposition", "content-id", "content-description",
                             "content-length", "content-location", "content-base",
                             "content-md5"})
BASE64_DEFECTS = (email.errors.InvalidBase64CharactersDefect,
                  email.errors.InvalidBase64PaddingDefect,
                  email.errors.InvalidBase64LengthDefect)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_CID = re.compile(r"cid:([^\s\"'<>)]{1,500})", re.IGNORECASE)
_IMAGE_OUTPUTS = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif",
                  "webp": "image/webp"}
_UTF8_QP = email.charset.Charset("utf-8")
_UTF8_QP.body_encoding = email.charset.QP
_UTF8_QP.header_encoding = email.charset.BASE64
_OUTPUT_POLICY = email.policy.compat32.clone(linesep="\r\n")
_Value = str | email.header.Header


def sanitize(src: Path, dst: Path, ctx: Context, kind: str = "eml") -> str:
    """The mail family's handler: a saved message in, the cleaned message out (.eml)."""
    if src.stat().st_size > MAX_MESSAGE_BYTES:
        raise Rejected(f"The message is larger than {MAX_MESSAGE_BYTES // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    if kind in ("msg", "tnef"):  # Outlook's formats: converted to MIME, then cleaned alike
        dst.write_bytes(clean_message(_outlook_message(src, ctx, kind), ctx))
        return "eml"
    dst.write_bytes(clean_message(src.read_bytes(), ctx))
    return "eml"


def _outlook_message(src: Path, ctx: Context, kind: str) -> bytes:
    """An Outlook .msg or a TNEF winmail.dat as MIME bytes (engine/outlook.py); the
    attachments it had no file for are reported as removed."""
    from sanitas.engine import outlook

    if kind == "msg":
        data, removed = outlook.msg_to_mime(src)
        what = "Outlook message (.msg)"
    else:
        message, removed = outlook.tnef_to_mime(src.read_bytes())
        data = serialise(message)
        what = "TNEF data (winmail.dat)"
    ctx.add("legacy_format", "whole file", action="converted",
            detail=f"{what} converted to a MIME message (.eml), then cleaned")
    for name, why in removed:
        ctx.add("archive_member", name[:200], action="removed", detail=why)
    return data


def clean_message(data: bytes, ctx: Context) -> bytes:
    """The cleaned copy of the MIME message `data` under `ctx`'s policy and nested budget
    (see the module's docstring); findings are recorded in `ctx`. Rejected when the message
    is over a limit or cannot be parsed; Refused when the policy refuses what it holds."""
    check_limits(data)
    try:
        message = email.message_from_bytes(data, policy=email.policy.compat32)
        _check_tree(message)
        cleaned = _Cleaner(ctx).message(message)
    except RecursionError:
        raise Rejected("The message's parts are nested too deeply to process safely.",
                       RejectionCode.TOO_COMPLEX) from None
    return serialise(cleaned)


def check_limits(data: bytes) -> None:
    """Refuse a message over the size or line-length limit before it is parsed, in C-speed
    passes (`find` over windows of the line limit)."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise Rejected(f"The message is larger than {MAX_MESSAGE_BYTES // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    if not data.strip():
        raise Rejected("The message is empty.", RejectionCode.EMPTY)
    previous = -1  # the last newline seen
    for start in range(0, len(data), MAX_LINE_BYTES):
        end = min(start + MAX_LINE_BYTES, len(data))
        first = data.find(b"\n", start, end)
        if first < 0:
            if end - previous - 1 > MAX_LINE_BYTES:
                break
            continue
        if first - previous - 1 > MAX_LINE_BYTES:
            break
        previous = data.rfind(b"\n", start, end)
    else:
        if len(data) - previous - 1 <= MAX_LINE_BYTES:
            return
    raise Rejected(f"The message has a line longer than {MAX_LINE_BYTES // 1024} KB.",
                   RejectionCode.TOO_COMPLEX)


def _check_tree(message: email.message.Message) -> None:
    """Count parts and nesting without recursion; check every header block."""
    stack: list[tuple[email.message.Message, int]] = [(message, 1)]
    parts = 0
    while stack:
        part, depth = stack.pop()
        parts += 1
        if parts > MAX_PARTS:
            raise Rejected(f"The message has more than {MAX_PARTS} parts.",
                           RejectionCode.TOO_COMPLEX)
        if depth > MAX_MIME_DEPTH:
            raise Rejected(f"The message's parts are nested more than {MAX_MIME_DEPTH} levels "
                           "deep.", RejectionCode.TOO_COMPLEX)
        block = 0
        for name, value in part.items():
            size = len(name) + len(str(value)) + 2
            block += size
            if size > MAX_HEADER_FIELD_BYTES or block > MAX_HEADER_BLOCK_BYTES:
                raise Rejected("The message has a header field longer than "
                               f"{MAX_HEADER_FIELD_BYTES // 1024} KB (or header fields over "
                               f"{MAX_HEADER_BLOCK_BYTES // 1024} KB in one part).",
                               RejectionCode.TOO_COMPLEX)
        payload = part.get_payload()
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload
                         if isinstance(child, email.message.Message))


def serialise(message: email.message.Message) -> bytes:
    out = io.BytesIO()
    email.generator.BytesGenerator(out, mangle_from_=False, policy=_OUTPUT_POLICY).flatten(
        message)
    return out.getvalue()


_SMIME_TYPES = frozenset(("application/pkcs7-mime", "application/x-pkcs7-mime"))
_SMIME_ENCRYPTED = frozenset(("enveloped-data", "authenveloped-data"))


def _encryption_of(part: email.message.Message) -> str | None:
    """What encrypts `part` ("S/MIME", "PGP/MIME"), or None: S/MIME enveloped data (or a
    .p7m that does not say it is only signed) and multipart/encrypted (RFC 1847, PGP/MIME)."""
    ctype = part.get_content_type()
    if ctype == "multipart/encrypted":
        protocol = str(part.get_param("protocol") or "").lower()
        return "PGP/MIME" if protocol == "application/pgp-encrypted" else "multipart/encrypted"
    if ctype in _SMIME_TYPES:
        smime_type = str(part.get_param("smime-type") or "").lower()
        if smime_type in _SMIME_ENCRYPTED:
            return "S/MIME"
        if not smime_type and (_filename(part) or "").lower().endswith(".p7m"):
            return "S/MIME"
    return None


def _content_copy(part: email.message.Message) -> email.message.Message:
    """`part` as it came with its content fields only (its bytes must reach the recipient's
    key unchanged; a top-level part's other fields are filtered by `_Cleaner.headers`)."""
    import copy

    out = email.message.Message()
    for name, value in part.items():
        if name.lower() in CONTENT_HEADERS and name.lower() != "mime-version":
            out[name] = value
    payload = part.get_payload()
    out.set_payload([copy.deepcopy(child) for child in payload]
                    if isinstance(payload, list) else payload)
    return out


class _Cleaner:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.index = 0  # parts cleaned, for scratch file names

    # --- the tree ------------------------------------------------------------------------
    def message(self, message: email.message.Message) -> email.message.Message:
        """A whole message: its body tree cleaned, its headers filtered."""
        body = self.part(message, "message")
        content = [(k, v) for k, v in body.items()]
        for key in {k for k, _ in content}:
            del body[key]
        for name, value in self.headers(message):
            body[name] = cast(str, value)  # compat32 writes a Header object encoded
        body["MIME-Version"] = "1.0"
        for key, value in content:
            if key.lower() != "mime-version":
                body[key] = value
        return body

    def part(self, part: email.message.Message, where: str) -> email.message.Message:
        encrypted = _encryption_of(part)
        if encrypted:
            return self.encrypted(part, where, encrypted)
        ctype = part.get_content_type()
        payload = part.get_payload()
        if ctype == "message/rfc822" or (isinstance(payload, list) and
                                         part.get_content_maintype() == "message"):
            return self.attached_message(part, where)
        if isinstance(payload, list):
            return self.multipart(part, [child for child in payload
                                         if isinstance(child, email.message.Message)], where)
        if self.is_body(part):
            return self.body(part, where)
        return self.attachment(part, where)[0]

    def multipart(self, part: email.message.Message, children: list[email.message.Message],
                  where: str) -> email.message.Message:
        subtype = part.get_content_subtype()
        if subtype == "signed":
            self.ctx.add("signature", where, detail="multipart/signed: the signature does "
                         "not survive cleaning; its parts are kept as a multipart/mixed")
            subtype = "mixed"
        out = MIMEMultipart(subtype if re.fullmatch(r"[a-z0-9.+-]{1,40}", subtype) else "mixed")
        cleaned: dict[int, email.message.Message] = {}
        pictures: dict[str, str] = {}  # content id -> data: URI of the cleaned picture
        # Pictures first: the HTML bodies beside them take them in as data: URIs.
        order = sorted(range(len(children)), key=lambda i: self.is_body(children[i]))
        for i in order:
            child = children[i]
            encrypted = _encryption_of(child)
            if encrypted:
                cleaned[i] = self.encrypted(child, f"{where} part {i + 1}", encrypted)
                continue
            if self.is_body(child):
                cleaned[i] = self.body(child, f"{where} part {i + 1}", pictures)
                continue
            if isinstance(child.get_payload(), list) or \
                    child.get_content_maintype() == "message":
                cleaned[i] = self.part(child, f"{where} part {i + 1}")
                continue
            tnef = self.tnef(child, f"{where} part {i + 1}")
            if tnef is not None:
                cleaned[i] = tnef
                continue
            cleaned[i], picture = self.attachment(child, f"{where} part {i + 1}")
            content_id = _content_id(child)
            if picture and content_id:
                pictures[content_id] = picture
        for i in range(len(children)):
            out.attach(cleaned[i])
        return out

    @staticmethod
    def is_body(part: email.message.Message) -> bool:
        return (part.get_content_type() in ("text/plain", "text/html")
                and not isinstance(part.get_payload(), list)
                and part.get_content_disposition() != "attachment"
                and not part.get_filename())

    # --- bodies --------------------------------------------------------------------------
    def body(self, part: email.message.Message, where: str,
             pictures: dict[str, str] | None = None) -> email.message.Message:
        from sanitas.engine import text, text_encoding

        data = self.decoded(part, where)
        if data is None:
            return self.note(where, "the text body", "its transfer encoding is damaged")
        charset = part.get_content_charset()
        if part.get_content_subtype() == "html":
            decoded: str | None = None
            if charset:
                try:
                    decoded = data.decode(charset, "replace")
                except LookupError:
                    decoded = None
            if decoded is None:
                decoded, _ = text_encoding.decode_markup(data)
            if pictures:
                decoded = _CID.sub(lambda m: pictures.get(m.group(1).strip(), m.group(0)),
                                   decoded)
            inner = Context(mode=self.ctx.mode, policy=self.ctx.policy,
                            workdir=self.ctx.workdir, depth=self.ctx.depth,
                            nested=self.ctx.nested, ocr_languages=self.ctx.ocr_languages,
                            ocr_own_text=self.ctx.ocr_own_text)
            html = text.sanitize_html(decoded, inner)
            for finding in inner.closed_findings():
                self.ctx.record(finding.kind, f"{where} (HTML): {finding.location}",
                                action=finding.action, detail=finding.detail)
            return _text_part(html, "html")
        blocks = mail_inline.find(data)
        if blocks:
            return self.inline_files(data, blocks, charset, where)
        return _text_part(_plain_text(data, charset), "plain")

    def inline_files(self, data: bytes, blocks: list[mail_inline.Block], charset: str | None,
                     where: str) -> email.message.Message:
        """A text body that holds encoded files (uuencode, yEnc, BinHex: mail_inline.py):
        each block is taken out of the text, a line saying so is put in its place, and the
        file is cleaned as an attachment (or replaced by a note saying why it could not be).
        The body becomes a multipart/mixed of the text and those attachments."""
        token = secrets.token_hex(8)
        pieces, position = [], 0
        for i, block in enumerate(blocks):
            pieces += [data[position:block.start], f"[sanitas-{token}-{i}]\n".encode("ascii")]
            position = block.end
        pieces.append(data[position:])
        text = _plain_text(b"".join(pieces), charset)
        files: list[email.message.Message] = []
        for i, block in enumerate(blocks):
            if block.encoding == mail_inline.PGP:
                text = text.replace(f"[sanitas-{token}-{i}]\n",
                                    self.inline_encrypted(block, where))
                continue
            label = _CONTROL.sub("", block.name) or f"unnamed {block.encoding} file"
            location = label if self.ctx.depth == 0 else f"(nested) {label}"
            if i >= mail_inline.MAX_BLOCKS:
                attached = self.removed(location, label, "the text holds more than "
                                        f"{mail_inline.MAX_BLOCKS} encoded files")
            elif block.data is None:
                attached = self.removed(location, label, block.reason)
            else:
                carrier = MIMEBase("application", "octet-stream")
                carrier.set_payload(block.data)
                email.encoders.encode_base64(carrier)
                carrier.add_header("Content-Disposition", "attachment",
                                   filename=_param(label))
                attached, _ = self.attachment(carrier, f"{where} ({block.encoding} file)")
            new_name = _filename(attached)
            self.ctx.add("encoded_attachment", location, action="converted",
                         detail=f"a {block.encoding} file written into the text body: taken "
                                f"out of the text and attached as {new_name}")
            text = text.replace(f"[sanitas-{token}-{i}]",
                                f"[Sanitas took the {block.encoding} file \"{label}\" out of "
                                f"this text: see the attachment {new_name}]")
            files.append(attached)
        if not files:
            return _text_part(text, "plain")
        out = MIMEMultipart("mixed")
        out.attach(_text_part(text, "plain"))
        for attached in files:
            out.attach(attached)
        return out

    # --- encrypted content ---------------------------------------------------------------
    def encrypted(self, part: email.message.Message, where: str,
                  what: str) -> email.message.Message:
        """An encrypted part (S/MIME enveloped data, PGP/MIME): nothing here holds the key, so
        nothing in it can be inspected. The policy's `encryptedContent` holds it back (a note
        takes its place) or passes it as it came, marked as not inspected."""
        location = where if self.ctx.depth == 0 else f"(nested) {where}"
        if self.ctx.policy.passes_encrypted:
            self.ctx.add("encrypted_content", location, action="kept",
                         detail=f"{what} encrypted content: delivered unchanged and not "
                                "inspected (the policy passes encrypted content)")
            return _content_copy(part)
        self.ctx.add("encrypted_content", location, action="removed",
                     detail=f"{what} encrypted content cannot be inspected: held back, "
                            "a note takes its place")
        return _text_part(f"Sanitas held back {what} encrypted content here: it cannot be "
                          "read without the recipient's key, so it could not be checked and "
                          "was not delivered. Ask your mail administrator for the original "
                          "message.\n", "plain")

    def encrypted_file(self, part: email.message.Message, data: bytes, location: str,
                       label: str, reason: str) -> email.message.Message:
        """An attached file no password opened (an encrypted PDF, Office file or archive):
        held back with a note, or passed as it came, as the policy says."""
        from sanitas.engine import safe_output_name
        from sanitas.engine.detect import extension_of

        if not self.ctx.policy.passes_encrypted:
            self.ctx.add("encrypted_content", location, action="removed",
                         detail=f"{reason} Held back: a note takes its place.")
            return self.note(location, label, f"{reason} It was held back.")
        self.ctx.add("encrypted_content", location, action="kept",
                     detail=f"{reason} Delivered unchanged and not inspected.")
        ctype = part.get_content_type()
        maintype, _, subtype = (ctype if re.fullmatch(r"[a-z0-9.+-]{1,40}/[a-z0-9.+-]{1,80}",
                                                      ctype) else "application/octet-stream"
                                ).partition("/")
        extension = extension_of(label)
        out = MIMEBase(maintype, subtype)
        out.set_payload(data)
        email.encoders.encode_base64(out)
        new_name = safe_output_name(label, extension if re.fullmatch(r"[a-z0-9]{1,10}",
                                                                     extension) else "bin")
        out.add_header("Content-Disposition", "attachment", filename=_param(new_name))
        out.set_param("name", cast(str, _param(new_name)))
        return out

    def inline_encrypted(self, block: mail_inline.Block, where: str) -> str:
        """An OpenPGP message written into a text body: the armored block as it came when the
        policy passes encrypted content, else a line saying it was held back."""
        location = f"{where} (PGP message)"
        if self.ctx.depth:
            location = f"(nested) {location}"
        if self.ctx.policy.passes_encrypted:
            self.ctx.add("encrypted_content", location, action="kept",
                         detail="an OpenPGP message written into the text: delivered "
                                "unchanged and not inspected")
            return (block.data or b"").decode("ascii", "replace")
        self.ctx.add("encrypted_content", location, action="removed",
                     detail="an OpenPGP message written into the text cannot be inspected: "
                            "held back")
        return ("[Sanitas held back an encrypted PGP message here: it cannot be read without "
                "the recipient's key, so it could not be checked. Ask your mail administrator "
                "for the original message.]\n")

    # --- attachments ---------------------------------------------------------------------
    def attachment(self, part: email.message.Message, where: str,
                   ) -> tuple[email.message.Message, str | None]:
        """The cleaned copy of one attached file, or the note that replaces it; with the
        `data:` URI of a cleaned picture (for HTML bodies that show it)."""
        from sanitas.engine import decrypt, nested, safe_output_name, sanitize_detected
        from sanitas.engine.detect import extension_of

        name = _filename(part)
        label = name or f"unnamed {part.get_content_type()} part"
        location = label if self.ctx.depth == 0 else f"(nested) {label}"
        data = self.decoded(part, where)
        if data is None:
            return self.removed(location, label, "its transfer encoding is damaged "
                                "(malformed base64)"), None
        if not data:
            return self.removed(location, label, "it is empty"), None
        assert self.ctx.workdir is not None
        self.index += 1
        work = self.ctx.workdir / f"mail-{self.ctx.depth}-{self.ctx.nested.count}-{self.index}"
        work.mkdir()
        source, output = work / "in", work / "out"
        source.write_bytes(data)
        opened = source
        try:
            inner = nested.nested_context(self.ctx, len(data), mode=self.ctx.mode)
            opened, detected = decrypt.detect_opening(source, name or None, inner)
            extension = sanitize_detected(opened, output, detected, inner)
        except Refused:
            raise
        except Rejected as exc:
            if exc.code.value in ENCRYPTED_CODES:
                return self.encrypted_file(part, data, location, label, exc.reason), None
            return self.removed(location, label, exc.reason), None
        except (MemoryError, RecursionError):
            raise
        except Exception:  # noqa: BLE001 - one bad attachment must not sink the message
            return self.removed(location, label, "it could not be made safe (damaged or "
                                "unsupported content)"), None
        finally:
            source.unlink(missing_ok=True)
            opened.unlink(missing_ok=True)
        for finding in inner.closed_findings():
            self.ctx.record(finding.kind, f"{location}: {finding.location}",
                            action=finding.action, detail=finding.detail)
        cleaned = output.read_bytes()
        output.unlink()
        new_name = safe_output_name(name or "attachment", extension)
        if name and extension_of(name) != extension:
            was = f".{extension_of(name)}" if extension_of(name) else "no extension"
            self.ctx.add("renamed", location, action="converted",
                         detail=f"attached as {new_name} (was {was}; the content is now "
                                f".{extension})")
        from sanitas.engine.formats import OUTPUTS

        media_type = OUTPUTS[extension].media_type.split(";")[0]
        maintype, _, subtype = media_type.partition("/")
        out = MIMEBase(maintype, subtype)
        out.set_payload(cleaned)
        email.encoders.encode_base64(out)
        disposition = "inline" if part.get_content_disposition() == "inline" else "attachment"
        out.add_header("Content-Disposition", disposition, filename=_param(new_name))
        out.set_param("name", cast(str, _param(new_name)))  # a tuple is written as RFC 2231
        content_id = _content_id(part)
        if content_id:
            out["Content-ID"] = f"<{content_id}>"
        picture = None
        if extension in _IMAGE_OUTPUTS:
            picture = (f"data:{_IMAGE_OUTPUTS[extension]};base64,"
                       + base64.b64encode(cleaned).decode("ascii"))
        return out, picture

    def tnef(self, part: email.message.Message, where: str) -> email.message.Message | None:
        """A TNEF attachment (application/ms-tnef, winmail.dat: Outlook's rich text format)
        unpacked in place: its body and attachments become parts of this message, cleaned
        like the others. None when the part is not TNEF."""
        from sanitas.engine import outlook

        declared = part.get_content_type() in ("application/ms-tnef", "application/vnd.ms-tnef")
        data = self.decoded(part, where)
        if data is None or not (outlook.is_tnef(data) or declared):
            return None
        label = _filename(part) or "winmail.dat"
        location = label if self.ctx.depth == 0 else f"(nested) {label}"
        try:
            unpacked, removed = outlook.tnef_to_mime(data)
        except Rejected as exc:
            return self.removed(location, label, exc.reason)
        for name, why in removed:
            self.ctx.add("archive_member", f"{location}: {name[:200]}", action="removed",
                         detail=why)
        self.ctx.add("legacy_format", location, action="converted",
                     detail="TNEF (winmail.dat) unpacked: its body and attachments are cleaned "
                     "as parts of the message")
        return self.part(unpacked, f"{where} (TNEF)")

    def attached_message(self, part: email.message.Message,
                         where: str) -> email.message.Message:
        """A `message/rfc822` part: cleaned as a message one level deeper."""
        from sanitas.engine import nested

        payload = part.get_payload()
        inner_message = payload[0] if isinstance(payload, list) and payload else None
        label = _filename(part) or "attached message"
        location = label if self.ctx.depth == 0 else f"(nested) {label}"
        if not isinstance(inner_message, email.message.Message):
            return self.removed(location, label, "it holds no readable message")
        data = inner_message.as_bytes(policy=email.policy.compat32)
        try:
            inner = nested.nested_context(self.ctx, len(data), mode=self.ctx.mode)
            cleaned = _Cleaner(inner).message(inner_message)
        except Refused:
            raise
        except Rejected as exc:
            return self.removed(location, label, exc.reason)
        for finding in inner.closed_findings():
            self.ctx.record(finding.kind, f"{location}: {finding.location}",
                            action=finding.action, detail=finding.detail)
        out = MIMEBase("message", "rfc822")
        out.set_payload([cleaned])
        if part.get_content_disposition() == "attachment":
            out.add_header("Content-Disposition", "attachment",
                           filename=_param(_filename(part) or "message.eml"))
        return out

    def decoded(self, part: email.message.Message, where: str) -> bytes | None:
        """The part's content, or None when its transfer encoding is damaged."""
        before = len(part.defects)
        data = part.get_payload(decode=True)
        if any(isinstance(d, BASE64_DEFECTS) for d in part.defects[before:]):
            return None
        return data if isinstance(data, bytes) else b""

    def removed(self, location: str, label: str, reason: str) -> email.message.Message:
        self.ctx.add("archive_member", location, action="removed", detail=reason)
        return self.note(location, label, reason)

    @staticmethod
    def note(location: str, label: str, reason: str) -> email.message.Message:
        from sanitas.engine import safe_output_name

        note = _text_part(f"Sanitas removed the attachment \"{label[:200]}\": {reason}\n",
                          "plain")
        note.add_header("Content-Disposition", "attachment",
                        filename=_param(safe_output_name(label, "removed.txt")))
        return note

    # --- headers -------------------------------------------------------------------------
    def headers(self, message: email.message.Message) -> list[tuple[str, _Value]]:
        kept: list[tuple[str, _Value]] = []
        removed: dict[tuple[str, str], int] = {}
        keep_meta = self.ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP
        keep_receipts = self.ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP
        for name, raw in message.items():
            lower = name.lower().strip()
            if lower in CONTENT_HEADERS:
                continue
            if lower in KEPT_HEADERS:
                value = _header_value(lower, str(raw))
                if value is not None:
                    kept.append((_canonical(lower), value))
                continue
            if not re.fullmatch(r"[!-9;-~]{1,100}", name):
                removed[("structure", "malformed header field name")] = 1
                continue
            if lower in SIGNATURE_HEADERS:
                kind, keep = "signature", False
            elif lower in RECEIPT_HEADERS:
                kind, keep = "external_reference", keep_receipts
            else:
                kind, keep = "metadata", keep_meta
            if keep:
                value = _header_value(lower, str(raw))
                if value is not None:
                    kept.append((name, value))
                    self.ctx.add(kind, f"header {name[:60]}", action="kept")
                continue
            removed[(kind, name[:60])] = removed.get((kind, name[:60]), 0) + 1
        for (kind, name), count in sorted(removed.items()):
            self.ctx.add(kind, f"header {name}", action="removed",
                         detail=f"{count} field(s)" if kind != "structure" else "")
        return kept


def _text_part(text: str, subtype: str) -> email.message.Message:
    """A text part in UTF-8, quoted-printable."""
    part = MIMENonMultipart("text", subtype, charset="utf-8")
    part.set_payload(text, _UTF8_QP)
    return part


def _plain_text(data: bytes, charset: str | None) -> str:
    """A plain-text body's bytes as text: in its declared charset, else the one guessed."""
    from sanitas.engine import text_encoding

    if charset:
        try:
            return data.decode(charset, "replace").replace("\x00", "")
        except LookupError:
            pass
    return text_encoding.decode(data)[0].replace("\x00", "")


def _canonical(lower: str) -> str:
    return {"message-id": "Message-ID", "cc": "Cc", "bcc": "Bcc"}.get(
        lower, "-".join(w.capitalize() for w in lower.split("-")))


def _decode_header(raw: str) -> str:
    """A header value as text: encoded words decoded, 8-bit bytes read as UTF-8."""
    try:
        value = str(email.header.make_header(email.header.decode_header(raw)))
    except (email.errors.HeaderParseError, LookupError, ValueError, UnicodeError):
        value = raw
    value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _CONTROL.sub(" ", value.replace("\r\n", " ").replace("\n", " ")).strip()


def _header_value(lower: str, raw: str) -> _Value | None:
    value = _decode_header(raw)
    if not value:
        return None
    if lower in ID_HEADERS:
        ascii_only = value.encode("ascii", "ignore").decode("ascii")
        return ascii_only or None
    if lower in ADDRESS_HEADERS:
        return _addresses(lower, raw, value)
    if value.isascii():
        return value
    return email.header.Header(value, _UTF8_QP, header_name=lower)


def _addresses(lower: str, raw: str, decoded: str) -> _Value | None:
    """An address field rebuilt from the addresses it holds, each display name decoded and
    quoted again, so that a name can neither split into two addresses nor pass for a field of
    its own. A value with no address is kept only when it is names alone, with no character
    that could make a reader take a part of it for an address or a field (`Bob, Carol`), or
    an empty group (`undisclosed-recipients:;`); anything else is None.

    The raw value is parsed before its encoded words are decoded: a comma or a bracket
    inside an encoded display name stays part of the name."""
    flat = _CONTROL.sub(" ", raw.replace("\r\n", " ").replace("\n", " "))
    spelled = []
    for name, address in email.utils.getaddresses([flat]):
        if _plain_address(address):
            spelled.append(email.utils.formataddr((_decode_header(name), address),
                                                  charset="utf-8"))
    if spelled:
        return ", ".join(spelled)
    if not any(c in _ADDRESS_SPECIALS or c == "@" for c in decoded.replace(" ", "").replace(
            ",", "")):
        return decoded if decoded.isascii() else email.header.Header(
            decoded, _UTF8_QP, header_name=lower)  # names alone (an Outlook display list)
    group, colon, rest = decoded.partition(":")
    if colon and rest.strip() == ";" and _EMPTY_GROUP_NAME.fullmatch(group.strip()):
        return f"{group.strip()}:;"
    return None


_EMPTY_GROUP_NAME = re.compile(r"[A-Za-z0-9 ._-]{1,64}")
_ADDRESS_SPECIALS = frozenset('()<>[]:;,\\" \t')


def _plain_address(address: str) -> bool:
    """An ASCII addr-spec with one `@` and no specials or spaces (the output is 7-bit)."""
    local, at, domain = address.partition("@")
    return (bool(local) and bool(at) and bool(domain) and len(address) <= 254
            and address.isascii() and "@" not in domain
            and not any(c in _ADDRESS_SPECIALS or c < " " or c == "\x7f" for c in address))


def _filename(part: email.message.Message) -> str:
    """The name a part declares (RFC 2231 and RFC 2047 spellings decoded), cleaned of control
    characters; "" when it has none."""
    try:
        name = part.get_filename() or ""
    except (LookupError, ValueError, UnicodeError):
        name = ""
    if "=?" in name:
        name = _decode_header(name)
    name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _CONTROL.sub("", name).strip()[:255]


def _param(value: str) -> str | tuple[str, str, str]:
    """A parameter value: as it is when ASCII, else RFC 2231 (UTF-8)."""
    return value if value.isascii() else ("utf-8", "", value)


def _content_id(part: email.message.Message) -> str:
    raw = str(part.get("Content-ID", "")).strip()
    value = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    return value if re.fullmatch(r"[!-~]{1,250}", value) and "<" not in value \
        and ">" not in value else ""


def verify(path: Path, spec: Output) -> None:
    """Re-open a produced message: UTF-8 text (in fact ASCII) that the email package parses
    back without a defect, within the limits."""
    from sanitas.engine import verify as checks

    checks.text(path, spec)
    data = path.read_bytes()
    check_limits(data)
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    _check_tree(message)
    for part in message.walk():
        if part.defects:
            raise checks.Invalid(f"the message does not parse back cleanly: {part.defects!r}")
