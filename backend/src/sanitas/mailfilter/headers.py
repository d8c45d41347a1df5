"""The top-level header block of a received message, read outside the sandbox with a bounded
line scan (no email parser, no regular expression): what the filter carries over unchanged
from the original (the trace fields Postfix and the receiving checks wrote) and the plain
values it shows to admins. Everything else about the message is read by the engine, in the
sandbox."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_HEAD_BYTES = 512 * 1024  # the engine's MAX_HEADER_BLOCK_BYTES: a larger block is refused there
# Trace fields carried over as received: the route the message took and the verdicts of the
# receiving checks (SPF, DKIM, DMARC). The engine drops them as metadata; a mail system needs
# them. Signatures (DKIM, ARC) are not carried: they no longer match the cleaned message.
TRACE_FIELDS = frozenset({b"return-path", b"received", b"authentication-results",
                          b"received-spf", b"x-original-to", b"delivered-to"})
SHOWN_MAX = 500


@dataclass
class Head:
    trace: list[bytes] = field(default_factory=list)  # whole fields, folded lines, CRLF ends
    message_id: str | None = None
    subject: str | None = None
    complete: bool = True  # False: no end of the header block within MAX_HEAD_BYTES


def fields(block: bytes) -> list[tuple[bytes, bytes]]:
    """(name, whole field with its continuation lines) of a header block, in order; a line
    that is neither a field nor a continuation ends the block (as the email package does)."""
    out: list[tuple[bytes, bytes]] = []
    for line in block.splitlines(keepends=True):
        if line in (b"\r\n", b"\n"):
            break
        if line[:1] in (b" ", b"\t"):
            if out:
                out[-1] = (out[-1][0], out[-1][1] + line)
            continue
        colon = line.find(b":")
        if colon <= 0 or colon > 100:
            break
        out.append((line[:colon].strip().lower(), line))
    return out


def read(data: bytes) -> Head:
    """The trace fields and shown values of `data`'s top-level header block."""
    window = data[:MAX_HEAD_BYTES]
    end = window.find(b"\n\n")
    end_crlf = window.find(b"\r\n\r\n")
    ends = [e for e in (end, end_crlf) if e >= 0]
    head = Head(complete=bool(ends) or len(data) <= MAX_HEAD_BYTES)
    block = window[:min(ends) + 1] if ends else window
    for name, whole in fields(block):
        if name in TRACE_FIELDS:
            head.trace.append(_crlf(whole))
        elif name == b"message-id" and head.message_id is None:
            head.message_id = shown(whole.split(b":", 1)[1])
        elif name == b"subject" and head.subject is None:
            head.subject = shown(whole.split(b":", 1)[1])
    return head


def names(block: bytes) -> set[bytes]:
    """The (lower-case) names of the fields of a header block."""
    return {name for name, _ in fields(block)}


def shown(raw: bytes) -> str | None:
    """A raw header value as plain printable text for a list (unfolded, control characters and
    non-ASCII bytes replaced, at most SHOWN_MAX characters): never interpreted."""
    text = raw.decode("ascii", "replace").replace("\r", "").replace("\n", "")
    text = "".join(c if " " <= c <= "~" else "?" for c in text).strip()
    return text[:SHOWN_MAX] or None


def _crlf(whole: bytes) -> bytes:
    lines = whole.splitlines()
    return b"".join(line + b"\r\n" for line in lines)
