"""Text documents with known words for the OCR text layer, and word recall against them (used
by tests/engine/test_ocr.py, tests/sandbox/test_ocr_sandbox.py and bench/bench_engine.py)."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
from pikepdf import Dictionary

from tests.engine.papers import _WORDS, _font, photo_pdf


def letter_pdf(pages: int = 2, seed: int = 7, lines: int = 18, size: float = 11,
               font_name: str = "Helvetica") -> pikepdf.Pdf:
    """Pages of random words (11 pt Helvetica, 16 pt leading, one column: the leading and the
    words per line follow `size`), a page number."""
    rng = random.Random(seed)
    pdf = pikepdf.new()
    font = _font(pdf, font_name)
    leading, count = size * 16 / 11, max(1, round(9 * 11 / size))
    for number in range(1, pages + 1):
        page = pdf.add_blank_page(page_size=(612, 792))
        page.Resources = Dictionary(Font=Dictionary(F1=font))
        ops = [f"BT /F1 {size} Tf 72 {730 - leading * row:.1f} Td "
               f"({' '.join(rng.sample(_WORDS, count))}) Tj ET" for row in range(lines)]
        ops.append(f"BT /F1 11 Tf 290 40 Td (Page {number}) Tj ET")
        page.Contents = pdf.make_stream("\n".join(ops).encode())
    return pdf


def letter_and_photo_pdf() -> pikepdf.Pdf:
    """Page 1 a letter page, page 2 a photograph with no text at all."""
    pdf = letter_pdf(pages=1)
    with photo_pdf(1) as photos:
        pdf.pages.append(photos.pages[0])
    return pdf


def page_texts(path: Path) -> list[str]:
    """Each page's text as PDFium extracts it."""
    document = pdfium.PdfDocument(str(path))
    try:
        return [page.get_textpage().get_text_range() for page in document]
    finally:
        document.close()


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def word_recall(original: str, rebuilt: str) -> float:
    """The share of the original's words (counted with repeats) found in the rebuilt text."""
    wanted, found = words(original), words(rebuilt)
    total = sum(wanted.values())
    return sum(min(count, found[word]) for word, count in wanted.items()) / total if total else 1.0
