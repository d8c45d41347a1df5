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
  `hairlines.py` finds straight runs across or down, at least 48 px long, 1-2 px thick with paper
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
  Slanted lines (`hairlines._diagonals`: hatching, slanted rules and frames) the same way, once the
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
  0.93-0.94 at 3-5x the bytes. Where a page's lines fall on the 72 DPI grid matters most:
  PDFium puts each line of the original on a whole pixel, the rebuilt page's lines are where
  the rendering put them, and with 12 pt leading (25 px at 150 DPI) every line of a page has
  the same luck: a LaTeX-shaped page of 10 pt Times scores from 0.80 to 0.95 as its text block
  moves down by a fraction of a point (tests/engine/test_advanced_fidelity_latex.py). A
  glyph-only symbol-coded page is compared with PDFium's own 72 DPI rendering (`seen_at`: the
  stored page resized with a Hamming filter, SSIM; within 0.0041 of fidelity.py's figure on 86
  text pages, each at 150 and 200 DPI). Under SHARPEN_BELOW (0.926) the page is rendered again
  at SHARPER_DPI (200) and kept so when that reads SHARPER_GAIN higher, and once a page was,
  the document's text pages start at 200 (one glyph set: half at 150 and half at 200 took 23%
  more bytes than all at 200); there a page reading SHARPEN_BELOW or more (sparse text: a
  contents page, the end of the last column, where 150 and 200 are a toss-up) is rendered at
  150 too and kept at whichever reads higher (`_rebuild_page`). The estimate this replaced
  (halved, then a bilinear resize) read 150 DPI pages 0.026 lower than 200 DPI ones on
  average, by up to 0.08: 200 was kept where it looked less like the original, and a
  document's sparse pages then followed it unmeasured (a LaTeX-shaped paper's last page 0.978
  at 200, 0.985 at 150; a LibreOffice export's 0.975 and 0.982). The article: 0.922-0.96, 20.7
  KB a page where 150 DPI took 17.4: 1.78x its input, 2.13x with the OCR layer (1.50x and
  1.86x at 150); CPU a page (best of 3, A/B interleaved; 47 ms at 150 DPI alone, as measured
  before): 81-89 before the sparse pages were measured and 107-112 since (the LibreOffice
  export 80-92 -> 111-114 and 46 -> 59 KB, the LaTeX-shaped paper 79-82 -> 106-108 and 104 ->
  94 KB; a 10-page generated paper that stays at 150 48-49 -> 53). More than 200 DPI gains
  little (0.925-0.927 at 300). Pages with large pieces or hairlines are not re-rendered: more
  pixels make lines thinner than readers draw them (the contour map 0.951 at 150 DPI, 0.847 at
  200).

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

from sanitas.engine import hairlines, ocr, shown_text
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
SHARPEN_BELOW = 0.926  # `seen_at` (as fidelity.py scores): dense text under it tries SHARPER_DPI,
# and at SHARPER_DPI, sparse text at or over it tries DPI too (`_rebuild_page`)
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
        own: dict[int, ocr.Recognised] = {}  # pages whose text layer is their own text
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
                    chosen, text_height, had_text = _has_words(page, built.picture, built.ink)
                    lines = (shown_text.shown_lines(page, built.picture, built.scale, _render)
                             if had_text and ctx.ocr_own_text else None)  # last: it takes
                    # the page's text away
                    if lines is not None:
                        own[index] = ocr.Recognised(built.picture.size, lines)
                        sizes[index] = points
                    elif chosen:
                        recogniser.add(index, built.picture, built.scale * 72, text_height)
                        sizes[index] = points
            finally:
                page.close()
            ctx.pages_rebuilt.append(index + 1)
            share = 25 if recogniser is not None else 85  # the rest is recognition
            ctx.progress(10 + share * (index + 1) // count)
        symbols.finish()
        text_pages: list[int] = []  # pages given a text layer (by OCR or of their own text)
        own_pages: list[int] = []  # of those, the pages given their own text
        failed: list[int] = []
        if recogniser is not None:
            found, failed = recogniser.finish(lambda done: ctx.progress(35 + int(60 * done)))
            recogniser = None
            font = None
            for index, recognised in sorted({**found, **own}.items()):
                font = font or ocr.glyphless_font(out)
                if ocr.add_text_layer(out, out.pages[index], recognised.lines,
                                      recognised.pixels, sizes[index], font):
                    text_pages.append(index + 1)
                    if index in own:
                        own_pages.append(index + 1)
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
        _report_ocr(ctx, count, len(sizes), text_pages, own_pages, failed)
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
               ) -> tuple[bool, float | None, bool]:
    """Whether a page is worth recognising: its original had text (letters or digits PDFium
    extracts), or its pixels look like text (a scan: `symbols.looks_like_text`); when the
    original had text, the height of its small text in points (`_small_text_height`), which
    sets the resolution tesseract gets (`ocr.recognition_dpi`); and whether it had text (its
    own may then be its text layer: `shown_text`)."""
    textpage = page.get_textpage()
    try:
        chars = textpage.count_chars()
        text = textpage.get_text_range(0, min(chars, 4000)) if chars > 0 else ""
        if any(ch.isalnum() for ch in text):
            return True, _small_text_height(textpage, chars), True
    finally:
        textpage.close()
    if ink is None:
        ink = _ink(picture.convert("L"))
    return looks_like_text(np.asarray(ink)), None, False


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
                own_pages: list[int], failed: list[int]) -> None:
    languages = ctx.ocr_languages
    recognised = len(text_pages) - len(own_pages)
    if chosen == 0:
        detail = "no page had text or looked like text: nothing to recognise"
    elif not own_pages:
        detail = (f"text layer rebuilt by OCR ({languages}) on {len(text_pages)} of {count} "
                  "page(s); the words were recognised again from the pixels and may contain "
                  "errors")
    else:
        detail = (f"text layer rebuilt on {len(text_pages)} of {count} page(s): "
                  f"{len(own_pages)} from the page's own text, every letter of which is "
                  "shown in the pixels")
        if recognised:
            detail += (f", {recognised} by OCR ({languages}), whose words were recognised "
                       "again from the pixels and may contain errors")
    if 0 < chosen < count:
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
    """The page rebuilt from pixels at `scale`, or at SHARPER_DPI where that is symbol-coded
    text (glyphs only) that looks more like the original at FIDELITY_DPI (`seen_at`).
    (Only text gains from more pixels: hairlines thinner than a device pixel are drawn one
    pixel wide by readers, so their pictures look less like them the sharper they are; a
    0.3 pt contour map 0.951 at 150 DPI, 0.847 at 200.)
    Which resolution is tried first: `scale`, until a page of the document was kept at
    SHARPER_DPI (`sharp_text`), then SHARPER_DPI (the document's text then mostly shares one
    set of glyphs: an article half at 150 and half at 200 DPI took 23% more bytes than all
    at 200). Glyph-only text at `scale` whose estimate is under SHARPEN_BELOW (dense text)
    is tried at SHARPER_DPI and kept so when that reads SHARPER_GAIN higher; glyph-only text
    at SHARPER_DPI whose estimate is SHARPEN_BELOW or more (a sparse page) is tried at
    `scale` and kept so when that reads higher. Which of the two resolutions a page's lines
    fall better on at 72 DPI depends on where they sit: a dense page mostly gains from 200
    (on 182 of 200 placements of a LaTeX-shaped page's text block), a sparse page of the same
    document (a contents page, the end of the last column) may lose, and kept at 200
    unmeasured it fell under 0.98 (a LibreOffice export's last page 0.982 at 150, 0.975 at
    200; a LaTeX-shaped paper's 0.985 and 0.978)."""
    sharper = page_scale(*points, SHARPER_DPI)
    if sharper <= scale * 1.05:
        return _build(page, out, symbols, points, scale)
    mark = symbols.mark()
    first_scale, other_scale = (sharper, scale) if sharp_text else (scale, sharper)
    built = _build(page, out, symbols, points, first_scale)
    if not _glyphs_only(built):
        if first_scale == scale:
            return built
        symbols.rollback(mark)
        # Not such text at SHARPER_DPI: the page is as `scale` builds it.
        return _build(page, out, symbols, points, scale)
    assert built.grey is not None and built.ink is not None
    reference = _render(page, FIDELITY_DPI / 72).convert("L")  # as fidelity.py: RGB, then L
    score = seen_at(reference, built.grey)
    # At `scale`, text looking less like the original than SHARPEN_BELOW (dense text) is
    # tried at SHARPER_DPI; at SHARPER_DPI, text looking at least that much like it (a
    # sparse page, where it matters more where its lines fall) is tried at `scale`.
    if (score >= SHARPEN_BELOW) == (first_scale == scale):
        return built
    picture = _render(page, other_scale)
    encoded, ink, grey = encode(picture)
    if encoded is not None or ink is None or grey is None:  # not black-and-white there
        return built
    gain = SHARPER_GAIN if other_scale == sharper else 0.0
    if seen_at(reference, grey) <= score + gain:
        return built
    symbols.rollback(mark)  # the first rendering's new glyphs go (kept below if it stays)
    other = _symbol_coded(out, symbols, picture, points, other_scale, ink, grey)
    if _glyphs_only(other):
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
    found = hairlines.hairlines(picture)
    if found is None:
        return built
    cleaned, strokes, count = found
    symbols.rollback(mark)
    rebuilt = _encode_page(out, symbols, cleaned, points, scale)
    rebuilt.page.obj.Contents = pikepdf.Stream(
        out, rebuilt.page.obj.Contents.read_bytes() + b"\n"
        + hairlines.content(strokes, picture.size, points))
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
        return _symbol_coded(out, symbols, picture, points, scale, ink, grey)
    return _Built(_image_page(out, encoded, picture.size, points), encoded.encoding, picture,
                  ink, scale, grey)


def _symbol_coded(out: pikepdf.Pdf, symbols: SymbolPages, picture: Image.Image,
                  points: tuple[float, float], scale: float, ink: Image.Image,
                  grey: Image.Image | None) -> _Built:
    """A black-and-white page (`encode` found it so): its ink symbol-coded, or one Group 4
    image where the shapes do not repeat."""
    symbol_page = symbols.add_page(np.asarray(ink), points, _group4_picture)
    if symbol_page is not None:
        return _Built(symbol_page, "symbols", picture, ink, scale, grey)
    encoded = _bilevel(ink)
    return _Built(_image_page(out, encoded, picture.size, points), encoded.encoding, picture,
                  ink, scale, grey)


def seen_at(reference: Image.Image, grey: Image.Image) -> float:
    """About how much a page stored as `grey` (its grey pixels) looks like the original
    rendered at the size of `reference` (grey): SSIM, 8 x 8 windows (`similarity`), of `grey`
    resized to it in one step with a Hamming filter; about 7 ms with the SSIM. It comes within
    0.0041 of what tests/engine/fidelity.py measures of the rebuilt page drawn by PDFium, on
    86 text pages each built at 150 and at 200 DPI (LaTeX-shaped, LibreOffice and generated
    ones, 8 to 11 pt), so the two resolutions are compared on equal terms. (Halved first, then
    resized bilinearly, it read 150 DPI pages 0.025 under on average, from 0.083 under to
    0.058 over, and 200 DPI ones 0.001 over: 200 won on pages it showed worse.)"""
    resized = grey.resize(reference.size, Image.Resampling.HAMMING)
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
