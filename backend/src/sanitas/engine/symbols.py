"""Advanced mode's black-and-white pages as symbol-coded text: what JBIG2's text regions do,
written with PDF's own Type 3 fonts (no JBIG2 encoder exists here).

A rendered text page repeats a few dozen shapes thousands of times: PDFium places glyphs on
whole pixels, so every "e" of a font and size comes out as the same bitmap (a 6-page report:
19 552 letters, 93 distinct bitmaps). The page's ink is cut into pieces (runs of inked rows
into lines, each line into runs of inked columns, each piece trimmed to its inked rows; a piece
too large for a glyph is cut again the same way), each distinct piece becomes a glyph of a
Type 3 font, and the page becomes lines of text showing those glyphs at their pixel positions.

Exact: pieces are compared whole (most by their columns as 64-bit words around the baseline,
all of a line's at once; the rest by their bytes), never by a hash, so a glyph is shown only
where its very bitmap was. Rendered at its own resolution the page is the thresholded bitmap,
pixel for pixel (tests compare them).

A glyph draws its ink as filled rectangles on the pixel grid (a row's run of ink, grown down
while the rows below repeat it), not as an image: readers anti-alias paths at any zoom, where a
small image mask is sampled without smoothing and loses thin strokes when zoomed out. At 72 DPI
the glyph pages are as faithful as a Group 4 image of the page (the same SSIM to 0.001 on the
text pages, contour map and table measured: 0.917, 0.951, 0.838), and take a fraction of its
bytes.

Glyphs are shared by all pages (fonts of at most 251 glyphs, added as pages need them). Pieces
wider or taller than MAX_GLYPH_SIDE pixels (figures, rules, frames) are all in one Group 4
picture the size of the page, drawn under the glyphs (a picture per piece was placed by PDFium
on whole device pixels, a pixel off at low zoom: 0.3 pt contours scored 0.893 at 72 DPI, 0.951
so; `SymbolPages.mark` and `rollback` forget the glyphs of a page built again). A page whose
pieces are mostly new shapes (noise, a scan, rotated text: nothing repeats), or that has more
than MAX_LARGE_PIECES large pieces, is not worth coding this way: `SymbolPages.add_page`
refuses it and the caller keeps the page as one Group 4 image.

The codes carry no text: each font maps every code to a space and the text sits in marked
content with an empty /ActualText, so copying or searching the page finds nothing there (the
OCR layer, ocr.py, is the page's text; `looks_like_text` tells it which pages without text in
the original are worth recognising).

Measured (150 DPI; output / input, Group 4 pages then glyphs): a 6-page LibreOffice article
with embedded fonts 3.8x then 1.5x (1.78x with its text at 200 DPI, see raster.py); a 6-page
monospaced report 9.1x then 1.4x; a generated two-column paper with fonts not embedded (3 KB a
page) 20x then 4.6x (5 pages) and 0.95x (10 pages: the glyphs are paid once).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import pikepdf
from pikepdf import Array, Dictionary, Name

MAX_GLYPH_SIDE = 96  # pixels; larger pieces are drawn by a picture of the page (Group 4)
MAX_CUT_DEPTH = 12  # an XY cut goes no deeper (each level cuts rows, then columns)
MAX_NEW_SHARE = 0.25  # a page whose pieces are more than 1/4 new shapes (and many) stays G4
MIN_NEW_REFUSED = 300
MAX_LARGE_PIECES = 64  # more pieces too large for glyphs (bars, a pattern): the page stays G4
# Codes never used: bytes that need escaping in a literal string, or that readers normalise.
_SKIPPED = frozenset(b"\n\r()\\")
_CODES = [code for code in range(256) if code not in _SKIPPED]

# Every code reads as a space: the glyphs are pictures of text, not text (readers that honour
# the empty /ActualText around them extract nothing at all).
_NO_TEXT = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            b"/CMapName /Sanitas-NoText def /CMapType 2 def\n"
            b"1 begincodespacerange <00> <FF> endcodespacerange\n"
            b"1 beginbfrange <00> <FF> [" + b" ".join([b"<0020>"] * 256) + b"] endbfrange\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end\n")

# A piece's key: for most, its width and its columns as 64-bit words of the rows around the
# baseline (bytes, made for all pieces at once); else (width, height, rise, its bitmap's bytes).
Key = bytes | tuple[int, int, int, bytes]
LargePieceEncoder = Callable[[pikepdf.Pdf, np.ndarray], pikepdf.Stream]  # ink -> image
ABOVE, BELOW = 48, 16  # the rows of a word: 48 above the baseline, 16 below (64 bits)
WORDS = 40  # a piece of at most 40 columns within those rows is keyed by its words


@dataclass
class _Glyph:
    font: int
    code: int
    width: int  # bitmap width in pixels
    height: int
    rise: int  # bottom of the bitmap relative to the line's baseline (negative: descender)
    advance: int  # pen movement in pixels: width plus the gap that most often follows it


@dataclass
class _Line:
    """A run of inked rows (within the columns of its pieces) and its pieces, left to right,
    as arrays of page rows and columns (bottoms and rights exclusive)."""

    top: int
    bottom: int
    baseline: int  # the most common bottom of its pieces
    lefts: np.ndarray
    rights: np.ndarray
    tops: np.ndarray
    bottoms: np.ndarray


@dataclass
class SymbolPages:
    """Pages of one output document built from symbol-coded ink."""

    pdf: pikepdf.Pdf
    glyphs: dict[Key, _Glyph] = field(default_factory=dict)
    fonts: list[pikepdf.Dictionary] = field(default_factory=list)
    no_text: pikepdf.Stream | None = None
    font_glyphs: list[list[_Glyph]] = field(default_factory=list)
    added: list[Key] = field(default_factory=list)  # every glyph's key, in the order added

    def mark(self) -> int:
        """Where the glyphs stand now, for `rollback`."""
        return len(self.added)

    def rollback(self, mark: int) -> None:
        """Forget the glyphs added since `mark` (pages built since are not to be used): a
        page built again at another resolution does not keep the first one's shapes."""
        for key in reversed(self.added[mark:]):
            glyph = self.glyphs.pop(key)
            del self.fonts[glyph.font].CharProcs[f"/g{glyph.code}"]
            self.font_glyphs[glyph.font].pop()
        del self.added[mark:]
        while self.font_glyphs and not self.font_glyphs[-1]:
            self.font_glyphs.pop()
            self.fonts.pop()

    def add_page(self, ink: np.ndarray, points: tuple[float, float],
                 large_piece: LargePieceEncoder) -> pikepdf.Page | None:
        """A page of `points` (width, height) drawing the 1-bit `ink` (True = ink, rows top
        to bottom, covering the whole page) with glyphs; None when too few pieces repeat (then
        nothing is added)."""
        lines = list(_lines(ink))
        keys: list[Key | None] = []  # per piece, in line order; None: too large for a glyph
        gaps: list[int] = []  # per piece: columns to the next piece on its line (-1: none)
        new: dict[Key, tuple[tuple[int, int, int, int, int], list[int]]] = {}  # first, all
        for line in lines:
            widths = line.rights - line.lefts
            heights = line.bottoms - line.tops
            large = (widths > MAX_GLYPH_SIDE) | (heights > MAX_GLYPH_SIDE)
            fits = (~large & (widths <= WORDS) & (line.tops >= line.baseline - ABOVE)
                    & (line.bottoms <= line.baseline + BELOW))
            worded = iter(_words(ink, line, fits) if fits.any() else ())
            for left, right, top, bottom, big, quick in zip(
                    line.lefts.tolist(), line.rights.tolist(), line.tops.tolist(),
                    line.bottoms.tolist(), large.tolist(), fits.tolist(), strict=True):
                key: Key | None = (next(worded) if quick else None if big else
                                   (right - left, bottom - top, line.baseline - bottom,
                                    ink[top:bottom, left:right].tobytes()))
                if key is not None and key not in self.glyphs:
                    if key in new:
                        new[key][1].append(len(keys))
                    else:
                        new[key] = ((top, left, bottom, right, line.baseline), [len(keys)])
                keys.append(key)
            gaps.extend((line.lefts[1:] - line.rights[:-1]).tolist())
            gaps.append(-1)
        if ((len(new) > MIN_NEW_REFUSED and len(new) > MAX_NEW_SHARE * len(keys))
                or keys.count(None) > MAX_LARGE_PIECES):
            return None
        for key, ((top, left, bottom, right, baseline), seen) in new.items():
            following = Counter(gaps[index] for index in seen if gaps[index] >= 0)
            self._add_glyph(key, ink[top:bottom, left:right], baseline - bottom,
                            following.most_common(1)[0][0] if following else 0)
        return self._page(lines, [None if key is None else self.glyphs[key] for key in keys],
                          points, ink, large_piece)

    def finish(self) -> None:
        """Write each font's widths, encoding and bounding box (glyphs are added to the last
        font as later pages need them, so these are known only at the end)."""
        for font, glyphs in zip(self.fonts, self.font_glyphs, strict=True):
            first, last = glyphs[0].code, glyphs[-1].code
            widths = [0] * (last - first + 1)
            for glyph in glyphs:
                widths[glyph.code - first] = glyph.advance
            font.FirstChar, font.LastChar = first, last
            font.Widths = Array(widths)
            differences: list[int | Name] = []
            previous = -2
            for glyph in glyphs:  # a code, then names for it and the codes that follow it
                if not differences or glyph.code != previous + 1:
                    differences.append(glyph.code)
                differences.append(Name(f"/g{glyph.code}"))
                previous = glyph.code
            font.Encoding = Dictionary(Type=Name.Encoding, Differences=Array(differences))
            font.FontBBox = Array([0, min(g.rise for g in glyphs), max(g.width for g in glyphs),
                                   max(g.rise + g.height for g in glyphs)])

    # --- building ---------------------------------------------------------------------------

    def _add_glyph(self, key: Key, bitmap: np.ndarray, rise: int, gap: int) -> None:
        height, width = bitmap.shape
        if not self.font_glyphs or len(self.font_glyphs[-1]) == len(_CODES):
            if self.no_text is None:
                self.no_text = pikepdf.Stream(self.pdf, _NO_TEXT)
            self.fonts.append(self.pdf.make_indirect(Dictionary(
                Type=Name.Font, Subtype=Name.Type3, FontMatrix=Array([0.001, 0, 0, 0.001, 0, 0]),
                CharProcs=Dictionary(), Resources=Dictionary(), ToUnicode=self.no_text)))
            self.font_glyphs.append([])
        font = len(self.fonts) - 1
        code = _CODES[len(self.font_glyphs[font])]
        glyph = _Glyph(font, code, width, height, rise, width + gap)
        self.glyphs[key] = glyph
        self.added.append(key)
        self.font_glyphs[font].append(glyph)
        procedure = (f"{glyph.advance} 0 0 {rise} {width} {rise + height} d1\n"
                     + _rectangles(bitmap, rise) + "f").encode()
        self.fonts[font].CharProcs[f"/g{code}"] = pikepdf.Stream(self.pdf, procedure)

    def _page(self, lines: list[_Line], glyphs: list[_Glyph | None],
              points: tuple[float, float], ink: np.ndarray,
              large_piece: LargePieceEncoder) -> pikepdf.Page:
        """The page: each line one TJ per font it uses (a number wherever a piece does not
        start where the previous glyph's advance left the pen), then the large pieces."""
        height, width = ink.shape
        # Pixel space, y up: a piece whose rows end (exclusive) at row b has its bottom edge
        # at height - b. The bitmap covers the page exactly (renderers stretch the page onto
        # its whole-pixel bitmap), so drawn at its own scale every edge is a device pixel's.
        ops = [f"q {points[0] / width:.10f} 0 0 {points[1] / height:.10f} 0 0 cm".encode(),
               b"/Span <</ActualText ()>> BDC BT"]
        fonts_used: set[int] = set()
        font = -1
        x0 = y0 = 0  # the start of the previous text line (Td is relative to it)
        large: list[tuple[int, int, int, int]] = []
        index = 0
        for line in lines:
            shown = []
            for top, left, bottom, right in zip(line.tops.tolist(), line.lefts.tolist(),
                                                line.bottoms.tolist(), line.rights.tolist(),
                                                strict=True):
                glyph = glyphs[index]
                index += 1
                if glyph is None:
                    large.append((top, left, bottom, right))
                else:
                    shown.append((left, glyph))
            if not shown:
                continue
            x, y = shown[0][0], height - line.baseline
            ops.append(f"{x - x0} {y - y0} Td".encode())
            x0, y0 = x, y
            pen = x
            parts: list[bytes] = []
            run = bytearray()
            for left, glyph in shown:
                if glyph.font != font or left != pen:
                    if run:
                        parts.append(b"(" + bytes(run) + b")")
                        run = bytearray()
                    if glyph.font != font:
                        if parts:
                            ops.append(b"[" + b"".join(parts) + b"]TJ")
                            parts = []
                        font = glyph.font
                        fonts_used.add(font)
                        ops.append(f"/F{font} 1000 Tf".encode())
                    if left != pen:
                        parts.append(str(pen - left).encode())
                run.append(glyph.code)
                pen = left + glyph.advance
            parts.append(b"(" + bytes(run) + b")")
            ops.append(b"[" + b"".join(parts) + b"]TJ")
        ops.append(b"ET EMC")
        resources = Dictionary(Font=Dictionary({f"/F{i}": self.fonts[i] for i in fonts_used}))
        if large:
            # The large pieces, all of them, as one picture the size of the page drawn under
            # the glyphs (paper white, so the glyphs' ink shows over it), placed like an
            # image page's picture. A picture of its own per piece is placed by PDFium on
            # whole device pixels, up to a pixel off at low zoom, and an image mask is
            # reduced without smoothing: hairlines moved or lost (a contour map at 72 DPI
            # scored 0.89; 0.95 so).
            pieces = np.zeros_like(ink)
            for top, left, bottom, right in large:
                pieces[top:bottom, left:right] = ink[top:bottom, left:right]
            resources.XObject = Dictionary(I0=large_piece(self.pdf, pieces))
            ops.insert(1, f"q {width} 0 0 {height} 0 0 cm /I0 Do Q".encode())
        ops.append(b"Q")
        content = pikepdf.Stream(self.pdf, b"\n".join(ops))
        page = Dictionary(Type=Name.Page, MediaBox=Array([0, 0, *points]),
                          Resources=resources, Contents=content)
        return pikepdf.Page(page)


MIN_TEXT_PIECES = 40  # glyph-sized pieces on text-like lines that make a page look like text
MIN_LINE_PIECES = 4  # a text-like line has at least this many of them
MIN_GLYPH_HEIGHT = 4  # pixels: smaller pieces are dots, noise or punctuation


def looks_like_text(ink: np.ndarray) -> bool:
    """Whether a page's 1-bit ink (as `SymbolPages.add_page` takes it) looks like text: at
    least MIN_TEXT_PIECES glyph-sized pieces on lines of at least MIN_LINE_PIECES of them (the
    cut into lines and pieces that symbol coding uses; it stops as soon as it has seen enough).
    For the OCR layer's choice of pages whose original had no text (scans)."""
    seen = 0
    for line in _lines(ink):
        heights = line.bottoms - line.tops
        glyphs = int(((heights >= MIN_GLYPH_HEIGHT) & (heights <= MAX_GLYPH_SIDE)
                      & (line.rights - line.lefts <= MAX_GLYPH_SIDE)).sum())
        if glyphs >= MIN_LINE_PIECES:
            seen += glyphs
            if seen >= MIN_TEXT_PIECES:
                return True
    return False


def _words(ink: np.ndarray, line: _Line, fits: np.ndarray) -> list[bytes]:
    """Keys of the pieces of `line` selected by `fits`: per piece, its width then one 64-bit
    word per column (the column's bits from ABOVE rows over the baseline to BELOW rows under
    it), zero past its width. Exact: equal keys are equal bitmaps at equal rises."""
    lefts, rights = line.lefts[fits], line.rights[fits]
    first, last = int(lefts[0]), int(rights[-1])
    origin = line.baseline - ABOVE
    low, high = max(line.top, origin), min(line.bottom, line.baseline + BELOW)
    # Each column's rows as the bits of one number (distinct powers of two: the sum is exact).
    powers = np.uint64(1) << np.arange(low - origin, high - origin, dtype=np.uint64)
    columns = powers @ ink[low:high, first:last].astype(np.uint64)
    offsets = np.arange(WORDS)
    widths = rights - lefts
    at = np.minimum((lefts - first)[:, None] + offsets, len(columns) - 1)
    keyed = np.where(offsets < widths[:, None], columns[at], np.uint64(0))
    rows = np.concatenate([widths[:, None].astype(np.uint64), keyed], axis=1)
    return cast("list[bytes]", rows.view(np.dtype((np.void, rows.shape[1] * 8))).ravel().tolist())


def _rectangles(bitmap: np.ndarray, rise: int) -> str:
    """The bitmap's ink as `re` operators in glyph space (y up, the bitmap's bottom at `rise`):
    each row's runs of ink, a run continuing unchanged on the rows below growing one rectangle
    (a stem is one rectangle, not one per row)."""
    height, width = bitmap.shape
    padded = np.zeros((height + 1, width + 2), dtype=np.bool_)  # a blank row closes every run
    padded[:height, 1:-1] = bitmap
    edges = np.flatnonzero(padded[:, 1:] != padded[:, :-1]).tolist()  # by row, in pairs
    rows: list[list[tuple[int, int]]] = [[] for _ in range(height + 1)]
    for start, end in zip(edges[0::2], edges[1::2], strict=True):
        row, left = divmod(start, width + 1)
        rows[row].append((left, end - row * (width + 1)))
    out: list[str] = []
    open_runs: dict[tuple[int, int], int] = {}  # (start, end) -> the row it began on
    for row, runs in enumerate(rows):
        continuing = set(runs)
        for run in [run for run in open_runs if run not in continuing]:
            first = open_runs.pop(run)
            out.append(f"{run[0]} {rise + height - row} {run[1] - run[0]} {row - first} re")
        for run in runs:
            open_runs.setdefault(run, row)
    return "\n".join(out) + "\n"


def _runs(mask: np.ndarray | np.bool_) -> tuple[np.ndarray, np.ndarray]:
    """Starts and (exclusive) ends of the runs of True in a 1-D array."""
    edges = np.flatnonzero(np.diff(mask.astype(np.int8), prepend=0, append=0))
    return edges[0::2], edges[1::2]


def _lines(ink: np.ndarray, top: int = 0, left: int = 0, depth: int = 0) -> Iterator[_Line]:
    """The lines of ink in `ink` (placed at `top`, `left` in the page): runs of inked rows,
    each cut into runs of inked columns, each piece trimmed to its own inked rows. A piece too
    large to be a glyph is cut again the same way (an XY cut): text beside a figure makes one
    tall piece of its whole column at first, whose own lines then come out as lines. (Band by
    band: the same over the whole page at once takes three times as long.)"""
    starts, ends = _runs(ink.any(axis=1))
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        band = ink[start:end]
        columns = band.any(axis=0)
        lefts, rights = _runs(columns)
        height = end - start
        first = np.where(columns, band.argmax(axis=0), height)
        last = np.where(columns, height - band[::-1].argmax(axis=0), 0)
        tops = np.minimum.reduceat(first, lefts)
        bottoms = np.maximum.reduceat(last, lefts)
        large = np.maximum(bottoms - tops, rights - lefts) > MAX_GLYPH_SIDE
        whole = len(starts) == 1 and len(lefts) == 1  # nothing cut: cutting again won't either
        if large.any() and depth < MAX_CUT_DEPTH and not whole:
            for x0, x1, y0, y1 in zip(lefts[large].tolist(), rights[large].tolist(),
                                      tops[large].tolist(), bottoms[large].tolist(),
                                      strict=True):
                yield from _lines(band[y0:y1, x0:x1], top + start + y0, left + x0, depth + 1)
            keep = ~large
            lefts, rights, tops, bottoms = lefts[keep], rights[keep], tops[keep], bottoms[keep]
        if len(lefts):
            row = top + start
            yield _Line(row, top + end, row + int(np.bincount(bottoms).argmax()), left + lefts,
                        left + rights, row + tops, row + bottoms)
