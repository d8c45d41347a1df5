"""Archives other than ZIP: 7z, RAR (read only), tar, and gzip, bzip2 and xz streams (a tar
inside one, or a single compressed file). They are read with libarchive (libarchive-c over
Debian's libarchive13, in the sandbox like every parser) and come out as a ZIP of their
members, each sanitized by its own family through `nested.add_member`, with the limits and
name rules of ZIP archives (archive.py): at most MAX_DEPTH levels, MAX_MEMBERS members,
MAX_TOTAL_UNCOMPRESSED bytes in all and MAX_MEMBER_UNCOMPRESSED each, the compression ratio
of ZIP, no unsafe or duplicate names, and no links, devices or other special members (the
archive is refused). Nothing is trusted from the headers: every byte is counted as it is
decompressed, and decompression stops at the first limit passed (a gzip bomb stops there,
not after inflating).

Two passes: the first reads only the headers (names, types, declared sizes, encryption,
count) and refuses the archive before any member is sanitized; the second streams each
regular member, bounded, to the scratch folder and hands it to `add_member`.

libarchive cannot decrypt 7z or RAR archives, so an encrypted one is refused as `encrypted`
whether or not a password came with the upload; a split (multi-volume) RAR is refused as
`unsupported_type`, and a truncated one (a 7z's first part among them) as `damaged`.
"""

from __future__ import annotations

import ctypes
import os
import struct
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sanitas.engine import nested
from sanitas.engine.report import Context, Rejected, RejectionCode

# libarchive-c finds the library with ctypes.util.find_library, which runs ldconfig: the
# sandbox has no programs to run, so the library is named (Debian's libarchive13).
os.environ.setdefault("LIBARCHIVE", "libarchive.so.13")

# kind -> (libarchive filters, libarchive formats), tried in order: a compressed stream holds
# a tar or, failing that, one file ("raw").
_READERS: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    "tar": ((("none",), ("tar",)),),
    "gzip": ((("gzip",), ("tar",)), (("gzip",), ("raw",))),
    "bzip2": ((("bzip2",), ("tar",)), (("bzip2",), ("raw",))),
    "xz": ((("xz",), ("tar",)), (("xz",), ("raw",))),
    "7z": ((("none",), ("7zip",)),),
    "rar": ((("none",), ("rar", "rar5")),),
}
_LABELS = {"tar": "tar archive", "gzip": "gzip file", "bzip2": "bzip2 file", "xz": "xz file",
           "7z": "7-Zip archive", "rar": "RAR archive"}
_REGULAR, _DIRECTORY = 0o100000, 0o040000
BLOCK = 1024 * 1024


class _Encrypted(Exception):
    pass


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    depth = ctx.depth
    if depth >= nested.MAX_DEPTH:
        raise Rejected("Archives are nested too deeply (more than "
                       f"{nested.MAX_DEPTH} levels).", RejectionCode.TOO_COMPLEX)
    assert ctx.workdir is not None
    label = _LABELS[kind]
    if kind == "rar":
        _refuse_split_rar(src)
    filters, formats = _choose_reader(src, kind, label)
    members = _check_headers(src, filters, formats, label)
    work = ctx.workdir / f"{kind}-{depth}-{dst.name}"
    work.mkdir()
    single = formats == ("raw",)
    archive_size = max(src.stat().st_size, 1)
    written_total = 0
    used_names: set[str] = set()
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as out, \
            _reader(src, filters, formats, label) as entries:
        index = 0
        for entry in entries:
            if _file_type(entry) != _REGULAR:
                continue
            ctx.progress(10 + 80 * index // max(members, 1))
            name = _single_name(src, kind) if single else _name(entry)
            member_src = work / f"m{index}"
            written_total += _extract_bounded(entry, member_src, written_total, archive_size,
                                              name, label)
            nested.add_member(ctx, out, member_src, name, work / f"o{index}", used_names)
            index += 1
        if index == 0:
            ctx.add("archive_member", "archive", action="kept", detail="the archive is empty")
    if single:
        ctx.add("archive_member", "archive", action="converted",
                detail=f"the {label}'s content is stored in a ZIP archive")
    else:
        ctx.add("archive_member", "archive", action="converted",
                detail=f"the {label} is stored as a ZIP archive (owners, permissions and dates "
                       "of its members are not kept)")
    return "zip"


def _choose_reader(src: Path, kind: str, label: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The first reader of `kind` that recognises the file (a tar inside a gzip, else the
    single file it compresses)."""
    readers = _READERS[kind]
    for filters, formats in readers[:-1]:
        try:
            with _reader(src, filters, formats, label) as entries:
                for _entry in entries:
                    return filters, formats
                # No member: zeros read as a tar's end, so the stream is taken as one file
                # (and counted as it is inflated).
        except Rejected as exc:
            if exc.code != RejectionCode.DAMAGED:
                raise
    return readers[-1]


def _check_headers(src: Path, filters: tuple[str, ...], formats: tuple[str, ...],
                   label: str) -> int:
    """Refuse the whole archive before any member is sanitized; the number of regular
    members. Data is skipped, not kept; what the headers declare is checked here and what
    comes out is counted again while extracting."""
    count = total = 0
    seen: set[str] = set()
    with _reader(src, filters, formats, label) as entries:
        for entry in entries:
            if count >= nested.MAX_MEMBERS:
                raise Rejected(f"The archive has too many members (more than "
                               f"{nested.MAX_MEMBERS}).", RejectionCode.BOMB)
            if formats == ("raw",):
                return 1
            name = _name(entry)
            reason = nested.unsafe_member_name(name)
            file_type = _file_type(entry)
            if reason is None and file_type not in (_REGULAR, _DIRECTORY):
                reason = "symbolic link, hard link or special file"
            if reason is None and entry.mode & 0o6000 and file_type == _REGULAR:
                reason = "a set-user-ID or set-group-ID program"
            if reason:
                raise Rejected(f"The archive contains an unsafe member name ({reason}): "
                               f"{name[:100]!r}.", RejectionCode.UNSAFE_STRUCTURE)
            if _is_encrypted(entry):
                raise _encrypted(label)
            if file_type == _DIRECTORY:
                continue
            key = os.path.normpath(name.replace("\\", "/")).lower()
            if key in seen:
                raise Rejected(f"The archive contains the same member name twice: "
                               f"{name[:100]!r}.", RejectionCode.UNSAFE_STRUCTURE)
            seen.add(key)
            size = entry.size or 0
            if size > nested.MAX_MEMBER_UNCOMPRESSED:
                raise Rejected("A member of the archive expands to more than "
                               f"{nested.MAX_MEMBER_UNCOMPRESSED // 2**20} MB (bomb "
                               "protection).", RejectionCode.BOMB)
            total += size
            if total > nested.MAX_TOTAL_UNCOMPRESSED:
                raise Rejected(f"The archive expands to more than "
                               f"{nested.MAX_TOTAL_UNCOMPRESSED // 2**20} MB (bomb "
                               "protection).", RejectionCode.BOMB)
            count += 1
    return count


def _extract_bounded(entry: Any, target: Path, written_so_far: int, archive_size: int,
                     name: str, label: str) -> int:
    """Stream one member to `target`, counting every byte: over the member limit, the
    archive's total or the ratio of ZIP archives (RATIO_FLOOR, MAX_RATIO against the whole
    archive's size) it stops at once."""
    from libarchive import ffi
    from libarchive.exception import ArchiveError

    limit = nested.MAX_MEMBER_UNCOMPRESSED
    buffer = ctypes.create_string_buffer(BLOCK)
    written = 0
    try:
        with open(target, "wb") as out:
            while True:
                got = ffi.read_data(entry._archive_p, buffer, BLOCK)
                if got <= 0:
                    break
                written += got
                total = written_so_far + written
                if written > limit or total > nested.MAX_TOTAL_UNCOMPRESSED or (
                        total > nested.RATIO_FLOOR and total > nested.MAX_RATIO * archive_size):
                    raise Rejected(f"The {label} expands far beyond its size (decompression "
                                   "bomb protection); it was stopped at "
                                   f"{total // 2**20} MB.", RejectionCode.BOMB)
                out.write(buffer.raw[:got])
    except ArchiveError as exc:
        raise _from_error(exc, label, name) from None
    return written


@contextmanager
def _reader(src: Path, filters: tuple[str, ...], formats: tuple[str, ...],
            label: str) -> Iterator[Iterator[Any]]:
    """libarchive's entries of `src` read with exactly these filters and formats; its errors
    become rejections (encrypted, damaged)."""
    from libarchive import ffi
    from libarchive.exception import ArchiveError
    from libarchive.read import ArchiveRead

    pointer = ffi.read_new()
    try:
        for name in filters:
            ffi.get_read_filter_function(name)(pointer)
        for name in formats:
            ffi.get_read_format_function(name)(pointer)
        try:
            ffi.read_open_filename_w(pointer, str(src), 64 * 1024)
        except ArchiveError as exc:
            raise _from_error(exc, label, None) from None
        entries = iter(ArchiveRead(pointer, header_codec="utf-8"))

        def guarded() -> Iterator[Any]:
            while True:
                try:
                    entry = next(entries)
                except StopIteration:
                    return
                except ArchiveError as exc:
                    raise _from_error(exc, label, None) from None
                except UnicodeError:
                    raise Rejected("The archive contains a member name that is not valid "
                                   "text.", RejectionCode.UNSAFE_STRUCTURE) from None
                yield entry

        yield guarded()
    finally:
        ffi.read_free(pointer)


def _from_error(exc: Exception, label: str, name: str | None) -> Rejected:
    message = str(getattr(exc, "msg", exc) or "")
    if "ncrypt" in message or "assphrase" in message or "password" in message.lower():
        return _encrypted(label)
    what = f"The {label}'s member {name[:100]!r}" if name else f"The {label}"
    return Rejected(f"{what} is damaged or truncated ({message[:200]}).", RejectionCode.DAMAGED)


def _encrypted(label: str) -> Rejected:
    return Rejected(f"The {label} is password-protected (encrypted). Encrypted {label}s "
                    "cannot be opened here, even with their password; send the files in a "
                    "ZIP archive (which a password given with the upload opens) or "
                    "unencrypted.", RejectionCode.ENCRYPTED)


def _name(entry: Any) -> str:
    name = entry.pathname
    if not isinstance(name, str):
        raise Rejected("The archive contains a member without a readable name.",
                       RejectionCode.UNSAFE_STRUCTURE)
    return str(name)


def _file_type(entry: Any) -> int:
    return int(entry.filetype) & 0o170000


_entry_is_encrypted: Any = None


def _is_encrypted(entry: Any) -> bool:
    global _entry_is_encrypted
    if _entry_is_encrypted is None:
        from libarchive import ffi

        function = ffi.libarchive.archive_entry_is_encrypted
        function.argtypes, function.restype = [ctypes.c_void_p], ctypes.c_int
        _entry_is_encrypted = function
    return bool(_entry_is_encrypted(entry._entry_p))


def _single_name(src: Path, kind: str) -> str:
    """The name of a single compressed file: the gzip header's FNAME (its last segment)
    when it is a safe name, else "file"; the member's type is detected from its bytes."""
    if kind == "gzip":
        with open(src, "rb") as fh:
            head = fh.read(10 + 2 + 65535 + 512)
        if len(head) > 10 and head[3] & 0x08:
            offset = 10
            if head[3] & 0x04 and len(head) >= 12:
                offset += 2 + struct.unpack_from("<H", head, 10)[0]
            end = head.find(b"\x00", offset, offset + 512)
            if end > offset:
                name = head[offset:end].decode("latin-1").replace("\\", "/").rsplit("/", 1)[-1]
                if nested.unsafe_member_name(name) is None:
                    return name
    return "file"


def _refuse_split_rar(src: Path) -> None:
    """A RAR volume (one part of a split archive) says so in its main archive header."""
    with open(src, "rb") as fh:
        head = fh.read(64)
    volume = False
    if head.startswith(b"Rar!\x1a\x07\x00") and len(head) >= 12 and head[9] == 0x73:
        volume = bool(struct.unpack_from("<H", head, 10)[0] & 0x0001)
    elif head.startswith(b"Rar!\x1a\x07\x01\x00"):
        values: list[int] = []
        offset = 12  # after the signature and the header's CRC32
        while len(values) < 6 and offset < len(head):
            value, shift = 0, 0
            while offset < len(head):
                byte = head[offset]
                offset += 1
                value |= (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
            values.append(value)
        # size, type (1 = main), header flags, [extra size], [data size], archive flags
        if len(values) >= 3 and values[1] == 1:
            flags = values[2]
            at = 3 + bool(flags & 0x0001) + bool(flags & 0x0002)
            volume = len(values) > at and bool(values[at] & 0x0001)
    if volume:
        raise Rejected("The RAR archive is one part of a split (multi-volume) archive; split "
                       "archives are not accepted. Join the parts into one archive (or send a "
                       "ZIP) and upload that.", RejectionCode.UNSUPPORTED_TYPE)
