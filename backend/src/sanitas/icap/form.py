"""multipart/form-data bodies (browser uploads) under ICAP: split into their parts with
python-multipart's push parser, each part's bytes written to its own file (bounded: parts,
part headers, and the body size the server already limits), and put back together with the
same boundary once some file parts were replaced."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header

from sanitas.files.multipart import clean_filename

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

MAX_PARTS = 1000
MAX_PART_HEADERS = 16  # header lines in one part
MAX_PART_HEADER_BYTES = 8 * 1024  # one part header line
# RFC 2046 5.1.1: 1 to 70 characters of this set, not ending with a space.
_BOUNDARY = re.compile(rb"[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]")


class FormError(Exception):
    """The body is not a form this server can split (`code` says why)."""

    def __init__(self, reason: str, code: str = "malformed_form") -> None:
        super().__init__(reason)
        self.reason, self.code = reason, code


def boundary_of(content_type: str) -> bytes | None:
    """The boundary of a `multipart/form-data` Content-Type (None: another type); FormError
    when a form's boundary is missing or not a valid one."""
    kind, params = parse_options_header(content_type[:2000])
    if kind != b"multipart/form-data":
        return None
    boundary = params.get(b"boundary")
    if not boundary:
        raise FormError("the form's Content-Type gives no boundary")
    if not _BOUNDARY.fullmatch(boundary):
        raise FormError("the form's boundary is not valid (RFC 2046: 1 to 70 letters, "
                        "digits or '()+_,-./:=? characters)")
    return boundary


@dataclass
class Part:
    headers: list[tuple[bytes, bytes]]  # name, value: as received, in order
    path: Path  # the part's bytes
    filename: str | None = None  # the filename parameter (None: a field, not a file)
    size: int = 0
    sha256: str = ""

    @property
    def is_file(self) -> bool:
        return self.filename is not None

    @property
    def blank(self) -> bool:
        """What a browser sends for a file input left empty: no name, no bytes."""
        return self.filename == "" and self.size == 0

    @property
    def content_type(self) -> str | None:
        """The part's own Content-Type header (the first one)."""
        return next((v.decode("latin-1") for n, v in self.headers
                     if n.lower() == b"content-type"), None)

    @property
    def name(self) -> str:
        """The file name as the engine and the audit see it (cleaned)."""
        return clean_filename(self.filename)

    def replace(self, output: Path, media_type: str, new_filename: str | None) -> None:
        """The part's body becomes `output`, its Content-Type `media_type` and, when given,
        its filename `new_filename`; a Content-Length of the part no longer holds."""
        self.path, self.size = output, output.stat().st_size
        headers: list[tuple[bytes, bytes]] = []
        typed = False
        for name, value in self.headers:
            lowered = name.lower()
            if lowered == b"content-length":
                continue
            if lowered == b"content-type":
                if typed:
                    continue
                value, typed = media_type.encode("latin-1"), True
            elif lowered == b"content-disposition" and new_filename is not None:
                value = _with_filename(value, new_filename)
            headers.append((name, value))
        if not typed:
            headers.append((b"Content-Type", media_type.encode("latin-1")))
        self.headers = headers


def _quote(value: bytes) -> bytes:
    """A parameter value quoted as browsers do for form-data (WHATWG HTML: '"', CR and LF
    percent-encoded)."""
    return b'"' + value.replace(b'"', b"%22").replace(b"\r", b"%0D").replace(b"\n", b"%0A") \
        + b'"'


def _with_filename(disposition: bytes, filename: str) -> bytes:
    """A Content-Disposition value with its filename parameter replaced (other parameters
    kept in order; the extended filename* form, which RFC 7578 forbids, dropped)."""
    kind, params = parse_options_header(disposition.decode("latin-1"))
    params[b"filename"] = filename.encode("utf-8")
    return b"; ".join([kind, *(key + b"=" + _quote(value) for key, value in params.items())])


@dataclass
class _Splitter:
    folder: Path
    parts: list[Part] = field(default_factory=list)
    _field: bytearray = field(default_factory=bytearray)
    _value: bytearray = field(default_factory=bytearray)
    _current: Part | None = None
    _fh: IO[bytes] | None = None
    _digest: hashlib._Hash = field(default_factory=hashlib.sha256)

    def on_part_begin(self) -> None:
        if len(self.parts) >= MAX_PARTS:
            raise FormError(f"the form has more than {MAX_PARTS} parts", "too_many_parts")
        self._current = Part(headers=[], path=self.folder / f"part{len(self.parts)}")
        self.parts.append(self._current)

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def on_header_end(self) -> None:
        assert self._current is not None
        self._current.headers.append((bytes(self._field), bytes(self._value)))
        self._field.clear()
        self._value.clear()

    def on_headers_finished(self) -> None:
        part = self._current
        assert part is not None
        disposition = next((v for n, v in part.headers if n.lower() == b"content-disposition"),
                           None)
        if disposition is None:
            raise FormError(f"part {len(self.parts)} of the form has no Content-Disposition")
        _kind, params = parse_options_header(disposition.decode("latin-1"))
        filename = params.get(b"filename")
        part.filename = filename.decode("utf-8", "replace") if filename is not None else None
        self._fh = open(part.path, "wb")  # noqa: SIM115 - closed in on_part_end or close()
        self._digest = hashlib.sha256()

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._fh is None or self._current is None:
            raise FormError("the form has data outside its parts")
        self._fh.write(data[start:end])
        self._digest.update(data[start:end])
        self._current.size += end - start

    def on_part_end(self) -> None:
        if self._fh is None or self._current is None:
            raise FormError(f"part {len(self.parts)} of the form has no headers")
        self._fh.close()
        self._fh = None
        self._current.sha256 = self._digest.hexdigest()
        self._current = None

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def split(source: Path, boundary: bytes, folder: Path) -> list[Part]:
    """The parts of the form in `source`, their bytes written under `folder` (created).
    FormError when the body is not a complete, well-formed form within the bounds."""
    folder.mkdir(parents=True, exist_ok=True)
    splitter = _Splitter(folder)
    callbacks: MultipartCallbacks = {
        "on_part_begin": splitter.on_part_begin, "on_part_data": splitter.on_part_data,
        "on_part_end": splitter.on_part_end, "on_header_field": splitter.on_header_field,
        "on_header_value": splitter.on_header_value, "on_header_end": splitter.on_header_end,
        "on_headers_finished": splitter.on_headers_finished}
    parser = MultipartParser(boundary, callbacks, max_header_count=MAX_PART_HEADERS,
                             max_header_size=MAX_PART_HEADER_BYTES)
    try:
        with open(source, "rb") as fh:
            while data := fh.read(256 * 1024):
                parser.write(data)
        parser.finalize()
    except MultipartParseError as exc:
        raise FormError(f"the form is malformed: {exc}") from exc
    finally:
        splitter.close()
    if parser.state != MultipartState.END:
        raise FormError("the form ends before its closing boundary (truncated)")
    return splitter.parts


def assemble(parts: list[Part], boundary: bytes, target: Path) -> int:
    """Write the form made of `parts` with `boundary` to `target`; its size."""
    with open(target, "wb") as out:
        for part in parts:
            out.write(b"--" + boundary + b"\r\n")
            for name, value in part.headers:
                out.write(name + b": " + value + b"\r\n")
            out.write(b"\r\n")
            with open(part.path, "rb") as fh:
                while data := fh.read(256 * 1024):
                    out.write(data)
            out.write(b"\r\n")
        out.write(b"--" + boundary + b"--\r\n")
    return target.stat().st_size
