"""ZIP archives: every member is detected and sanitized with the same rules (recursively); what
cannot be made safe is left out and listed. Bombs (ratio, total size, member count, depth,
overlapping entries) and unsafe member names (absolute, .., drive letters, links) are refused.
The limits, and the way each member goes through the engine, are those of every file found
inside another one (nested.py); the other archive formats are read in archives_other.py.
"""

from __future__ import annotations

import itertools
import posixpath
import stat
import struct
import zipfile
import zlib
from pathlib import Path

from sanitas.engine import decrypt, nested
from sanitas.engine.detect import EncryptedInput
from sanitas.engine.report import Context, Rejected, RejectionCode

CHUNK = 1024 * 1024


def check_names_and_limits(zf: zipfile.ZipFile, src: Path, *,
                           password_given: bool = False) -> list[zipfile.ZipInfo]:
    """Refuse the whole archive before anything is decompressed. Encrypted members are
    refused unless a password was given (the extraction then decrypts them)."""
    archive_size = src.stat().st_size
    infos = zf.infolist()
    if len(infos) > nested.MAX_MEMBERS:
        raise Rejected(f"The archive has too many members ({len(infos)}; the limit is "
                       f"{nested.MAX_MEMBERS}).", RejectionCode.BOMB)
    total = 0
    seen_names: set[str] = set()
    for info in infos:
        if info.flag_bits & 0x1 and not password_given:
            raise EncryptedInput("zip")
        _use_declared_name(info)
        reason = unsafe_name_reason(info)
        if reason:
            raise Rejected(f"The archive contains an unsafe member name ({reason}): "
                           f"{info.filename[:100]!r}.", RejectionCode.UNSAFE_STRUCTURE)
        key = posixpath.normpath(info.filename).lower()
        if key in seen_names and not info.is_dir():
            raise Rejected(f"The archive contains the same member name twice: "
                           f"{info.filename[:100]!r}.", RejectionCode.UNSAFE_STRUCTURE)
        seen_names.add(key)
        if info.file_size > nested.MAX_MEMBER_UNCOMPRESSED:
            raise Rejected("A member of the archive expands to more than "
                           f"{nested.MAX_MEMBER_UNCOMPRESSED // 2**20} MB (zip bomb protection).",
                           RejectionCode.BOMB)
        if info.file_size > nested.RATIO_FLOOR and \
                info.file_size > nested.MAX_RATIO * max(info.compress_size, 1):
            raise Rejected("A member of the archive has an extreme compression ratio "
                           "(zip bomb protection).", RejectionCode.BOMB)
        total += info.file_size
    if total > nested.MAX_TOTAL_UNCOMPRESSED:
        raise Rejected("The archive expands to more than "
                       f"{nested.MAX_TOTAL_UNCOMPRESSED // 2**20} MB (zip bomb protection).",
                       RejectionCode.BOMB)
    if total > nested.RATIO_FLOOR and total > nested.MAX_RATIO * max(archive_size, 1):
        raise Rejected("The archive has an extreme compression ratio (zip bomb protection).",
                       RejectionCode.BOMB)
    _check_overlaps(infos, src)
    return infos


UNICODE_PATH_FIELD = 0x7075  # Info-ZIP: the UTF-8 spelling of a name stored in another encoding


def _use_declared_name(info: zipfile.ZipInfo) -> None:
    """A name stored without the UTF-8 flag is read as CP437 (zipfile's default, what the
    format specifies); when the directory also carries its UTF-8 spelling (the Info-ZIP
    Unicode Path field, checked against the stored name's CRC) that spelling is the name."""
    if info.flag_bits & 0x800:
        return
    extra, offset = info.extra, 0
    while offset + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, offset)
        body = extra[offset + 4:offset + 4 + size]
        offset += 4 + size
        if tag != UNICODE_PATH_FIELD or len(body) < 5 or body[0] != 1:
            continue
        try:
            raw = info.orig_filename.encode("cp437")
            name = body[5:].decode("utf-8")
        except UnicodeError:
            return
        if zlib.crc32(raw) == struct.unpack_from("<I", body, 1)[0] and name:
            info.filename = name
        return


def unsafe_name_reason(info: zipfile.ZipInfo) -> str | None:
    reason = nested.unsafe_member_name(info.filename)
    if reason:
        return reason
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "symbolic link or special file"
    return None


LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then the name and extra-field lengths
DATA_DESCRIPTOR_MIN = 12  # crc, sizes: what follows a member whose sizes trail its data


def _check_overlaps(infos: list[zipfile.ZipInfo], src: Path) -> None:
    """Overlapping entries (one compressed stream shared by many members) are a bomb trick.

    Each member's extent comes from its own local header: its name and extra field there
    can differ in length from the central directory's (an NTFS timestamp only in the
    directory, a name the directory spells in another encoding), so neither the directory's
    extra field nor the decoded name's length says where the data starts."""
    spans: list[tuple[int, int]] = []
    with open(src, "rb") as fh:
        for info in infos:
            if info.is_dir():
                continue
            fh.seek(info.header_offset)
            header = fh.read(LOCAL_HEADER.size)
            if len(header) < LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
                raise Rejected(f"The archive member {info.filename[:100]!r} has no valid local "
                               "header.", RejectionCode.DAMAGED)
            _signature, name_length, extra_length = LOCAL_HEADER.unpack(header)
            end = info.header_offset + LOCAL_HEADER.size + name_length + extra_length \
                + info.compress_size
            if info.flag_bits & 0x8:
                end += DATA_DESCRIPTOR_MIN
            spans.append((info.header_offset, end))
    spans.sort()
    for (_start_a, end_a), (start_b, _end_b) in itertools.pairwise(spans):
        if start_b < end_a:
            raise Rejected("The archive has overlapping members (zip bomb technique).",
                           RejectionCode.BOMB)


def sanitize(src: Path, dst: Path, ctx: Context, kind: str = "zip") -> str:
    """The archive family's handler: ZIP here, every other archive format in
    archives_other.py (their members come back through `nested.add_member`). The output is a ZIP."""
    if kind != "zip":
        from sanitas.engine import archives_other  # libarchive is loaded only when needed

        return archives_other.sanitize(src, dst, ctx, kind)
    depth = ctx.depth
    if depth >= nested.MAX_DEPTH:
        raise Rejected("Archives are nested too deeply (more than "
                       f"{nested.MAX_DEPTH} levels).", RejectionCode.TOO_COMPLEX)
    assert ctx.workdir is not None
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise Rejected("The ZIP archive is damaged.", RejectionCode.DAMAGED) from exc
    encrypted = decrypt.has_encrypted_members(zf)
    if encrypted and ctx.password:  # pyzipper reads (and decrypts) ZipCrypto and AES members
        zf.close()
        zf = decrypt.open_zip(src, ctx.password)
    work = ctx.workdir / f"zip-{depth}-{dst.name}"
    work.mkdir()
    written_total = 0
    with zf, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED,
                             compresslevel=6) as out:
        infos = check_names_and_limits(zf, src, password_given=bool(ctx.password))
        if zf.comment:
            ctx.add("archive_comment", "archive comment", action="removed")
        used_names: set[str] = set()
        files = [i for i in infos if not i.is_dir()]
        for index, info in enumerate(files):
            ctx.progress(10 + 80 * index // max(len(files), 1))
            member_src = work / f"m{index}"
            written_total += _extract_bounded(zf, info, member_src, written_total)
            nested.add_member(ctx, out, member_src, info.filename, work / f"o{index}", used_names)
        if not files:
            ctx.add("archive_member", "archive", action="kept", detail="the archive is empty")
        if encrypted and files:
            ctx.add("encryption", "archive", action="removed", detail=decrypt.OPENED_DETAIL)
    return "zip"


def _extract_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path,
                     written_so_far: int) -> int:
    """Extract one member, trusting nothing the headers say about its size."""
    limit = min(info.file_size, nested.MAX_MEMBER_UNCOMPRESSED)
    written = 0
    damaged: tuple[type[Exception], ...] = (*decrypt.bad_zip_errors(), zlib.error, EOFError,
                                            UnicodeError)
    try:
        with zf.open(info) as stream, open(target, "wb") as out:
            while True:
                chunk = stream.read(CHUNK)
                if not chunk:
                    break
                written += len(chunk)
                if written > limit or written_so_far + written > nested.MAX_TOTAL_UNCOMPRESSED:
                    raise Rejected("A member of the archive is larger than its header says "
                                   "(zip bomb protection).", RejectionCode.BOMB)
                out.write(chunk)
    except damaged as exc:
        if info.flag_bits & 0x1:  # garbage from a wrong password fails the CRC, MAC or inflate
            raise decrypt.wrong_zip_password(info.filename) from None
        raise Rejected(f"The archive member {info.filename[:100]!r} is damaged ({exc}).",
                       RejectionCode.DAMAGED) \
            from None
    except (NotImplementedError, RuntimeError) as exc:
        if info.flag_bits & 0x1 and isinstance(exc, RuntimeError) and "password" in str(exc):
            raise decrypt.wrong_zip_password(info.filename) from None
        raise Rejected(f"The archive member {info.filename[:100]!r} uses an unsupported "
                       f"compression or encryption ({exc}).",
                       RejectionCode.UNSUPPORTED_TYPE) from None
    return written


