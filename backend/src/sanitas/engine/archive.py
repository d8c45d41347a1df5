"""ZIP archives: every member is detected and sanitized with the same rules (recursively); what
cannot be made safe is left out and listed. Bombs (ratio, total size, member count, depth,
overlapping entries) and unsafe member names (absolute, .., drive letters, links) are refused.

The same limits hold for every file found inside another one, whatever holds it (archive
members, PDF attachments, office packages embedded in a document): `nested_context` gives
each such file its context one level deeper and counts it, with its size, against one budget
per upload (at most MAX_DEPTH levels, MAX_MEMBERS files and MAX_TOTAL_UNCOMPRESSED bytes in
all, each at most MAX_MEMBER_UNCOMPRESSED).
"""

from __future__ import annotations

import itertools
import posixpath
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path

from sanitas.engine import decrypt
from sanitas.engine.detect import EncryptedInput
from sanitas.engine.report import Context, Mode, Refused, Rejected, RejectionCode

MAX_MEMBERS = 5000
MAX_TOTAL_UNCOMPRESSED = 1024 * 1024 * 1024
MAX_MEMBER_UNCOMPRESSED = 512 * 1024 * 1024
MAX_RATIO = 100  # uncompressed / compressed for any member bigger than RATIO_FLOOR
RATIO_FLOOR = 1024 * 1024
MAX_DEPTH = 3  # archives inside archives
CHUNK = 1024 * 1024
WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])$", re.IGNORECASE)


def nested_context(ctx: Context, size: int, *, mode: Mode = "basic",
                   password: str | None = None) -> Context:
    """The context of a file of `size` bytes found inside `ctx`'s file (an archive member, an
    attachment, an embedded package), sanitized with the same policy one level deeper; it is
    counted against the upload's budget (`Context.nested`). Rejected when the nesting, the
    number of inner files or their total size is over the archive limits: the caller leaves
    that file out (an archive refuses itself)."""
    if ctx.depth >= MAX_DEPTH:
        raise Rejected(f"Files are nested inside each other too deeply (more than {MAX_DEPTH} "
                       "levels).", RejectionCode.TOO_COMPLEX)
    budget = ctx.nested
    budget.count += 1
    if budget.count > MAX_MEMBERS:
        raise Rejected(f"The file holds too many files inside it (the limit is {MAX_MEMBERS}).",
                       RejectionCode.BOMB)
    budget.size += size
    if size > MAX_MEMBER_UNCOMPRESSED or budget.size > MAX_TOTAL_UNCOMPRESSED:
        raise Rejected(f"The files inside it expand to more than "
                       f"{MAX_TOTAL_UNCOMPRESSED // 2**20} MB (bomb protection).",
                       RejectionCode.BOMB)
    return Context(mode=mode, policy=ctx.policy, workdir=ctx.workdir, depth=ctx.depth + 1,
                   password=password, nested=budget, ocr_languages=ctx.ocr_languages)


def check_names_and_limits(zf: zipfile.ZipFile, src: Path, *,
                           password_given: bool = False) -> list[zipfile.ZipInfo]:
    """Refuse the whole archive before anything is decompressed. Encrypted members are
    refused unless a password was given (the extraction then decrypts them)."""
    archive_size = src.stat().st_size
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise Rejected(f"The archive has too many members ({len(infos)}; the limit is "
                       f"{MAX_MEMBERS}).", RejectionCode.BOMB)
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
        if info.file_size > MAX_MEMBER_UNCOMPRESSED:
            raise Rejected("A member of the archive expands to more than "
                           f"{MAX_MEMBER_UNCOMPRESSED // 2**20} MB (zip bomb protection).",
                           RejectionCode.BOMB)
        if info.file_size > RATIO_FLOOR and \
                info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise Rejected("A member of the archive has an extreme compression ratio "
                           "(zip bomb protection).", RejectionCode.BOMB)
        total += info.file_size
    if total > MAX_TOTAL_UNCOMPRESSED:
        raise Rejected(f"The archive expands to more than {MAX_TOTAL_UNCOMPRESSED // 2**20} MB "
                       "(zip bomb protection).", RejectionCode.BOMB)
    if total > RATIO_FLOOR and total > MAX_RATIO * max(archive_size, 1):
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
    reason = unsafe_member_name(info.filename)
    if reason:
        return reason
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "symbolic link or special file"
    return None


def unsafe_member_name(name: str) -> str | None:
    """Why a member's name is unsafe (any archive format), or None."""
    if not name or len(name) > 512:
        return "empty or overlong"
    if "\x00" in name or re.search(r"[\x00-\x1f]", name):
        return "control characters"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    parts = re.split(r"[\\/]", name)
    if ".." in parts:
        return "path traversal"
    if ":" in name:
        return "a colon (drive letter or alternate data stream)"
    for part in parts:
        if part and (part != part.rstrip(". ") or
                     WINDOWS_RESERVED.match(part.split(".")[0])):
            return "a name Windows treats specially"
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
    archives_other.py (their members come back through `add_member`). The output is a ZIP."""
    if kind != "zip":
        from sanitas.engine import archives_other

        return archives_other.sanitize(src, dst, ctx, kind)
    depth = ctx.depth
    if depth >= MAX_DEPTH:
        raise Rejected("Archives are nested too deeply (more than "
                       f"{MAX_DEPTH} levels).", RejectionCode.TOO_COMPLEX)
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
            add_member(ctx, out, member_src, info.filename, work / f"o{index}", used_names)
        if not files:
            ctx.add("archive_member", "archive", action="kept", detail="the archive is empty")
        if encrypted and files:
            ctx.add("encryption", "archive", action="removed", detail=decrypt.OPENED_DETAIL)
    return "zip"


def add_member(ctx: Context, out: zipfile.ZipFile, member_src: Path, filename: str,
               member_dst: Path, used_names: set[str]) -> None:
    """Sanitize one extracted member (`member_src`, named `filename` inside its archive) with
    the archive's policy one level deeper and store the result in `out`; a member that cannot
    be made safe is left out and reported. Every archive format's members go through here."""
    from sanitas.engine import safe_output_name, sanitize_detected

    location = filename if ctx.depth == 0 else f"(nested) {filename}"
    # The upload's password also opens the members it protects (an encrypted document
    # in an encrypted archive is usually protected by the same password).
    member_ctx = nested_context(ctx, member_src.stat().st_size, mode=ctx.mode,
                                password=ctx.password)
    opened = member_src
    try:
        opened, detected = decrypt.detect_opening(
            member_src, posixpath.basename(filename), member_ctx)
        extension = sanitize_detected(opened, member_dst, detected, member_ctx)
    except Refused:
        raise  # the policy refuses such content: the whole archive is refused
    except Rejected as exc:
        ctx.add("archive_member", location, action="removed", detail=exc.reason)
        return
    except (MemoryError, RecursionError):
        raise
    except Exception:  # noqa: BLE001 - one bad member must not sink the others
        ctx.add("archive_member", location, action="removed",
                detail="could not be made safe (damaged or unsupported content)")
        return
    finally:
        member_src.unlink(missing_ok=True)
        opened.unlink(missing_ok=True)
    for finding in member_ctx.closed_findings():
        ctx.record(finding.kind, f"{location}: {finding.location}", action=finding.action,
                   detail=finding.detail)
    folder = posixpath.dirname(posixpath.normpath(filename.replace("\\", "/")))
    name = safe_output_name(posixpath.basename(filename), extension)
    arcname = _unique(posixpath.join(folder, name) if folder else name, used_names)
    _report_rename(ctx, location, filename, arcname)
    out.write(member_dst, arcname)
    member_dst.unlink()


def _extract_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path,
                     written_so_far: int) -> int:
    """Extract one member, trusting nothing the headers say about its size."""
    limit = min(info.file_size, MAX_MEMBER_UNCOMPRESSED)
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
                if written > limit or written_so_far + written > MAX_TOTAL_UNCOMPRESSED:
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


def _report_rename(ctx: Context, location: str, original: str, arcname: str) -> None:
    """A member never changes its type or name silently: a sanitizer that produced another
    format (a .docm becomes a .docx, a .md plain .txt) or a clash of names is reported."""
    from sanitas.engine.detect import extension_of

    before = posixpath.normpath(original.replace("\\", "/"))
    if before == arcname:
        return
    old_ext, new_ext = extension_of(before), extension_of(arcname)
    if old_ext != new_ext:
        was = f".{old_ext}" if old_ext else "no extension"
        detail = f"stored as {arcname[:200]} (was {was}; the content is now .{new_ext})"
    else:
        detail = f"stored as {arcname[:200]} (name made safe or unique)"
    ctx.add("renamed", location, action="converted", detail=detail)


def _unique(name: str, used: set[str]) -> str:
    candidate, n = name, 2
    while candidate.lower() in used:
        stem, dot, ext = name.rpartition(".")
        candidate = f"{stem}-{n}.{ext}" if dot else f"{name}-{n}"
        n += 1
    used.add(candidate.lower())
    return candidate
