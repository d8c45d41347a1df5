"""Older document formats LibreOffice reads but cannot write (issue 29): Windows Write becomes
a .docx, Publisher and Visio 2000-2003 a PDF, each then cleaned by its family. The files are
Apache POI's own test documents (files/legacy/README.md): no tool here writes these formats."""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path

import pikepdf
import pytest

from sanitas.engine import sanitize_file
from sanitas.engine.detect import detect
from sanitas.engine.report import RejectionCode
from tests.engine.fidelity import pdf_text
from tests.engine.samples import LEGACY_FILES

pytestmark = pytest.mark.slow  # one LibreOffice run per file

CASES = {  # file -> (kind, output, words the output must still show)
    "poi-MSWriteOld.wri": ("wri", "docx", "Security Related Network Functions"),
    "poi-51318.pub": ("pub", "pdf", "I pick things up and put them down"),
    "poi-LinkAt0And10.pub": ("pub", "pdf", "LINK123456LINK2"),
    "poi-44501.vsd": ("vsd", "pdf", "Penible"),
    "poi-44501b.vsd": ("vsd", "pdf", "Test State 2"),
}
LABELS = {"wri": "Windows Write document", "pub": "Microsoft Publisher document",
          "vsd": "Visio 2000-2003 drawing"}


def _clean(tmp_path: Path, data: bytes, name: str, **kwargs):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return sanitize_file(src, out, original_name=name, workdir=tmp_path, **kwargs)


def _docx_text(path: Path) -> str:
    with zipfile.ZipFile(path) as zf:
        xml = zf.read("word/document.xml").decode("utf-8")
    return "".join(re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>", xml))


def _text(path: Path, output: str) -> str:
    return " ".join((_docx_text(path) if output == "docx" else pdf_text(path)).split())


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_real_file_converts_and_keeps_its_text(tmp_path, name):
    kind, output, words = CASES[name]
    data = (LEGACY_FILES / name).read_bytes()
    (tmp_path / "upload.bin").write_bytes(data)
    assert detect(tmp_path / "upload.bin", "upload.bin").kind == kind  # by content
    result = _clean(tmp_path, data, name)
    assert result.status == "ok", result.reason
    assert (result.detected_type, result.output_type) == (kind, output)
    assert Path(result.output).suffix == f".{output}"
    assert words in _text(Path(result.output), output).replace("\u2019", "'")
    converted = [f for f in result.findings if f.kind == "legacy_format"]
    assert [f.detail for f in converted] == [f"converted from {LABELS[kind]} to {output}"]
    # LibreOffice's own PDF marks (the page to open on, its name and the export time) are
    # not the user's: nothing in the report says an open action was removed.
    kinds = {f.kind for f in result.findings}
    assert "open_action" not in kinds and "document_info" not in kinds
    if output == "pdf":
        with pikepdf.open(Path(result.output)) as pdf:
            assert "/OpenAction" not in pdf.Root and len(pdf.pages) >= 1


def test_a_publisher_file_with_a_vba_project_reports_the_macros_removed(tmp_path):
    result = _clean(tmp_path, (LEGACY_FILES / "poi-51318.pub").read_bytes(), "flyer.pub")
    assert result.status == "ok", result.reason
    macros = [f for f in result.findings if f.kind == "macro"]
    assert [(f.action, f.location) for f in macros] == [("removed", "PUB document")]
    assert result.outcome().verdict.value == "cleaned"


@pytest.mark.parametrize("name", ["poi-44501b.vsd", "poi-MSWriteOld.wri"])
def test_advanced_mode_rebuilds_the_pages_from_pixels(tmp_path, name):
    kind, _output, _words = CASES[name]
    result = _clean(tmp_path, (LEGACY_FILES / name).read_bytes(), name, mode="advanced")
    assert result.status == "ok", result.reason
    assert (result.detected_type, result.output_type) == (kind, "pdf")
    assert "pixel_reconstruction" in {f.kind for f in result.findings}
    assert "open_action" not in {f.kind for f in result.findings}


def _write_header(text_end: int, pages: int, size: int) -> bytes:
    header = bytearray(128)
    header[0:4] = b"\x31\xbe\x00\x00"
    header[4:6] = b"\x00\xab"
    struct.pack_into("<I", header, 14, text_end)
    struct.pack_into("<H", header, 96, pages)
    return bytes(header) + b"x" * (size - 128)


@pytest.mark.parametrize("data,problem", [
    (_write_header(10_000, 2, 512), "points outside"),  # text runs past the end
    (_write_header(64, 2, 512), "points outside"),  # text ends inside the header
    (_write_header(300, 40, 512), "points outside"),  # more pages than the file holds
    ((LEGACY_FILES / "poi-MSWriteOld.wri").read_bytes()[:4000], "points outside"),
])
def test_a_damaged_write_header_is_refused_before_libreoffice(tmp_path, data, problem):
    result = _clean(tmp_path, data, "letter.wri")
    assert result.status == "rejected"
    assert result.code == RejectionCode.DAMAGED and problem in result.reason


def test_a_truncated_visio_drawing_is_refused(tmp_path):
    data = (LEGACY_FILES / "poi-44501.vsd").read_bytes()[:3000]
    result = _clean(tmp_path, data, "plan.vsd")
    assert result.status == "rejected" and result.output is None


def test_a_web_page_named_wri_is_not_taken_for_write(tmp_path):
    page = tmp_path / "letter.wri"
    page.write_bytes(b"<html><body><script>alert(1)</script>hello</body></html>")
    assert detect(page, "letter.wri").kind == "html"  # the name never decides the type
