"""ICAP/1.0 (RFC 3507) on the wire: the request head, the Encapsulated sections, the chunked
body (preview included) and the responses. Every read is bounded: the request head and each
chunk-size line by the stream's limit, the encapsulated HTTP heads by `MAX_HTTP_HEAD`, the
body by the caller's byte budget; each read waits at most the connection's timeout.

Nothing here looks inside the encapsulated HTTP message beyond its head (httpmsg.py splits
that); the body is only copied."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

MAX_ICAP_HEAD = 16 * 1024  # request line and ICAP headers (also the stream reader's limit)
MAX_ICAP_HEADERS = 64
MAX_HTTP_HEAD = 64 * 1024  # the encapsulated req-hdr and res-hdr together
MAX_PREVIEW = 1024 * 1024  # a client's Preview header above this is refused
READ_PIECE = 64 * 1024  # a chunk's data is copied in pieces of at most this many bytes
METHODS = ("OPTIONS", "REQMOD", "RESPMOD")
HEAD_SECTIONS = ("req-hdr", "res-hdr")
BODY_SECTIONS = ("req-body", "res-body", "null-body", "opt-body")
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX = frozenset("0123456789abcdefABCDEF")
T = TypeVar("T")


class IcapError(Exception):
    """A request the server answers with an ICAP error status. `close`: the connection is out
    of step (or the client misbehaved) and is closed after the answer."""

    def __init__(self, status: int, message: str, code: str, *, close: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.close = close


class ConnectionDone(Exception):
    """The client closed the connection between requests (not an error)."""


REASONS = {100: "Continue", 200: "OK", 204: "No Content", 400: "Bad Request",
           404: "ICAP Service Not Found", 405: "Method Not Allowed For Service",
           408: "Request Timeout", 413: "Request Entity Too Large", 500: "Server Error",
           501: "Method Not Implemented", 503: "Service Overloaded",
           505: "ICAP Version Not Supported"}


@dataclass
class IcapRequest:
    method: str
    uri: str
    service: str  # the URI's path, e.g. "/sanitize"
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names; a repeated header's values joined by ", "
    encapsulated: list[tuple[str, int]]
    sections: dict[str, bytes] = field(default_factory=dict)  # req-hdr / res-hdr bytes
    body_kind: str = "null-body"  # req-body, res-body, opt-body or null-body
    preview_eof: bool = False  # the whole body came in the preview (ieof)

    @property
    def has_body(self) -> bool:
        return self.body_kind in ("req-body", "res-body")

    @property
    def preview(self) -> int | None:
        raw = self.headers.get("preview")
        if raw is None:
            return None
        if not raw.isdigit() or len(raw) > 8 or int(raw) > MAX_PREVIEW:
            raise IcapError(400, "The Preview header must be a byte count of at most "
                                 f"{MAX_PREVIEW}.", "bad_preview")
        return int(raw)

    @property
    def allow_204(self) -> bool:
        return "204" in (v.strip() for v in self.headers.get("allow", "").split(","))

    @property
    def may_204(self) -> bool:
        """204 is allowed with Allow: 204, or while answering a preview (RFC 3507, 4.5 and
        4.6): also when the whole body came in it."""
        return self.allow_204 or self.preview_eof

    @property
    def keep_alive(self) -> bool:
        return "close" not in self.headers.get("connection", "").lower()


def _decode_line(raw: bytes, what: str) -> str:
    if any(b < 0x20 and b != 0x09 for b in raw) or 0x7f in raw:
        raise IcapError(400, f"The {what} holds control characters.", "bad_request")
    return raw.decode("latin-1")


def parse_head(raw: bytes) -> IcapRequest:
    """The request line and headers (`raw` ends with the blank line)."""
    lines = raw[:-4].split(b"\r\n")
    if len(lines) - 1 > MAX_ICAP_HEADERS:
        raise IcapError(400, f"More than {MAX_ICAP_HEADERS} ICAP headers.", "bad_request")
    parts = _decode_line(lines[0], "request line").split(" ")
    if len(parts) != 3:
        raise IcapError(400, "The request line must be 'METHOD icap://host/service ICAP/1.0'.",
                        "bad_request")
    method, uri, version = parts
    if version != "ICAP/1.0":
        raise IcapError(505, f"Only ICAP/1.0 is spoken here, not {version[:20]!r}.",
                        "bad_version")
    if method not in METHODS:
        raise IcapError(501, f"The method {method[:20]!r} is not implemented; use OPTIONS, "
                             "REQMOD or RESPMOD.", "bad_method")
    try:
        url = urlsplit(uri)
    except ValueError as exc:
        raise IcapError(400, "The request URI is not a valid icap:// URI.", "bad_uri") from exc
    if url.scheme.lower() not in ("icap", "icaps") or not url.path:
        raise IcapError(400, "The request URI must be icap://host[:port]/service.", "bad_uri")
    try:
        query = parse_qs(url.query, max_num_fields=20, strict_parsing=False)
    except ValueError as exc:
        raise IcapError(400, "The request URI's query has too many fields.", "bad_uri") from exc
    headers: dict[str, str] = {}
    for line in lines[1:]:
        text = _decode_line(line, "header")
        name, colon, value = text.partition(":")
        if not colon or not name or not set(name) <= _TOKEN:
            raise IcapError(400, "A header line is not 'Name: value' (folded or malformed).",
                            "bad_request")
        key = name.lower()
        value = value.strip(" \t")
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    request = IcapRequest(method=method, uri=uri, service=url.path, query=query,
                          headers=headers, encapsulated=[])
    request.encapsulated = parse_encapsulated(headers.get("encapsulated"), method)
    request.body_kind = request.encapsulated[-1][0]
    return request


def parse_encapsulated(raw: str | None, method: str) -> list[tuple[str, int]]:
    """`req-hdr=0, res-hdr=137, res-body=296`: head sections then one body section, offsets
    starting at 0 and increasing, at most MAX_HTTP_HEAD of heads."""
    if raw is None:
        if method == "OPTIONS":
            return [("null-body", 0)]
        raise IcapError(400, "The Encapsulated header is missing.", "bad_encapsulated")
    entries: list[tuple[str, int]] = []
    for item in raw.split(","):
        name, eq, offset = item.strip().partition("=")
        if not eq or not offset.isdigit() or len(offset) > 9:
            raise IcapError(400, "The Encapsulated header must list name=offset pairs.",
                            "bad_encapsulated")
        entries.append((name, int(offset)))
    allowed_heads = {"REQMOD": ("req-hdr",), "RESPMOD": ("req-hdr", "res-hdr"),
                     "OPTIONS": ()}[method]
    allowed_bodies = {"REQMOD": ("req-body", "null-body"),
                      "RESPMOD": ("res-body", "null-body"),
                      "OPTIONS": ("opt-body", "null-body")}[method]
    *heads, body = entries
    names = [name for name, _ in heads]
    if body[0] not in allowed_bodies or any(n not in allowed_heads for n in names) \
            or len(set(names)) != len(names) or names != sorted(names, key=HEAD_SECTIONS.index):
        raise IcapError(400, f"The Encapsulated header's sections do not fit {method}.",
                        "bad_encapsulated")
    if body[0] == "opt-body":
        raise IcapError(400, "OPTIONS bodies are not accepted.", "bad_encapsulated")
    offsets = [offset for _, offset in entries]
    if offsets[0] != 0 or any(b <= a for a, b in itertools.pairwise(offsets)):
        raise IcapError(400, "The Encapsulated offsets must start at 0 and increase.",
                        "bad_encapsulated")
    if offsets[-1] > MAX_HTTP_HEAD:
        raise IcapError(413, f"The encapsulated HTTP headers exceed {MAX_HTTP_HEAD} bytes.",
                        "head_too_large")
    return entries


class Conn:
    """One client connection: bounded, timed reads and buffered writes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 timeout: float) -> None:
        self.reader, self.writer, self.timeout = reader, writer, timeout

    async def _wait(self, coro: Awaitable[T]) -> T:
        try:
            return await asyncio.wait_for(coro, self.timeout)
        except TimeoutError as exc:
            raise IcapError(408, "The client sent nothing for too long.", "timeout") from exc
        except asyncio.LimitOverrunError as exc:
            raise IcapError(400, f"A line of the request exceeds {MAX_ICAP_HEAD} bytes.",
                            "head_too_large") from exc
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise ConnectionDone from exc
            raise IcapError(400, "The client closed the connection mid-request.",
                            "truncated") from exc

    async def read_request(self) -> IcapRequest:
        try:
            # Between requests a kept-alive connection may idle: past the timeout it is
            # closed without an answer (a proxy reopens one when it needs it).
            raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), self.timeout)
        except TimeoutError as exc:
            raise ConnectionDone from exc
        except asyncio.LimitOverrunError as exc:
            raise IcapError(400, f"The request head exceeds {MAX_ICAP_HEAD} bytes.",
                            "head_too_large") from exc
        except asyncio.IncompleteReadError as exc:
            if not exc.partial.strip():
                raise ConnectionDone from exc
            raise IcapError(400, "The client closed the connection mid-request.",
                            "truncated") from exc
        except ValueError as exc:  # readuntil's limit (asyncio raises ValueError past it)
            raise IcapError(400, f"The request head exceeds {MAX_ICAP_HEAD} bytes.",
                            "head_too_large") from exc
        request = parse_head(raw)
        previous: tuple[str, int] | None = None
        for name, offset in request.encapsulated:
            if previous is not None:
                request.sections[previous[0]] = await self.read_exactly(offset - previous[1])
            previous = (name, offset)
        return request

    async def read_exactly(self, n: int) -> bytes:
        return bytes(await self._wait(self.reader.readexactly(n)))

    async def _read_line(self) -> bytes:
        try:
            return bytes(await self._wait(self.reader.readuntil(b"\r\n")))
        except ValueError as exc:
            raise IcapError(400, "A chunk-size line is too long.", "bad_chunk") from exc

    async def chunks(self) -> AsyncIterator[tuple[bytes, bool]]:
        """The pieces of one chunked body up to its last chunk; the final item is (b"", ieof)
        where `ieof` says the last chunk carried the `ieof` extension."""
        while True:
            line = (await self._read_line())[:-2]
            size_text, _, ext = line.partition(b";")
            size_text = size_text.strip(b" \t")
            if not size_text or len(size_text) > 8 or not set(size_text.decode("latin-1")) <= _HEX:
                raise IcapError(400, "A chunk size is not a hexadecimal number of at most 8 "
                                     "digits.", "bad_chunk")
            size = int(size_text, 16)
            if size == 0:
                if await self.read_exactly(2) != b"\r\n":
                    raise IcapError(400, "The last chunk must be followed by an empty line "
                                         "(no trailers).", "bad_chunk")
                yield b"", ext.strip(b" \t").lower() == b"ieof"
                return
            left = size
            while left:
                piece = await self.read_exactly(min(left, READ_PIECE))
                left -= len(piece)
                yield piece, False
            if await self.read_exactly(2) != b"\r\n":
                raise IcapError(400, "A chunk's data is not followed by CRLF.", "bad_chunk")

    async def gone(self, every: float = 0.25) -> None:
        """Return once the client has closed or dropped the connection (its end of file, or
        the transport closing). Polled: asyncio has no public way to wait for a peer's end of
        file without reading what may come before it. A client that only shuts its sending
        side counts as gone too: ICAP clients keep the connection whole for the answer."""
        while not (self.reader.at_eof() or self.writer.is_closing()):
            await asyncio.sleep(every)

    def write(self, data: bytes) -> None:
        self.writer.write(data)

    async def drain(self) -> None:
        try:
            await asyncio.wait_for(self.writer.drain(), self.timeout)
        except TimeoutError as exc:
            raise ConnectionDone from exc


def header_value(text: str) -> str:
    """A value safe in a header line: printable ASCII, no CR/LF, bounded."""
    return "".join(c if 0x20 <= ord(c) < 0x7f else "?" for c in text)[:400]


def response_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"ICAP/1.0 {status} {REASONS.get(status, 'Unknown')}"]
    lines += [f"{name}: {header_value(value)}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


LAST_CHUNK = b"0\r\n\r\n"
