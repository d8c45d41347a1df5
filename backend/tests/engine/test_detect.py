"""Type detection by content, never by name; refusals say why."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanitas.engine import sanitize_file
from sanitas.engine.detect import detect
from sanitas.engine.report import Context, Rejected


@pytest.mark.parametrize("name,kind", [
    ("clean.pdf", "pdf"), ("photo.jpg", "jpeg"), ("image.png", "png"), ("anim.gif", "gif"),
    ("image.webp", "webp"), ("scan.tiff", "tiff"), ("plain.bmp", "bmp"), ("drawing.svg", "svg"),
    ("data.csv", "csv"), ("page.html", "html"), ("notes.txt", "txt"), ("bundle.zip", "zip"),
])
def test_detects_by_content(corpus, name, kind):
    assert detect(corpus[name], name).kind == kind


def test_name_does_not_decide_type_and_mismatch_is_a_finding(corpus, out_dir):
    result = sanitize_file(corpus["photo-really-png.jpg"], out_dir)
    assert result.status == "ok"
    assert result.detected_type == "png" and result.output_type == "png"
    assert Path(result.output).name == "photo-really-png.png"
    assert any(f.kind == "type_mismatch" for f in result.findings)


@pytest.mark.parametrize("name,words", [
    ("invoice.pdf", "executable"), ("invoice.pdf.exe", "executable"),
    ("report.docx", "executable"), ("readme.txt", "script"), ("run.txt", "script"),
    ("random.bin", "not recognised"), ("empty.txt", "empty"),
    ("encrypted.pdf", "encrypted"),
    ("encrypted.zip", "encrypted"), ("encrypted.docx", "encrypted"),
    ("encrypted.doc", "encrypted"),
])
def test_refusals_say_why(corpus, out_dir, name, words):
    result = sanitize_file(corpus[name], out_dir)
    assert result.status == "rejected"
    assert words in result.reason.lower()
    assert list(out_dir.iterdir()) == []


def test_ooxml_and_odf_kinds_by_main_part(tmp_path):
    from tests.engine.corpus import zip_bytes

    cases = {
        "application/vnd.ms-word.document.macroEnabled.main+xml": "docm",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": "xlsx",
        "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml": "pptm",
        "application/vnd.ms-excel.sheet.binary.macroEnabled.main": "xlsb",
    }
    for content_type, kind in cases.items():
        types = (f'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                 f'<Override PartName="/main" ContentType="{content_type}"/></Types>').encode()
        path = tmp_path / f"{kind}.bin"
        path.write_bytes(zip_bytes({"[Content_Types].xml": types, "main": b"<x/>"}))
        assert detect(path, "upload.zip").kind == kind
    odt = tmp_path / "doc.odt"
    odt.write_bytes(zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text",
                               "content.xml": b"<x/>"}))
    assert detect(odt).kind == "odt"
    rtf = tmp_path / "x.rtf"
    rtf.write_bytes(b"{\\rtf1\\ansi hello}")
    assert detect(rtf).kind == "rtf"


def test_legacy_ole_kinds_and_non_office_ole(tmp_path):
    from tests.engine.corpus import ole_file

    for stream, kind in (("WordDocument", "doc"), ("Workbook", "xls"),
                         ("PowerPoint Document", "ppt")):
        path = tmp_path / f"{kind}.bin"
        path.write_bytes(ole_file({stream: b"\x00" * 64}))
        assert detect(path).kind == kind
    installer = tmp_path / "setup.msi"
    installer.write_bytes(ole_file({"SummaryData": b"x"}))
    with pytest.raises(Rejected, match="not a Word, Excel, PowerPoint, Publisher, Visio or Works"):
        detect(installer, "setup.doc")


def test_script_names_refused_whatever_the_content(tmp_path):
    path = tmp_path / "x"
    path.write_bytes(b"just words")
    with pytest.raises(Rejected, match="scripts"):
        detect(path, "payload.vbs", Context())


def test_encrypted_legacy_workbook_and_presentation(tmp_path):
    import struct

    from tests.engine.corpus import ole_file

    bof = struct.pack("<HH", 0x0809, 16) + b"\x00" * 16
    filepass = struct.pack("<HH", 0x002F, 6) + b"\x01\x00\x01\x00\x01\x00"
    workbook = tmp_path / "book.xls"
    workbook.write_bytes(ole_file({"Workbook": bof + filepass}))
    with pytest.raises(Rejected, match="encrypted"):
        detect(workbook)
    plain = tmp_path / "plain.xls"
    plain.write_bytes(ole_file({"Workbook": bof + struct.pack("<HH", 0x000A, 0)}))
    assert detect(plain).kind == "xls"
    deck = tmp_path / "deck.ppt"
    deck.write_bytes(ole_file({"PowerPoint Document": b"\x00" * 8, "EncryptedSummary": b"x"}))
    with pytest.raises(Rejected, match="encrypted"):
        detect(deck)


def test_between_plain_text_and_csv_the_name_decides(tmp_path, out_dir):
    prose = "Dear Bob,\nthanks for the notes, see you Monday.\nBest, Alice\n"
    table = "name,amount\nalice,3\nbob,=1+2\n"
    cases = [("notes.txt", prose, "txt"), ("notes.csv", prose, "csv"),
             ("table.txt", table, "txt"), ("table.csv", table, "csv"),
             ("table.tsv", table, "csv"), ("upload", table, "csv"), ("upload", prose, "csv")]
    for name, text, expected in cases:
        path = tmp_path / "input"
        path.write_text(text)
        assert detect(path, name).kind == expected, name
    (tmp_path / "notes.txt").write_text(prose)
    result = sanitize_file(tmp_path / "notes.txt", out_dir, original_name="notes.txt")
    assert result.output_type == "txt" and Path(result.output).read_text() == prose
