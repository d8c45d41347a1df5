"""Advanced mode's text layer from a page's own text, where every letter of it is shown.

OCR reads a page's words again from its pixels: about a second of CPU a page of ordinary
text, nine tenths of advanced mode's time on a business document. But most pages rebuilt
from pixels were made from text (a Word document printed by LibreOffice, a LaTeX paper), and
PDFium extracts that text exactly, with each character's box, in milliseconds. This module
takes it where doing so cannot carry anything a reader of the pixels would not see:
every letter and digit of the page must be shown in its rendering, or the whole page is
recognised by OCR instead, as before.

A page's text is used only when all of these hold (else `shown_lines` returns None):
- the page is not rotated and every character is upright (PDFium's angle 0), so lines are
  rows of the picture;
- every text object is a direct child of the page (not inside a form XObject) and drawn in
  a painting text mode (fill, stroke or both: not invisible, not clipping);
- no two letters overlap (their boxes shrunk by OVERLAP_INSET on each side): text hidden
  under other text would otherwise pass the next test on its neighbour's ink;
- every letter or digit is at least MIN_LETTER_POINTS tall and shown: the page is rendered a
  second time without its text objects, and each letter's box must hold a pixel at least
  SHOWN_LEVELS grey levels apart between the two renderings. White text on white, text under
  a picture or a filled shape, text outside the page or transparent text changes no pixel.

The characters become `ocr.Line`s (a line ends at PDFium's line breaks, when the next
character is not on the same row, or when it goes backwards) in the picture's pixels, so
`ocr.add_text_layer` writes them as it writes recognised words: escaped strings in an
invisible layer over the picture, in the glyphless font. Nothing of the original's fonts,
text objects or content stream is carried; only the characters' Unicode values and boxes.
"""

from __future__ import annotations

import ctypes
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pypdfium2 as pdfium
import pypdfium2_raw as pdfium_c
from PIL import Image, ImageChops

from sanitas.engine.ocr import Line

SHOWN_LEVELS = 40  # a letter is shown when a pixel of its box changes this much without text
MIN_LETTER_POINTS = 3.0  # smaller letters (their loose box) are specks: the page goes to OCR
OVERLAP_INSET = 0.2  # each side of a letter's box, shrunk by this share before the overlap test
PAINTING_MODES = {pdfium_c.FPDF_TEXTRENDERMODE_FILL, pdfium_c.FPDF_TEXTRENDERMODE_STROKE,
                  pdfium_c.FPDF_TEXTRENDERMODE_FILL_STROKE}
MAX_CHARS = 100_000  # more characters on one page: OCR (and its own limits) decides
ANGLE_TOLERANCE = 0.001  # radians
LINE_BREAKS = {"\r", "\n"}


@dataclass(frozen=True)
class _Char:
    text: str
    tight: tuple[float, float, float, float]  # (left, top, right, bottom) in pixels, y down
    loose: tuple[float, float, float, float]
    letter: bool  # a letter or digit (what must be shown)


def shown_lines(page: pdfium.PdfPage, picture: Image.Image, scale: float,
                render: Callable[[pdfium.PdfPage, float], Image.Image]) -> list[Line] | None:
    """The page's own text as lines in `picture`'s pixels (`picture`: the page rendered by
    `render` at `scale` pixels a point, which renders it again without text), or None when
    the page's text cannot be taken as it is (see the module's rules: the page is then
    recognised by OCR). An empty list: no letters at all.

    Removes the page's text objects to render it without them: the caller closes the page
    afterwards and renders nothing more from it."""
    if page.get_rotation() != 0:
        return None
    transform = _page_to_pixels(page, picture.size)
    if transform is None:
        return None
    textpage = page.get_textpage()
    objects: dict[int, ctypes.c_void_p] = {}
    try:
        chars = _read_chars(textpage, transform, objects)
    finally:
        textpage.close()
    if chars is None:
        return None
    letters = [c for c in chars if c.letter]
    if not letters:
        return []
    without = _render_without(page, objects, scale, picture.size, render)
    if without is None or not _shown_apart(letters, picture, without):
        return None
    return _lines(chars)


def _page_to_pixels(page: pdfium.PdfPage, size: tuple[int, int],
                    ) -> tuple[float, float, float, float] | None:
    """(ax, bx, ay, by): a page point (x, y) is the pixel (ax * x + bx, ay * y + by) of the
    page rendered at `size`; None unless the mapping is a scale and a shift (PDFium's own
    display matrix: the crop box's origin, y turned down)."""
    fine = 1000  # device coordinates are integers: ask for a 1000x larger bitmap
    width, height = size[0] * fine, size[1] * fine
    points = ((0.0, 0.0), (100.0, 100.0), (100.0, 0.0))
    found = []
    for x, y in points:
        dx, dy = ctypes.c_int(), ctypes.c_int()
        if not pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, width, height, 0, x, y,
                                          ctypes.byref(dx), ctypes.byref(dy)):
            return None
        found.append((dx.value / fine, dy.value / fine))
    (x0, y0), (x1, y1), (x2, y2) = found
    if abs(y2 - y0) > 0.01 or abs(x2 - x1) > 0.01:
        return None  # a rotation or a shear: not rows of the picture
    ax, ay = (x1 - x0) / 100, (y1 - y0) / 100
    if ax <= 0 or ay >= 0:
        return None
    return ax, x0, ay, y0


def _read_chars(textpage: pdfium.PdfTextPage, transform: tuple[float, float, float, float],
                objects: dict[int, ctypes.c_void_p]) -> list[_Char] | None:
    """Every character of the page with its boxes in pixels; the text objects they come from
    go into `objects`. None when a character or object breaks a rule."""
    ax, bx, ay, by = transform
    count = textpage.count_chars()
    if count > MAX_CHARS:
        return None
    chars: list[_Char] = []
    raw = textpage.raw
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    tight_refs = [ctypes.byref(v) for v in (left, right, bottom, top)]
    rect = pdfium_c.FS_RECTF()
    loose_ref = ctypes.byref(rect)
    for index in range(count):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        text = chr(code) if 0 < code < 0x110000 else ""
        generated = pdfium_c.FPDFText_IsGenerated(raw, index) == 1
        if text == "\x02":
            text = "-"  # PDFium's end-of-line hyphen
        elif not text or (unicodedata.category(text)[0] == "C" and not text.isspace()):
            continue  # a glyph without a character (or a control): nothing to place
        if generated:  # a space or line break PDFium inferred: no object, no box of its own
            chars.append(_Char(text, (0, 0, 0, 0), (0, 0, 0, 0), False))
            continue
        angle = pdfium_c.FPDFText_GetCharAngle(raw, index)
        if not (0 <= angle < ANGLE_TOLERANCE or abs(angle - 2 * np.pi) < ANGLE_TOLERANCE):
            return None
        obj = pdfium_c.FPDFText_GetTextObject(raw, index)
        if not obj:
            return None
        address = ctypes.cast(obj, ctypes.c_void_p).value or 0
        if address not in objects:
            if pdfium_c.FPDFTextObj_GetTextRenderMode(obj) not in PAINTING_MODES:
                return None
            objects[address] = obj
        if not pdfium_c.FPDFText_GetCharBox(raw, index, *tight_refs) or \
                not pdfium_c.FPDFText_GetLooseCharBox(raw, index, loose_ref):
            return None
        boxes = [(ax * left.value + bx, ay * top.value + by,
                  ax * right.value + bx, ay * bottom.value + by),
                 (ax * rect.left + bx, ay * rect.top + by,
                  ax * rect.right + bx, ay * rect.bottom + by)]
        letter = text.isalnum()
        if letter and (boxes[1][3] - boxes[1][1]) < MIN_LETTER_POINTS * -ay:
            return None
        chars.append(_Char(text, boxes[0], boxes[1], letter))
    return chars


def _render_without(page: pdfium.PdfPage, objects: dict[int, ctypes.c_void_p], scale: float,
                    size: tuple[int, int], render: Callable[[pdfium.PdfPage, float], Image.Image],
                    ) -> Image.Image | None:
    """The page rendered at `scale` (grey) after removing `objects` from it; None when one is
    not the page's own (inside a form) or the rendering's size differs."""
    removed = []
    try:
        for obj in objects.values():
            if not pdfium_c.FPDFPage_RemoveObject(page.raw, obj):
                return None
            removed.append(obj)
        picture = render(page, scale).convert("L")
    finally:
        for obj in removed:
            pdfium_c.FPDFPageObj_Destroy(obj)
    return picture if picture.size == size else None


def _shown_apart(letters: list[_Char], picture: Image.Image, without: Image.Image) -> bool:
    """Whether no two letters' boxes (each shrunk by OVERLAP_INSET a side) cover one pixel,
    and every letter's box holds a pixel that differs by SHOWN_LEVELS between the page and
    the page without its text."""
    changed = np.asarray(ImageChops.difference(picture.convert("L"), without)) >= SHOWN_LEVELS
    width, height = picture.size
    cover = np.zeros((height, width), dtype=np.bool_)
    previous: tuple[float, float, float, float] | None = None
    for char in letters:
        left, top, right, bottom = char.tight
        x0, y0 = max(0, int(left)), max(0, int(top))
        x1, y1 = min(width, int(right + 0.999)), min(height, int(bottom + 0.999))
        if x1 <= x0 or y1 <= y0 or not changed[y0:y1, x0:x1].any():
            return False  # outside the page, no box, or not a pixel of it drawn
        if char.tight == previous:
            continue  # one glyph of several characters (a ligature: "fi")
        previous = char.tight
        dx, dy = (right - left) * OVERLAP_INSET, (bottom - top) * OVERLAP_INSET
        x0, y0 = max(0, int(left + dx)), max(0, int(top + dy))
        x1, y1 = min(width, int(right - dx + 0.999)), min(height, int(bottom - dy + 0.999))
        if x1 > x0 and y1 > y0:
            region = cover[y0:y1, x0:x1]
            if region.any():
                return False
            region[...] = True
    return True


def _lines(chars: list[_Char]) -> list[Line]:
    """The characters in PDFium's order as lines of words (pixel boxes): a line ends at a
    line break, when the next character's middle is outside the previous one's rows, or when
    it starts left of the previous one."""
    lines: list[Line] = []
    words: list[tuple[int, int, str]] = []
    word: list[_Char] = []
    rows = [float("inf"), float("-inf")]  # the line's top and bottom
    last: _Char | None = None  # the line's last character that is not a space

    def end_word() -> None:
        if word:
            words.append((int(word[0].loose[0]), int(max(c.loose[2] for c in word) + 0.999),
                          "".join(c.text for c in word)))
            word.clear()

    def end_line() -> None:
        end_word()
        if words:
            lines.append(Line(words[0][0], int(rows[0]), words[-1][1], int(rows[1] + 0.999),
                              list(words)))
        words.clear()
        rows[:] = [float("inf"), float("-inf")]

    for char in chars:
        if char.text in LINE_BREAKS:
            end_line()
            last = None
            continue
        if char.text.isspace():
            end_word()
            continue
        if last is not None:
            middle = (char.loose[1] + char.loose[3]) / 2
            if not last.loose[1] <= middle <= last.loose[3] or \
                    char.loose[0] < last.loose[0] - 0.5 * (last.loose[2] - last.loose[0]):
                end_line()
        word.append(char)
        rows[0], rows[1] = min(rows[0], char.loose[1]), max(rows[1], char.loose[3])
        last = char
    end_line()
    return lines
