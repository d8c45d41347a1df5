"""Advanced mode's OCR text layer (engine/ocr.py): which pages are recognised, what the layer
is made of, what the report says. Through the sandbox: tests/sandbox/test_ocr_sandbox.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pytest

from sanitas.config import Settings
from sanitas.engine import ocr, raster, sanitize_file
from sanitas.engine.report import Policy
from sanitas.engine.symbols import looks_like_text
from sanitas.engine.verdict import of_findings
from tests.engine.fidelity import min_page_ssim
from tests.engine.ocrtext import letter_and_photo_pdf, letter_pdf, page_texts, word_recall
from tests.engine.papers import _font, photo_pdf
from tests.engine.pdfscan import pdf_dangers

OCR = Policy(output="pdf+ocr")


@pytest.fixture(autouse=True)
def _tesseract():
    assert shutil.which("tesseract"), "tesseract-ocr missing: run scripts/install.sh"


def _ink(pdf: pikepdf.Pdf, tmp_path: Path) -> np.ndarray:
    path = tmp_path / "page.pdf"
    pdf.save(path)
    document = pdfium.PdfDocument(str(path))
    try:
        picture = document[0].render(scale=150 / 72, fill_color=(255, 255, 255, 255)).to_pil()
    finally:
        document.close()
    return np.asarray(raster._ink(picture.convert("L")))


def test_looks_like_text_tells_text_from_photographs(tmp_path):
    assert looks_like_text(_ink(letter_pdf(pages=1), tmp_path))
    assert not looks_like_text(_ink(photo_pdf(1), tmp_path))
    assert not looks_like_text(np.zeros((1650, 1275), dtype=np.bool_))


def test_text_pages_recognised_photo_page_not(out_dir, tmp_path):
    source = tmp_path / "mixed.pdf"
    letter_and_photo_pdf().save(source)
    result = sanitize_file(source, out_dir, mode="advanced", policy=OCR,
                           ocr_own_text=False)
    assert result.status == "ok", result.reason
    original, rebuilt = page_texts(source), page_texts(Path(result.output))
    assert word_recall(original[0], rebuilt[0]) >= 0.9
    assert rebuilt[1].strip() == ""  # the photograph got no words
    with pikepdf.open(result.output) as out:
        assert "/OCR" in out.pages[0].Resources.Font
        assert "/Font" not in out.pages[1].Resources  # not recognised at all
    (finding,) = [f for f in result.findings if f.kind == "ocr"]
    assert finding.action == "converted"
    assert "text layer rebuilt by OCR (eng) on 1 of 2 page(s)" in finding.detail
    assert "1 page(s) without text were not recognised" in finding.detail
    assert not of_findings([f.__dict__ for f in result.findings]).counts.text_layer_dropped
    assert pdf_dangers(Path(result.output)) == set()
    assert min_page_ssim(source, Path(result.output)) >= 0.95  # the layer is invisible


def test_scanned_page_without_text_is_recognised(out_dir, tmp_path):
    """A page whose original has no text, only a picture of text (a scan), looks like text."""
    letter = tmp_path / "letter.pdf"
    letter_pdf(pages=1).save(letter)
    document = pdfium.PdfDocument(str(letter))
    try:
        scan = document[0].render(scale=150 / 72, fill_color=(255, 255, 255, 255)).to_pil()
    finally:
        document.close()
    source = tmp_path / "scan.pdf"
    scan.convert("L").save(source, "PDF", resolution=150)
    assert page_texts(source)[0].strip() == ""
    result = sanitize_file(source, out_dir, mode="advanced", policy=OCR,
                           ocr_own_text=False)
    assert result.status == "ok", result.reason
    assert word_recall(page_texts(letter)[0], page_texts(Path(result.output))[0]) >= 0.9


def test_pixels_only_policy_keeps_no_text_and_says_so(out_dir, tmp_path):
    source = tmp_path / "letter.pdf"
    letter_pdf(pages=1).save(source)
    result = sanitize_file(source, out_dir, mode="advanced", policy=Policy(output="pdf"))
    assert result.status == "ok", result.reason
    assert page_texts(Path(result.output))[0].strip() == ""
    assert not [f for f in result.findings if f.kind == "ocr"]
    (rebuilt,) = [f for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "pages rebuilt from pixels: original text not kept" in rebuilt.detail
    assert of_findings([f.__dict__ for f in result.findings]).counts.text_layer_dropped


def test_missing_language_data_is_reported(out_dir, tmp_path):
    source = tmp_path / "letter.pdf"
    letter_pdf(pages=1).save(source)
    result = sanitize_file(source, out_dir, mode="advanced", policy=OCR,
                           ocr_languages="eng+zzz")
    assert result.status == "ok", result.reason
    (rebuilt,) = [f for f in result.findings if f.kind == "pixel_reconstruction"]
    assert "OCR language data for zzz is not installed" in rebuilt.detail
    assert page_texts(Path(result.output))[0].strip() == ""


def test_text_layer_words_cannot_become_pdf_syntax():
    """Recognised words reach the content stream only as escaped string bytes: a word made of
    delimiters and operators, and UTF-16 codes whose bytes are "(", ")", "\\" or line ends,
    parse back as the same strings inside one TJ, in text rendering mode 3."""
    hostile = [") Tj /Evil Do (", "<>\\", "\u0a28\u0d0a\u285c", "\U0001F600x\x07"]
    tsv = ("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth"
           "\theight\tconf\ttext\n4\t1\t1\t1\t1\t0\t100\t50\t600\t30\t-1\t\n"
           + "".join(f"5\t1\t1\t1\t1\t{n}\t{100 + 120 * n}\t50\t100\t30\t90\t{word}\n"
                     for n, word in enumerate(hostile))
           + "5\t1\t1\t1\t1\t9\t700\t50\t80\t30\t-1\tignored\ngarbage line\n5\tx\n")
    (line,) = ocr.parse_tsv(tsv)[1]
    words = [text for _l, _r, text in line.words]
    assert words == [")Tj/EvilDo(", "<>\\", "\u0a28\u0d0a\u285c", "x"]
    pdf = pikepdf.new()
    page = pdf.add_blank_page(page_size=(500, 500))
    assert ocr.add_text_layer(pdf, page, [line], (1000, 1000), (500.0, 500.0),
                              ocr.glyphless_font(pdf))
    operators = [(str(op), operands) for operands, op in pikepdf.parse_content_stream(page)]
    assert [op for op, _ in operators] == ["BT", "Tr", "Tf", "Tz", "Tm", "TJ", "ET"]
    assert int(operators[1][1][0]) == 3  # invisible
    shown = [bytes(item) for item in operators[5][1][0] if isinstance(item, pikepdf.String)]
    assert [text.decode("utf-16-be").rstrip(" ") for text in shown] == words


def test_settings_language_pattern_is_the_engines():
    pattern = Settings.model_fields["ocr_languages"].metadata[0].pattern
    assert pattern == ocr.LANGUAGES_PATTERN
    with pytest.raises(ValueError):
        Settings(ocr_languages="-l eng")
    with pytest.raises(ValueError):
        ocr.Recogniser("tesseract", "eng --oem 0", Path("/nonexistent"), 1)


def test_doctor_names_missing_language_data():
    from sanitas import doctor

    assert doctor._ocr(Settings()).status == "ok"
    check = doctor._ocr(Settings(ocr_languages="eng+zzz"))
    assert check.status == "warn" and "zzz" in check.detail
    assert "tesseract-ocr-zzz" in check.fix
    assert "off" in doctor._ocr(Settings(ocr=False)).detail


def _letter_page(tmp_path: Path, **options) -> tuple[Path, pdfium.PdfDocument]:
    path = tmp_path / "letter.pdf"
    letter_pdf(pages=1, **options).save(path)
    return path, pdfium.PdfDocument(str(path))


@pytest.mark.parametrize(("size", "font"), [(8, "Times-Roman"), (11, "Helvetica"),
                                            (24, "Helvetica")])
def test_small_text_height_is_measured_on_the_page(tmp_path, size, font):
    """PDFium's loose boxes (ascent to descent) of the letters: about 1.13 (Times) to 1.17
    (Helvetica) times the font size."""
    _path, document = _letter_page(tmp_path, size=size, font_name=font, lines=8)
    try:
        textpage = document[0].get_textpage()
        height = raster._small_text_height(textpage, textpage.count_chars())
    finally:
        document.close()
    assert height is not None and 1.1 * size <= height <= 1.2 * size


def test_stamp_over_a_scan_keeps_the_full_resolution(out_dir, tmp_path):
    """A page whose only text is a 14 pt stamp over a scanned picture of 8 pt text: a few
    letters do not set the resolution (the scan's small print would be read at 80 DPI), the
    page is recognised at its rendering's and the scan's words come back."""
    small = tmp_path / "small.pdf"
    letter_pdf(pages=1, size=8, lines=20, seed=5).save(small)
    document = pdfium.PdfDocument(str(small))
    try:
        scan = document[0].render(scale=150 / 72, fill_color=(255, 255, 255, 255)).to_pil()
    finally:
        document.close()
    source = tmp_path / "stamped.pdf"
    scan.convert("L").save(source, "PDF", resolution=150)
    with pikepdf.open(source, allow_overwriting_input=True) as pdf:
        page = pdf.pages[0]
        page.Resources.Font = pikepdf.Dictionary(F9=_font(pdf, "Helvetica"))
        page.contents_add(pdf.make_stream(b"BT /F9 14 Tf 320 760 Td (RECEIVED 27 NOV 2026) Tj ET"))
        pdf.save(source)
    document = pdfium.PdfDocument(str(source))
    try:
        textpage = document[0].get_textpage()
        assert raster._small_text_height(textpage, textpage.count_chars()) is None
    finally:
        document.close()
    result = sanitize_file(source, out_dir, mode="advanced", policy=OCR,
                           ocr_own_text=False)
    assert result.status == "ok", result.reason
    assert word_recall(page_texts(small)[0], page_texts(Path(result.output))[0]) >= 0.9


def test_recognition_resolution_follows_the_small_text():
    """EM_PIXELS to the small text's em, within MIN_OCR_DPI and the rendering's own DPI; the
    rendering's when the original had no text (a scan)."""
    helvetica_12 = 12 * 1.169
    assert ocr.recognition_dpi(150, helvetica_12) == pytest.approx(
        ocr.EM_PIXELS * 72 * ocr.LOOSE_BOX_EMS / helvetica_12)
    assert 72 <= ocr.recognition_dpi(150, helvetica_12) <= 90  # 12 pt body text: ~77 DPI
    assert ocr.recognition_dpi(150, 6 * 1.169) == 150  # small print: all the rendering has
    assert ocr.recognition_dpi(150, 60) == ocr.MIN_OCR_DPI  # headline-only page: the floor
    assert ocr.recognition_dpi(150, None) == 150
    assert ocr.recognition_dpi(500, None) == 500  # a card's raised rendering, a scan


def test_page_is_recognised_at_the_resolution_its_text_needs(tmp_path):
    """The rendering is shrunk before tesseract gets it (fewer pixels, less time), and the
    words still come back on it."""
    path, document = _letter_page(tmp_path, size=12, lines=10)
    try:
        page = document[0]
        picture = page.render(scale=150 / 72, fill_color=(255, 255, 255, 255)).to_pil()
        chosen, height, _own = raster._has_words(page, picture, None)
    finally:
        document.close()
    assert chosen and height is not None
    (tmp_path / "job").mkdir()
    recogniser = ocr.Recogniser(shutil.which("tesseract") or "", "eng", tmp_path / "job", 1)
    recogniser.add(0, picture, 150, height)
    found, failed = recogniser.finish()
    assert failed == []
    shrink = ocr.recognition_dpi(150, height) / 150
    assert shrink < 0.7
    assert found[0].pixels == (round(picture.width * shrink), round(picture.height * shrink))
    words = " ".join(text for line in found[0].lines for _l, _r, text in line.words)
    assert word_recall(page_texts(path)[0], words) >= 0.9


@pytest.mark.parametrize(("size", "font"), [(8, "Times-Roman"), (10, "Times-Roman"),
                                            (14, "Helvetica")])
def test_recall_holds_at_the_chosen_resolution(out_dir, tmp_path, size, font):
    """Clean generated text from small print to large: word recall >= 0.9 on every page."""
    source = tmp_path / "letter.pdf"
    letter_pdf(pages=2, size=size, font_name=font, lines=12, seed=size).save(source)
    result = sanitize_file(source, out_dir, mode="advanced", policy=OCR,
                           ocr_own_text=False)
    assert result.status == "ok", result.reason
    for original, rebuilt in zip(page_texts(source), page_texts(Path(result.output)),
                                 strict=True):
        assert word_recall(original, rebuilt) >= 0.9, (size, original, rebuilt)


def test_chunks_fill_every_core_in_every_round():
    """Pages per tesseract process: all cores busy, as few model loads as that allows."""
    assert ocr.chunk_size(1, 2) == 1
    assert ocr.chunk_size(10, 2) == 5  # two processes of five pages
    assert ocr.chunk_size(16, 2) == 8
    assert ocr.chunk_size(17, 2) == 5  # two rounds of two: 5, 5, 5, 2
    assert ocr.chunk_size(40, 2) == 7  # six chunks, three rounds (not 8, 8, 8, 8, 8)
    assert ocr.chunk_size(5000, 8) == ocr.CHUNK_PAGES


def test_pages_spread_over_processes_keep_their_own_words(out_dir, tmp_path, monkeypatch):
    """Eight pages over three tesseract processes (chunks of three, three and one): every
    page's layer holds that page's words, not a neighbour's, and the photograph among them is
    skipped without shifting the pages after it."""
    monkeypatch.setattr(ocr, "job_cores", lambda: 3)
    source = tmp_path / "eight.pdf"
    pdf = letter_pdf(pages=7, lines=5, seed=3)
    with photo_pdf(1) as photos:
        pdf.pages.insert(3, photos.pages[0])
    pdf.save(source)
    result = sanitize_file(source, out_dir, mode="advanced", policy=OCR,
                           ocr_own_text=False)
    assert result.status == "ok", result.reason
    original, rebuilt = page_texts(source), page_texts(Path(result.output))
    assert len(rebuilt) == 8 and rebuilt[3].strip() == ""
    for number, after in enumerate(rebuilt):
        if number != 3:
            recalls = [word_recall(before, after) for before in original]
            assert recalls[number] >= 0.9, (number, after)
            # Another page shares some of the 150-word vocabulary, far from all of its words.
            assert max(r for other, r in enumerate(recalls) if other not in (number, 3)) < 0.6
    assert "on 7 of 8 page(s)" in next(f for f in result.findings if f.kind == "ocr").detail
