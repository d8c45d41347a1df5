"""Advanced mode: pixel reconstruction (the Dangerzone idea). Each page is rendered with PDFium
and a new PDF is built from nothing but those pixels, one image per page at the page's own
size. Fonts, scripts, forms, annotations and any parser trick of the source are gone.

Resolution: 150 DPI, except that a page whose short side would get fewer than MIN_SHORT_SIDE
(1000) pixels, i.e. is under 480 pt (6.7 in) across (A5, slides, cards, labels), is rendered at
the scale that gives it 1000: A5 at 171 DPI, a business card at 500, a 20 x 30 pt label at 3600
instead of 42 x 62 pixels. 1000 px is about what a letter or A4 page gets at 150 DPI (1240-1275),
so a small page shown full-screen is about as sharp as a normal one. The raise never makes the
long side exceed 30000 px (what the longest possible page gets at 150 DPI, within JPEG's 65500),
and MAX_PIXELS_PER_PAGE bounds every page. Text that 150 DPI pixels do not keep legible at low
zoom is rendered at 200 (see "At low zoom" below); the report says how many pages were.

Encoding, chosen per page from a 1/4 nearest-neighbour sample of the rendered bitmap (~2 ms;
the sample keeps real pixel values, where a box-filtered copy would invent blends):
- photographic (more than 1024 distinct colours in the sample, or more than 5% of neighbouring
  sample pixels differing by 1-6 grey levels: photographs and gradients): JPEG, quality 90.
- colour, or grey that is a fill rather than anti-aliasing (a grey level ten times as frequent
  as its neighbours; anti-aliasing spreads evenly over all of them): an indexed image of at most
  16 of the page's own colours (the most frequent ones at least 32 apart), 4 bits a pixel,
  Flate. Flat colours stay exact; edges snap to the nearest palette colour.
- everything else, black-and-white text and line art: 1 bit a pixel. Ink is what is darker
  than 128, plus anything darker than 224 more than a pixel from such ink: light-grey text and
  hairlines, which a plain threshold drops, survive (as black); next to dark ink the same
  shades are anti-aliasing and stay paper. The ink is symbol-coded (`symbols.py`: each distinct
  shape once, as a Type 3 glyph, the page as text showing them; lossless), or, where shapes do
  not repeat, one CCITT Group 4 image (Pillow's libtiff).
The two lossy choices are then checked (`encode`): the page as black-and-white, or as its 16
colours, against the rendered page, both reduced 4 x (box filter), by SSIM (8 x 8 windows, as
tests/engine/fidelity.py scores at 72 DPI; 1-2 ms). Below MIN_SIMILARITY the page gets the next
richer encoding that holds: 16 colours, then the 256 most frequent (8 bits a pixel), then JPEG.
What the check sees, reduced 4 x / and the page at 72 DPI against the original:
  black-and-white: text pages 0.981-0.997 / 0.915-0.95; a two-column page with a 260 x 200 pt
    greyscale photograph of a grainy surface 0.894 / 0.855 (kept at >= 0.96: it gets 16 greys,
    0.999 / 0.973, 209 KB where JPEG takes 605)
  16 colours: letters, grey fills, text, labels 0.999-1.000; a page-sized map of 48 steps of a
    colour ramp (a heat map, a geological map's near unit colours) 0.857 / 0.868, with
    neighbouring colours not graded 0.970-0.972 / 0.906-0.921 (kept at >= 0.98: 256 colours,
    1.000 / 0.982, 89 KB where JPEG takes 180)
  The check adds 2-5 ms of CPU to a black-and-white page, 5-6 to a palette page (measured on
  a loaded machine); a page that fails pays for the richer encoding too (~40 ms for 256
  colours).

At low zoom (72 DPI, where tests/engine/fidelity.py scores), what a reader does with the
rebuilt page matters as much as its pixels:
- Placement. A picture's matrix and the MediaBox carry the same numbers (`_page_points`
  rounds to 4 decimals): LibreOffice's A4 is 595.303955 x 841.889771 pt, and a matrix of
  841.8898 made PDFium draw the picture a device pixel larger, every line a pixel off (a
  palette page 0.877, now 0.983; the LibreOffice article as any image page 0.79-0.81, now
  0.93-0.96). A symbol-coded page's large pieces (rules, frames, contours) are one picture of
  the page under the glyphs, not a picture each, which PDFium placed on whole device pixels
  (0.3 pt contours 0.893, now 0.951, same bytes).
- Hairlines. Readers draw a stroke thinner than a device pixel one pixel wide, so at 72 DPI
  a table's 0.25 pt borders are dark 1 pt lines, and any picture of them is reduced to light
  grey ones: 0.867 as the palette such a page got, lossless 0.863, and worse with more pixels
  (0.799 at 200 DPI, 0.722 at 300: the picture's lines get thinner, the reader's do not).
  `hairlines` finds straight runs across or down, at least 48 px long, 1-2 px thick with paper
  beside them and under 1.25 px of darkness summed across (0.6 pt), at least 8 on a page
  that is not a photograph or glyph-only text; they are painted out of the picture and drawn
  over it as lines of their own place, width and colour, which at the rendering's resolution
  are the same pixels and at lower zoom what the reader drew of the original: the table 0.970
  at 72 DPI (0.973 at 150, 0.914 at 300 where the palette gave 0.869), 16 KB where the
  palette took 109 (its text symbol-coded); grey and blue borders 0.96; a LibreOffice HTML
  table 0.949 -> 0.974 (98 -> 13 KB for 2 pages). CPU, A/B interleaved: 2-8 ms more a palette
  page (looked for on every 8th column first), 18 more on the contour map (runs found, too
  few kept), 85 more on the table (477 lines, then its text symbol-coded: 31 -> 116 ms).
  Colour photographs and glyph-only text pay nothing.
  Slanted lines (`_diagonals`: hatching, slanted rules and frames) the same way, once the
  lines across and down are gone: the page's directions from a histogram of its edges'
  gradients and, where one stands out, the dark pixels projected across every direction;
  along each, the lines where that projection peaks, followed column by column (dark within
  0.75 px of the line, paper 1.45-2.1 px from it, gaps of 4 columns at crossings), kept when
  48 px long, thin, and straight (97% of its columns within 0.5 px of the fitted line:
  curves are not; the contour map still 0.951, no line drawn). 0.2 pt hatching 1.6 pt
  apart at 45, -45 and 30 degrees in framed boxes: 0.872 -> 0.993 (37 -> 19 KB),
  cross-hatched 0.848 -> 0.945 (49 -> 40 KB); about 1.2-1.5 ms a line (CPU a page, A/B
  interleaved: 0.09-0.13 -> 0.9-1.1 s for the 656 of the first), and more than
  MAX_DIAGONALS (1500) on a page leaves them all as pixels (a 7200 x 800 pt poster of 2400
  lines spends 4.4 s finding that out, and about 280 MB more than before at its peak: 25
  million pixels, each array of them in int32 and a band of rows at a time where it can
  be; more than two peaks along a direction for each line left to find give up at once).
  A page without slanted lines pays for the edges' histogram, on every 4th row: about 4 ms
  (the table, the contour map, a palette page; cProfile and an interleaved A/B). A page
  hatched all over passes for a photograph (its anti-aliasing is smooth): JPEG pages of few
  colours (MAX_FLAT_COLOURS in the sample) are looked at too, and it went from JPEG, 0.798
  and 1177 KB, to 0.993 and 7 KB; a grey photograph pays 3-6 ms for it, a colour one
  nothing.
- Text. Thresholded text at 150 DPI scores 0.93-0.95 on most pages but 0.915-0.919 on a
  LibreOffice article with embedded fonts (11 pt Liberation Serif), lossless pictures of it
  0.93-0.94 at 3-5x the bytes. A glyph-only symbol-coded page is compared with PDFium's own
  72 DPI rendering (`seen_at`: the stored page halved and resized, SSIM; 44 -> 56 ms a page of
  the bench's 10-page paper, with the rendering; it reads 0.015-0.02 under fidelity.py's
  figure: 0.917-0.922 on that paper's pages, which stay at 150); under SHARPEN_BELOW (0.91) the
  page is rendered again at SHARPER_DPI (200) and kept so when that reads SHARPER_GAIN higher,
  and once a page was, the document's text pages start at 200 (one glyph set: half at 150 and
  half at 200 took 23% more bytes than all at 200). The article: 0.922-0.96, 20.7 KB a page
  where 150 DPI took 17.4: 1.78x its input, 2.13x with the OCR layer (1.50x and 1.86x at
  150), and about 1.9x the CPU (47 -> 88 ms a page). More than 200 DPI gains little
  (0.925-0.927 at 300). Pages with large pieces or hairlines are not re-rendered: more pixels
  make lines thinner than readers draw them (the contour map 0.951 at 150 DPI, 0.847 at 200).

Measured at 150 DPI (tests/engine/papers.py, LibreOffice exports, tests/engine/corpus.py), KB
per page and SSIM against the original at 72 DPI (tests/engine/fidelity.py); * = chosen:
  dense two-column text     JPEG 596 0.978 | palette 155 0.978 | G4* 53 0.952
  LibreOffice letter        JPEG 438 0.972 | palette 110 0.972 | G4* 31 0.956
  text and colour shapes    JPEG 290 0.986 | palette* 34 0.986 | G4 17 0.913 (colour lost)
  text and grey fills       JPEG 454 0.984 | palette* 124 0.984 | G4 39 0.877 (fills lost)
  full-page photograph      JPEG* 286 0.984 | palette 121 0.700
Also measured on the dense page: 2-bit grey 94 KB 0.975; 1-bit Flate 58 KB (level 1) to 53 KB
(level 6, as slow as G4). A text page as G4 is 11-14x smaller than as JPEG, but still costs
~50 KB of pixels however few bytes its text took: output / input, JPEG then G4, a one-page
LibreOffice letter 21x, 1.5x; a 4-page report 51x, 3.8x; a 5-page two-column paper 62x, 5.1x; a
generated one, fonts not embedded (3 KB a page), 223x, 20x. Symbol coding takes text pages
under 2x (figures in symbols.py) and is at least as faithful at 72 DPI as G4 (the "G4" SSIM
column above is the bitmap both encode). Palette pages cost what JPEG pages did.

Text: pixels carry none, so a rebuilt page cannot be searched, copied from or read aloud. When
the policy's output is "pdf+ocr" (the built-in advanced mode's, unless SANITAS_OCR=false), the
pages whose original had text or whose pixels look like text are recognised by tesseract in
the background while the next pages render, and get an invisible text layer (`ocr.py`); the
`ocr` finding says so ("text layer rebuilt by OCR"). Output "pdf" keeps the pixels only and the
report says "pages rebuilt from pixels: original text not kept".
"""

from __future__ import annotations

import io
import shutil
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pypdfium2_raw as pdfium_c
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageChops, TiffImagePlugin

from sanitas.engine import ocr
from sanitas.engine.pdf import check_output
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.symbols import SymbolPages, looks_like_text

DPI = 150
MIN_SHORT_SIDE = 1000  # pixels on a page's short side: small pages are rendered at more DPI
MAX_RAISED_SIDE = 30_000  # the raise stops at this long side (14400 pt at 150 DPI)
JPEG_QUALITY = 90
MAX_PAGES = 5000
MAX_PIXELS_PER_PAGE = 60_000_000  # a poster-sized page is rendered at a lower DPI
MAX_PAGE_POINTS = 14_400  # the PDF limit (200 inches)

SAMPLE_STEP = 4  # the classifier looks at every 4th pixel of every 4th row
MAX_FLAT_COLOURS = 1024  # more distinct colours in the sample: photographic
SMOOTH_STEP = 6  # neighbours differing by 1..6 grey levels are a gradient or a photograph
MAX_SMOOTH_SHARE = 0.05  # dense text: <= 0.03; a page-wide gradient 0.11, a photograph 0.64
GREY_CHROMA = 24  # max - min channel above this is colour
MAX_COLOUR_SHARE = 0.0002  # about 10 x 10 pt of colour makes a page a palette page
FILL_SPIKE = 10  # a fill: 10x as frequent as its neighbouring grey levels (text peaks at 5x)
MIN_FILL_SHARE = 0.001
PALETTE_SIZE = 16
RICH_PALETTE_SIZE = 256  # the next richer palette: 8 bits a pixel
CHECK_REDUCTION = 4  # the chooser measures a candidate at a quarter of the rendering
MIN_SIMILARITY = {"bilevel": 0.96, "palette": 0.98}  # a candidate scoring less is not kept
PALETTE_APART = 32  # palette colours are at least this far apart (RGB distance)
INK_LEVEL = 128  # darker is ink
MARK_LEVEL = 224  # darker, a pixel from ink: ink too (light text, lines); + 31 must be <= 255
FIDELITY_DPI = 72  # black-and-white pages are compared with the original at this resolution
SHARPEN_BELOW = 0.91  # estimated (`seen_at`; ~0.926 as fidelity.py scores): try SHARPER_DPI
SHARPER_DPI = 200
SHARPER_GAIN = 0.005  # the sharper rendering is kept when its estimate is this much higher
FLATE_LEVEL = 1  # palette pages: level 6 saves 12-50% of the bytes in 3-5x the time (~15 ms)

_CEILING = [(INK_LEVEL if v < INK_LEVEL else MARK_LEVEL) + 31 for v in range(256)]


@dataclass(frozen=True)
class Encoded:
    encoding: str  # "bilevel", "palette" or "jpeg": the finding counts the pages of each
    data: bytes  # the image stream, encoded
    entries: dict[str, object]  # the image dictionary's ColorSpace, BitsPerComponent, Filter...


def rebuild_from_pixels(src: Path, dst: Path, ctx: Context, dpi: int = DPI) -> str:
    try:
        document = pdfium.PdfDocument(str(src))
    except pdfium.PdfiumError as exc:
        raise Rejected("The document cannot be rendered (PDFium refused it).",
                       RejectionCode.DAMAGED) from exc
    encodings: Counter[str] = Counter()
    raised = sharpened = lined = 0
    recogniser: ocr.Recogniser | None = None
    try:
        count = len(document)
        if count == 0:
            raise Rejected("The document has no pages.", RejectionCode.NO_CONTENT)
        if count > MAX_PAGES:
            raise Rejected(f"The document has too many pages for pixel reconstruction "
                           f"({count}; the limit is {MAX_PAGES}).", RejectionCode.TOO_COMPLEX)
        recogniser, no_ocr = _recogniser(ctx, count)
        out = pikepdf.new()
        symbols = SymbolPages(out)
        sizes: dict[int, tuple[float, float]] = {}
        for index in range(count):
            page = document[index]
            try:
                points = _page_points(page, index)
                scale = page_scale(*points, dpi)
                raised += scale > dpi / 72
                built = _rebuild_page(page, out, symbols, points, scale, sharpened > 0)
                if built.scale > scale:
                    sharpened += 1
                lined += built.hairlines > 0
                out.pages.append(built.page)
                encodings[built.encoding] += 1
                if recogniser is not None:
                    chosen, text_height = _has_words(page, built.picture, built.ink)
                    if chosen:
                        recogniser.add(index, built.picture, built.scale * 72, text_height)
                        sizes[index] = points
            finally:
                page.close()
            ctx.pages_rebuilt.append(index + 1)
            share = 25 if recogniser is not None else 85  # the rest is recognition
            ctx.progress(10 + share * (index + 1) // count)
        symbols.finish()
        text_pages: list[int] = []
        failed: list[int] = []
        if recogniser is not None:
            found, failed = recogniser.finish(lambda done: ctx.progress(35 + int(60 * done)))
            recogniser = None
            font = None
            for index, recognised in sorted(found.items()):
                font = font or ocr.glyphless_font(out)
                if ocr.add_text_layer(out, out.pages[index], recognised.lines,
                                      recognised.pixels, sizes[index], font):
                    text_pages.append(index + 1)
        # No deterministic_id: with it, qpdf throws from a destructor when the job's file-size
        # limit cuts the write, which aborts the process instead of raising (pikepdf 10).
        out.save(dst, compress_streams=True, object_stream_mode=pikepdf.ObjectStreamMode.generate)
        out.close()
    finally:
        if recogniser is not None:
            recogniser.close()
        document.close()
    check_output(dst, count)  # read back by qpdf and PDFium before it is accepted
    ctx.add("pixel_reconstruction", f"{count} page(s)", action="converted",
            detail=_detail(dpi, raised, sharpened, lined, encodings)
            + (f"; {no_ocr}" if no_ocr else ""))
    if no_ocr is None:  # the verdict reads this: rebuilt pages keep a text layer (verdict.py)
        _report_ocr(ctx, count, len(sizes), text_pages, failed)
    return "pdf"


NOT_KEPT = "pages rebuilt from pixels: original text not kept"


def _recogniser(ctx: Context, pages: int) -> tuple[ocr.Recogniser | None, str | None]:
    """The page recogniser when this job adds a text layer, else None and why not (the
    report's words)."""
    if not ctx.policy.ocr:
        return None, NOT_KEPT + " (this policy adds no OCR text layer)"
    tesseract = shutil.which("tesseract")
    if tesseract is None:
        return None, NOT_KEPT + " (no text layer: OCR requested but tesseract is not installed)"
    missing = ocr.missing_languages(ctx.ocr_languages)
    if missing:
        return None, (NOT_KEPT + " (no text layer: the OCR language data for "
                      + ", ".join(missing) + " is not installed)")
    assert ctx.workdir is not None
    return ocr.Recogniser(tesseract, ctx.ocr_languages, ctx.workdir, pages), None


def _has_words(page: pdfium.PdfPage, picture: Image.Image, ink: Image.Image | None,
               ) -> tuple[bool, float | None]:
    """Whether a page is worth recognising: its original had text (letters or digits PDFium
    extracts), or its pixels look like text (a scan: `symbols.looks_like_text`); and, when the
    original had text, the height of its small text in points (`_small_text_height`), which
    sets the resolution tesseract gets (`ocr.recognition_dpi`)."""
    textpage = page.get_textpage()
    try:
        chars = textpage.count_chars()
        text = textpage.get_text_range(0, min(chars, 4000)) if chars > 0 else ""
        if any(ch.isalnum() for ch in text):
            return True, _small_text_height(textpage, chars)
    finally:
        textpage.close()
    if ink is None:
        ink = _ink(picture.convert("L"))
    return looks_like_text(np.asarray(ink)), None


TEXT_SIZE_SAMPLE = 1000  # characters whose boxes are measured, at most, evenly over the page
SMALL_TEXT_SHARE = 0.05  # the small text: the height that this share of the letters is under
# Fewer letters than this say little about the page: a stamp, a page number or a header over a
# scanned picture of smaller text. Such a page is recognised at its rendering's resolution.
MIN_MEASURED_LETTERS = 100


def _small_text_height(textpage: pdfium.PdfTextPage, chars: int) -> float | None:
    """The height in points (on the page, the text matrix applied) of the page's small text:
    PDFium's loose character boxes (the font's ascent to descent, about 1.15 em) of letters
    and digits, the SMALL_TEXT_SHARE quantile, so footnotes count and a stray tiny page number
    does not. None when fewer than MIN_MEASURED_LETTERS letters were measured."""
    heights: list[float] = []
    for index in range(0, chars, max(1, chars // TEXT_SIZE_SAMPLE)):
        code = pdfium_c.FPDFText_GetUnicode(textpage.raw, index)
        if not (0 < code < 0x110000 and chr(code).isalnum()):
            continue
        _left, bottom, _right, top = textpage.get_charbox(index, loose=True)
        if 0 < top - bottom < MAX_PAGE_POINTS:
            heights.append(top - bottom)
    if len(heights) < MIN_MEASURED_LETTERS:
        return None
    heights.sort()
    return heights[int(len(heights) * SMALL_TEXT_SHARE)]


def _report_ocr(ctx: Context, count: int, chosen: int, text_pages: list[int],
                failed: list[int]) -> None:
    languages = ctx.ocr_languages
    if chosen == 0:
        detail = "no page had text or looked like text: nothing to recognise"
    else:
        detail = (f"text layer rebuilt by OCR ({languages}) on {len(text_pages)} of {count} "
                  "page(s); the words were recognised again from the pixels and may contain "
                  "errors")
        if chosen < count:
            detail += f"; {count - chosen} page(s) without text were not recognised"
    ctx.add("ocr", f"{count} page(s)", action="converted", detail=detail)
    for index in failed[:20]:
        ctx.add("ocr", f"page {index + 1}", action="removed",
                detail="OCR failed: this page has no text layer")


def _page_points(page: pdfium.PdfPage, index: int) -> tuple[float, float]:
    width, height = page.get_size()  # points, after /Rotate
    if not (0 < width <= MAX_PAGE_POINTS and 0 < height <= MAX_PAGE_POINTS):
        raise Rejected(f"Page {index + 1} has an impossible size.", RejectionCode.DAMAGED)
    # 4 decimals, written alike in the MediaBox and in the picture's matrix (`_image_page`)
    return round(width, 4), round(height, 4)


def page_scale(width: float, height: float, dpi: int = DPI) -> float:
    """Pixels per point: dpi / 72, raised so the short side gets MIN_SHORT_SIDE pixels (the
    long side at most MAX_RAISED_SIDE), lowered so the page stays within MAX_PIXELS_PER_PAGE."""
    raised = min(MIN_SHORT_SIDE / min(width, height), MAX_RAISED_SIDE / max(width, height))
    scale = max(dpi / 72, raised)
    if width * height * scale * scale > MAX_PIXELS_PER_PAGE:
        scale = (MAX_PIXELS_PER_PAGE / (width * height)) ** 0.5
    return scale


def _detail(dpi: int, raised: int, sharpened: int, lined: int, encodings: Counter[str]) -> str:
    detail = f"every page rebuilt from {dpi} DPI pixels"
    if raised:
        detail += f" ({raised} small page(s) at more DPI: {MIN_SHORT_SIDE} px on the short side)"
    if sharpened:
        detail += (f" ({sharpened} text page(s) at more DPI: {SHARPER_DPI}, the document's "
                   f"text at {dpi} DPI looked less like it at {FIDELITY_DPI} DPI)")
    if lined:
        detail += (f" ({lined} page(s) with their hairlines drawn as lines, as readers draw "
                   "them at low zoom)")
    names = {"symbols": "black-and-white (symbol-coded)", "bilevel": "black-and-white (CCITT G4)",
             "palette": "palette (Flate)", "jpeg": "JPEG"}
    return detail + "; pages encoded as " + ", ".join(
        f"{encodings[encoding]} {name}" for encoding, name in names.items() if encodings[encoding])


# --- one page, and its likeness at low zoom --------------------------------------------------

@dataclass
class _Built:
    page: pikepdf.Page  # not yet in the output document
    encoding: str  # "symbols", "bilevel", "palette" or "jpeg"
    picture: Image.Image  # the rendering it was built from
    ink: Image.Image | None  # its ink, when computed
    scale: float  # pixels per point of the rendering
    grey: Image.Image | None  # the page as stored, grey, at the rendering's size (not JPEG)
    hairlines: int = 0  # lines drawn over it (`hairlines`)


def _rebuild_page(page: pdfium.PdfPage, out: pikepdf.Pdf, symbols: SymbolPages,
                  points: tuple[float, float], scale: float, sharp_text: bool) -> _Built:
    """The page rebuilt from pixels at `scale`; a page of symbol-coded text (glyphs only)
    that would look less like the original at FIDELITY_DPI than SHARPEN_BELOW (`seen_at`) is
    rendered again at SHARPER_DPI and kept so when that is such text looking more like it.
    (Only text gains from more pixels: hairlines thinner than a device pixel are drawn one
    pixel wide by readers, so their pictures look less like them the sharper they are; a
    0.3 pt contour map 0.951 at 150 DPI, 0.847 at 200.)
    Once a page of the document was, `sharp_text`: each page is tried at SHARPER_DPI first
    and kept so when it is such text (the document's text then shares one set of glyphs:
    an article half at 150 and half at 200 DPI took 23% more bytes than all at 200)."""
    sharper = page_scale(*points, SHARPER_DPI)
    mark = symbols.mark()
    if sharp_text and sharper > scale * 1.05:
        first = _build(page, out, symbols, points, sharper)
        if _glyphs_only(first):
            return first
        symbols.rollback(mark)
    built = _build(page, out, symbols, points, scale)
    if not _glyphs_only(built) or sharper <= scale * 1.05:
        return built
    assert built.grey is not None and built.ink is not None
    reference = _render(page, FIDELITY_DPI / 72).convert("L")  # as fidelity.py: RGB, then L
    score = seen_at(reference, built.grey)
    if score >= SHARPEN_BELOW:
        return built
    symbols.rollback(mark)  # the first rendering's new glyphs go (kept below if it stays)
    other = _build(page, out, symbols, points, sharper)
    if (_glyphs_only(other) and other.grey is not None
            and seen_at(reference, other.grey) >= score + SHARPER_GAIN):
        return other
    symbols.rollback(mark)  # its glyphs again, under the same codes
    again = symbols.add_page(np.asarray(built.ink), points, _group4_picture)
    assert again is not None
    built.page = again
    return built


def _glyphs_only(built: _Built) -> bool:
    """Symbol-coded text with no picture for large pieces (frames, figures) nor hairlines."""
    return (built.encoding == "symbols" and "/XObject" not in built.page.Resources
            and not built.hairlines)


def _render(page: pdfium.PdfPage, scale: float) -> Image.Image:
    bitmap = page.render(scale=scale, may_draw_forms=False, draw_annots=True,
                         rev_byteorder=True, fill_color=(255, 255, 255, 255))
    picture: Image.Image = bitmap.to_pil()  # RGB: a copy of the bitmap's pixels
    if picture.mode != "RGB":
        picture = picture.convert("RGB")
    bitmap.close()
    return picture


def _build(page: pdfium.PdfPage, out: pikepdf.Pdf, symbols: SymbolPages,
           points: tuple[float, float], scale: float) -> _Built:
    """The page from its rendering at `scale`; hairlines (`hairlines`) are drawn as lines
    over the rest, where the page is not a photograph or glyph-only text. (A JPEG page of
    few colours is looked at too: hatching's anti-aliasing is as smooth as a photograph's.)"""
    picture = _render(page, scale)
    mark = symbols.mark()
    built = _encode_page(out, symbols, picture, points, scale)
    if _glyphs_only(built) or (built.encoding == "jpeg" and not _few_colours(picture)):
        return built
    found = hairlines(picture)
    if found is None:
        return built
    cleaned, strokes, count = found
    symbols.rollback(mark)
    rebuilt = _encode_page(out, symbols, cleaned, points, scale)
    rebuilt.page.obj.Contents = pikepdf.Stream(
        out, rebuilt.page.obj.Contents.read_bytes() + b"\n"
        + _strokes(strokes, picture.size, points))
    rebuilt.picture = picture  # what OCR reads: the page as rendered
    rebuilt.hairlines = count
    return rebuilt


def _few_colours(picture: Image.Image) -> bool:
    """At most MAX_FLAT_COLOURS colours in the classifier's sample (`classify`): grey
    photographs too, but not colour ones."""
    sample = picture.resize((max(2, picture.width // SAMPLE_STEP),
                             max(2, picture.height // SAMPLE_STEP)), Image.Resampling.NEAREST)
    return sample.getcolors(MAX_FLAT_COLOURS) is not None


def _encode_page(out: pikepdf.Pdf, symbols: SymbolPages, picture: Image.Image,
                 points: tuple[float, float], scale: float) -> _Built:
    encoded, ink, grey = encode(picture)
    if encoded is None:  # black and white: symbol-coded, else one Group 4 image
        assert ink is not None
        symbol_page = symbols.add_page(np.asarray(ink), points, _group4_picture)
        if symbol_page is not None:
            return _Built(symbol_page, "symbols", picture, ink, scale, grey)
        encoded = _bilevel(ink)
    return _Built(_image_page(out, encoded, picture.size, points), encoded.encoding, picture,
                  ink, scale, grey)


# --- hairlines ------------------------------------------------------------------------------

HAIRLINE_DARK = 224  # darker than this is a line's pixel (as MARK_LEVEL)
HAIRLINE_RUN = 48  # pixels at least (23 pt at 150 DPI): shorter runs are left in the picture
HAIRLINE_SAMPLE = 8  # runs are first looked for in every 8th column (6 in a row: >= 48)
MIN_HAIRLINES = 8  # fewer on a page: left in the picture
MAX_HAIRLINE_WIDTH = 1.25  # pixels of darkness summed across (0.6 pt at 150 DPI)
MAX_HAIRLINES = 3000  # more runs on a page: left in the picture (each costs ~0.1 ms to draw)

Stroke = tuple[tuple[int, int, int], float, float, float, float, float]  # colour, width, x0..y1


def hairlines(picture: Image.Image) -> tuple[Image.Image, list[Stroke], int] | None:
    """A page's hairlines: straight runs, across or down, at least HAIRLINE_RUN pixels long and one
    or two pixels thick (the next pixels beside them paper), at least MIN_HAIRLINES of them.
    Returns the picture without them (paper where they were), the lines to draw instead (pixel
    space, y down: colour, width in pixels, ends) and how many; None when the page has fewer, or
    more than MAX_HAIRLINES runs (a bound on the work). Readers draw a stroke thinner than a
    device pixel one pixel wide, so at low zoom a 0.25 pt table border is a dark 1 pt line,
    where any picture of it is reduced to a light grey one (a table page at 72 DPI: 0.87 as a
    picture, however many pixels; 0.97 with its borders drawn as lines). Drawn as a line at the
    picture's own width and place, it is the same pixels at the rendering's resolution and what
    the original shows at lower zoom. Then the slanted ones (`_diagonals`), at most
    MAX_DIAGONALS. About 3 ms for a page without lines, 5-15 more for the slanted ones'
    directions."""
    grey = np.asarray(picture.convert("L"))
    dark = grey < HAIRLINE_DARK
    across = _thin_runs(dark)
    if len(across) > MAX_HAIRLINES:
        return None
    rgb = np.asarray(picture)
    cleaned = rgb.copy()
    strokes = [stroke for line in across
               if (stroke := _erase(cleaned, grey, rgb, line)) is not None]
    runs = len(across)
    seen = grey  # the page's grey levels without the lines across (the histogram's)
    if across or _thin_runs(dark.T, probe=True):
        # Down, once the lines across are gone: where a border crosses another, the one
        # across had left the pixels beside the one down dark.
        grey_t = np.asarray(Image.fromarray(cleaned).convert("L")).T
        seen = grey_t.T
        cleaned_t = cleaned.transpose(1, 0, 2)  # a view: erasing in it erases in `cleaned`
        down = _thin_runs(grey_t < HAIRLINE_DARK)
        runs += len(down)
        if runs > MAX_HAIRLINES:
            return None
        for line in down:
            found = _erase(cleaned_t, grey_t, cleaned_t, line)
            if found is not None:
                colour, width, x0, y, x1, _ = found
                strokes.append((colour, width, y, x0, y, x1))
    # Then at any other angle (hatching, slanted rules), in what is left.
    strokes += _diagonals(cleaned, min(MAX_DIAGONALS, MAX_HAIRLINES - runs), seen)
    if len(strokes) < MIN_HAIRLINES:
        return None
    return Image.fromarray(cleaned), strokes, len(strokes)


def _thin_runs(dark: np.ndarray, probe: bool = False) -> list[tuple[int, int, int, int]]:
    """Runs across `dark` (rows) at least HAIRLINE_RUN long and 1 or 2 rows thick, the rows
    above and below them not dark: (first row, thickness, first column, end column). Rows
    are first picked on every HAIRLINE_SAMPLE-th column (a run covers at least `need` such
    columns in a row), then their runs are measured whole. With `probe`, stops at the
    first."""
    height, width = dark.shape
    need = HAIRLINE_RUN // HAIRLINE_SAMPLE
    sampled = np.zeros((height + 4, -(-width // HAIRLINE_SAMPLE)), dtype=np.bool_)
    sampled[2:-2] = dark[:, ::HAIRLINE_SAMPLE]
    found: list[tuple[int, int, int, int]] = []
    for thick in (1, 2):
        core = (sampled[2:height + 2] & ~sampled[1:height + 1]
                & ~sampled[2 + thick:height + 2 + thick])
        if thick == 2:
            core &= sampled[3:height + 3]
        columns = core.shape[1] - need + 1
        if columns <= 0:
            return found
        window = core[:, :columns].copy()
        for shift in range(1, need):
            window &= core[:, shift:columns + shift]
        for row in np.flatnonzero(window.any(axis=1)).tolist():
            line = dark[row].copy()
            for k in range(thick):
                line &= dark[row + k]
            if row > 0:
                line &= ~dark[row - 1]
            if row + thick < height:
                line &= ~dark[row + thick]
            edges = np.flatnonzero(np.diff(line.astype(np.int8), prepend=0, append=0))
            for start, end in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
                if end - start >= HAIRLINE_RUN:
                    found.append((row, thick, start, end))
                    if probe or len(found) > MAX_HAIRLINES:
                        return found
    return found


# --- diagonal hairlines ---------------------------------------------------------------------

DIAGONAL_MIN_ANGLE = 2.0  # degrees from across or down: nearer lines are left to `_thin_runs`
MAX_DIAGONAL_ANGLES = 4  # directions looked along on a page, the most frequent
MAX_DIAGONALS = 1500  # more on a page: all left in the picture (each costs ~1.5 ms to find)
DIAGONAL_PEAK = 25.0  # a gradient direction this many times the median's: lines (text 7-12x)
DIAGONAL_SHARPNESS = 2.5  # a direction's projection: this many times the median's sharpness
DIAGONAL_PIXELS = 30_000  # edge pixels measured for the directions, at most (a random choice)
DIAGONAL_BATCH = 64  # lines followed at once (neighbours: their columns are about the same)
DIAGONAL_PEAKS = 2  # peaks along a direction over this many times the lines left: too many
DIAGONAL_CELLS = 100_000  # lines x columns followed at once, at most (~6 MB an array)
DIAGONAL_GAP = 4  # columns a line may miss (a crossing line, a line erased across it)
MAX_DIAGONAL_DEVIATION = 0.5  # pixels from the fitted line, at most: curves are left alone
DIAGONAL_INLIERS = 0.97  # of a line's columns within MAX_DIAGONAL_DEVIATION, at least
_GREY_WEIGHTS = np.array([299, 587, 114], dtype=np.int32)  # ITU-R 601, as Pillow's "L", x 1000
DIAGONAL_PAPER = 192  # lighter, 1.45-2.1 px from a line: paper (its anti-aliasing is lighter)


def _diagonals(cleaned: np.ndarray, budget: int, grey: np.ndarray | None) -> list[Stroke]:
    """Straight hairlines at any angle DIAGONAL_MIN_ANGLE or more from across and down,
    painted out of `cleaned` (RGB, in place) and returned as strokes (pixel space, y down);
    none when there are more than `budget` (`cleaned` then unchanged). Direction by
    direction (`_directions`: hatching, slanted rules and frames make them; text and curves
    spread over all directions), the strongest first, the lines along it found and painted
    out (`_along`), then the directions of what is left, at most MAX_DIAGONAL_ANGLES.
    `grey`: `cleaned`'s grey levels, or those of a page with more lines across or down
    (which the directions leave out), if known."""
    strokes: list[Stroke] = []
    tried: list[float] = []
    work = cleaned
    while len(tried) < MAX_DIAGONAL_ANGLES:
        # the strongest direction first; once its lines are gone, the next stands out more
        # (a cross-hatch's second direction)
        seen = _grey(work) if grey is None or tried else grey
        angles = [angle for angle in _directions(seen) if angle not in tried]
        if not angles:
            break
        angle = angles[0]
        tried.append(angle)
        if work is cleaned:
            work = cleaned.copy()  # `cleaned` is left as it was if there are too many
        # within 45 degrees of across: lines y = c + s x; else the same, transposed
        steep = abs(angle) > 45
        slope = float(np.tan(np.radians(90 - abs(angle) if steep else angle)))
        if steep and angle < 0:
            slope = -slope
        picture = work.transpose(1, 0, 2) if steep else work
        found = _along(picture, slope, budget + 1 - len(strokes), refine=True)
        if found is None:
            return []
        if steep:
            found = [(colour, width, y0, x0, y1, x1)
                     for colour, width, x0, y0, x1, y1 in found]
        strokes += found
        if len(strokes) > budget:
            return []  # all left in the picture, not some (as pages of too many runs)
    if strokes:
        cleaned[:] = work
    return strokes


def _grey(rgb: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(rgb).convert("L"))


def _directions(grey: np.ndarray) -> list[float]:
    """The page's line directions, degrees in (-90, 90) (0 across, y down), most frequent
    first; none within DIAGONAL_MIN_ANGLE of across or down. A cheap look first: the
    gradient's direction at edge pixels (dark, paper next to them), a histogram of 1-degree
    bins; text and curves spread over all directions, lines make a peak DIAGONAL_PEAK times
    the median. (Dense hatching aliases the gradient, 0.2 pt lines 1.6 pt apart at 30
    degrees read as 57.) Only then every direction, 1 degree apart: the dark pixels
    (DIAGONAL_PIXELS of them) projected across it, the sharpest projections' local maxima."""
    # every 4th row (and the rows above and below it): a quarter of the work, and lines at
    # any angle keep pixels in them
    middle = np.arange(1, grey.shape[0] - 1, 4)
    above, level, below = grey[middle - 1], grey[middle], grey[middle + 1]
    dark = level < HAIRLINE_DARK
    edge = dark[:, 1:-1] & ((above[:, 1:-1] >= HAIRLINE_DARK) | (below[:, 1:-1] >= HAIRLINE_DARK)
                            | ~dark[:, :-2] | ~dark[:, 2:])
    ys, xs = _nonzero(edge)
    if len(ys) < HAIRLINE_RUN * MIN_HAIRLINES // 4:
        return []
    edges = 4 * len(ys)  # about, in every row
    step = -(-len(ys) // DIAGONAL_PIXELS)
    ys, xs = ys[::step], xs[::step] + 1
    gx = level[ys, xs + 1].astype(np.float32) - level[ys, xs - 1]
    gy = below[ys, xs].astype(np.float32) - above[ys, xs]
    # a line's direction is across its gradient
    degrees = (np.degrees(np.arctan2(gy, gx)) + 90) % 180  # 0..180, 0 = across
    counts = np.bincount(np.rint(degrees).astype(np.int64) % 180, weights=np.hypot(gx, gy),
                         minlength=180)
    smooth = counts + 0.5 * (np.roll(counts, 1) + np.roll(counts, -1))
    slanted = np.r_[0:180] % 90
    slanted = np.minimum(slanted, 90 - slanted) >= DIAGONAL_MIN_ANGLE
    if not (smooth[slanted] >= float(np.median(smooth)) * DIAGONAL_PEAK + 1e-6).any():
        return []
    # Every row's edges now (a stride would alias with hatching), about DIAGONAL_PIXELS of
    # them chosen at random (the same for the same page), a band of rows at a time.
    keep = min(1.0, DIAGONAL_PIXELS / edges)
    rng = np.random.default_rng(0)
    rows_kept, columns_kept = [], []
    dark = grey < HAIRLINE_DARK
    for top in range(1, grey.shape[0] - 1, 256):
        end = min(top + 256, grey.shape[0] - 1)
        band = dark[top:end, 1:-1] & (~dark[top - 1:end - 1, 1:-1] | ~dark[top + 1:end + 1, 1:-1]
                                      | ~dark[top:end, :-2] | ~dark[top:end, 2:])
        rows, columns = np.nonzero(band)
        chosen = rng.random(len(rows)) < keep
        rows_kept.append(rows[chosen] + top)
        columns_kept.append(columns[chosen] + 1)
    fy = np.concatenate(rows_kept).astype(np.float32)
    fx = np.concatenate(columns_kept).astype(np.float32)
    sharpness = np.zeros(180)
    for degree in range(180):
        if not slanted[degree]:
            continue
        radians = np.radians(degree)
        across = fy * np.float32(np.cos(radians)) - fx * np.float32(np.sin(radians))
        across -= across.min()
        # each pixel shared by the two nearest bins: rounded, whole pixels fall on some
        # bins more than on others at 45 degrees (every 0.707 px), which reads as lines
        low = across.astype(np.int64)
        share = across - low
        found = (np.bincount(low, weights=1 - share, minlength=int(low.max()) + 2)
                 + np.bincount(low + 1, weights=share, minlength=int(low.max()) + 2))
        # what stands out of the projection smoothed over 7 px: lines, not areas
        rest = found - np.convolve(found, np.full(7, 1 / 7), mode="same")
        sharpness[degree] = float(np.dot(rest, rest)) / len(low)
    base = float(np.median(sharpness[slanted]))
    peaks = [degree for degree in range(180) if slanted[degree]
             and sharpness[degree] >= sharpness[degree - 1]
             and sharpness[degree] > sharpness[(degree + 1) % 180]
             and sharpness[degree] >= DIAGONAL_SHARPNESS * base]
    peaks.sort(key=lambda degree: -sharpness[degree])
    return [float(d if d < 90 else d - 180) for d in peaks[:MAX_DIAGONAL_ANGLES]]


def _nonzero(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.nonzero of a 2-D mask as int32 arrays, a band of rows at a time (int64 arrays of a
    whole page of hatching took hundreds of MB)."""
    found = [(np.nonzero(mask[top:top + 256]), top) for top in range(0, mask.shape[0], 256)]
    return (np.concatenate([(rows + top).astype(np.int32) for (rows, _), top in found]),
            np.concatenate([columns.astype(np.int32) for (_, columns), _ in found]))


def _along(picture: np.ndarray, slope: float, budget: int,
           refine: bool) -> list[Stroke] | None:
    """The hairlines y = c + slope * x (|slope| <= 1, pixel centres, y down) of `picture`
    (RGB), painted out of it. The slope is refined first (the sharpest projection of the
    dark pixels within 1.5 degrees, 0.1 apart); each peak of the darkness projected along it
    is followed across the page: a column is on the line where a pixel within 0.75 px of it
    is dark and those 1.45-2.1 px from it are paper, a line runs on over DIAGONAL_GAP columns
    off it, and is kept when HAIRLINE_RUN px long or more, under MAX_HAIRLINE_WIDTH of
    summed darkness across, and within MAX_DIAGONAL_DEVIATION of the straight line fitted
    through its columns' centres. None when the peaks are more than DIAGONAL_PEAKS times
    `budget` (there are too many lines)."""
    grey = _grey(np.ascontiguousarray(picture))
    height, width = grey.shape
    ys, xs = _nonzero(grey < HAIRLINE_DARK)
    if len(ys) < HAIRLINE_RUN:
        return []
    step = -(-len(ys) // DIAGONAL_PIXELS)
    sy, sx = ys[::step].astype(np.float64), xs[::step].astype(np.float64)
    base = float(np.degrees(np.arctan(slope)))
    best, sharpest = slope, -1.0
    for degrees in np.arange(base - 1.5, base + 1.51, 0.1) if refine else ():
        s = float(np.tan(np.radians(degrees)))
        bins = np.rint(sy - s * sx)
        counts = np.bincount((bins - bins.min()).astype(np.int64))
        sharpness = float(np.dot(counts, counts))
        if sharpness > sharpest:
            best, sharpest = s, sharpness
    slope = best
    cosine = 1 / float(np.hypot(1.0, slope))
    offset = np.rint(ys - np.float32(slope) * xs).astype(np.int32)
    low = int(offset.min())
    offset -= low
    profile = np.bincount(offset, weights=255 - grey[ys, xs].astype(np.float32))
    padded = np.concatenate([[0.0, 0.0], profile, [0.0, 0.0]])
    middle = padded[2:-2]
    around = padded[1:-3] + middle + padded[3:-1]
    peaks = np.flatnonzero((middle >= padded[1:-3]) & (middle > padded[3:-1])
                           & (around >= 0.25 * 255 * HAIRLINE_RUN * cosine))
    if len(peaks) > DIAGONAL_PEAKS * budget:
        return None  # surely more lines than the budget: not worth following
    need = int(HAIRLINE_RUN * cosine)
    # each peak's columns: from the first to the last of its dark pixels
    order = np.argsort(offset, kind="stable")
    ranked, ranked_x = offset[order], xs[order]
    del order, offset, ys, xs
    starts = np.searchsorted(ranked, peaks, side="left")
    ends = np.searchsorted(ranked, peaks, side="right")
    ks = np.arange(-3, 4)
    strokes: list[Stroke] = []
    spans = [(int(ranked_x[a:b].min()), int(ranked_x[a:b].max()))
             for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    first = 0
    while first < len(peaks):
        # neighbouring lines together, as many as DIAGONAL_CELLS lines x columns hold
        (lo, hi), count = spans[first], 1
        while first + count < len(peaks) and count < DIAGONAL_BATCH:
            a, b = spans[first + count]
            if (count + 1) * (max(hi, b) - min(lo, a) + 5) > DIAGONAL_CELLS:
                break
            lo, hi, count = min(lo, a), max(hi, b), count + 1
        chosen = peaks[first:first + count]
        first += count
        left = max(0, lo - 2)
        columns = np.arange(left, min(width, hi + 3))
        # the peak's middle, to a fraction of a row: its bin and the two beside it, weighed
        c = (low + chosen + (padded[chosen + 3] - padded[chosen + 1])
             / np.maximum(around[chosen], 1e-6))
        centre = c[:, None] + slope * columns[None, :]  # lines x columns
        nearest = np.rint(centre).astype(np.int64)
        rows = nearest[:, :, None] + ks  # lines x columns x 7
        inside = (rows >= 0) & (rows < height)
        clipped = np.clip(rows, 0, height - 1)
        values = np.where(inside, 255 - grey[clipped, columns[None, :, None]].astype(np.int16),
                          0)
        distance = np.abs(rows - centre[:, :, None]) * cosine
        core = ((distance <= 0.75) & (values >= 256 - HAIRLINE_DARK)).any(axis=2)
        beside = ((distance >= 1.45) & (distance <= 2.1) & (values > 255 - DIAGONAL_PAPER)
                  ).any(axis=2)
        on = core & ~beside & inside[:, :, 3]
        band = distance <= 1.45
        weights = np.where(band, values, 0).astype(np.float64)
        across = weights.sum(axis=2)
        middles = (weights * rows).sum(axis=2) / np.maximum(across, 1e-6)
        for index in range(len(c)):
            if len(strokes) >= budget:
                return strokes
            marks = on[index]
            if marks.sum() < need:
                continue
            strokes += [(colour, thickness, x0 + left, y0, x1 + left, y1)
                        for colour, thickness, x0, y0, x1, y1 in _follow(
                            picture[:, left:left + len(columns)], marks, middles[index],
                            across[index], slope, cosine, need)]
    return strokes[:budget]


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The least-squares line y = a x + b through the points: (a, b), as np.polyfit's
    coefficients (a fifth of its time)."""
    x = x.astype(np.float64)
    mx, my = float(x.mean()), float(y.mean())
    dx = x - mx
    a = float(np.dot(dx, y - my)) / max(float(np.dot(dx, dx)), 1e-9)
    return a, my - a * mx


def _follow(picture: np.ndarray, marks: np.ndarray, middles: np.ndarray,
            across: np.ndarray, slope: float, cosine: float, need: int) -> list[Stroke]:
    """The lines along one peak (`_along`): its columns on the line (`marks`) grouped over
    gaps of DIAGONAL_GAP or fewer, each group `need` columns long or more, straight and thin
    enough, painted out (pixels within 1.2 px of it) and returned as a stroke whose colour
    and width are its pixels' darkness summed across, as `_erase` does across and down."""
    found: list[Stroke] = []
    on = np.flatnonzero(marks)
    breaks = np.flatnonzero(np.diff(on) > DIAGONAL_GAP + 1)
    ks = np.arange(-3, 4)
    for group in np.split(on, breaks + 1):
        first, last = int(group[0]), int(group[-1])
        if last - first + 1 < need:
            continue
        fitted = _fit(group, middles[group])
        # distances across the line; a crossing or the end at a frame pulls a few columns
        close = (np.abs(fitted[0] * group + fitted[1] - middles[group]) * cosine
                 <= MAX_DIAGONAL_DEVIATION)
        if close.mean() < DIAGONAL_INLIERS:
            continue
        fitted = _fit(group[close], middles[group[close]])
        total = float(across[group].mean()) * cosine
        width = max(1.0, total / 255)
        if width > MAX_HAIRLINE_WIDTH:
            continue
        slope_fit, intercept = fitted
        columns = np.arange(first, last + 1)
        centre = slope_fit * columns + intercept
        rows = np.rint(centre).astype(np.int64)[:, None] + ks
        distance = np.abs(rows - centre[:, None]) * cosine
        near = (rows >= 0) & (rows < picture.shape[0]) & (distance <= 2.1)
        at = np.broadcast_to(columns[:, None], rows.shape)[near]
        rows_near, distance = rows[near], distance[near]
        pixels = picture[rows_near, at].astype(np.int32)
        band = (distance <= 1.45) & marks[at]
        channels = (255 - pixels[band]).sum(axis=0) * cosine / len(group)
        colour = tuple(round(255 - min(255.0, float(v) / width)) for v in channels[:3])
        # the line, and the light anti-aliasing beside it (a threshold would make it ink)
        light = pixels @ _GREY_WEIGHTS >= DIAGONAL_PAPER * 1000
        erase = (distance <= 1.2) | light
        picture[rows_near[erase], at[erase]] = 255
        y0 = slope_fit * (first - 0.5) + intercept + 0.5
        y1 = slope_fit * (last + 0.5) + intercept + 0.5
        found.append((cast("tuple[int, int, int]", colour), width, float(first), y0,
                      float(last + 1), y1))
    return found


def _erase(cleaned: np.ndarray, grey: np.ndarray, rgb: np.ndarray,
           line: tuple[int, int, int, int]) -> Stroke | None:
    """Paint a line across (and the paper-light anti-aliasing beside it) as paper in
    `cleaned`; returns it as a stroke: its colour and width from its pixels' darkness (summed
    across: a line under a pixel wide is drawn one pixel wide, its colour what that sum
    leaves), its centre the darkness-weighted middle of its rows. None, and nothing painted,
    for a line wider than MAX_HAIRLINE_WIDTH: drawn partly as lines and partly as pixels (2
    rows thick here, 3 there), a table of 0.75 pt borders looked less like itself."""
    row, thick, start, end = line
    first, last = max(row - 1, 0), min(row + thick + 1, grey.shape[0])
    darkness = 255.0 - grey[first:last, start:end].mean(axis=1)
    channels = 255.0 - rgb[first:last, start:end].reshape(last - first, end - start, -1) \
        .mean(axis=1)[:, :3]
    total = float(darkness.sum())
    centre = float((darkness * (np.arange(first, last) + 0.5)).sum()) / max(total, 1e-6)
    width = max(1.0, total / 255)
    if width > MAX_HAIRLINE_WIDTH:
        return None
    colour = tuple(round(255 - min(255.0, float(v) / width))
                   for v in channels.sum(axis=0))
    band = cleaned[first:last, start:end]
    light = grey[first:last, start:end] >= HAIRLINE_DARK
    light[row - first:row - first + thick] = True
    band[light] = 255
    return (cast("tuple[int, int, int]", colour), width, start, centre, end, centre)


def _strokes(strokes: list[Stroke], pixels: tuple[int, int], points: tuple[float, float],
             ) -> bytes:
    """The lines as one content stream fragment, in the rendering's pixel space (y up),
    grouped by colour and width."""
    width, height = pixels
    groups: dict[tuple[tuple[int, int, int], float], list[str]] = {}
    for colour, thickness, x0, y0, x1, y1 in strokes:
        groups.setdefault((colour, round(thickness, 2)), []).append(
            f"{x0:.2f} {height - y0:.2f} m {x1:.2f} {height - y1:.2f} l")
    ops = [f"q {points[0] / width:.10f} 0 0 {points[1] / height:.10f} 0 0 cm 0 J"]
    for (colour, thickness), lines in groups.items():
        r, g, b = (f"{v / 255:.3f}" for v in colour)
        ops.append(f"{r} {g} {b} RG {thickness} w")
        ops += lines
        ops.append("S")
    ops.append("Q")
    return "\n".join(ops).encode()


def seen_at(reference: Image.Image, grey: Image.Image) -> float:
    """About how much a page stored as `grey` (its grey pixels) looks like the original
    rendered at the size of `reference` (grey): SSIM, 8 x 8 windows (`similarity`), of `grey`
    halved (box) then resized to it (bilinear); about 5 ms with the SSIM. A reader draws a
    page by its own rules, so this is an estimate: on black-and-white text pages it reads
    0.015-0.02 under the likeness tests/engine/fidelity.py measures (0.894-0.942 for
    0.915-0.951), in the same order."""
    resized = grey.reduce(2).resize(reference.size, Image.Resampling.BILINEAR)
    return similarity(reference, resized, reduction=1)


# --- choosing and writing the encoding ------------------------------------------------------

Colours = list[tuple[int, tuple[int, int, int]]]  # (count, RGB) in a sample of the page


def encode(picture: Image.Image,
           ) -> tuple[Encoded | None, Image.Image | None, Image.Image | None]:
    """The page's encoding: the one `classify` names, unless the page as that encoding would
    store it falls short of its MIN_SIMILARITY to the rendered page (`similarity`); then the
    next richer one that holds: black-and-white, the 16-colour palette, the 256-colour
    palette, JPEG (not checked: quality 90 scores >= 0.99). Returns (None, ink, grey) for a
    black-and-white page (its ink, for symbols or Group 4), else (the image, the ink when it
    was computed: a page that did not hold as black-and-white, grey); grey is the page as
    stored, in grey levels (None for JPEG)."""
    encoding, colours = classify(picture)
    if encoding == "jpeg" or colours is None:
        return _jpeg(picture), None, None
    grey = picture.convert("L")
    reference = grey.reduce(CHECK_REDUCTION)
    ink = None
    if encoding == "bilevel":
        ink = _ink(grey)
        stored = ImageChops.invert(ink.convert("L"))
        if similarity(reference, stored) >= MIN_SIMILARITY["bilevel"]:
            return None, ink, stored
    for size in (PALETTE_SIZE, RICH_PALETTE_SIZE):
        indexed, lookup = _indexed(picture, colours, size)
        stored = _palette_grey(indexed, lookup)
        if similarity(reference, stored) >= MIN_SIMILARITY["palette"]:
            return _palette(indexed, lookup), ink, stored
    return _jpeg(picture), ink, None


def classify(picture: Image.Image) -> tuple[str, Colours | None]:
    """"jpeg", "palette" or "bilevel": the encoding that suits the page's pixels (see the
    module docstring), with the sample's colours (None for "jpeg": too many to count)."""
    width, height = picture.size
    sample = picture.resize((max(2, width // SAMPLE_STEP), max(2, height // SAMPLE_STEP)),
                            Image.Resampling.NEAREST)
    # An RGB image's colours are (r, g, b) tuples; Pillow's annotation allows any mode's.
    colours = cast("Colours | None", sample.getcolors(MAX_FLAT_COLOURS))
    grey = sample.convert("L")
    if colours is None or _smooth_share(grey) > MAX_SMOOTH_SHARE:
        return "jpeg", None
    total = sample.width * sample.height
    colourful = sum(n for n, rgb in colours if max(rgb) - min(rgb) > GREY_CHROMA)
    if colourful > MAX_COLOUR_SHARE * total or _has_grey_fill(grey.histogram(), total):
        return "palette", colours
    return "bilevel", colours


def _smooth_share(grey: Image.Image) -> float:
    """The larger share, across and down, of neighbouring pixels that differ a little."""
    width, height = grey.size

    def share(a: Image.Image, b: Image.Image) -> float:
        counts = ImageChops.difference(a, b).histogram()
        return sum(counts[1:SMOOTH_STEP + 1]) / sum(counts)

    return max(share(grey.crop((1, 0, width, height)), grey.crop((0, 0, width - 1, height))),
               share(grey.crop((0, 1, width, height)), grey.crop((0, 0, width, height - 1))))


def _has_grey_fill(counts: list[int], total: int) -> bool:
    """A grey level (not ink, not paper) standing well above the eight levels on each side."""
    for level in range(16, 247):
        around = counts[level - 8:level] + counts[level + 1:level + 9]
        if counts[level] >= max(MIN_FILL_SHARE * total, FILL_SPIKE * sum(around) / 16):
            return True
    return False


def _jpeg(picture: Image.Image) -> Encoded:
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=JPEG_QUALITY)  # 4:2:0: text edges are luma
    return Encoded("jpeg", buffer.getvalue(), {"ColorSpace": Name.DeviceRGB,
                                               "BitsPerComponent": 8, "Filter": Name.DCTDecode})


def _indexed(picture: Image.Image, colours: Colours, size: int) -> tuple[Image.Image, bytes]:
    """Each pixel as the nearest of the page's most frequent colours: PALETTE_SIZE of them at
    least PALETTE_APART apart, or the RICH_PALETTE_SIZE most frequent. Returns the indexed
    image and its palette (RGB bytes)."""
    chosen: list[tuple[int, int, int]] = []
    apart = PALETTE_APART ** 2 if size == PALETTE_SIZE else 0
    for _count, colour in sorted(colours, reverse=True):
        if all(sum((a - b) ** 2 for a, b in zip(colour, other, strict=True)) > apart
               for other in chosen):
            chosen.append(colour)
            if len(chosen) == size:
                break
    lookup = bytes(value for colour in chosen for value in colour)
    palette = Image.new("P", (1, 1))
    palette.putpalette(lookup)
    return picture.quantize(palette=palette, dither=Image.Dither.NONE), lookup  # nearest


def _palette_grey(indexed: Image.Image, lookup: bytes) -> Image.Image:
    """The indexed image's grey levels (ITU-R 601, as Pillow's "L"): its indices read as an
    "L" image and mapped through the palette's greys, twice as fast as convert("L")."""
    greys = [(r * 299 + g * 587 + b * 114 + 500) // 1000
             for r, g, b in zip(lookup[0::3], lookup[1::3], lookup[2::3], strict=True)]
    indices = Image.frombytes("L", indexed.size, indexed.tobytes())
    return indices.point(greys + [0] * (256 - len(greys)))


def _palette(indexed: Image.Image, lookup: bytes) -> Encoded:
    """An indexed image, 4 bits a pixel (16 colours or fewer) or 8, Flate."""
    bits = 4 if len(lookup) <= 3 * PALETTE_SIZE else 8
    space = Array([Name.Indexed, Name.DeviceRGB, len(lookup) // 3 - 1, pikepdf.String(lookup)])
    data = indexed.tobytes("raw", "P;4") if bits == 4 else indexed.tobytes()
    return Encoded("palette", zlib.compress(data, FLATE_LEVEL),
                   {"ColorSpace": space, "BitsPerComponent": bits, "Filter": Name.FlateDecode})


_SSIM_C1, _SSIM_C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2


def similarity(reference: Image.Image, candidate: Image.Image,
               reduction: int = CHECK_REDUCTION) -> float:
    """SSIM (grey, 8 x 8 windows, the usual constants: what tests/engine/fidelity.py scores
    at 72 DPI) of `candidate`, a page's grey pixels as an encoding would store them, reduced
    by CHECK_REDUCTION (box filter), against `reference`, the rendered page's grey pixels
    already reduced. The windows' sums add rows first (several times faster than numpy's mean
    over two axes of a 4-D view) in float32, exact for integer pixels."""
    x = np.asarray(reference, dtype=np.float32)
    y = np.asarray(candidate.reduce(reduction) if reduction > 1 else candidate,
                   dtype=np.float32)
    height, width = (min(x.shape[0], y.shape[0]) // 8) * 8, (min(x.shape[1], y.shape[1]) // 8) * 8
    if height == 0 or width == 0:
        return 1.0
    x, y = x[:height, :width], y[:height, :width]

    def mean(values: np.ndarray) -> np.ndarray:  # over each 8 x 8 window
        rows = values.reshape(height // 8, 8, width).sum(axis=1)
        sums: np.ndarray = rows.reshape(height // 8, width // 8, 8).sum(axis=2)
        return sums.astype(np.float64) / 64

    mx, my = mean(x), mean(y)
    vx, vy, cov = mean(x * x) - mx * mx, mean(y * y) - my * my, mean(x * y) - mx * my
    s = ((2 * mx * my + _SSIM_C1) * (2 * cov + _SSIM_C2)) / (
        (mx * mx + my * my + _SSIM_C1) * (vx + vy + _SSIM_C2))
    return float(s.mean())


def _bilevel(ink: Image.Image) -> Encoded:
    """Ink (see `_ink`) as one CCITT Group 4 image. (Cropping the paper margins would save a
    third of the work, but readers snap an image's edges to device pixels: a crop placed inside
    the page shifts by up to a pixel; the whole page cannot.)"""
    return Encoded("bilevel", _group4(ink),
                   {"ColorSpace": Name.DeviceGray, "BitsPerComponent": 1,
                    "Filter": Name.CCITTFaxDecode,
                    "DecodeParms": Dictionary(K=-1, Columns=ink.width, Rows=ink.height)})


def _group4_picture(out: pikepdf.Pdf, ink: np.ndarray) -> pikepdf.Stream:
    """Ink as a Group 4 image (black on white) for a symbol-coded page's large pieces."""
    height, width = ink.shape
    return pikepdf.Stream(out, _group4(Image.fromarray(ink)), Type=Name.XObject,
                          Subtype=Name.Image, Width=width, Height=height,
                          ColorSpace=Name.DeviceGray, BitsPerComponent=1,
                          Filter=Name.CCITTFaxDecode,
                          DecodeParms=Dictionary(K=-1, Columns=width, Rows=height))


def _group4(ink: Image.Image) -> bytes:
    """A 1-bit image as one CCITT Group 4 strip, taken out of Pillow's TIFF."""
    buffer = io.BytesIO()
    ink.save(buffer, "TIFF", compression="group4",
             tiffinfo={TiffImagePlugin.ROWSPERSTRIP: ink.height})
    buffer.seek(0)
    with TiffImagePlugin.TiffImageFile(buffer) as tiff:
        (offset,) = tiff.tag_v2[TiffImagePlugin.STRIPOFFSETS]
        (length,) = tiff.tag_v2[TiffImagePlugin.STRIPBYTECOUNTS]
    return buffer.getvalue()[offset:offset + length]


def _ink(grey: Image.Image) -> Image.Image:
    """1 where there is ink: darker than INK_LEVEL, or darker than MARK_LEVEL and more than a
    pixel (8-neighbourhood) from such ink. Each pixel gets a ceiling, the minimum over its 3 x 3
    neighbourhood (taken over shifted copies: Pillow's MinFilter is ten times slower; the shifts
    wrap around the edges, which only an edge pixel notices), and is ink below it. 1 is the
    CCITT black run: a PDF reader decodes black runs as 0, DeviceGray black."""
    ceiling = grey.point(_CEILING)
    across = ImageChops.darker(ceiling, ImageChops.darker(ImageChops.offset(ceiling, 1, 0),
                                                          ImageChops.offset(ceiling, -1, 0)))
    ceiling = ImageChops.darker(across, ImageChops.darker(ImageChops.offset(across, 0, 1),
                                                          ImageChops.offset(across, 0, -1)))
    # (ceiling - grey) + 96 reaches 128, where convert("1") sets 1, when grey < ceiling - 31
    return ImageChops.subtract(ceiling, grey, 1.0, 96).convert("1", dither=Image.Dither.NONE)


def _image_page(out: pikepdf.Pdf, encoded: Encoded, pixels: tuple[int, int],
                points: tuple[float, float]) -> pikepdf.Page:
    """A page of `points` showing the image. The matrix's numbers are the MediaBox's own
    (`_page_points` rounds them to 4 decimals): a picture a hair larger than the page is
    drawn a device pixel larger by PDFium, shifting it by a pixel at low zoom (an A4 page at
    72 DPI went from 0.94 to 0.79-0.81 SSIM, lossless included)."""
    width, height = points
    image = pikepdf.Stream(out, encoded.data, Type=Name.XObject, Subtype=Name.Image,
                           Width=pixels[0], Height=pixels[1], **encoded.entries)
    content = pikepdf.Stream(out, f"q {width:.4f} 0 0 {height:.4f} 0 0 cm /P0 Do Q".encode())
    page = Dictionary(Type=Name.Page, MediaBox=Array([0, 0, width, height]),
                      Resources=Dictionary(XObject=Dictionary(P0=image)), Contents=content)
    return pikepdf.Page(page)
