"""Safe reading of zip-based office packages (OOXML and ODF), and the review-data helpers both
families share (reviewer aliases, revision summaries).

Everything here treats the input as hostile: member names, sizes and counts are bounded before
anything is decompressed (XML parts are parsed by `xmlsafe.parse_xml`).
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

from lxml import etree

from sanitas.engine.report import Context, Mode, Rejected, RejectionCode

# Limits: generous for real documents (a 100 MB upload), fatal for bombs.
MAX_MEMBERS = 10_000
MAX_MEMBER_SIZE = 256 * 1024 * 1024
MAX_TOTAL_SIZE = 512 * 1024 * 1024
MAX_RATIO = 200  # per member, only checked above RATIO_FLOOR (tiny XML compresses very well)
RATIO_FLOOR = 4 * 1024 * 1024
MAX_NAME_LENGTH = 512

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

_BAD_NAME = re.compile(r"[\x00-\x1f\\:*?\"<>|]")


def serialize(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def unwrap(el: etree._Element) -> list[etree._Element]:
    """Replace `el` by its content (its text, children and tail, in that order); return its
    former children. One pass with no index lookups: a hostile paragraph may hold 100,000
    insertions to unwrap."""
    parent = el.getparent()
    if parent is None:
        return []
    if el.text:
        previous = el.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + el.text
        else:
            parent.text = (parent.text or "") + el.text
    children = list(el)
    for child in children:
        el.addprevious(child)  # its tail moves with it
    remove_element(el)
    return children


def remove_element(el: etree._Element) -> None:
    """Remove `el` from its parent, keeping its tail text (mixed content) where it was."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def check_not_ole(src: Path, what: str) -> None:
    with open(src, "rb") as fh:
        head = fh.read(8)
    if head == OLE_MAGIC:
        if _ole_is_encrypted(src):
            raise Rejected(f"The {what} is encrypted (password-protected); it cannot be "
                           "inspected, so it was not processed.", RejectionCode.ENCRYPTED)
        raise Rejected(f"The file is an OLE compound file, not a {what} package.",
                       RejectionCode.UNSUPPORTED_TYPE)


def _ole_is_encrypted(src: Path) -> bool:
    import olefile

    try:
        with olefile.OleFileIO(str(src)) as ole:
            return ole.exists("EncryptedPackage") or ole.exists("EncryptionInfo")
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; not encrypted
        return False


def read_package(src: Path, what: str) -> tuple[dict[str, bytes], list[str]]:
    """Read every member of a zip package into memory within the limits.

    Returns (members by name, names in archive order). Rejects bombs, unsafe or duplicate names,
    encrypted members and corrupt archives."""
    check_not_ole(src, what)
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise Rejected(f"The file is not a valid {what} package (damaged zip container).",
                       RejectionCode.DAMAGED) from exc
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise Rejected(f"The {what} package has {len(infos)} parts, more than the "
                           f"{MAX_MEMBERS} allowed (zip bomb protection).", RejectionCode.BOMB)
        seen: set[str] = set()
        members: dict[str, bytes] = {}
        order: list[str] = []
        total = 0
        for info in infos:
            name = info.filename
            if name.endswith("/"):
                continue  # directory entries carry nothing
            _check_name(name, what)
            folded = name.casefold()
            if folded in seen:
                # two members with one name: different readers would pick different ones
                raise Rejected(f"The {what} package contains the part {name!r} twice "
                               "(parser confusion attack).", RejectionCode.UNSAFE_STRUCTURE)
            seen.add(folded)
            if info.flag_bits & 0x1:
                raise Rejected(f"The {what} package has encrypted parts; it cannot be inspected.",
                               RejectionCode.ENCRYPTED)
            if info.file_size > MAX_MEMBER_SIZE:
                raise Rejected(f"The part {name!r} would expand to {info.file_size} bytes "
                               "(zip bomb protection).", RejectionCode.BOMB)
            data = _read_bounded(zf, info, what)
            total += len(data)
            if total > MAX_TOTAL_SIZE:
                raise Rejected(f"The {what} package expands to more than "
                               f"{MAX_TOTAL_SIZE // (1024 * 1024)} MiB (zip bomb protection).",
                               RejectionCode.BOMB)
            if len(data) > RATIO_FLOOR and len(data) > MAX_RATIO * max(1, info.compress_size):
                raise Rejected(f"The part {name!r} has a compression ratio above {MAX_RATIO}:1 "
                               "(zip bomb protection).", RejectionCode.BOMB)
            members[name] = data
            order.append(name)
    return members, order


def _check_name(name: str, what: str) -> None:
    if (len(name) > MAX_NAME_LENGTH or name.startswith("/") or _BAD_NAME.search(name)
            or any(seg in ("", ".", "..") for seg in name.split("/"))):
        raise Rejected(f"The {what} package contains an unsafe part name {name[:80]!r}.",
                       RejectionCode.UNSAFE_STRUCTURE)


def _read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, what: str) -> bytes:
    # The header's size can lie: read at most the limit plus one byte.
    try:
        with zf.open(info) as fh:
            data = fh.read(MAX_MEMBER_SIZE + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError) as exc:
        raise Rejected(f"The part {info.filename!r} of the {what} package cannot be read "
                       f"(damaged or unsupported compression).", RejectionCode.DAMAGED) from exc
    if len(data) > MAX_MEMBER_SIZE:
        raise Rejected(f"The part {info.filename!r} is larger than allowed (zip bomb protection).",
                       RejectionCode.BOMB)
    return data


def write_package(dst: Path, members: list[tuple[str, bytes]], stored_first: str | None = None,
                  ) -> None:
    """Write a fresh zip: nothing from the original container (comments, extra fields, data
    after the end) survives. `stored_first` is written first and uncompressed (ODF mimetype),
    and so are members compressed already (`member_compression`). The rest is deflated at
    level 5: within 0.5 % of level 6's size for XML at 60 % of its time."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = (zipfile.ZIP_STORED if name == stored_first
                                  else member_compression(data[:8]))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compresslevel=5)
    dst.write_bytes(buf.getvalue())


# JPEG, PNG and GIF pictures (what clean_picture writes) and zip packages (an Office or
# OpenDocument file, a zip) are compressed already.
_COMPRESSED_HEADS = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"PK\x03\x04")


def member_compression(head: bytes) -> int:
    """How a zip the engine writes stores a member starting with `head`: as it is when it is
    compressed already (deflating a JPEG costs as much CPU as the rest of a document and
    saves a percent or two), else deflated."""
    return zipfile.ZIP_STORED if head.startswith(_COMPRESSED_HEADS) else zipfile.ZIP_DEFLATED


# Image checks for binary parts we keep: the magic must match a format renderers expect.
_IMAGE_MAGICS = {
    "png": (b"\x89PNG\r\n\x1a\n",),
    "jpeg": (b"\xff\xd8\xff",),
    "gif": (b"GIF87a", b"GIF89a"),
    "bmp": (b"BM",),
    "tiff": (b"II*\x00", b"MM\x00*"),
    "emf": (),  # checked below
    "wmf": (b"\xd7\xcd\xc6\x9a", b"\x01\x00\x09\x00", b"\x02\x00\x09\x00"),
}


def image_format(data: bytes) -> str | None:
    for fmt, magics in _IMAGE_MAGICS.items():
        if any(data.startswith(m) for m in magics):
            return fmt
    if len(data) >= 44 and data[:4] == b"\x01\x00\x00\x00" and data[40:44] == b" EMF":
        return "emf"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


MAX_IMAGE_PIXELS = 64_000_000


def clean_picture(data: bytes, fmt: str, ctx: Context, where: str) -> bytes | None:
    """A picture inside a document, cleaned as the imageMetadata policy says: removed
    silently as always (`clean_raster`) by default; with "keep" or "refuse" through the image
    family, which carries the metadata over or refuses the file, and reports under `where`."""
    from sanitas.engine.policy import Action, Rule

    if ctx.decides(Rule.IMAGE_METADATA) is Action.REMOVE or \
            fmt not in ("png", "jpeg", "webp"):
        return clean_raster(data, fmt)
    from sanitas.engine import image
    from sanitas.engine.report import Refused

    inner = Context(mode=Mode.BASIC, policy=ctx.policy, workdir=ctx.workdir, depth=ctx.depth)
    try:
        cleaned = image.sanitize_bytes(data, fmt, inner)
    except Refused:
        raise
    except Rejected:
        return None
    for finding in inner.closed_findings():
        if finding.kind in ("exif", "gps_location", "xmp_metadata", "iptc", "comment"):
            ctx.record(finding.kind, f"{where}: {finding.location}", action=finding.action,
                       detail=finding.detail)
    return cleaned


def clean_raster(data: bytes, fmt: str) -> bytes | None:
    """Re-encode a raster image to drop metadata (EXIF GPS, comments, trailing data).
    Returns None when the image cannot be decoded."""
    from PIL import Image

    if fmt not in ("png", "jpeg", "gif", "bmp", "tiff", "webp"):
        return data  # metafiles (EMF/WMF) are kept as they are; renderers parse them
    try:
        with Image.open(io.BytesIO(data)) as im:
            # checked before decoding: the header is all a bomb needs to lie about
            if im.width * im.height > MAX_IMAGE_PIXELS or getattr(im, "n_frames", 1) > 1000:
                return None
            im.load()
            out = io.BytesIO()
            if fmt == "jpeg":
                # Same pixels and quality tables; only the orientation tag survives because the
                # document's frame was laid out for the picture as the renderer shows it.
                icc = im.info.get("icc_profile")
                exif = Image.Exif()
                orientation = im.getexif().get(0x0112)
                if isinstance(orientation, int) and 1 < orientation <= 8:
                    exif[0x0112] = orientation
                im.save(out, "JPEG", quality="keep", icc_profile=icc, exif=exif.tobytes())
            elif fmt == "png":
                icc = im.info.get("icc_profile")
                im.save(out, "PNG", icc_profile=icc)
            elif fmt == "gif":
                im.save(out, "GIF", save_all=getattr(im, "n_frames", 1) > 1)
            elif fmt == "webp":
                im.save(out, "WEBP", lossless=True)
            elif fmt == "tiff":
                im.save(out, "TIFF", compression="tiff_deflate")
            else:
                im.save(out, "BMP")
            return out.getvalue()
    except Exception:  # noqa: BLE001 - Pillow can raise anything on a hostile embedded image; None = unusable
        return None


# ----------------------------------------------------------------------------- review data

class ReviewerAliases:
    """Reviewer name -> "Author N", consistent across one document (OOXML and ODF alike)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def alias(self, name: str) -> str:
        key = name.strip()
        if not key:
            return name
        if key not in self.aliases:
            self.aliases[key] = f"Author {len(self.aliases) + 1}"
        return self.aliases[key]

    def initials(self, name: str) -> str:
        return "A" + self.alias(name).rsplit(" ", 1)[-1] if name.strip() else name

    def scrub_text(self, root: etree._Element) -> None:
        """Replace every known reviewer name in the text of a comment part by its alias (Excel
        opens each note with "Name:")."""
        names = sorted((n for n in self.aliases if len(n) > 1), key=len, reverse=True)
        if not names:
            return
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")
        for el in root.iter():
            for attr in ("text", "tail"):
                value = getattr(el, attr)
                if value and pattern.search(value):
                    setattr(el, attr, pattern.sub(lambda m: self.aliases[m.group(0)], value))



def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"



def revision_summary(ins: int, dels: int, fmt: int, authors: int, other: str = "",
                     n_other: int = 0) -> str:
    """"3 insertions accepted, 1 deletion applied (by 2 reviewers)" (OOXML and ODF)."""
    parts = [f"{plural(ins, 'insertion')} accepted" if ins else "",
             f"{plural(dels, 'deletion')} applied" if dels else "",
             f"{plural(fmt, 'formatting change')} accepted" if fmt else "",
             f"{plural(n_other, other)} accepted" if n_other else ""]
    detail = ", ".join(p for p in parts if p)
    return detail + (f" (by {plural(authors, 'reviewer')})" if authors else "")
