"""Advanced mode: pages rebuilt from pixels, sizes kept, fidelity, nothing else survives."""

from __future__ import annotations

from pathlib import Path

import pikepdf
from corpus import clean_pdf, save_pdf
from fidelity import min_page_ssim, pdf_text
from pdfscan import pdf_dangers

from sanitas.engine import sanitize_file
from sanitas.engine.report import Policy


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
    result = sanitize_file(source, out_dir / "ocr", mode="advanced", policy=Policy(ocr=True))
    assert result.status == "ok"
    text = pdf_text(Path(result.output)).lower()
    assert "quick brown" in text and "lazy dog" in text and "page 1" in text
    assert any("OCR text layer added" in f.detail for f in result.findings)
    assert pdf_dangers(Path(result.output)) == set()
    assert min_page_ssim(source, Path(result.output)) >= 0.95  # the text layer is invisible


def test_ocr_requested_without_tesseract_says_so(out_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH where no tesseract can be found
    source = save_pdf(clean_pdf(pages=1, with_image=False), tmp_path / "letter.pdf")
    result = sanitize_file(source, out_dir, mode="advanced", policy=Policy(ocr=True))
    assert result.status == "ok"
    assert any("tesseract is not installed" in f.detail for f in result.findings)
