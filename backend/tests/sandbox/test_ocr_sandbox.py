"""Advanced mode keeps the words: the OCR text layer made by tesseract inside the real sandbox
(its binary and language data visible, the seccomp filter letting it run) or the page's own
text where all of it is shown (SANITAS_OCR_OWN_TEXT), on by default,
off by policy or SANITAS_OCR=false, in the languages of SANITAS_OCR_LANGUAGES."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sanitas.engine.report import Policy
from sanitas.sandbox import run_sanitizer
from tests.engine.ocrtext import letter_and_photo_pdf, letter_pdf, page_texts, word_recall


@pytest.fixture(autouse=True)
def _tesseract():
    assert shutil.which("tesseract"), "tesseract-ocr missing: run scripts/install.sh"


def _finding(result, kind: str):
    found = [f for f in result.findings if f.kind == kind]
    assert len(found) == 1, result.findings
    return found[0]


@pytest.mark.parametrize("own_text", [True, False])
def test_advanced_mode_keeps_the_words_by_default(sandbox_settings, tmp_path, own_text):
    """By default the letter's own words (every letter shown); SANITAS_OCR_OWN_TEXT=false
    has tesseract read both pages in the sandbox."""
    source = tmp_path / "letter.pdf"
    letter_pdf(pages=2, lines=12).save(source)
    settings = sandbox_settings.model_copy(update={"ocr_own_text": own_text})
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=settings,
                           prewarm=False)
    assert result.status == "ok", result.reason
    for original, rebuilt in zip(page_texts(source), page_texts(Path(result.output)),
                                 strict=True):
        assert word_recall(original, rebuilt) >= 0.9, (original, rebuilt)
    finding = _finding(result, "ocr")
    assert finding.action == "converted"
    assert finding.detail.startswith(
        "text layer rebuilt on 2 of 2 page(s): 2 from the page's own text" if own_text
        else "text layer rebuilt by OCR (eng) on 2 of 2 page(s)")
    assert result.file_report()["verdictCounts"]["textLayerDropped"] is False


def test_picture_page_is_not_recognised_in_the_sandbox(sandbox_settings, tmp_path):
    source = tmp_path / "mixed.pdf"
    letter_and_photo_pdf().save(source)
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=sandbox_settings,
                           prewarm=False)
    assert result.status == "ok", result.reason
    texts = page_texts(Path(result.output))
    assert word_recall(page_texts(source)[0], texts[0]) >= 0.9
    assert texts[1].strip() == ""
    assert "on 1 of 2 page(s)" in _finding(result, "ocr").detail


@pytest.mark.parametrize("how", ["policy", "setting"])
def test_ocr_off_keeps_no_text_and_says_so(sandbox_settings, tmp_path, how):
    source = tmp_path / "letter.pdf"
    letter_pdf(pages=1, lines=6).save(source)
    settings, policy = sandbox_settings, None
    if how == "policy":
        policy = Policy(output="pdf")  # a policy's pixels-only output
    else:
        settings = sandbox_settings.model_copy(update={"ocr": False})  # SANITAS_OCR=false
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=settings,
                           policy=policy, prewarm=False)
    assert result.status == "ok", result.reason
    assert page_texts(Path(result.output))[0].strip() == ""
    assert not [f for f in result.findings if f.kind == "ocr"]
    assert "pages rebuilt from pixels: original text not kept" in \
        _finding(result, "pixel_reconstruction").detail
    assert result.file_report()["verdictCounts"]["textLayerDropped"] is True


def test_languages_setting_reaches_the_sandbox(sandbox_settings, tmp_path):
    source = tmp_path / "letter.pdf"
    letter_pdf(pages=1, lines=6).save(source)
    settings = sandbox_settings.model_copy(update={"ocr_languages": "eng+zzz"})
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=settings,
                           prewarm=False)
    assert result.status == "ok", result.reason
    assert "the OCR language data for zzz is not installed" in \
        _finding(result, "pixel_reconstruction").detail
