"""Advanced mode on a LaTeX-shaped paper (issue 29): two columns of 10 pt Times on 12 pt
leading, a German page, a contents page, bookmarks and Flate-compressed pages.

At 72 DPI PDFium puts every line of the original on a whole pixel; the rebuilt page's lines are
where the 150 (or 200) DPI rendering put them, so how alike the two look depends on where the
text block sits on the page. With 12 pt leading (25 px at 150 DPI) all lines of a page share that
luck; at 200 DPI they take turns. Dense pages that fall badly gain from 200 DPI, but which of the
two suits a sparse page (the contents, the end of the last column) is a toss-up. The rebuild
used to keep the whole document at 200 once one page went there, without looking at such pages
again, and chose with an estimate that read 150 DPI pages about 0.025 low: this paper's last
page came out at 0.978 (0.985 at 150). Dense pages of small text cannot reach 0.98 at 72 DPI
from any picture (a lossless grey picture of one scored 0.94-0.95, at 150 or at 200 DPI); the
bar here is for the pages that can."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest

from sanitas.engine import raster, sanitize_file
from sanitas.engine.report import Policy
from sanitas.engine.symbols import SymbolPages
from tests.engine.corpus import save_pdf
from tests.engine.fidelity import render_pdf, ssim
from tests.engine.papers import latex_paper

BAR = 0.98  # the peer corpus harness's bar, against the original at 72 DPI

# The text block where its lines fall badly at 150 DPI (the dense pages start the document's
# text at 200) and the contents where they fall well.
PAPER = {"top": 736.7, "contents_top": 723.0}


def _rendering_dpi(path: Path) -> list[int]:
    """The resolution each symbol-coded page was built from (its pixel grid's matrix)."""
    with pikepdf.open(path) as pdf:
        return [round(72 / float(page.Contents.read_bytes().split()[1])) for page in pdf.pages]


def _page_alone(page: pdfium.PdfPage, dpi: int) -> tuple[raster._Built, float]:
    """The page rebuilt at `dpi` on its own, and how much it looks like the original at
    72 DPI as tests/engine/fidelity.py measures it (PDFium rendering the rebuilt page)."""
    out = pikepdf.new()
    symbols = SymbolPages(out)
    points = raster._page_points(page, 0)
    built = raster._build(page, out, symbols, points, raster.page_scale(*points, dpi))
    out.pages.append(built.page)
    symbols.finish()
    buffer = io.BytesIO()
    out.save(buffer)
    rebuilt = pdfium.PdfDocument(buffer.getvalue())
    try:
        return built, ssim(page.render(scale=1).to_pil(), rebuilt[0].render(scale=1).to_pil())
    finally:
        rebuilt.close()


def test_latex_contents_and_column_end_pages_reach_the_bar(out_dir, tmp_path):
    """The contents page and the last page (two columns ending part-way down) at least 0.98,
    each at the resolution that looks more like it: the last page is one that 150 DPI shows
    better (0.985 alone, 0.978 at 200, where the document's text went before), so it is
    measured and kept at 150, its glyphs at 200 rolled back; the dense pages at 200, their
    better one."""
    pdf = latex_paper(**PAPER)
    buffer = io.BytesIO()
    pdf.save(buffer)
    document = pdfium.PdfDocument(buffer.getvalue())
    try:
        alone = {dpi: _page_alone(document[3], dpi)[1] for dpi in (150, 200)}
    finally:
        document.close()
    assert alone[150] >= BAR > alone[200], alone
    source = save_pdf(pdf, tmp_path / "latex.pdf")
    with pikepdf.open(source) as opened:  # what the corpus's LaTeX pages have
        assert len(opened.open_outline().root) == 4
        assert all(page.Contents.Filter == "/FlateDecode" for page in opened.pages)
    result = sanitize_file(source, out_dir, mode="advanced", policy=Policy(output="pdf"))
    assert result.status == "ok", result.reason
    output = Path(result.output)
    scores = [ssim(a, b) for a, b in zip(render_pdf(source), render_pdf(output), strict=True)]
    dense, german, contents, last = scores
    assert contents >= BAR, scores
    assert last >= BAR, scores
    assert min(dense, german) >= 0.905, scores  # 0.913 and 0.906 (0.900 and 0.896 at 150)
    dpis = _rendering_dpi(output)
    assert dpis[:2] == [200, 200] and dpis[3] == 150, dpis
    assert abs(last - alone[150]) < 1e-9  # the very page built alone at 150
    (detail,) = [f.detail for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "3 text page(s) at more DPI: 200" in detail
    assert "4 black-and-white (symbol-coded)" in detail


@pytest.mark.parametrize("dpi", [150, 200])
def test_the_72_dpi_estimate_reads_what_the_reader_shows(dpi):
    """`seen_at` is what decides between 150 and 200 DPI: on dense and sparse pages, at both
    resolutions, it comes within 0.005 of the likeness of the rebuilt page in PDFium. (The
    estimate before read 150 DPI pages 0.025 under it on average, 200 DPI ones about right,
    and was 0.012-0.013 over on this paper's first page: 200 won where it was worse.)"""
    buffer = io.BytesIO()
    latex_paper(**PAPER).save(buffer)
    document = pdfium.PdfDocument(buffer.getvalue())
    try:
        for index in (0, 1, 2, 3):
            page = document[index]
            built, measured = _page_alone(page, dpi)
            reference = raster._render(page, raster.FIDELITY_DPI / 72).convert("L")
            page.close()
            assert built.grey is not None
            estimate = raster.seen_at(reference, built.grey)
            assert abs(estimate - measured) <= 0.005, (index, estimate, measured)
    finally:
        document.close()

