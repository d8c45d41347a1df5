"""Advanced mode: pages rebuilt from pixels, sizes kept, fidelity, nothing else survives."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pytest

from sanitas.engine import raster, sanitize_file
from sanitas.engine.raster import MAX_PIXELS_PER_PAGE, page_scale
from sanitas.engine.report import Policy
from tests.engine.corpus import clean_pdf, save_pdf
from tests.engine.fidelity import min_page_ssim, pdf_text, render_pdf, ssim
from tests.engine.papers import article_pdf, label_pdf, photo_pdf, two_column_paper
from tests.engine.pdfscan import pdf_dangers


def test_pixels_only_sizes_kept_report_pages(corpus, out_dir, tmp_path):
    pdf = clean_pdf(pages=2)
    pdf.pages[1].MediaBox = [0, 0, 842, 595]  # a landscape A4 page
    pdf.pages[1].Rotate = 90
    source = save_pdf(pdf, tmp_path / "mixed.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert result.status == "ok" and result.pages_rebuilt == [1, 2]
    with pikepdf.open(result.output) as out:
        boxes = [tuple(float(v) for v in p.MediaBox) for p in out.pages]
        assert boxes == [(0, 0, 612, 792), (0, 0, 595, 842)]
        for page in out.pages:
            assert "/Font" not in page.Resources and "/Annots" not in page
            (image,) = page.Resources.XObject.values()
            assert image.Subtype == "/Image"
    assert min_page_ssim(source, Path(result.output)) >= 0.95


def test_hostile_pdf_flattened(corpus, out_dir):
    result = sanitize_file(corpus["hostile.pdf"], out_dir, mode="advanced")
    assert result.status == "ok"
    assert pdf_dangers(Path(result.output)) == set()
    assert any(f.kind == "pixel_reconstruction" for f in result.findings)
    assert min_page_ssim(corpus["hostile.pdf"], Path(result.output)) >= 0.95


def test_clean_fidelity(corpus, out_dir):
    result = sanitize_file(corpus["clean.pdf"], out_dir, mode="advanced")
    assert min_page_ssim(corpus["clean.pdf"], Path(result.output)) >= 0.95


def test_ocr_layer_makes_rebuilt_pages_searchable(out_dir, tmp_path):
    import shutil

    assert shutil.which("tesseract"), "tesseract-ocr missing: run scripts/install.sh " \
                                      "--with-test-tools"
    source = save_pdf(clean_pdf(pages=1, with_image=False), tmp_path / "letter.pdf")
    (out_dir / "plain").mkdir()
    (out_dir / "ocr").mkdir()
    plain = sanitize_file(source, out_dir / "plain", mode="advanced")
    assert pdf_text(Path(plain.output)).strip() == ""  # pixels only: nothing to search
    result = sanitize_file(source, out_dir / "ocr", mode="advanced",
                           policy=Policy(output="pdf+ocr"))
    assert result.status == "ok"
    text = pdf_text(Path(result.output)).lower()
    assert "quick brown" in text and "lazy dog" in text and "page 1" in text
    assert any(f.kind == "ocr" and "text layer rebuilt" in f.detail
               for f in result.findings)
    assert pdf_dangers(Path(result.output)) == set()
    assert min_page_ssim(source, Path(result.output)) >= 0.95  # the text layer is invisible


def test_ocr_requested_without_tesseract_says_so(out_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH where no tesseract can be found
    source = save_pdf(clean_pdf(pages=1, with_image=False), tmp_path / "letter.pdf")
    result = sanitize_file(source, out_dir, mode="advanced", policy=Policy(output="pdf+ocr"))
    assert result.status == "ok"
    assert any("tesseract is not installed" in f.detail for f in result.findings)


# --- per-page encoding, size and legibility ---------------------------------------------------

def _images(path: Path) -> list[tuple[str, str, int]]:
    """Each page's image as (filter, colour space family, bits per component); a page of
    symbol-coded text as ("symbols", "/Type3", 1)."""
    with pikepdf.open(path) as pdf:
        found = []
        for page in pdf.pages:
            if "/Font" in page.Resources:
                assert {str(font.Subtype) for font in page.Resources.Font.values()} == {"/Type3"}
                found.append(("symbols", "/Type3", 1))
                continue
            (image,) = page.Resources.XObject.values()
            space = image.ColorSpace
            found.append((str(image.Filter), str(space[0] if isinstance(space, pikepdf.Array)
                                                     else space), int(image.BitsPerComponent)))
        return found


def _filters(path: Path) -> list[str]:
    return [image[0] for image in _images(path)]


def _ink(path: Path, dpi: int = 150) -> list[np.ndarray]:
    """Each page at `dpi`, thresholded as the bilevel pages are (what they must reproduce)."""
    return [np.asarray(raster._ink(page.convert("L"))) for page in render_pdf(path, dpi)]


def _as_jpeg_pages(path: Path) -> int:
    """Bytes the previous encoding (one quality-90 JPEG per 150 DPI page) would have written."""
    document = pdfium.PdfDocument(str(path))
    try:
        total = 0
        for page in document:
            buffer = io.BytesIO()
            page.render(scale=150 / 72, fill_color=(255, 255, 255, 255)).to_pil() \
                .convert("RGB").save(buffer, "JPEG", quality=90)
            total += len(buffer.getvalue())
        return total
    finally:
        document.close()


def test_text_pages_are_symbol_coded_lossless_and_small(out_dir, tmp_path):
    """The issue's 78 KB LaTeX paper came out as 871 KB of JPEG pages (11x). Text pages are now
    symbol-coded: pixel for pixel the thresholded page at 150 DPI, at a fraction of a Group 4
    page's bytes. This paper takes 3 KB a page (fonts not embedded, the hardest case): its output
    stays under 6x its input (Group 4 pages made it 20x)."""
    source = save_pdf(two_column_paper(pages=3), tmp_path / "paper.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert result.status == "ok"
    output = Path(result.output)
    assert _filters(output) == ["symbols"] * 3
    for before, after in zip(_ink(source), _ink(output), strict=True):
        assert np.array_equal(before, after)  # lossless against the Group 4 bitmap
    assert min_page_ssim(source, output) >= 0.90
    assert output.stat().st_size <= 6 * source.stat().st_size
    assert output.stat().st_size * 30 <= _as_jpeg_pages(source)
    assert pdf_text(output).strip() == ""  # pictures of text, not text
    (detail,) = [f.detail for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "3 black-and-white (symbol-coded)" in detail


def test_word_processor_article_at_most_twice_its_size(out_dir, tmp_path):
    """The issue's target: a text document with embedded fonts (LibreOffice's export, six
    pages) comes out at most 2x its size, legible at 72 DPI (issue 22: at least 0.92; its
    text is rebuilt from 200 DPI pixels, at 150 it scored 0.915)."""
    source = article_pdf(tmp_path / "article")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert result.status == "ok"
    output = Path(result.output)
    assert set(_filters(output)) == {"symbols"}
    assert output.stat().st_size <= 2 * source.stat().st_size
    assert min_page_ssim(source, output) >= 0.92
    for before, after in zip(_ink(source, raster.SHARPER_DPI),
                             _ink(output, raster.SHARPER_DPI), strict=True):
        assert np.array_equal(before, after)  # headings, bold and italic too
    (detail,) = [f.detail for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "6 text page(s) at more DPI: 200" in detail


def test_figures_beside_text_are_cut_apart(out_dir, tmp_path):
    """A frame drawn over part of a text column: the frame is in a Group 4 picture of the
    page's large pieces, drawn under the glyphs at the page's own size (a picture per piece
    was placed on whole device pixels, moving hairlines at low zoom); the text beside and
    around it is still glyphs, and the page is still exact."""
    frame = "q 1 1 1 rg 300 250 280 280 re f Q q 1.5 w 310 260 260 260 re S 310 260 m 570 520 l S Q"
    source = save_pdf(two_column_paper(pages=1, extra=frame), tmp_path / "figure.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    output = Path(result.output)
    assert _filters(output) == ["symbols"]
    with pikepdf.open(output) as pdf:
        page = pdf.pages[0]
        (picture,) = page.Resources.XObject.values()
        assert str(picture.Filter) == "/CCITTFaxDecode" and "/ImageMask" not in picture
        rendered = _ink(source)[0].shape  # the page as rendered at 150 DPI
        assert (int(picture.Height), int(picture.Width)) == rendered
        assert "/Font" in page.Resources  # the text beside it: glyphs
    for before, after in zip(_ink(source), _ink(output), strict=True):
        assert np.array_equal(before, after)


def test_pages_that_do_not_repeat_stay_group4(out_dir, tmp_path):
    """Glyphs pay only when shapes repeat: 800 characters each at its own angle make 800 new
    shapes, and that page stays one Group 4 image."""
    rng = random.Random(7)
    ops = ["BT /F1 14 Tf"]
    for row in range(25):
        for column in range(32):
            angle = rng.uniform(0, 6.28)
            cos, sin = math.cos(angle), math.sin(angle)
            ops.append(f"{cos:.4f} {sin:.4f} {-sin:.4f} {cos:.4f} {40 + column * 17} "
                       f"{60 + row * 27} Tm ({rng.choice('abcdefghkmnpqrstuvwxyz')}) Tj")
    ops.append("ET")
    pdf = two_column_paper(pages=1)
    pdf.pages[0].Contents = pdf.make_stream("\n".join(ops).encode())
    source = save_pdf(pdf, tmp_path / "angles.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert _filters(Path(result.output)) == ["/CCITTFaxDecode"]
    assert min_page_ssim(source, Path(result.output)) >= 0.90


def test_pages_of_many_large_pieces_stay_group4(out_dir, tmp_path):
    """Bars too tall for glyphs, hundreds of them: one Group 4 image, not hundreds of masks."""
    bars = "\n".join(f"{40 + 6 * i} 100 2 {100 + (i % 7) * 40} re f" for i in range(80))
    pdf = two_column_paper(pages=1)
    pdf.pages[0].Contents = pdf.make_stream(bars.encode())
    source = save_pdf(pdf, tmp_path / "bars.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert _filters(Path(result.output)) == ["/CCITTFaxDecode"]
    for before, after in zip(_ink(source), _ink(Path(result.output)), strict=True):
        assert (before != after).mean() < 0.001


def test_each_page_gets_the_encoding_that_suits_it(out_dir, tmp_path):
    text = two_column_paper(pages=1)
    grey_box = two_column_paper(pages=1, extra="q 0.8 g 54 300 243 120 re f Q")
    combined = pikepdf.new()
    for part in (text, clean_pdf(pages=1), grey_box, photo_pdf(pages=1)):
        combined.pages.extend(part.pages)
    source = save_pdf(combined, tmp_path / "mixed.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert result.status == "ok"
    output = Path(result.output)
    assert _images(output) == [("symbols", "/Type3", 1),
                               ("/FlateDecode", "/Indexed", 4),  # colour shapes
                               ("/FlateDecode", "/Indexed", 4),  # a grey fill is not ink
                               ("/DCTDecode", "/DeviceRGB", 8)]
    assert min_page_ssim(source, output) >= 0.90
    (detail,) = [f.detail for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "1 black-and-white (symbol-coded), 2 palette (Flate), 1 JPEG" in detail


def test_photo_pages_stay_jpeg(out_dir, tmp_path):
    source = save_pdf(photo_pdf(pages=2), tmp_path / "photos.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert result.status == "ok"
    assert _filters(Path(result.output)) == ["/DCTDecode"] * 2
    assert min_page_ssim(source, Path(result.output)) >= 0.95


def test_light_grey_text_survives_the_bilevel_threshold(out_dir, tmp_path):
    footer = "BT 0.6 g /F1 8 Tf 54 20 Td (Preprint under review: light grey footer text) Tj ET"
    source = save_pdf(two_column_paper(pages=1, extra=footer), tmp_path / "footer.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert _filters(Path(result.output)) == ["symbols"]
    (before,), (after,) = render_pdf(source, 150), render_pdf(Path(result.output), 150)
    box = (100, 792 * 150 // 72 - 52, 700, 792 * 150 // 72 - 30)  # the footer line
    assert before.crop(box).convert("L").getextrema()[0] < 200
    assert ssim(before.crop(box), after.crop(box)) >= 0.6  # there, legible: not paper


def test_tiny_page_rendered_legibly(out_dir, tmp_path):
    source = save_pdf(label_pdf(20, 30), tmp_path / "label.pdf")
    result = sanitize_file(source, out_dir, mode="advanced")
    assert result.status == "ok"
    output = Path(result.output)
    with pikepdf.open(output) as out:
        page = out.pages[0]
        assert [float(v) for v in page.MediaBox] == [0, 0, 20, 30]
        (image,) = page.Resources.XObject.values()
        assert (int(image.Width), int(image.Height)) == (1000, 1500)  # 42 x 62 at 150 DPI
    assert min_page_ssim(source, output, dpi=3600) >= 0.90
    (detail,) = [f.detail for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "1 small page(s) at more DPI" in detail


def test_page_scale_floor_and_ceilings():
    assert page_scale(612, 792) == 150 / 72
    assert page_scale(20, 30) == 50  # short side 1000 px
    assert page_scale(252, 144) == pytest.approx(1000 / 144)  # a business card
    assert round(14_400 * page_scale(1, 14_400)) <= 30_000  # a strip: not raised past 30000 px
    assert (14_400 * page_scale(14_400, 14_400)) ** 2 <= MAX_PIXELS_PER_PAGE * 1.0001
