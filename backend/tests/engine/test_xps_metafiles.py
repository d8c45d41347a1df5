"""XPS/OpenXPS (drawn as PDF by mutool) and WMF/EMF metafiles (drawn as PNG by LibreOffice)
(issue 22, breadth): the drawing survives (pixels checked), what is not drawing does not."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pikepdf
import pytest
from PIL import Image

from sanitas.engine import detect, sanitize_file
from sanitas.engine.report import RejectionCode
from tests.engine.breadth_corpus import emf_bytes, wmf_bytes, xps_bytes


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _page_pixels(pdf: Path) -> Image.Image:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    try:
        return document[0].render(scale=72 / 72).to_pil().convert("RGB")
    finally:
        document.close()


# --- XPS -------------------------------------------------------------------------------------

@pytest.mark.parametrize("oxps", [False, True])
def test_xps_drawn_as_pdf(tmp_path, out_dir, oxps):
    name = "doc.oxps" if oxps else "doc.xps"
    src = _write(tmp_path, name, xps_bytes(oxps=oxps))
    assert detect.sniff(src.read_bytes(), name).provisional
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    assert result.detected_type == ("oxps" if oxps else "xps") and result.output_type == "pdf"
    with pikepdf.open(result.output) as pdf:
        assert len(pdf.pages) == 1
        assert [round(float(v)) for v in pdf.pages[0].mediabox] == [0, 0, 612, 792]
    page = _page_pixels(Path(result.output))
    assert page.getpixel((300, 200)) == (255, 0, 0)  # the red rectangle (XPS units are 1/96 in)
    assert page.getpixel((150, 490)) == (0, 0, 255)  # the blue one
    assert page.getpixel((600, 700)) == (255, 255, 255)


def test_xps_links_and_properties_not_carried_over(tmp_path, out_dir):
    extra = ('<Canvas FixedPage.NavigateUri="javascript:alert(1)"><Path Data="M 400,600 L 500,600 '
             'L 500,700 Z" Fill="#FF00FF00"/></Canvas><Path Data="M 0,0 L 10,0 L 10,10 Z" '
             'Fill="#FF000000" FixedPage.NavigateUri="https://tracker.example/x"/>')
    data = xps_bytes(page_extra=extra, parts={"Metadata/Job_PT.xml": b"<PrintTicket>Printer "
                                              b"\\\\office\\secret-printer</PrintTicket>"})
    result = sanitize_file(_write(tmp_path, "links.xps", data), out_dir)
    assert result.status == "ok", result.reason
    raw = Path(result.output).read_bytes()
    for gone in (b"javascript", b"tracker.example", b"Secret Author", b"secret-printer"):
        assert gone not in raw, gone
    with pikepdf.open(result.output) as pdf:
        assert "/Annots" not in pdf.pages[0]
    assert any(f.kind == "legacy_format" for f in result.findings)


def test_xps_bomb_refused_before_drawing(tmp_path, out_dir):
    data = xps_bytes(parts={"Resources/huge.bin": b"\x00" * (300 * 1024 * 1024)})
    result = sanitize_file(_write(tmp_path, "bomb.xps", data), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.BOMB, result.reason


def test_xps_advanced_mode_rebuilds_pixels(tmp_path, out_dir):
    result = sanitize_file(_write(tmp_path, "doc.xps", xps_bytes()), out_dir, mode="advanced")
    assert result.status == "ok", result.reason
    assert result.output_type == "pdf" and result.pages_rebuilt == [1]


def test_zip_without_the_xps_relationship_stays_an_archive(tmp_path, out_dir):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("_rels/.rels", "<Relationships/>")
        package.writestr("FixedDocSeq.fdseq", "<x/>")
    result = sanitize_file(_write(tmp_path, "fake.xps", buffer.getvalue()), out_dir)
    assert result.detected_type == "zip"


# --- WMF / EMF -------------------------------------------------------------------------------

def _png(result) -> Image.Image:
    assert result.status == "ok", result.reason
    assert result.output_type == "png"
    image = Image.open(result.output)
    assert image.format == "PNG" and not image.text  # no text chunks
    return image.convert("RGB")


@pytest.mark.parametrize("placeable", [True, False])
def test_wmf_drawn_as_png(tmp_path, out_dir, placeable):
    data = wmf_bytes(placeable=placeable)
    assert detect.sniff(data, "x.wmf").kind == "wmf"
    image = _png(sanitize_file(_write(tmp_path, "drawing.wmf", data), out_dir))
    assert image.size == (1600, 800)  # the 2:1 picture, longest side 1600
    assert image.getpixel((800, 400)) == (255, 0, 0)
    assert image.getpixel((20, 20)) == (255, 255, 255)


def test_wmf_printer_escapes_removed(tmp_path, out_dir):
    payload = b"%!PS-Adobe SECRET-PAYLOAD " + b"\x90" * 64
    result = sanitize_file(_write(tmp_path, "esc.wmf", wmf_bytes(escape=payload)), out_dir)
    image = _png(result)
    assert image.getpixel((800, 400)) == (255, 0, 0)
    assert b"SECRET-PAYLOAD" not in Path(result.output).read_bytes()
    assert any(f.kind == "structure" and "META_ESCAPE" in f.detail for f in result.findings)


def test_emf_drawn_as_png_without_its_description(tmp_path, out_dir):
    data = emf_bytes(comment=b"GDIC" + b"hidden-comment-data" * 4)
    assert detect.sniff(data, "x.emf").kind == "emf"
    result = sanitize_file(_write(tmp_path, "drawing.emf", data), out_dir)
    image = _png(result)
    assert image.size == (1600, 800)
    assert image.getpixel((800, 400)) == (0, 0, 255)
    raw = Path(result.output).read_bytes()
    assert b"S\x00e\x00c\x00r\x00e\x00t" not in raw and b"hidden-comment" not in raw


@pytest.mark.parametrize("name,data,words", [
    ("cut.wmf", wmf_bytes()[:-6], "end-of-file record"),
    ("size.wmf", wmf_bytes()[:40] + b"\xff\xff\x00\x00" + wmf_bytes()[44:], "runs past"),
    ("cut.emf", emf_bytes()[:-20], "end-of-file record"),
    ("header.emf", emf_bytes()[:4] + b"\x10\x00\x00\x00" + emf_bytes()[8:], "header"),
], ids=["wmf-cut", "wmf-record-size", "emf-cut", "emf-header"])
def test_damaged_metafiles_refused(tmp_path, out_dir, name, data, words):
    result = sanitize_file(_write(tmp_path, name, data), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED, result.reason
    assert words in result.reason
