"""Streaming multipart/form-data reader for uploads.

Starlette's `request.form()` would accept any size before we could count; here the body is
parsed chunk by chunk from `request.stream()` with python-multipart's push parser, each file
part is written straight to a temporary file on disk, and the upload is refused (413) as soon
as one file passes the caller's limit, without reading the rest of the body. Memory use is one
network chunk per request, whatever the upload size.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from sanitas.datadir.diskspace import is_short, room
from sanitas.datadir.scratch import hold
from sanitas.web.errors import ApiError, insufficient_storage, is_out_of_space, printable
from sanitas.web.validation import clean_label, text_problem

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

MAX_FIELD_SIZE = 4096  # plain (non-file) form fields: mode, password (1024 characters)
MAX_FIELDS = 20
MAX_HEADER_BYTES = 8 * 1024  # one part header line
MAX_PART_HEADERS = 16
MB = 1024 * 1024


@dataclass
class ReceivedFile:
    field: str
    name: str  # cleaned original name
    path: Path
    size: int = 0
    sha256: str = ""  # hex digest of the bytes received, computed as they stream to disk
    lock_fd: int = -1  # holds the file as in use against the scratch sweep (scratch.py)

    def release(self) -> None:
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1


@dataclass
class Received:
    files: list[ReceivedFile] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)

    def cleanup(self) -> None:
        for f in self.files:
            f.path.unlink(missing_ok=True)
            f.release()


def clean_filename(raw: str | None) -> str:
    """The name a person gave the file: no directories, no control characters, no invisible
    format characters (a right-to-left override shows "invoice\u202efdp.exe" as
    "invoiceexe.pdf"; see `strip_invisible`), at most 255 characters (keeping the extension).
    Never used as a path on the server."""
    # Browsers escape '"' and line breaks in form-data names as %22, %0A, %0D (WHATWG).
    name = (raw or "").replace("%22", '"').replace("%0A", "").replace("%0D", "")
    name = clean_label(re.split(r"[\\/]", unicodedata.normalize("NFC", name))[-1])
    if name.strip(".") == "":
        return "file"
    if len(name) > 255:
        stem, dot, ext = name.rpartition(".")
        name = (stem[: 254 - len(ext)] + dot + ext) if dot and len(ext) < 20 else name[:255]
    return name


def _human(size: int) -> str:
    if size >= MB and size % MB == 0:
        return f"{size // MB} MB"
    if size >= MB:
        return f"{size / MB:.1f} MB"
    return f"{size // 1024} KB" if size >= 1024 else f"{size} bytes"


class _Reader:
    def __init__(self, *, file_fields: set[str], max_file_size: int, max_files: int,
                 tmp_dir: Path) -> None:
        self.file_fields, self.max_file_size = file_fields, max_file_size
        self.max_files, self.tmp_dir = max_files, tmp_dir
        self.out = Received()
        self._header_field = bytearray()
        self._header_value = bytearray()
        self._headers: dict[str, str] = {}
        self._fh: IO[bytes] | None = None  # open while _current is
        self._current: ReceivedFile | None = None
        self._hash = hashlib.sha256()  # of the current file part (hashing is not parsing)
        self._field_name: str | None = None
        self._field_value = bytearray()
        self.error: ApiError | None = None

    # python-multipart callbacks ------------------------------------------------------------
    def on_part_begin(self) -> None:
        self._headers = {}
        self._current, self._field_name = None, None
        self._field_value = bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_field += data[start:end]
        self._check_header()

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]
        self._check_header()

    def _check_header(self) -> None:
        if len(self._header_field) + len(self._header_value) > MAX_HEADER_BYTES:
            raise ApiError(400, "Malformed multipart upload: a part header is too long.")

    def on_header_end(self) -> None:
        if len(self._headers) >= MAX_PART_HEADERS:
            raise ApiError(400, "Malformed multipart upload: too many part headers.")
        key = bytes(self._header_field).decode("latin-1").strip().lower()
        # latin-1 keeps the raw bytes one-to-one; names are decoded as UTF-8 below
        self._headers[key] = bytes(self._header_value).decode("latin-1")
        self._header_field.clear()
        self._header_value.clear()

    def on_headers_finished(self) -> None:
        _disp, options = parse_options_header(self._headers.get("content-disposition", ""))
        name = options.get(b"name", b"").decode("latin-1")
        filename = options.get(b"filename")
        if filename is None:
            if len(self.out.fields) >= MAX_FIELDS:
                raise ApiError(400, "Too many form fields in the upload.")
            self._field_name = name
            return
        filename_text = filename.decode("utf-8", errors="replace")
        if name not in self.file_fields:
            expected = " or ".join(f"'{f}'" for f in sorted(self.file_fields))
            raise ApiError(400, f"Unexpected file field '{name}'; send files as {expected}.")
        if len(self.out.files) >= self.max_files:
            raise ApiError(400, f"Too many files: at most {self.max_files} per upload for "
                                f"your account.", "too_many_files")
        fd, path = tempfile.mkstemp(dir=self.tmp_dir, prefix="upload-")
        try:
            lock = hold(fd)
        except BaseException:
            os.close(fd)
            os.unlink(path)
            raise
        self._fh = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self._current = ReceivedFile(field=name, name=clean_filename(filename_text),
                                     path=Path(path), lock_fd=lock)
        self.out.files.append(self._current)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        n = end - start
        if self._current is not None:
            assert self._fh is not None  # opened with _current in on_headers_finished
            self._current.size += n
            if self._current.size > self.max_file_size:
                raise ApiError(413, f'"{self._current.name}" is larger than the '
                                    f"{_human(self.max_file_size)} limit for your account.",
                               "file_too_large")
            self._fh.write(data[start:end])
            self._hash.update(data[start:end])
        elif self._field_name is not None:
            if len(self._field_value) + n > MAX_FIELD_SIZE:
                raise ApiError(400, f"Form field '{self._field_name}' is too long.")
            self._field_value += data[start:end]

    def on_part_end(self) -> None:
        if self._current is not None:
            assert self._fh is not None  # opened with _current in on_headers_finished
            self._fh.close()
            self._fh = None
            self._current.sha256 = self._hash.hexdigest()
            self._current = None
        elif self._field_name is not None:
            value = bytes(self._field_value).decode("utf-8", errors="replace")
            problem = text_problem(value)  # a NUL: refused like in any other request string
            if problem is not None:
                raise ApiError(422, f"Invalid request: {printable(self._field_name)}: "
                                    f"{problem}", "validation_error")
            self.out.fields[self._field_name] = value
            self._field_name = None

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            # OSError: e.g. the buffered tail could not be written; the file goes anyway.
            with contextlib.suppress(OSError):
                fh.close()


DISCARD_MAX_BYTES = 256 * MB
DISCARD_MAX_SECONDS = 60.0


async def _discard_body(request: Request) -> None:
    """Read and drop the rest of the body (a bounded amount, in bounded time) before an
    answer that is not the client's fault (507): a server that answers and closes while the
    client is still sending resets the connection, and the client may never see the answer."""
    if getattr(request, "_stream_consumed", False):  # Starlette saw the body's last message
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DISCARD_MAX_SECONDS
    dropped = 0
    try:
        while dropped < DISCARD_MAX_BYTES:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            message = await asyncio.wait_for(request.receive(), remaining)
            if message["type"] != "http.request":
                return
            dropped += len(message.get("body", b""))
            if not message.get("more_body", False):
                return
    except (TimeoutError, ClientDisconnect, RuntimeError):
        return


async def receive_files(request: Request, *, file_fields: set[str], max_file_size: int,
                        max_files: int, tmp_dir: Path, min_free_bytes: int = 0) -> Received:
    """Parse the request body; files land in `tmp_dir`. On any error every temporary file is
    removed and an ApiError is raised. With less than `min_free_bytes` free in `tmp_dir` after
    the body's announced length, or when the disk fills while it is written, 507."""
    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if ctype != b"multipart/form-data" or not boundary:
        raise ApiError(400, "Expected a multipart/form-data upload.", "bad_request")
    length = request.headers.get("content-length")
    if length and length.isdigit() and \
            int(length) > max_files * max_file_size + MB:  # cannot fit: refuse unread
        raise ApiError(413, f"The upload is larger than your account allows "
                            f"({max_files} file(s) of at most {_human(max_file_size)}).",
                       "file_too_large")
    incoming = int(length) if length and length.isdigit() else 0
    try:
        tmp_dir.mkdir(parents=True, exist_ok=True)
        short = min_free_bytes > 0 and is_short(room(tmp_dir), min_free_bytes, incoming)
    except OSError as exc:
        if not is_out_of_space(exc):
            raise
        short = True
    if short:
        await _discard_body(request)
        raise insufficient_storage()
    reader = _Reader(file_fields=file_fields, max_file_size=max_file_size,
                     max_files=max_files, tmp_dir=tmp_dir)
    callbacks: MultipartCallbacks = {
        "on_part_begin": reader.on_part_begin, "on_part_data": reader.on_part_data,
        "on_part_end": reader.on_part_end, "on_header_field": reader.on_header_field,
        "on_header_value": reader.on_header_value, "on_header_end": reader.on_header_end,
        "on_headers_finished": reader.on_headers_finished}
    parser = MultipartParser(boundary, callbacks)
    try:
        async for chunk in request.stream():
            if chunk:
                parser.write(chunk)
        parser.finalize()
        if reader._fh is not None or reader._current is not None:
            raise ApiError(400, "The upload ended before the file was complete.")
    except ApiError:
        reader.close()
        reader.out.cleanup()
        raise
    except (MultipartParseError, ValueError) as exc:
        reader.close()
        reader.out.cleanup()
        raise ApiError(400, f"Malformed multipart upload: {exc}") from exc
    except ClientDisconnect:
        reader.close()
        reader.out.cleanup()
        raise ApiError(400, "The upload was interrupted.") from None
    except OSError as exc:  # writing the temporary file
        reader.close()
        reader.out.cleanup()
        if is_out_of_space(exc):
            await _discard_body(request)
            raise insufficient_storage() from exc
        raise
    except BaseException:
        reader.close()
        reader.out.cleanup()
        raise
    return reader.out
