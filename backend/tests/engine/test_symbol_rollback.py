"""SymbolPages.mark and rollback (symbols.py): a page built again at another resolution
(raster.py tries text pages at 200 DPI) leaves none of the first rendering's glyphs behind, and
the glyphs added after a rollback get the codes the forgotten ones had."""

from __future__ import annotations

import io

import numpy as np
import pikepdf
import pypdfium2 as pdfium

from sanitas.engine import raster
from sanitas.engine.symbols import SymbolPages
from tests.engine.papers import two_column_paper


def _ink(pdf: pikepdf.Pdf, dpi: int) -> np.ndarray:
    buffer = io.BytesIO()
    pdf.save(buffer)
    document = pdfium.PdfDocument(buffer.getvalue())
    try:
        page = document[0]
        picture = page.render(scale=dpi / 72, fill_color=(255, 255, 255, 255)).to_pil()
        page.close()
    finally:
        document.close()
    return np.asarray(raster._ink(picture.convert("L")))


def _glyph_count(pdf: pikepdf.Pdf) -> int:
    return sum(len(font.CharProcs) for page in pdf.pages
               for font in page.Resources.Font.values())


def test_rollback_forgets_the_glyphs_added_since_the_mark():
    paper = two_column_paper(pages=1)
    at_150, at_200 = _ink(paper, 150), _ink(paper, 200)
    points = (612.0, 792.0)

    alone = pikepdf.new()
    symbols = SymbolPages(alone)
    alone.pages.append(symbols.add_page(at_200, points, raster._group4_picture))
    symbols.finish()
    expected = _glyph_count(alone)

    out = pikepdf.new()
    symbols = SymbolPages(out)
    mark = symbols.mark()
    assert symbols.add_page(at_150, points, raster._group4_picture) is not None
    first = len(symbols.glyphs)
    assert first > 50
    symbols.rollback(mark)
    assert symbols.glyphs == {} and symbols.fonts == [] and symbols.mark() == mark
    page = symbols.add_page(at_200, points, raster._group4_picture)
    assert page is not None
    out.pages.append(page)
    symbols.finish()
    assert _glyph_count(out) == expected  # none of the 150 DPI shapes
    buffer = io.BytesIO()
    out.save(buffer)
    with pikepdf.open(io.BytesIO(buffer.getvalue())) as saved:
        assert np.array_equal(_ink(saved, 200), at_200)  # the page as its own pixels


def test_rollback_keeps_what_came_before_the_mark():
    """Glyphs of earlier pages stay, with their fonts, and those pages still draw exactly."""
    first, second = two_column_paper(pages=1, seed=1), two_column_paper(pages=1, seed=9)
    points = (612.0, 792.0)
    out = pikepdf.new()
    symbols = SymbolPages(out)
    kept = symbols.add_page(_ink(first, 150), points, raster._group4_picture)
    assert kept is not None
    out.pages.append(kept)
    before = dict(symbols.glyphs)
    mark = symbols.mark()
    assert symbols.add_page(_ink(second, 200), points, raster._group4_picture) is not None
    assert len(symbols.glyphs) > len(before)
    symbols.rollback(mark)
    assert symbols.glyphs == before
    assert sum(len(glyphs) for glyphs in symbols.font_glyphs) == len(before)
    symbols.finish()
    buffer = io.BytesIO()
    out.save(buffer)
    with pikepdf.open(io.BytesIO(buffer.getvalue())) as saved:
        assert _glyph_count(saved) == len(before)
        assert np.array_equal(_ink(saved, 150), _ink(first, 150))
