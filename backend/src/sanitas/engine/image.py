"""Raster images (JPEG, PNG, GIF incl. animation, WebP, TIFF, BMP, HEIC/HEIF, AVIF, JPEG XL):
decode and re-encode with Pillow. The orientation is applied first, then everything but the
pixels is dropped (EXIF, XMP, IPTC, comments, text chunks, trailing data, HEIF thumbnails and
auxiliary images, JPEG XL metadata boxes); a validated ICC profile is kept. With the
imageMetadata policy "keep", what the output format can carry is written back (see KEEPS_*).

HEIC/HEIF photos are decoded by pillow-heif (libheif) and written as JPEG (PNG when they have
transparency): re-encoding HEVC costs x265 tens of CPU seconds for one phone photo. AVIF uses
Pillow's own plugin (libavif) and stays AVIF; JPEG XL uses pillow-jxl-plugin (libjxl) and
stays JPEG XL. The two plugins are imported only by the jobs that need them.
"""

from __future__ import annotations

import io
import struct
import warnings
from pathlib import Path
from typing import BinaryIO

from PIL import Image, ImageCms, ImageFile, ImageOps, ImageSequence, JpegImagePlugin

from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, FindingAction, Rejected, RejectionCode

# With the imageMetadata policy "keep", what each format carries over (EXIF, XMP, comments,
# IPTC); the rest is removed. HEIC is written as JPEG or PNG, which hold EXIF and XMP. TIFF
# keeps the descriptive tags and the EXIF and GPS directories (`TIFF_META_TAGS`), XMP and
# IPTC. GIF holds only comments (Pillow writes no XMP into a GIF); BMP holds no metadata at
# all; the JPEG XL reader hands over EXIF only. Animations keep only GIF comments.
KEEPS_EXIF = frozenset({"jpeg", "png", "webp", "tiff", "heic", "avif", "jxl"})
KEEPS_XMP = frozenset({"jpeg", "png", "webp", "tiff", "heic", "avif", "jxl"})
KEEPS_COMMENT = frozenset({"jpeg", "png", "gif"})
KEEPS_IPTC = frozenset({"jpeg", "tiff"})
# TIFF tags that are metadata, not the picture's layout (description, make, model, software,
# date, artist, host computer, copyright; the EXIF and GPS directories).
TIFF_META_TAGS = (270, 271, 272, 305, 306, 315, 316, 33432)
EXIF_IFD, GPS_IFD = 0x8769, 0x8825
TIFF_XMP, TIFF_IPTC = 700, 33723
IPTC_RESOURCE = 0x0404  # the IPTC-NAA record among Photoshop's image resources
MAX_SEGMENT = 65533
MAX_PIXELS = 150_000_000  # per frame
MAX_TOTAL_PIXELS = 600_000_000  # all frames together
MAX_FRAMES = 2000
MAX_ICC_BYTES = 4 * 1024 * 1024
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
ImageFile.LOAD_TRUNCATED_IMAGES = False

PILLOW_FORMAT = {"jpeg": "JPEG", "png": "PNG", "gif": "GIF", "webp": "WEBP", "tiff": "TIFF",
                 "bmp": "BMP", "heic": "HEIF", "avif": "AVIF", "jxl": "JXL",
                 "jp2": "JPEG2000", "dib": "DIB"}
OUTPUT_EXTENSION = {"jpeg": "jpg", "png": "png", "gif": "gif", "webp": "webp", "tiff": "tiff",
                    "bmp": "bmp", "avif": "avif", "jxl": "jxl"}
# Kinds decoded by a plugin of their own and written by `_save_modern`.
MODERN = ("heic", "avif", "jxl")
FORMAT_NAME = {"heic": "HEIC/HEIF", "avif": "AVIF", "jxl": "JPEG XL", "jp2": "JPEG 2000",
               "dib": "DIB"}
AVIF_QUALITY, AVIF_SPEED = 80, 8  # speed 8: ~1.5 CPU seconds for a 12-megapixel photo
JXL_QUALITY, JXL_EFFORT = 90, 3  # quality 90 is visually lossless; effort 3: ~1 CPU second
JXL_MODES = ("RGB", "RGBA", "L", "LA", "I;16", "F")
JXL_CODESTREAM = b"\xff\x0a"
JXL_CONTAINER = b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a"
MAX_JXL_BOXES = 4096
# SizeHeader aspect ratios (ISO/IEC 18181-1): width = height * num // den.
JXL_RATIOS = {1: (1, 1), 2: (12, 10), 3: (4, 3), 4: (3, 2), 5: (16, 9), 6: (5, 4), 7: (2, 1)}
ICC_COLOR_SPACE_OF_MODE = {"RGB": "RGB", "RGBA": "RGB", "P": "RGB", "L": "GRAY", "LA": "GRAY",
                           "CMYK": "CMYK", "I;16": "GRAY", "I": "GRAY", "1": "GRAY"}
TIFF_COMPRESSIONS = {"raw", "tiff_lzw", "tiff_deflate", "tiff_adobe_deflate", "packbits",
                     "group3", "group4", "jpeg", "tiff_jpeg"}
TEXT_INFO_KEYS = {"comment", "comments", "description", "Description", "Author", "Software",
                  "Comment", "Title", "Copyright", "Creation Time", "Source", "Disclaimer",
                  "Warning", "XML:com.adobe.xmp", "parameters", "prompt"}


def open_image(src: Path | io.BytesIO, kind: str) -> Image.Image:
    if kind in MODERN:
        load_plugin(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(src, formats=[PILLOW_FORMAT[kind]] + (
                ["MPO"] if kind == "jpeg" else []))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise Rejected("The image is too large (decompression bomb protection).",
                           RejectionCode.BOMB) from exc
        except Exception as exc:
            raise Rejected(f"The {FORMAT_NAME.get(kind, kind.upper())} image is damaged and "
                           "cannot be decoded.", RejectionCode.DAMAGED) from exc
    width, height = image.size
    if width <= 0 or height <= 0 or width * height > MAX_PIXELS:
        raise Rejected("The image is too large (decompression bomb protection).",
                       RejectionCode.BOMB)
    # A HEIF file's other top-level images (a burst, a collection) are never decoded.
    frames = 1 if kind == "heic" else getattr(image, "n_frames", 1)
    if frames > MAX_FRAMES or frames * width * height > MAX_TOTAL_PIXELS:
        raise Rejected("The animation has too many or too large frames (decompression bomb "
                       "protection).", RejectionCode.BOMB)
    return image


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    if kind == "ico":
        return _sanitize_icon(src, dst, ctx)
    if kind == "jp2":
        return _sanitize_jpeg2000(src, dst, ctx)
    data_size = src.stat().st_size
    # The JPEG XL plugin decodes the whole image as it opens it: its size is checked first.
    jxl_boxes = _jxl_precheck(src) if kind == "jxl" else frozenset()
    image = open_image(src, kind)
    if kind == "dib":  # a packed DIB (no file header): read as one, written as a BMP file
        kind = "bmp"
        ctx.add("image_format", "whole image", action="converted",
                detail="a device-independent bitmap without its file header, written as a "
                       "BMP file")
    extension = OUTPUT_EXTENSION.get(kind)
    with image:
        kept = _report_metadata(image, src, data_size, kind, ctx)
        if kind in MODERN:
            _report_containers(image, kind, jxl_boxes, ctx)
        # JPEG XL: the writer embeds no profile; _save_modern converts the colours instead.
        icc = _validated_icc(image, ctx, report_kept=kind != "jxl")
        ctx.progress(20)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                animated = getattr(image, "n_frames", 1) > 1 and (
                    kind in ("gif", "png", "webp", "tiff") or (kind == "avif" and _can_write(kind)))
                if animated:
                    _save_frames(image, dst, kind, icc, ctx, kept)
                elif kind in MODERN:
                    extension = _save_modern(image, dst, kind, icc, ctx, kept)
                else:
                    _save_single(image, dst, kind, icc, kept)
        except Rejected:
            raise
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombWarning,
                Image.DecompressionBombError, EOFError) as exc:
            raise Rejected(f"The {FORMAT_NAME.get(kind, kind.upper())} image is damaged and "
                           "cannot be decoded.", RejectionCode.DAMAGED) from exc
    ctx.progress(95)
    # every kind but HEIC has an entry in OUTPUT_EXTENSION; HEIC went through _save_modern
    assert extension is not None
    return extension


# --- JPEG 2000 ---------------------------------------------------------------------------------

JP2_SIGNATURE = b"\x00\x00\x00\x0cjP  \r\n\x87\n"
J2K_SOC_SIZ = b"\xff\x4f\xff\x51"
MAX_JP2_BOXES = 4096
MAX_J2K_MARKERS = 1024  # marker segments of the main header before COD
# Top-level boxes that carry data beside the picture: reported, never written.
JP2_DATA_BOXES = {b"xml ": ("xmp_metadata", "XML boxes (XMP and other metadata)"),
                  b"uuid": ("exif", "UUID boxes (vendor data: EXIF, GeoJP2 and others)"),
                  b"jp2i": ("metadata", "intellectual property rights box"),
                  b"lbl ": ("metadata", "label boxes"), b"asoc": ("metadata",
                                                               "association boxes (labels, XML)"),
                  b"uinf": ("metadata", "UUID info boxes (addresses of vendor data)")}


def _sanitize_jpeg2000(src: Path, dst: Path, ctx: Context) -> str:
    """A JPEG 2000 picture (JP2/JPX boxes or a raw codestream): its boxes walked here (every
    one inside the file; Motion JPEG 2000 refused), decoded by Pillow's OpenJPEG decoder under
    the same bomb limits as every picture, and rebuilt as PNG when the codestream uses the
    reversible 5/3 wavelet (a lossless file stays lossless) or has transparency, else as JPEG.
    XML (XMP), UUID (EXIF, GeoJP2), IPR and label boxes are reported and go, whatever the
    policy: the decoder hands none of them over."""
    data = src.read_bytes()
    code, boxes = _jp2_layout(data)
    reversible = _j2k_reversible(code)
    image = open_image(src, "jp2")
    with image:
        kept = _report_metadata(image, src, len(data), "jp2", ctx, trailing=False)
        keep = ctx.decides(Rule.IMAGE_METADATA) is Action.KEEP
        for box, (finding, what) in JP2_DATA_BOXES.items():
            if boxes.get(box):
                ctx.add(finding, what, action="removed", rule=Rule.IMAGE_METADATA,
                        detail=f"{boxes[box]} box(es)" + (
                            ", not carried over (the PNG or JPEG copy is written from the "
                            "pixels alone)" if keep else ""))
        icc = _validated_icc(image, ctx)
        ctx.progress(20)
        try:
            image.load()
            clean = image.copy()
        except (OSError, ValueError, SyntaxError, EOFError) as exc:
            raise Rejected("The JPEG 2000 image is damaged and cannot be decoded.",
                           RejectionCode.DAMAGED) from exc
    clean.info = {}
    alpha = clean.mode in ("RGBA", "LA")
    target = "png" if reversible or alpha else "jpeg"
    if clean.mode not in ("1", "L", "LA", "RGB", "RGBA") and not (
            target == "png" and clean.mode == "I;16"):
        clean, icc = _converted(clean, "RGBA" if alpha else "RGB", icc)
    _save_single(clean, dst, target, icc, kept)
    how = ("lossless (reversible wavelet): rebuilt as PNG, every pixel kept" if reversible
           else "with transparency: rebuilt as PNG" if alpha
           else "lossy: re-encoded as JPEG (quality 90)")
    ctx.add("image_format", "whole image", action="converted",
            detail=f"JPEG 2000 {how}")
    ctx.progress(95)
    return OUTPUT_EXTENSION[target]


def _jp2_damaged(why: str) -> Rejected:
    return Rejected(f"The JPEG 2000 image is damaged ({why}).", RejectionCode.DAMAGED)


def _jp2_layout(data: bytes) -> tuple[bytes, dict[bytes, int]]:
    """The codestream of a JPEG 2000 file and how many top-level boxes of each type it has
    (none for a raw codestream). Every box must lie inside the file."""
    if data.startswith(J2K_SOC_SIZ):
        return data, {}
    boxes: dict[bytes, int] = {}
    code = b""
    position = 0
    while position < len(data):
        if sum(boxes.values()) >= MAX_JP2_BOXES:
            raise _jp2_damaged(f"more than {MAX_JP2_BOXES} boxes")
        if position + 8 > len(data):
            raise _jp2_damaged("a box header is cut short")
        size, box = struct.unpack_from(">I4s", data, position)
        header = 8
        if size == 1:
            if position + 16 > len(data):
                raise _jp2_damaged("a box header is cut short")
            size, header = struct.unpack_from(">Q", data, position + 8)[0], 16
        elif size == 0:
            size = len(data) - position  # the last box runs to the end of the file
        if size < header or position + size > len(data):
            raise _jp2_damaged(f"its {box!r} box runs past the end of the file")
        body = data[position + header:position + size]
        if box == b"ftyp" and body[:4] == b"mjp2":
            raise Rejected("Motion JPEG 2000 video (.mj2) is not supported.",
                           RejectionCode.UNSUPPORTED_TYPE)
        if box == b"jp2c" and not code:
            code = body
        boxes[box] = boxes.get(box, 0) + 1
        position += size
    if not code.startswith(J2K_SOC_SIZ):
        raise _jp2_damaged("it holds no codestream")
    return code, boxes


def _j2k_reversible(code: bytes) -> bool:
    """Whether the codestream's default coding style (COD) uses the reversible 5/3 wavelet,
    which JPEG 2000 uses for lossless coding. The main header's marker segments are walked
    from SIZ to COD."""
    position = 2
    for _ in range(MAX_J2K_MARKERS):
        if position + 4 > len(code):
            break
        marker, length = struct.unpack_from(">HH", code, position)
        if marker == 0xFF52:  # COD: Scod, SGcod (4 bytes), SPcod: levels, xcb, ycb, style, wavelet
            if length < 12 or position + 2 + length > len(code):
                raise _jp2_damaged("its coding style segment is cut short")
            return code[position + 13] == 1
        if marker in (0xFF90, 0xFF93, 0xFFD9) or marker < 0xFF00 or length < 2:
            break  # the first tile, or not a marker: the main header has no COD
        position += 2 + length
    raise _jp2_damaged("its main header has no coding style segment")


# --- ICO and CUR icons --------------------------------------------------------------------------

ICON_TYPES = {1: "icon", 2: "cursor"}
MAX_ICON_ENTRIES = 255  # the directory's count is one byte wide in practice (formats.py)
MAX_ICON_DIB_SIDE = 256  # a BMP-coded frame's side; a PNG-coded frame obeys MAX_PIXELS


def _sanitize_icon(src: Path, dst: Path, ctx: Context) -> str:
    """An ICO or CUR file: its directory read and checked here (every entry inside the file),
    the largest picture decoded (an embedded PNG with the PNG decoder and its bomb limits, a
    BMP-coded one through Pillow's icon reader, its AND mask as transparency) and rebuilt as a
    PNG. The other sizes, a cursor's hot spot and anything between or after the entries go."""
    data = src.read_bytes()
    if len(data) < 6 or data[:2] != b"\x00\x00" or data[2] not in (1, 2) or data[3]:
        raise Rejected("The icon is damaged and cannot be decoded.", RejectionCode.DAMAGED)
    what = ICON_TYPES[data[2]]
    count = struct.unpack_from("<H", data, 4)[0]
    if count == 0 or count > MAX_ICON_ENTRIES or 6 + 16 * count > len(data):
        raise Rejected(f"The {what} file's directory is damaged ({count} entries).",
                       RejectionCode.DAMAGED)
    entries = []
    for index in range(count):
        width, height, _colours, _reserved, _p, _b, size, offset = struct.unpack_from(
            "<BBBBHHII", data, 6 + 16 * index)
        if size < 8 or offset < 6 + 16 * count or offset + size > len(data):
            raise Rejected(f"The {what} file's entry {index + 1} points outside the file.",
                           RejectionCode.DAMAGED)
        entries.append(((width or 256) * (height or 256), size, offset))
    _area, size, offset = max(entries, key=lambda e: (e[0], e[1]))
    frame = data[offset:offset + size]
    used = sum(e[1] for e in entries) + 6 + 16 * count
    image = _icon_picture(frame, what)
    with image:
        ctx.add("image_format", f"whole {what}", action="converted",
                detail=f"the largest of {count} picture(s) ({image.width}x{image.height}) "
                "rebuilt as PNG; other sizes" + (" and the hot spot" if what == "cursor" else "")
                + " removed")
        if len(data) > used:
            ctx.add("trailing_data", f"outside the {what}'s pictures", action="removed",
                    detail=f"{len(data) - used} bytes")
        if frame.startswith(b"\x89PNG"):
            kept = _report_metadata(image, src, len(data), "png", ctx, trailing=False)
        else:
            kept = {}
        icc = _validated_icc(image, ctx)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                picture = image.convert("RGBA") if image.mode not in ("1", "L", "LA", "RGB",
                                                                      "RGBA", "P") else image
                _save_single(picture, dst, "png", icc, kept)
        except (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombWarning,
                Image.DecompressionBombError) as exc:
            raise Rejected(f"The {what} is damaged and cannot be decoded.",
                           RejectionCode.DAMAGED) from exc
    ctx.progress(95)
    return "png"


def _icon_picture(frame: bytes, what: str) -> Image.Image:
    """One directory entry's picture, opened: PNG-coded with the PNG decoder (`open_image`: its
    bomb limits), BMP-coded as a one-entry icon for Pillow's reader (XOR bitmap + AND mask)."""
    if frame.startswith(b"\x89PNG\r\n\x1a\n"):
        image = open_image(io.BytesIO(frame), "png")
        try:
            image.load()
        except Exception as exc:
            raise Rejected(f"The {what}'s PNG picture is damaged and cannot be decoded.",
                           RejectionCode.DAMAGED) from exc
        return image
    if len(frame) < 40:
        raise Rejected(f"The {what}'s picture is damaged.", RejectionCode.DAMAGED)
    header, width, height, _planes, bits = struct.unpack_from("<IiiHH", frame, 0)
    height //= 2  # the XOR bitmap and the AND mask
    if header < 40 or not (0 < width <= MAX_ICON_DIB_SIDE and 0 < height <= MAX_ICON_DIB_SIDE):
        raise Rejected(f"The {what}'s bitmap declares an impossible size ({width}x{height}).",
                       RejectionCode.DAMAGED)
    single = struct.pack("<HHHBBBBHHII", 0, 1, 1, width % 256, height % 256, 0, 0, 1, bits,
                         len(frame), 22) + frame
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(single), formats=["ICO"])
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise Rejected("The image is too large (decompression bomb protection).",
                           RejectionCode.BOMB) from exc
        except Exception as exc:
            raise Rejected(f"The {what}'s bitmap is damaged and cannot be decoded.",
                           RejectionCode.DAMAGED) from exc
    if image.size != (width, height):
        raise Rejected(f"The {what}'s bitmap is damaged.", RejectionCode.DAMAGED)
    return image


def _report_metadata(image: Image.Image, src: Path, size: int, kind: str,
                     ctx: Context, trailing: bool = True) -> dict[str, object]:
    """Report the picture's metadata; with the imageMetadata policy "keep", what the output
    carries over (`exif` bytes, `xmp`, `comment`), as far as its format allows."""
    info = image.info
    animated = getattr(image, "n_frames", 1) > 1
    keep = ctx.decides(Rule.IMAGE_METADATA) is Action.KEEP and not animated
    kept: dict[str, object] = {}
    try:
        original: Image.Exif | None = image.getexif()
        exif = original
        if kind == "tiff" and keep and original is not None:
            exif = _tiff_metadata(original)  # a TIFF's own tags are its layout: only metadata
    except Exception:  # noqa: BLE001 - hostile EXIF can make Pillow raise anything; read as no EXIF
        exif = original = None
    if exif and original is not None:
        try:
            gps = original.get_ifd(0x8825)
        except Exception:  # noqa: BLE001 - a hostile GPS block can make Pillow raise anything; read as none
            gps = None
        action: FindingAction = "kept" if keep and kind in KEEPS_EXIF else "removed"
        if gps:
            ctx.add("gps_location", "EXIF GPS", action=action,
                    detail="the place the picture was taken")
        ctx.add("exif", "EXIF", action=action,
                detail=f"{len(exif)} tags (camera, dates, software)")
        if action == "kept":
            exif[0x0112] = 1  # the pixels are written upright
            kept["exif"] = exif.tobytes()
    elif "exif" in info:
        ctx.add("exif", "EXIF", action="removed")
    for key in ("xmp", "XML:com.adobe.xmp"):
        xmp = info.get(key)
        if isinstance(xmp, tuple):  # a TIFF tag read as a tuple of bytes
            xmp = bytes(xmp)
        if xmp:
            action = "kept" if keep and kind in KEEPS_XMP else "removed"
            ctx.add("xmp_metadata", "XMP", action=action, rule=Rule.IMAGE_METADATA)
            if action == "kept":
                kept["xmp"] = xmp if isinstance(xmp, bytes) else str(xmp).encode()
            break
    applist = getattr(image, "applist", None)  # JPEG's APPn segments
    # A TIFF's IPTC tag: looked at when the policy keeps or refuses picture metadata (under
    # remove it goes silently with the other tags, as it always has).
    tags = getattr(image, "tag_v2", None) if kind == "tiff" and \
        ctx.decides(Rule.IMAGE_METADATA) is not Action.REMOVE else None
    if "photoshop" in info or (applist and any(marker == "APP13" for marker, _ in applist)) \
            or (tags is not None and TIFF_IPTC in tags):
        iptc = _iptc(image, kind) if keep and kind in KEEPS_IPTC else None
        if iptc:
            ctx.add("iptc", "Photoshop/IPTC block", action="kept",
                    detail="the IPTC record (captions, keywords, credits); other Photoshop "
                    "resources removed" if kind == "jpeg" else "the IPTC record")
            kept["iptc"] = iptc
        else:
            ctx.add("iptc", "Photoshop/IPTC block", action="removed",
                    detail="not carried over (this format cannot hold it)" if keep else "")
    if any(key in info for key in TEXT_INFO_KEYS) or (kind == "png" and any(
            isinstance(v, str) for k, v in info.items() if k not in ("icc_profile",))):
        action = "kept" if kind in KEEPS_COMMENT and ctx.decides(
            Rule.IMAGE_METADATA) is Action.KEEP and (keep or kind == "gif") else "removed"
        ctx.add("comment", "text chunks/comments", action=action)
        if action == "kept":
            kept["comment"] = {k: v for k, v in info.items() if isinstance(v, str | bytes) and (
                k in TEXT_INFO_KEYS or (kind == "png" and isinstance(v, str)))
                and k not in ("xmp", "XML:com.adobe.xmp", "exif", "icc_profile")}
    trailer = _trailing_bytes(src, size, kind) if trailing else 0
    if trailer:
        ctx.add("trailing_data", "after the end of the image", action="removed",
                detail=f"{trailer} bytes")
    return kept


def _tiff_metadata(tags: Image.Exif) -> Image.Exif:
    """The metadata among a TIFF's tags (TIFF_META_TAGS, the EXIF and GPS directories)."""
    meta = Image.Exif()
    for tag in TIFF_META_TAGS:
        if tag in tags:
            meta[tag] = tags[tag]
    for ifd in (EXIF_IFD, GPS_IFD):
        directory = tags.get_ifd(ifd)
        if directory:
            meta[ifd] = dict(directory)
    return meta


def _iptc(image: Image.Image, kind: str) -> bytes | None:
    """The picture's IPTC record: a JPEG's from its Photoshop resources (APP13), a TIFF's tag."""
    if kind == "tiff":
        value = getattr(image, "tag_v2", {}).get(TIFF_IPTC)
        if isinstance(value, tuple):
            value = bytes(v for v in value if isinstance(v, int) and 0 <= v < 256)
        return value if isinstance(value, bytes) and value else None
    resources = image.info.get("photoshop")
    record = resources.get(IPTC_RESOURCE) if isinstance(resources, dict) else None
    return record if isinstance(record, bytes) and 0 < len(record) < MAX_SEGMENT - 64 else None


def _app13(iptc: bytes) -> bytes:
    """A JPEG APP13 segment holding only the IPTC record, as Photoshop writes it."""
    block = b"8BIM" + struct.pack(">H", IPTC_RESOURCE) + b"\x00\x00" + \
        struct.pack(">I", len(iptc)) + iptc + (b"\x00" if len(iptc) % 2 else b"")
    payload = b"Photoshop 3.0\x00" + block
    return b"\xff\xed" + struct.pack(">H", len(payload) + 2) + payload


def _trailing_bytes(src: Path, size: int, kind: str) -> int:
    """Bytes hidden after the format's end marker (polyglots, appended archives)."""
    tail_len = min(size, 8 * 1024 * 1024)
    with open(src, "rb") as fh:
        fh.seek(size - tail_len)
        tail = fh.read()
    if kind == "jpeg":
        end = tail.rfind(b"\xff\xd9")
        return size - (size - tail_len + end + 2) if end >= 0 else 0
    if kind == "png":
        end = tail.rfind(b"IEND\xaeB`\x82")
        return size - (size - tail_len + end + 8) if end >= 0 else 0
    if kind == "gif":
        stripped = tail.rstrip(b"\x00")
        return 0 if stripped.endswith(b";") else max(0, len(tail) - len(stripped)) or 1
    return 0


def _validated_icc(image: Image.Image, ctx: Context, report_kept: bool = True) -> bytes | None:
    icc = image.info.get("icc_profile")
    if not icc:
        return None
    if len(icc) > MAX_ICC_BYTES:
        ctx.add("icc_profile", "ICC profile", action="removed", detail="implausibly large profile")
        return None
    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        space = profile.profile.xcolor_space.strip()
    except Exception:  # noqa: BLE001 - a hostile ICC profile can make LittleCMS raise anything; it is dropped
        ctx.add("icc_profile", "ICC profile", action="removed", detail="the profile is malformed")
        return None
    expected = ICC_COLOR_SPACE_OF_MODE.get(image.mode)
    if expected and space != expected:
        ctx.add("icc_profile", "ICC profile", action="removed",
                detail=f"profile colour space {space} does not match the image ({image.mode})")
        return None
    if report_kept:
        ctx.add("icc_profile", "ICC profile", action="kept", detail="validated colour profile")
    return bytes(icc)


def _oriented(image: Image.Image) -> Image.Image:
    try:
        orientation = image.getexif().get(0x0112)
    except Exception:  # noqa: BLE001 - hostile EXIF can make Pillow raise anything; no rotation then
        orientation = None
    if orientation in (2, 3, 4, 5, 6, 7, 8):
        return ImageOps.exif_transpose(image)
    image.load()
    return image


def _save_single(image: Image.Image, dst: Path, kind: str, icc: bytes | None,
                 kept: dict[str, object] | None = None) -> None:
    source = image
    qtables = subsampling = None
    progressive = False
    if kind == "jpeg":
        qtables = getattr(image, "quantization", None)
        subsampling = JpegImagePlugin.get_sampling(image)
        progressive = bool(image.info.get("progressive") or image.info.get("progression"))
    dpi = image.info.get("dpi")
    transparency = image.info.get("transparency")
    compression = image.info.get("compression")
    image = _oriented(image)
    if image is source and kind == "tiff":
        image = image.copy()  # TIFF save copies tags from a TiffImageFile; a copy has none
    image.info = {}  # encoders fall back to info for comments/XMP: nothing may survive
    params: dict[str, object] = {}
    if icc:
        params["icc_profile"] = icc
    if dpi and kind in ("jpeg", "png", "tiff", "bmp"):
        params["dpi"] = tuple(float(v) for v in dpi)
    if kind == "jpeg":
        if image.mode not in ("RGB", "L", "CMYK"):
            image = image.convert("RGB")
        if qtables:
            params["qtables"] = qtables
        else:
            params["quality"] = 90
        if subsampling is not None and subsampling >= 0 and image.mode == "RGB":
            params["subsampling"] = subsampling
        params["progressive"] = progressive
    elif kind == "png":
        if transparency is not None and image.mode in ("P", "L", "RGB"):
            params["transparency"] = transparency
        params["compress_level"] = 6
    elif kind == "gif":
        if transparency is not None and image.mode == "P":
            params["transparency"] = transparency
    elif kind == "webp":
        params.update(_webp_params(source))
    elif kind == "tiff":
        params["compression"] = compression if compression in TIFF_COMPRESSIONS and \
            compression not in ("jpeg", "tiff_jpeg") else "tiff_deflate"
        if params["compression"] in ("group3", "group4") and image.mode != "1":
            params["compression"] = "tiff_deflate"
    elif kind == "bmp" and image.mode not in ("1", "L", "P", "RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    params.update(_kept_metadata(kind, kept or {}))
    with open(dst, "wb") as out:
        image.save(out, PILLOW_FORMAT[kind], **params)


def _kept_metadata(kind: str, kept: dict[str, object]) -> dict[str, object]:
    """The encoder parameters that carry over the metadata the policy keeps."""
    params: dict[str, object] = {}
    xmp = kept.get("xmp")
    comments = kept.get("comment")
    if kind == "bmp":
        return params  # BMP holds no metadata
    if kind == "tiff":
        if "exif" not in kept and not xmp and "iptc" not in kept:
            return params
        tags = Image.Exif()
        raw = kept.get("exif")
        if isinstance(raw, bytes):
            tags.load(raw)
        tags.pop(0x0112, None)  # the pixels are written upright
        if isinstance(xmp, bytes):
            tags[TIFF_XMP] = xmp
        if isinstance(kept.get("iptc"), bytes):
            tags[TIFF_IPTC] = kept["iptc"]
        params["exif"] = tags
        return params
    if kind == "gif":
        if isinstance(comments, dict) and comments.get("comment"):
            params["comment"] = comments["comment"]
        return params
    if "exif" in kept:
        params["exif"] = kept["exif"]
    if kind == "png" and (xmp or comments):
        from PIL import PngImagePlugin

        chunks = PngImagePlugin.PngInfo()
        for key, value in (comments if isinstance(comments, dict) else {}).items():
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            chunks.add_itxt(str(key)[:79], text)
        if isinstance(xmp, bytes):
            chunks.add_itxt("XML:com.adobe.xmp", xmp.decode("utf-8", "replace"))
        params["pnginfo"] = chunks
        return params
    if xmp:
        params["xmp"] = xmp
    if kind == "jpeg" and isinstance(comments, dict) and comments.get("comment"):
        params["comment"] = comments["comment"]
    iptc = kept.get("iptc")
    if kind == "jpeg" and isinstance(iptc, bytes):
        params["extra"] = _app13(iptc)  # written beside EXIF, XMP and the profile
    return params


def _webp_params(image: Image.Image) -> dict[str, object]:
    lossless = False
    fp = getattr(image, "fp", None)
    try:
        if fp is not None:
            position = fp.tell()
            fp.seek(0)
            head = fp.read(4096)
            fp.seek(position)
            lossless = b"VP8L" in head and b"VP8 " not in head
    except Exception:  # noqa: BLE001, S110 - the header peek only picks lossless vs lossy; any failure means lossy
        pass
    return {"lossless": True} if lossless else {"quality": 90, "method": 4}


def _save_frames(image: Image.Image, dst: Path, kind: str, icc: bytes | None,
                 ctx: Context, kept: dict[str, object] | None = None) -> None:
    frames: list[Image.Image] = []
    durations: list[int] = []
    disposals: list[int] = []
    loop = image.info.get("loop", 0)
    total = getattr(image, "n_frames", 1)
    for index, frame in enumerate(ImageSequence.Iterator(image)):
        durations.append(int(frame.info.get("duration", 100) or 100))
        # Pillow hands over GIF frames already composed (disposal applied), so a frame is
        # drawn whole: "leave in place" (0, 1) stays, "restore to background/previous" (2, 3)
        # becomes 2 (the next whole frame is drawn on a cleared, transparent canvas).
        disposals.append(1 if getattr(image, "disposal_method", 2) in (0, 1) else 2)
        clean = frame.copy()
        if (kind == "gif" and clean.mode not in ("P", "L", "RGB", "RGBA")) or \
                (kind == "avif" and clean.mode not in ("RGB", "RGBA")):
            clean = clean.convert("RGBA")
        # A palette frame's transparent index is pixel data, not metadata: it stays.
        transparency = clean.info.get("transparency") if clean.mode in ("P", "L") else None
        clean.info = {} if transparency is None else {"transparency": transparency}
        frames.append(clean)
        if index % 20 == 0:
            ctx.progress(20 + 60 * index // max(total, 1))
    params: dict[str, object] = {"save_all": True, "append_images": frames[1:]}
    if kind in ("gif", "png", "webp"):
        params.update(duration=durations, loop=int(loop) if isinstance(loop, int) else 0)
    if kind == "gif":
        params["disposal"] = disposals
        params.update(_kept_metadata("gif", kept or {}))  # comments the policy keeps
    if kind == "webp":
        params.update(_webp_params(image))
    if kind == "avif":
        params.update(duration=durations, quality=AVIF_QUALITY, speed=AVIF_SPEED, exif=b"",
                      xmp=b"")
    if kind == "tiff":
        params["compression"] = "tiff_deflate"
    if icc and kind != "gif":
        params["icc_profile"] = icc
    with open(dst, "w+b") as out:  # the TIFF writer reads back what it wrote
        frames[0].save(out, PILLOW_FORMAT[kind], **params)
    ctx.add("animation", f"{len(frames)} frames", action="kept")


_loaded: set[str] = set()


def load_plugin(kind: str) -> None:
    """Make Pillow able to open `kind` ("heic", "avif", "jxl"). The HEIF and JPEG XL plugins
    are imported here, by the jobs that need them, rather than by every sandbox at start.
    `Rejected` (UNAVAILABLE) when this installation lacks the decoder."""
    if kind in _loaded:
        return
    try:
        if kind == "heic":
            import pillow_heif

            pillow_heif.register_heif_opener()
        elif kind == "jxl":
            import pillow_jxl  # noqa: F401 - registers the JXL plugin with Pillow
        elif kind == "avif":
            from PIL import features

            if not features.check("avif"):
                raise ImportError("Pillow was built without AVIF")
    except (ImportError, OSError) as exc:
        raise Rejected(f"{FORMAT_NAME[kind]} images cannot be read by this installation (its "
                       "decoder is not installed).", RejectionCode.UNAVAILABLE) from exc
    _loaded.add(kind)


def _can_write(kind: str) -> bool:
    """Whether the output can keep the input's format (see `_save_modern`)."""
    if kind == "avif":
        try:
            from PIL import _avif
        except ImportError:
            return False
        return any(_avif.encoder_codec_available(codec) for codec in ("aom", "rav1e", "svt"))
    return kind == "jxl"  # HEIC: see the module's docstring


def _report_containers(image: Image.Image, kind: str, jxl_boxes: frozenset[bytes],
                       ctx: Context) -> None:
    """What the HEIF and JPEG XL containers hold beside the picture (never copied out)."""
    info = image.info
    if kind == "heic":
        thumbnails = len(info.get("thumbnails") or ())
        if thumbnails:
            ctx.add("thumbnail", "HEIF thumbnails", action="removed",
                    detail=f"{thumbnails} preview images (they may show the picture before "
                    "it was edited)")
        aux = info.get("aux") or {}
        auxiliary = len(info.get("depth_images") or ()) + sum(
            len(ids) for ids in aux.values() if isinstance(ids, (list, tuple)))
        if auxiliary:
            ctx.add("auxiliary_image", "HEIF auxiliary images", action="removed",
                    detail=f"{auxiliary} depth maps, mattes or gain maps")
        others = getattr(image, "n_frames", 1) - 1
        if others > 0:
            ctx.add("embedded_image", "HEIF file", action="removed",
                    detail=f"{others} further images; only the primary image is kept")
        items = len(info.get("metadata") or ())
        if items:
            ctx.add("metadata", "HEIF metadata items", action="removed", detail=f"{items} items",
                    rule=Rule.IMAGE_METADATA)
    elif kind == "jxl":
        if b"Exif" in jxl_boxes and not info.get("exif"):
            ctx.add("exif", "EXIF", action="removed")
        if b"xml " in jxl_boxes:
            ctx.add("xmp_metadata", "XMP", action="removed", rule=Rule.IMAGE_METADATA)
        if b"jumb" in jxl_boxes:
            ctx.add("metadata", "JUMBF box", action="removed", rule=Rule.IMAGE_METADATA,
                    detail="content credentials or other embedded data")


def _save_modern(image: Image.Image, dst: Path, kind: str, icc: bytes | None,
                 ctx: Context, kept: dict[str, object] | None = None) -> str:
    """Write a HEIC, AVIF or JPEG XL picture's pixels (one frame); returns the extension."""
    # HEIF: libheif applied the irot/imir transforms and pillow-heif reset the EXIF
    # orientation. AVIF: Pillow's plugin turned irot/imir into the EXIF orientation, applied
    # here. JPEG XL: libjxl applied the codestream's orientation and the Exif box's is to be
    # ignored (ISO/IEC 18181-2), except in a reconstructed JPEG, whose EXIF orientation applies.
    if kind == "jxl" and not getattr(image, "jpeg", False):
        image.load()
    else:
        image = _oriented(image)
    clean = image.copy()  # pixels only: no info, no cached EXIF for a writer to fall back on
    clean.info = {}
    alpha = clean.mode in ("RGBA", "LA", "PA", "RGBa", "La")
    target = kind if _can_write(kind) else ("png" if alpha else "jpeg")
    if target != kind:
        why = ("which every device opens" if kind == "heic"
               else f"this installation cannot write {FORMAT_NAME[kind]}")
        ctx.add("image_format", "whole image", action="converted",
                detail=f"{FORMAT_NAME[kind]} re-encoded as {target.upper()} ({why})")
        if clean.mode not in ("1", "L", "LA", "RGB", "RGBA", "I;16"):
            clean, icc = _converted(clean, "RGBA" if alpha else "RGB", icc)
        _save_single(clean, dst, target, icc, kept)
        return OUTPUT_EXTENSION[target]
    metadata = kept or {}
    if kind == "avif":
        if clean.mode not in ("RGB", "RGBA"):
            clean, icc = _converted(clean, "RGBA" if alpha else "RGB", icc)
        params: dict[str, object] = {"quality": AVIF_QUALITY, "speed": AVIF_SPEED,
                                     "exif": metadata.get("exif") or b"",
                                     "xmp": metadata.get("xmp") or b""}
        if icc:
            params["icc_profile"] = icc
        with open(dst, "wb") as out:
            clean.save(out, "AVIF", **params)
        return "avif"
    if clean.mode not in JXL_MODES:
        clean, icc = _converted(clean, "RGBA" if alpha else "RGB", icc)
    if icc and not _libjxl_srgb(icc):
        clean = _to_srgb(clean, icc, ctx)
    with open(dst, "wb") as out:
        clean.save(out, "JXL", quality=JXL_QUALITY, effort=JXL_EFFORT,
                   exif=metadata.get("exif") or b"", xmp=metadata.get("xmp") or None)
    return "jxl"


def _converted(image: Image.Image, mode: str,
               icc: bytes | None) -> tuple[Image.Image, bytes | None]:
    """`image` in `mode`, and the profile if it still describes it."""
    same = ICC_COLOR_SPACE_OF_MODE.get(image.mode) == ICC_COLOR_SPACE_OF_MODE.get(mode)
    return image.convert(mode), icc if same else None


def _libjxl_srgb(icc: bytes) -> bool:
    """The profile libjxl describes an sRGB (or sRGB-curve grey) image with."""
    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc)).profile
        name = (profile.profile_description or "").strip()
    except (ImageCms.PyCMSError, OSError, ValueError, TypeError):
        return False
    return name == "sRGB" or (name.startswith(("RGB_D65_SRG_", "Gra_D65_"))
                              and name.endswith("_SRG"))


def _to_srgb(image: Image.Image, icc: bytes, ctx: Context) -> Image.Image:
    """The JPEG XL writer embeds no profile and declares sRGB: convert the colours to it."""
    if image.mode in ("RGB", "RGBA"):
        try:
            converted = ImageCms.profileToProfile(
                image, ImageCms.ImageCmsProfile(io.BytesIO(icc)), ImageCms.createProfile("sRGB"),
                outputMode=image.mode)
        except (ImageCms.PyCMSError, OSError, ValueError):
            converted = None
        if converted is not None:
            ctx.add("icc_profile", "ICC profile", action="converted",
                    detail="colours converted to sRGB")
            return converted
    ctx.add("icc_profile", "ICC profile", action="removed",
            detail="a JPEG XL file written here cannot carry it")
    return image


def _jxl_precheck(src: Path) -> frozenset[bytes]:
    """Refuse a JPEG XL image whose header declares more than `MAX_PIXELS` before anything
    decodes it (the plugin decodes the whole picture as it opens it). Returns the types of
    the container's boxes (empty for a bare codestream)."""
    with open(src, "rb") as fh:
        head = fh.read(len(JXL_CONTAINER))
        if head.startswith(JXL_CODESTREAM):
            code, boxes = head + fh.read(32), frozenset[bytes]()
        elif head == JXL_CONTAINER:
            code, boxes = _jxl_boxes(fh)
        else:
            code, boxes = b"", frozenset()
    width, height = _jxl_size(code)
    if width * height > MAX_PIXELS:
        raise Rejected("The image is too large (decompression bomb protection).",
                       RejectionCode.BOMB)
    return boxes


def _jxl_boxes(fh: BinaryIO) -> tuple[bytes, frozenset[bytes]]:
    """Walk the container's boxes (at most `MAX_JXL_BOXES`, by their sizes, reading only
    headers): the first bytes of the codestream (`jxlc`, or the `jxlp` parts in order) and
    the set of box types (a Brotli-compressed `brob` box counts as the type it wraps)."""
    code = b""
    types: set[bytes] = set()
    offset = len(JXL_CONTAINER)
    for _ in range(MAX_JXL_BOXES):
        fh.seek(offset)
        header = fh.read(8)
        if len(header) < 8:
            break
        size, box_type = struct.unpack(">I4s", header)
        body = offset + 8
        if size == 1:
            large = fh.read(8)
            if len(large) < 8:
                break
            size, body = struct.unpack(">Q", large)[0], body + 8
        if size and size < body - offset:
            break  # an impossible size: the decoder will say the file is damaged
        types.add(fh.read(4) if box_type == b"brob" else box_type)
        if box_type in (b"jxlc", b"jxlp") and len(code) < 32:
            start = body + (4 if box_type == b"jxlp" else 0)  # jxlp: a part index first
            fh.seek(start)
            want = 32 - len(code)
            if size:
                want = min(want, offset + size - start)
            code += fh.read(max(0, want))
        if size == 0:
            break  # the last box runs to the end of the file
        offset += size
    return code, frozenset(types)


def _jxl_size(code: bytes) -> tuple[int, int]:
    """(width, height) from a codestream's SizeHeader (ISO/IEC 18181-1, bits LSB first)."""
    if not code.startswith(JXL_CODESTREAM):
        raise Rejected("The JPEG XL image is damaged and cannot be decoded.",
                       RejectionCode.DAMAGED)
    bits, position = int.from_bytes(code[2:18], "little"), 0

    def read(count: int) -> int:
        nonlocal position
        value = (bits >> position) & ((1 << count) - 1)
        position += count
        return value

    def dimension() -> int:
        return 1 + read((9, 13, 18, 30)[read(2)])

    small = read(1)
    height = (read(5) + 1) * 8 if small else dimension()
    ratio = read(3)
    if ratio:
        numerator, denominator = JXL_RATIOS[ratio]
        width = height * numerator // denominator
    else:
        width = (read(5) + 1) * 8 if small else dimension()
    return width, height


def sanitize_bytes(data: bytes, kind: str, ctx: Context) -> bytes:
    """Sanitize an image held in memory (images embedded in SVG or HTML)."""
    import tempfile

    with tempfile.TemporaryDirectory(dir=ctx.workdir) as tmp:
        src, dst = Path(tmp) / "in", Path(tmp) / "out"
        src.write_bytes(data)
        sanitize(src, dst, ctx, kind)
        return dst.read_bytes()
