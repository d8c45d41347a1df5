"""A picture of a sanitized file for the status page: its first page (PDF) or its picture
(the first frame of an image), as a PNG of at most `max_side` pixels on its long side with
no metadata (no text chunks, ICC profile, EXIF or resolution: the pixels only).

Run on the sanitized output only, inside the sandbox that produced it (sandbox/child.py
renders it after the job's result is out, on its own time budget). Office documents, text,
SVG, archives and e-books get none: rendering them would need LibreOffice (seconds of CPU
and hundreds of MB per file) or a renderer the engine does not have; `can_preview` says so.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import BinaryIO

from PIL import Image

from sanitas.engine.report import Rejected

MAX_SIDE = 800
# The output types a preview is drawn for, and the image kind each is opened as.
IMAGE_KINDS = {"jpg": "jpeg", "png": "png", "gif": "gif", "webp": "webp", "tiff": "tiff",
               "bmp": "bmp", "avif": "avif", "jxl": "jxl"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class PreviewUnavailable(Exception):
    """No preview can be drawn for this output (its type, or a page or image that does not
    render); the file itself is unaffected."""


def can_preview(output_type: str | None) -> bool:
    return output_type == "pdf" or output_type in IMAGE_KINDS


def render_preview(src: Path, output_type: str, target: BinaryIO,
                   max_side: int = MAX_SIDE) -> tuple[int, int]:
    """Write the PNG preview of the sanitized file `src` (of `output_type`) to `target`;
    returns its (width, height), each at most `max_side`. PreviewUnavailable when there is
    none to draw."""
    if max_side < 1:
        raise ValueError("max_side must be positive")
    if output_type == "pdf":
        picture = _first_page(src, max_side)
    elif output_type in IMAGE_KINDS:
        picture = _first_frame(src, IMAGE_KINDS[output_type], max_side)
    else:
        raise PreviewUnavailable(f"no preview for {output_type!r} files")
    picture = _plain(picture)
    if picture.width > max_side or picture.height > max_side:  # rounding up in a renderer
        picture.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    # A fresh image from the bare pixels: nothing of the source's `info` (ICC profile, text,
    # EXIF, dpi, transparency key) can reach the PNG writer.
    bare = Image.frombytes(picture.mode, picture.size, picture.tobytes())
    # Level 1: a photo's preview is written five times faster than at zlib's default (about
    # 40 ms instead of 200 for 800 x 533 pixels) and comes out some 15 % larger.
    bare.save(target, "PNG", compress_level=1)
    return bare.size


def _fitted(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    """The size `size` scales to so that its longer side is at most `max_side`."""
    width, height = size
    scale = min(1.0, max_side / max(width, height, 1))
    return max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale))


def _first_page(src: Path, max_side: int) -> Image.Image:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(str(src))
    except pdfium.PdfiumError as exc:
        raise PreviewUnavailable("the document does not open") from exc
    try:
        if len(document) == 0:
            raise PreviewUnavailable("the document has no pages")
        page = document[0]
        width, height = page.get_size()  # points, after /Rotate
        if not (width > 0 and height > 0):
            raise PreviewUnavailable("the first page has no size")
        scale = max_side / max(width, height)
        if min(width, height) * scale < 1:
            raise PreviewUnavailable("the first page is too narrow to draw")
        bitmap = page.render(scale=scale, may_draw_forms=False, draw_annots=True,
                             rev_byteorder=True, fill_color=(255, 255, 255, 255))
        picture: Image.Image = bitmap.to_pil()
        return picture.convert("RGB")
    except pdfium.PdfiumError as exc:
        raise PreviewUnavailable("the first page does not render") from exc
    finally:
        document.close()


def _first_frame(src: Path, kind: str, max_side: int) -> Image.Image:
    from sanitas.engine.image import open_image

    try:
        image = open_image(src, kind)  # the engine's bomb limits and plugins
    except Rejected as exc:
        raise PreviewUnavailable(exc.reason) from exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image.seek(0)
            if kind == "jpeg":  # decode at a fraction of the size, no smaller than the preview
                image.draft("RGB", _fitted(image.size, max_side))
            picture = _plain(image)  # before scaling: a palette image would scale by nearest
            picture.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            return picture if picture is not image else picture.copy()
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise PreviewUnavailable("the image does not decode") from exc
    finally:
        image.close()


def _plain(picture: Image.Image) -> Image.Image:
    """RGB, or RGBA when the picture has transparency."""
    if picture.mode in ("RGB", "RGBA"):
        return picture
    if picture.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        return picture.convert("I").point(lambda v: v / 256).convert("L").convert("RGB")
    alpha = picture.mode in ("LA", "PA", "La", "RGBa") or (
        picture.mode == "P" and "transparency" in picture.info)
    return picture.convert("RGBA" if alpha else "RGB")


def png_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's signature and IHDR chunk (its first 24 bytes), None when
    `head` does not start like a PNG. A bounded header read, for the service's check of what
    the sandbox wrote."""
    if len(head) < 24 or not head.startswith(PNG_SIGNATURE) or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
