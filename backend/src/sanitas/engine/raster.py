"""Advanced mode: pixel reconstruction (the Dangerzone idea). Each page is rendered with PDFium
and a new PDF is built from nothing but those pixels, one JPEG image per page at the page's own
size. Fonts, scripts, forms, annotations and any parser trick of the source are gone.

Optional OCR text layer (policy `ocr`, setting SANITAS_OCR): each page image also goes through
`tesseract ... pdf` and its invisible text layer is overlaid, so the text stays searchable.
It costs about a second per page, so it is off by default.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
from pikepdf import Array, Dictionary, Name

from sanitas.engine.pdf import check_output
from sanitas.engine.report import Context, Rejected, RejectionCode

DPI = 150
JPEG_QUALITY = 90
MAX_PAGES = 5000
MAX_PIXELS_PER_PAGE = 60_000_000  # a poster-sized page is rendered at a lower DPI
MAX_PAGE_POINTS = 14_400  # the PDF limit (200 inches)


def rebuild_from_pixels(src: Path, dst: Path, ctx: Context, dpi: int = DPI) -> str:
    try:
        document = pdfium.PdfDocument(str(src))
    except pdfium.PdfiumError as exc:
        raise Rejected("The document cannot be rendered (PDFium refused it).",
                       RejectionCode.DAMAGED) from exc
    ocr = shutil.which("tesseract") if ctx.policy.ocr else None
    try:
        count = len(document)
        if count == 0:
            raise Rejected("The document has no pages.", RejectionCode.NO_CONTENT)
        if count > MAX_PAGES:
            raise Rejected(f"The document has too many pages for pixel reconstruction "
                           f"({count}; the limit is {MAX_PAGES}).", RejectionCode.TOO_COMPLEX)
        out = pikepdf.new()
        for index in range(count):
            page = document[index]
            try:
                width, height = page.get_size()  # points, after /Rotate
                if not (0 < width <= MAX_PAGE_POINTS and 0 < height <= MAX_PAGE_POINTS):
                    raise Rejected(f"Page {index + 1} has an impossible size.",
                                   RejectionCode.DAMAGED)
                scale = dpi / 72
                if width * height * scale * scale > MAX_PIXELS_PER_PAGE:
                    scale = (MAX_PIXELS_PER_PAGE / (width * height)) ** 0.5
                bitmap = page.render(scale=scale, may_draw_forms=False, draw_annots=True,
                                     rev_byteorder=True, fill_color=(255, 255, 255, 255))
                picture = bitmap.to_pil()
                if picture.mode != "RGB":
                    picture = picture.convert("RGB")
                buffer = io.BytesIO()
                picture.save(buffer, "JPEG", quality=JPEG_QUALITY)  # 4:2:0: text edges are luma
                _add_image_page(out, buffer.getvalue(), picture.size, (width, height))
                if ocr:
                    _overlay_ocr(out, picture, (width, height), ocr, ctx)
                bitmap.close()
            finally:
                page.close()
            ctx.pages_rebuilt.append(index + 1)
            ctx.progress(10 + 85 * (index + 1) // count)
        out.save(dst, compress_streams=True, deterministic_id=True)
        out.close()
    finally:
        document.close()
    check_output(dst, count)  # read back by qpdf and PDFium before it is accepted
    ctx.add("pixel_reconstruction", f"{count} page(s)", action="converted",
            detail=f"every page rebuilt from {dpi} DPI pixels" +
            ("; OCR text layer added" if ocr else
             "; no text layer (OCR requested but tesseract is not installed)" if ctx.policy.ocr
             else ""))
    return "pdf"


def _add_image_page(out: pikepdf.Pdf, jpeg: bytes, pixels: tuple[int, int],
                    points: tuple[float, float]) -> None:
    width, height = points
    image = pikepdf.Stream(out, jpeg, Type=Name.XObject, Subtype=Name.Image,
                           Width=pixels[0], Height=pixels[1], ColorSpace=Name.DeviceRGB,
                           BitsPerComponent=8, Filter=Name.DCTDecode)
    content = pikepdf.Stream(out, f"q {width:.4f} 0 0 {height:.4f} 0 0 cm /P0 Do Q".encode())
    page = Dictionary(Type=Name.Page, MediaBox=Array([0, 0, width, height]),
                      Resources=Dictionary(XObject=Dictionary(P0=image)), Contents=content)
    out.pages.append(pikepdf.Page(page))


def _overlay_ocr(out: pikepdf.Pdf, picture, points: tuple[float, float], tesseract: str,
                 ctx: Context) -> None:
    """Add tesseract's invisible text (its 'textonly_pdf' output) over the last page."""
    assert ctx.workdir is not None
    base = ctx.workdir / "ocr"
    picture.save(base.with_suffix(".png"))
    try:
        # One OpenMP thread: tesseract's default team spins on 2 cores (5 s a page, not 1).
        subprocess.run([tesseract, str(base.with_suffix(".png")), str(base), "-c",
                        "textonly_pdf=1", "pdf"], check=True, capture_output=True, timeout=120,
                       env={**os.environ, "OMP_THREAD_LIMIT": "1"})
        with pikepdf.open(base.with_suffix(".pdf")) as text_pdf:
            page = out.pages[-1]
            page.add_overlay(text_pdf.pages[0], pikepdf.Rectangle(0, 0, *points))
    except (subprocess.SubprocessError, OSError, pikepdf.PdfError):
        ctx.add("ocr", f"page {len(out.pages)}", action="removed",
                detail="OCR failed; no text layer")
