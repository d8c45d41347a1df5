"""Word 2.0, Word 6.0 and 95, WordPerfect 5 and 6, Works 2-4, Lotus 1-2-3, Quattro Pro for
DOS and PICT (issue 29): each detected by content, converted by LibreOffice
with the import filter for its version (never the Word 97 filter a Word 6 file fails in),
cleaned by the family of the result, and refused with its own code when sealed or damaged.
The files are built byte by byte (legacy_corpus.py): nothing here writes these formats."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest

from sanitas.engine import Rejected, libreoffice
from sanitas.engine.detect import detect
from sanitas.engine.legacy_office import import_filter, word_version
from sanitas.engine.report import Context, RejectionCode
from sanitas.engine.verdict import Verdict
from tests.engine.cfb_office import ole_package_object
from tests.engine.legacy_corpus import (
    MARKER,
    WORD95,
    lotus,
    lotus3,
    pict,
    word2_doc,
    word6_doc,
    wordperfect,
    works,
)
from tests.engine.test_legacy_kinds import _clean, _docx_text

pytestmark = pytest.mark.slow  # one LibreOffice run per file


def _xlsx_cells(path: Path) -> tuple[str, str]:
    """The shared strings and the first sheet of a workbook, as XML text."""
    with zipfile.ZipFile(path) as zf:
        strings = zf.read("xl/sharedStrings.xml").decode() if \
            "xl/sharedStrings.xml" in zf.namelist() else ""
        return strings, zf.read("xl/worksheets/sheet1.xml").decode()


CASES = {  # name -> (bytes, kind, output, label in the report)
    "memo-word2.doc": (word2_doc(MARKER), "word2", "docx", "Word for Windows 2.0 document"),
    "memo-word6.doc": (word6_doc(MARKER), "doc", "docx", "Word 6.0 document"),
    "memo-word95.doc": (word6_doc(MARKER, WORD95), "doc", "docx", "Word 95 document"),
    "memo.wpd": (wordperfect(["First line", MARKER]), "wpd", "docx",
                 "WordPerfect 5 document"),
    "memo6.wpd": (wordperfect(["First line", MARKER], version=6), "wpd", "docx",
                  "WordPerfect 6 or later document"),
    "memo-wordperfect.doc": (wordperfect([MARKER]), "wpd", "docx",  # by content, not name
                             "WordPerfect 5 document"),
    "letter.wps": (works(MARKER), "wps", "docx", "Microsoft Works document"),
    "letter4.wps": (works(MARKER, version=6, ole=True), "wps", "docx",
                    "Microsoft Works document"),
    "budget.wk1": (lotus([(0, 0, MARKER), (1, 0, 1234.5)]), "wk1", "xlsx",
                   "Lotus 1-2-3 release 2 worksheet (WK1)"),
    "budget.wks": (lotus([(0, 0, MARKER), (1, 0, 1234.5)], bof=b"\x04\x04"), "wk1", "xlsx",
                   "Lotus 1-2-3 release 1A worksheet (WKS)"),
    **{f"plan-{version:x}.{ext}": (lotus3([MARKER, "1234.5", "three", "four"], version=version),
                                    "wk3", "xlsx", "Lotus 1-2-3 release 3 or later worksheet")
       for version, ext in [(0x1000, "wk3"), (0x1002, "wk4"), (0x1005, "123")]},
    "budget.wq1": (lotus([(0, 0, MARKER), (1, 0, 1234.5)], bof=b"\x20\x51"), "wq1", "xlsx",
                   "Quattro Pro for DOS spreadsheet"),
    "logo.pct": (pict(), "pict", "pdf", "Macintosh PICT picture"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_kind_converts_and_keeps_its_content(tmp_path, name):
    data, kind, output, label = CASES[name]
    (tmp_path / "upload.bin").write_bytes(data)
    assert detect(tmp_path / "upload.bin", "upload.bin").kind == kind  # by content
    result = _clean(tmp_path, data, name)
    assert result.status == "ok", result.reason
    assert (result.detected_type, result.output_type) == (kind, output)
    converted = [f.detail for f in result.findings if f.kind == "legacy_format"]
    assert converted == [f"converted from {label} to {output}"]
    path = Path(result.output)
    if output == "docx":
        assert MARKER in _docx_text(path)
    elif output == "xlsx":
        strings, sheet = _xlsx_cells(path)
        # libwps reads the first two bytes of a Quattro label as its alignment prefix (Lotus
        # has one): a file built here cannot tell whose reading is right, so the rest counts
        assert MARKER[1:] in strings + sheet and "1234.5" in strings + sheet
        assert kind == "wq1" or MARKER in strings + sheet
    else:  # the rectangle is drawn, red, on the page
        with pikepdf.open(path) as pdf:
            assert len(pdf.pages) == 1 and "/OpenAction" not in pdf.Root
        page = pdfium.PdfDocument(path)[0]
        image = page.render(scale=1).to_pil().convert("RGB")
        assert (255, 0, 0) in {color for _n, color in image.getcolors(1 << 20)}


def test_the_import_filter_follows_the_word_version():
    assert word_version(word6_doc("x")) == "word6"
    assert word_version(word6_doc("x", WORD95)) == "word95"
    assert import_filter(word6_doc("x"), "doc") == "MS WinWord 6.0"
    assert import_filter(word6_doc("x", WORD95), "doc") == "MS Word 95"
    assert import_filter(word2_doc("x"), "word2") == "MS WinWord 5"
    assert import_filter(lotus([(0, 0, "x")]), "wk1") is None  # the wk1 extension's own
    # anything else that is not an OLE Word 6/95 file keeps the Word 97 filter
    assert import_filter(b"<html><body>hi</body></html>", "doc") is None


def test_a_web_page_named_doc_is_never_read_by_a_word_filter(tmp_path):
    """HTML named .doc is cleaned as HTML by content; handed to LibreOffice as a Word 6 file
    anyway, the Word 6 filter refuses it rather than falling back to the HTML importer."""
    page = b'<html><body><h1>Hi</h1><img src="http://127.0.0.1:9/x.png"></body></html>'
    (tmp_path / "letter.doc").write_bytes(page)
    assert detect(tmp_path / "letter.doc", "letter.doc").kind == "html"
    ctx = Context(workdir=tmp_path / "job")
    ctx.workdir.mkdir()
    with pytest.raises(Rejected):
        libreoffice.convert(tmp_path / "letter.doc", ctx, "pdf", "doc",
                            infilter=libreoffice.WORD_FILTERS["word6"])


def test_a_word6_document_with_an_embedded_program_reports_it_removed(tmp_path):
    package = ole_package_object("setup.exe")
    data = word6_doc(MARKER, streams={"ObjectPool/_1234/\x01Ole10Native": package})
    result = _clean(tmp_path, data, "memo.doc")
    assert result.status == "ok", result.reason
    objects = [f for f in result.findings if f.kind in ("ole_object", "embedded_object")]
    assert objects and all(f.action == "removed" for f in objects), result.findings
    assert "setup.exe" not in Path(result.output).read_bytes().decode("latin-1")
    assert MARKER in _docx_text(Path(result.output))


def test_a_lotus_label_that_looks_like_a_formula_stays_text(tmp_path):
    """A DDE-style label is a string in the worksheet and stays one: no formula emerges."""
    data = lotus([(0, 0, "=cmd|' /C calc'!A0"), (0, 1, MARKER)])
    result = _clean(tmp_path, data, "sheet.wk1")
    assert result.status == "ok", result.reason
    strings, sheet = _xlsx_cells(Path(result.output))
    assert "<f>" not in sheet and "<f " not in sheet
    assert "cmd|" in strings + sheet


@pytest.mark.parametrize("data,name,code,words", [
    (word6_doc(MARKER, encrypted=True), "sealed.doc", RejectionCode.ENCRYPTED, "password"),
    (word2_doc(MARKER, encrypted=True), "sealed.doc", RejectionCode.ENCRYPTED, "password"),
    (word2_doc(MARKER, fc_mac=10_000), "broken.doc", RejectionCode.DAMAGED, "points outside"),
    (wordperfect([MARKER], key=0x1234), "sealed.wpd", RejectionCode.ENCRYPTED, "password"),
    (wordperfect([MARKER], file_type=0x16), "chart.wpg", RejectionCode.UNSUPPORTED_TYPE,
     "not a text document"),
    (wordperfect([MARKER], start=5000), "broken.wpd", RejectionCode.DAMAGED, "points outside"),
    (works(MARKER, text_end=9000), "broken.wps", RejectionCode.DAMAGED, "points outside"),
    (works(MARKER, version=6, ole=True, text_end=9000), "broken4.wps", RejectionCode.DAMAGED,
     "points outside"),
    (lotus([(0, 0, MARKER)], password=True), "sealed.wk1", RejectionCode.ENCRYPTED,
     "password"),
    (lotus([(0, 0, MARKER)])[:-8], "cut.wk1", RejectionCode.DAMAGED, "past the end"),
    (lotus([(0, 0, MARKER)], eof=False), "cut.wq1", RejectionCode.DAMAGED, "EOF"),
    (lotus3([MARKER] * 4, password=True), "sealed.wk4", RejectionCode.ENCRYPTED, "password"),
    (lotus3([MARKER] * 4, version=0x2000), "odd.wk3", RejectionCode.DAMAGED, "no version"),
    (pict()[:514] + struct.pack(">hhhh", 0, 0, 0, 200) + pict()[522:], "flat.pct",
     RejectionCode.DAMAGED, "frame"),
])
def test_sealed_and_damaged_files_are_refused_before_libreoffice(tmp_path, data, name, code,
                                                                 words):
    result = _clean(tmp_path, data, name)
    assert (result.status, result.code) == ("rejected", code), result.reason
    assert words in result.reason
    if code is RejectionCode.ENCRYPTED:  # not inspected: its own verdict, never "refused"
        assert result.outcome().verdict is Verdict.ENCRYPTED


@pytest.mark.parametrize("name", ["memo-word95.doc", "memo.wpd", "letter4.wps", "logo.pct"])
def test_advanced_mode_rebuilds_the_pages_from_pixels(tmp_path, name):
    data, kind, _output, _label = CASES[name]
    result = _clean(tmp_path, data, name, mode="advanced")
    assert result.status == "ok", result.reason
    assert (result.detected_type, result.output_type) == (kind, "pdf")
    assert "pixel_reconstruction" in {f.kind for f in result.findings}
