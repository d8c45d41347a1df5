"""The verdict (engine/verdict.py): every finding kind has an effect, and real files get the
word, counts and sentence every channel shows."""

from __future__ import annotations

from sanitas.engine import sanitize_file
from sanitas.engine import verdict as v
from sanitas.engine.kinds import FINDING_KINDS
from sanitas.engine.policy import Policy
from sanitas.engine.report import Result
from tests.engine.corpus import FAKE_EXE, clean_pdf, save_pdf, zip_bytes
from tests.engine.corpus_office import hostile_docm, png_bytes


def test_every_finding_kind_has_an_effect():
    """A kind added to kinds.py without a line in verdict.EFFECTS fails here (and a line for
    a kind that does not exist)."""
    assert set(v.EFFECTS) == set(FINDING_KINDS)


def test_zip_that_lost_an_executable_is_partial(tmp_path, out_dir):
    upload = tmp_path / "bundle.zip"
    upload.write_bytes(zip_bytes({"tool.exe": FAKE_EXE, "pic.png": png_bytes()}))
    result = sanitize_file(upload, out_dir)
    report = result.file_report()
    assert report["verdict"] == "partial"
    assert report["verdictSummary"] == "1 file dropped: tool.exe"
    assert report["verdictCounts"] == {
        "threats": 0, "hiddenData": 0, "filesDropped": 1, "contentDropped": 0,
        "textLayerDropped": False, "droppedFiles": ["tool.exe"], "encryptedHeld": 0,
        "encryptedPassed": 0}


def test_macro_document_is_cleaned(tmp_path, out_dir):
    upload = tmp_path / "macro.docm"
    upload.write_bytes(hostile_docm())
    outcome = sanitize_file(upload, out_dir).outcome()
    assert outcome.verdict is v.Verdict.CLEANED
    assert outcome.counts.threats >= 1 and outcome.counts.files_dropped == 0
    assert outcome.summary.startswith(f"{outcome.counts.threats} threats removed")


def test_plain_png_is_clean(tmp_path, out_dir):
    upload = tmp_path / "plain.png"
    upload.write_bytes(png_bytes())
    report = sanitize_file(upload, out_dir).file_report()
    assert (report["verdict"], report["verdictSummary"]) == ("clean", "Nothing found")


def test_refused_file_says_why(tmp_path, out_dir):
    upload = tmp_path / "setup.exe"
    upload.write_bytes(FAKE_EXE)
    result = sanitize_file(upload, out_dir)
    report = result.file_report()
    assert report["verdict"] == "refused"
    assert report["verdictSummary"] == f"Refused: {result.reason}"
    assert result.to_json()["verdict"] == "refused"  # the CLI's --json says it too


def test_pages_rebuilt_without_text_layer_are_partial(tmp_path, out_dir):
    upload = save_pdf(clean_pdf(pages=1, with_image=False), tmp_path / "letter.pdf")
    no_ocr = Policy.from_json({"output": "pdf"})  # pixels only, no OCR text layer
    outcome = sanitize_file(upload, out_dir, mode="advanced", policy=no_ocr).outcome()
    assert outcome.verdict is v.Verdict.PARTIAL and outcome.counts.text_layer_dropped
    assert "text layer dropped" in outcome.summary


def _finding(kind: str, action: str = "removed", location: str = "here",
             detail: str = "") -> dict[str, str]:
    return {"kind": kind, "action": action, "location": location, "detail": detail}


def test_text_layer_added_by_ocr_is_not_dropped():
    rebuilt = _finding("pixel_reconstruction", "converted", "2 page(s)")
    assert v.of_findings([rebuilt]).verdict is v.Verdict.PARTIAL
    with_ocr = v.of_findings([rebuilt, _finding("ocr", "converted", "2 page(s)")])
    assert with_ocr.verdict is v.Verdict.CLEAN and not with_ocr.counts.text_layer_dropped
    failed_page = v.of_findings([rebuilt, _finding("ocr", "converted"), _finding("ocr")])
    assert failed_page.verdict is v.Verdict.PARTIAL


def test_kept_and_cleaned_attachments_do_not_count():
    kept = [_finding("macro", "kept"), _finding("archive_member", "kept", "archive"),
            _finding("embedded_file", "converted", "names", "a.docx sanitized as docx")]
    assert v.of_findings(kept).verdict is v.Verdict.CLEAN


def test_counts_and_sentence():
    findings = [_finding("javascript"), _finding("macro"), _finding("launch_action"),
                _finding("exif"),
                _finding("embedded_file", location="names", detail="run.exe removed: program"),
                _finding("archive_member", location="a/tool.exe"),
                _finding("archive_member", location="b.sh"),
                _finding("archive_member", location="c.bat"),
                _finding("invalid_image", location="word/media/image1.emf")]
    outcome = v.of_findings(findings)
    assert outcome.verdict is v.Verdict.PARTIAL
    assert outcome.summary == ("3 threats removed, 1 item of hidden data removed, "
                               "1 part of the content dropped, "
                               "4 files dropped: run.exe, a/tool.exe, b.sh and 1 more")
    assert outcome.counts.header() == ("threats=3; hiddenData=1; filesDropped=4; "
                                       "contentDropped=1; textLayerDropped=0; encryptedHeld=0; "
                                       "encryptedPassed=0")


def test_summary_lines_count_what_they_stand_for():
    findings = [_finding("exif"),
                _finding("exif", location="whole file", detail="and 150 more of this kind"),
                _finding("more", location="whole file", detail="7 further findings not listed")]
    counts = v.of_findings(findings).counts
    assert (counts.hidden_data, counts.threats) == (151, 7)


def test_unknown_kind_counts_as_a_threat():
    assert v.of_findings([_finding("from_a_newer_sandbox")]).verdict is v.Verdict.CLEANED


def test_old_reports_are_derived_and_stored_ones_read_back():
    old = {"findings": [_finding("archive_member", location="tool.exe")], "durationMs": 3}
    assert v.of_report(old).summary == "1 file dropped: tool.exe"
    stored = Result(input="x", status="ok", findings=[]).file_report()
    assert v.of_report(stored).verdict is v.Verdict.CLEAN
    assert v.of_report({"findings": "garbage"}).verdict is v.Verdict.CLEAN
    assert v.of_report(None) is None
    assert v.worst([v.Verdict.CLEAN, v.Verdict.PARTIAL, v.Verdict.CLEANED]) is \
        v.Verdict.PARTIAL
