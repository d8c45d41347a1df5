"""Raster images (JPEG, PNG, GIF incl. animation, WebP, TIFF, BMP): decode and re-encode with
Pillow. The EXIF orientation is applied first, then everything but the pixels is dropped
(EXIF, XMP, IPTC, comments, text chunks, trailing data); a validated ICC profile is kept.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

from PIL import Image, ImageCms, ImageFile, ImageOps, ImageSequence, JpegImagePlugin

from sanitas.engine.report import Context, Rejected, RejectionCode

MAX_PIXELS = 150_000_000  # per frame
MAX_TOTAL_PIXELS = 600_000_000  # all frames together
MAX_FRAMES = 2000
MAX_ICC_BYTES = 4 * 1024 * 1024
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
ImageFile.LOAD_TRUNCATED_IMAGES = False

PILLOW_FORMAT = {"jpeg": "JPEG", "png": "PNG", "gif": "GIF", "webp": "WEBP", "tiff": "TIFF",
                 "bmp": "BMP"}
OUTPUT_EXTENSION = {"jpeg": "jpg", "png": "png", "gif": "gif", "webp": "webp", "tiff": "tiff",
                    "bmp": "bmp"}
ICC_COLOR_SPACE_OF_MODE = {"RGB": "RGB", "RGBA": "RGB", "P": "RGB", "L": "GRAY", "LA": "GRAY",
                           "CMYK": "CMYK", "I;16": "GRAY", "I": "GRAY", "1": "GRAY"}
TIFF_COMPRESSIONS = {"raw", "tiff_lzw", "tiff_deflate", "tiff_adobe_deflate", "packbits",
                     "group3", "group4", "jpeg", "tiff_jpeg"}
TEXT_INFO_KEYS = {"comment", "comments", "description", "Description", "Author", "Software",
                  "Comment", "Title", "Copyright", "Creation Time", "Source", "Disclaimer",
                  "Warning", "XML:com.adobe.xmp", "parameters", "prompt"}


def open_image(src: Path | io.BytesIO, kind: str) -> Image.Image:
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(src, formats=[PILLOW_FORMAT[kind]] + (
                ["MPO"] if kind == "jpeg" else []))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise Rejected("The image is too large (decompression bomb protection).",
                           RejectionCode.BOMB) from exc
        except Exception as exc:
            raise Rejected(f"The {kind.upper()} image is damaged and cannot be decoded.",
                           RejectionCode.DAMAGED) from exc
    width, height = image.size
    if width <= 0 or height <= 0 or width * height > MAX_PIXELS:
        raise Rejected("The image is too large (decompression bomb protection).",
                       RejectionCode.BOMB)
    frames = getattr(image, "n_frames", 1)
    if frames > MAX_FRAMES or frames * width * height > MAX_TOTAL_PIXELS:
        raise Rejected("The animation has too many or too large frames (decompression bomb "
                       "protection).", RejectionCode.BOMB)
    return image


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    data_size = src.stat().st_size
    image = open_image(src, kind)
    with image:
        _report_metadata(image, src, data_size, kind, ctx)
        icc = _validated_icc(image, ctx)
        ctx.progress(20)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                if getattr(image, "n_frames", 1) > 1 and kind in ("gif", "png", "webp", "tiff"):
                    _save_frames(image, dst, kind, icc, ctx)
                else:
                    _save_single(image, dst, kind, icc)
        except Rejected:
            raise
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombWarning,
                Image.DecompressionBombError, EOFError) as exc:
            raise Rejected(f"The {kind.upper()} image is damaged and cannot be decoded.",
                           RejectionCode.DAMAGED) \
                from exc
    ctx.progress(95)
    return OUTPUT_EXTENSION[kind]


def _report_metadata(image: Image.Image, src: Path, size: int, kind: str, ctx: Context) -> None:
    info = image.info
    try:
        exif = image.getexif()
    except Exception:
        exif = None
    if exif:
        try:
            gps = exif.get_ifd(0x8825)
        except Exception:
            gps = None
        if gps:
            ctx.add("gps_location", "EXIF GPS", action="removed",
                    detail="the place the picture was taken")
        ctx.add("exif", "EXIF", action="removed",
                detail=f"{len(exif)} tags (camera, dates, software)")
    elif "exif" in info:
        ctx.add("exif", "EXIF", action="removed")
    for key in ("xmp", "XML:com.adobe.xmp"):
        if info.get(key):
            ctx.add("xmp_metadata", "XMP", action="removed")
            break
    if "photoshop" in info or getattr(image, "applist", None) and any(
            marker == "APP13" for marker, _ in image.applist):
        ctx.add("iptc", "Photoshop/IPTC block", action="removed")
    if any(key in info for key in TEXT_INFO_KEYS) or kind == "png" and any(
            isinstance(v, str) for k, v in info.items() if k not in ("icc_profile",)):
        ctx.add("comment", "text chunks/comments", action="removed")
    trailer = _trailing_bytes(src, size, kind)
    if trailer:
        ctx.add("trailing_data", "after the end of the image", action="removed",
                detail=f"{trailer} bytes")


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


def _validated_icc(image: Image.Image, ctx: Context) -> bytes | None:
    icc = image.info.get("icc_profile")
    if not icc:
        return None
    if len(icc) > MAX_ICC_BYTES:
        ctx.add("icc_profile", "ICC profile", action="removed", detail="implausibly large profile")
        return None
    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        space = profile.profile.xcolor_space.strip()
    except Exception:
        ctx.add("icc_profile", "ICC profile", action="removed", detail="the profile is malformed")
        return None
    expected = ICC_COLOR_SPACE_OF_MODE.get(image.mode)
    if expected and space != expected:
        ctx.add("icc_profile", "ICC profile", action="removed",
                detail=f"profile colour space {space} does not match the image ({image.mode})")
        return None
    ctx.add("icc_profile", "ICC profile", action="kept", detail="validated colour profile")
    return bytes(icc)


def _oriented(image: Image.Image) -> Image.Image:
    try:
        orientation = image.getexif().get(0x0112)
    except Exception:
        orientation = None
    if orientation in (2, 3, 4, 5, 6, 7, 8):
        return ImageOps.exif_transpose(image)
    image.load()
    return image


def _save_single(image: Image.Image, dst: Path, kind: str, icc: bytes | None) -> None:
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
    params: dict = {}
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
    elif kind == "bmp":
        if image.mode not in ("1", "L", "P", "RGB", "RGBA"):
            image = image.convert("RGBA" if "A" in image.mode else "RGB")
    with open(dst, "wb") as out:
        image.save(out, PILLOW_FORMAT[kind], **params)


def _webp_params(image: Image.Image) -> dict:
    lossless = False
    fp = getattr(image, "fp", None)
    try:
        if fp is not None:
            position = fp.tell()
            fp.seek(0)
            head = fp.read(4096)
            fp.seek(position)
            lossless = b"VP8L" in head and b"VP8 " not in head
    except Exception:
        pass
    return {"lossless": True} if lossless else {"quality": 90, "method": 4}


def _save_frames(image: Image.Image, dst: Path, kind: str, icc: bytes | None,
                 ctx: Context) -> None:
    frames: list[Image.Image] = []
    durations: list[int] = []
    loop = image.info.get("loop", 0)
    total = getattr(image, "n_frames", 1)
    for index, frame in enumerate(ImageSequence.Iterator(image)):
        durations.append(int(frame.info.get("duration", 100) or 100))
        clean = frame.copy()
        if kind == "gif" and clean.mode not in ("P", "L", "RGB", "RGBA"):
            clean = clean.convert("RGBA")
        clean.info = {}
        frames.append(clean)
        if index % 20 == 0:
            ctx.progress(20 + 60 * index // max(total, 1))
    params: dict = {"save_all": True, "append_images": frames[1:]}
    if kind in ("gif", "png", "webp"):
        params.update(duration=durations, loop=int(loop) if isinstance(loop, int) else 0)
    if kind == "gif":
        params["disposal"] = 2
    if kind == "webp":
        params.update(_webp_params(image))
    if kind == "tiff":
        params["compression"] = "tiff_deflate"
    if icc and kind != "gif":
        params["icc_profile"] = icc
    with open(dst, "w+b") as out:  # the TIFF writer reads back what it wrote
        frames[0].save(out, PILLOW_FORMAT[kind], **params)
    ctx.add("animation", f"{len(frames)} frames", action="kept")


def sanitize_bytes(data: bytes, kind: str, ctx: Context) -> bytes:
    """Sanitize an image held in memory (images embedded in SVG or HTML)."""
    import tempfile

    with tempfile.TemporaryDirectory(dir=ctx.workdir) as tmp:
        src, dst = Path(tmp) / "in", Path(tmp) / "out"
        src.write_bytes(data)
        sanitize(src, dst, ctx, kind)
        return dst.read_bytes()
