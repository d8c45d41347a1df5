"""Files inside files: the limits every file found inside another one is held to, whatever
holds it (archive members of any format, PDF attachments, office packages embedded in a
document, e-mail attachments), and the path of an archive member through the engine.

`nested_context` gives each such file its context one level deeper and counts it, with its
size, against one budget per upload (at most MAX_DEPTH levels, MAX_MEMBERS files and
MAX_TOTAL_UNCOMPRESSED bytes in all, each at most MAX_MEMBER_UNCOMPRESSED). `add_member`
sanitizes one extracted archive member and stores it in the output ZIP; ZIP archives
(archive.py) and the other archive formats (archives_other.py) both hand their members to it.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path

from sanitas.engine import decrypt
from sanitas.engine.office_package import member_compression
from sanitas.engine.report import Context, Mode, Refused, Rejected, RejectionCode
from sanitas.engine.verdict import ENCRYPTED_CODES

MAX_MEMBERS = 5000
MAX_TOTAL_UNCOMPRESSED = 1024 * 1024 * 1024
MAX_MEMBER_UNCOMPRESSED = 512 * 1024 * 1024
MAX_RATIO = 100  # uncompressed / compressed for any member bigger than RATIO_FLOOR
RATIO_FLOOR = 1024 * 1024
MAX_DEPTH = 3  # archives inside archives
WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])$", re.IGNORECASE)


def nested_context(ctx: Context, size: int, *, mode: Mode = Mode.BASIC,
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
                   password=password, nested=budget, ocr_languages=ctx.ocr_languages,
                   ocr_own_text=ctx.ocr_own_text)


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
        if exc.code.value in ENCRYPTED_CODES:
            _encrypted_member(ctx, out, member_src, filename, location, exc.reason, used_names)
        else:
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
    with open(member_dst, "rb") as produced:
        head = produced.read(8)
    out.write(member_dst, arcname, compress_type=member_compression(head))
    member_dst.unlink()


def _encrypted_member(ctx: Context, out: zipfile.ZipFile, member_src: Path, filename: str,
                      location: str, reason: str, used_names: set[str]) -> None:
    """A member no password opened was not inspected: the policy's `encryptedContent` holds
    it back (left out) or passes it as it came, under its own (safe) name."""
    if not ctx.policy.passes_encrypted:
        ctx.add("encrypted_content", location, action="removed",
                detail=f"{reason} Held back: not in the copy.")
        return
    from sanitas.engine import safe_output_name
    from sanitas.engine.detect import extension_of

    extension = extension_of(filename)
    folder = posixpath.dirname(posixpath.normpath(filename.replace("\\", "/")))
    name = safe_output_name(posixpath.basename(filename),
                            extension if re.fullmatch(r"[a-z0-9]{1,10}", extension) else "bin")
    arcname = _unique(posixpath.join(folder, name) if folder else name, used_names)
    ctx.add("encrypted_content", location, action="kept",
            detail=f"{reason} Passed unchanged and not inspected.")
    out.write(member_src, arcname)


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
