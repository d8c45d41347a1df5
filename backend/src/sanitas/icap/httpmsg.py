"""The encapsulated HTTP message's head: split into its start line and header fields (bounded,
order kept), edited, and written back. The body is never looked at here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from sanitas.icap.protocol import IcapError

MAX_HTTP_HEADERS = 200
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# filename="..." or filename=token in a Content-Disposition value (no nested quantifiers).
_FILENAME = re.compile(r'filename\s*=\s*(?:"([^"]{0,1000})"|([^;\s]{1,1000}))', re.IGNORECASE)
# filename*=charset'language'percent-encoded (RFC 6266, 8187): what browsers prefer.
_FILENAME_EXT = re.compile(r"filename\*\s*=\s*([^;\s]{1,3000})", re.IGNORECASE)


@dataclass
class HttpHead:
    start_line: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    # Stands in for a head the client did not send (RESPMOD without res-hdr, REQMOD without
    # req-hdr): read as "200 OK"/a request with no fields, and never written into an answer.
    synthetic: bool = False

    @classmethod
    def stand_in(cls, as_request: bool) -> HttpHead:
        return cls("POST / HTTP/1.1" if as_request else "HTTP/1.1 200 OK", [], synthetic=True)

    @classmethod
    def parse(cls, raw: bytes, what: str) -> HttpHead:
        if not raw.endswith(b"\r\n\r\n"):
            raise IcapError(400, f"The encapsulated {what} does not end with an empty line.",
                            "bad_http_head")
        lines = raw[:-4].decode("latin-1").split("\r\n")
        if len(lines) - 1 > MAX_HTTP_HEADERS:
            raise IcapError(400, f"The encapsulated {what} has more than {MAX_HTTP_HEADERS} "
                                 "header fields.", "bad_http_head")
        head = cls(start_line=lines[0])
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon or not _TOKEN.fullmatch(name) or any(
                    ord(c) < 0x20 and c != "\t" for c in value):
                raise IcapError(400, f"The encapsulated {what} has a malformed header field.",
                                "bad_http_head")
            head.fields.append((name, value.strip(" \t")))
        return head

    def get(self, name: str) -> str | None:
        name = name.lower()
        values = [v for n, v in self.fields if n.lower() == name]
        return ", ".join(values) if values else None

    def remove(self, *names: str) -> None:
        lowered = {n.lower() for n in names}
        self.fields = [(n, v) for n, v in self.fields if n.lower() not in lowered]

    def set(self, name: str, value: str) -> None:
        self.remove(name)
        self.fields.append((name, value))

    def to_bytes(self) -> bytes:
        lines = [self.start_line] + [f"{n}: {v}" for n, v in self.fields]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    # -- what the server needs to know ---------------------------------------------------
    @property
    def status(self) -> int | None:
        """A response's status code (None for a request or an unreadable line)."""
        parts = self.start_line.split(" ", 2)
        if len(parts) >= 2 and parts[0].startswith("HTTP/") and parts[1].isdigit():
            return int(parts[1][:3])
        return None

    @property
    def method(self) -> str | None:
        parts = self.start_line.split(" ", 2)
        return parts[0] if len(parts) == 3 and parts[2].startswith("HTTP/") else None

    @property
    def target(self) -> str | None:
        parts = self.start_line.split(" ", 2)
        return parts[1] if len(parts) == 3 and parts[2].startswith("HTTP/") else None

    @property
    def content_length(self) -> int | None:
        raw = self.get("content-length")
        if raw is None:
            return None
        raw = raw.split(",")[0].strip()
        return int(raw) if raw.isdigit() and len(raw) <= 18 else None

    @property
    def encodings(self) -> list[str]:
        raw = self.get("content-encoding") or ""
        return [e.strip().lower() for e in raw.split(",") if e.strip()
                and e.strip().lower() != "identity"]

    def filename(self) -> str | None:
        """The name Content-Disposition gives: filename* when present (browsers prefer it),
        else filename."""
        names = self.filenames()
        return names[0] if names else None

    def filenames(self) -> list[str]:
        """Every name Content-Disposition gives: filename* (decoded) first, then filename."""
        raw = (self.get("content-disposition") or "")[:4000]
        names = []
        extended = _FILENAME_EXT.search(raw)
        if extended:
            decoded = decode_rfc5987(extended.group(1).strip('"'))
            if decoded:
                names.append(decoded)
        found = _FILENAME.search(raw)
        if found:
            plain = found.group(1) if found.group(1) is not None else found.group(2)
            if plain:
                names.append(plain)
        return names


def decode_rfc5987(value: str) -> str | None:
    """charset'language'percent-encoded (RFC 8187), as filename* carries a name."""
    charset, sep, rest = value.partition("'")
    _language, sep2, encoded = rest.partition("'")
    if not sep or not sep2:
        return None
    try:
        return unquote(encoded, encoding=charset.strip() or "utf-8", errors="replace")
    except LookupError:
        return unquote(encoded, encoding="latin-1")


def name_from_url(target: str | None) -> str | None:
    """The last path segment of a request target (absolute or origin form), unquoted."""
    if not target:
        return None
    try:
        path = urlsplit(target[:4000]).path
    except ValueError:
        return None
    last = unquote(path.rsplit("/", 1)[-1])
    return last or None
