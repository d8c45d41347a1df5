"""The zips the engine writes (Office and OpenDocument packages, sanitized archives) store
members that are compressed already (pictures, nested packages) and deflate the rest:
deflating a photo costs CPU and saves nothing."""

from __future__ import annotations

import io
import zipfile

from PIL import Image

from sanitas.engine import sanitize_file
from tests.engine import corpus_office as office


def _photo() -> bytes:
    buffer = io.BytesIO()
    Image.radial_gradient("L").resize((600, 400)).convert("RGB").save(buffer, "JPEG")
    return buffer.getvalue()


def _docx_with_photo() -> bytes:
    rels = [("rIdPhoto1", f"{office.R}/image", "media/photo1.jpeg")]
    body = office._p("A report with a photo.") + office._inline_image("rIdPhoto1")
    return office.docx(body, doc_rels=rels, parts={"word/media/photo1.jpeg": _photo()})


def _kinds(zf: zipfile.ZipFile) -> dict[str, int]:
    return {info.filename: info.compress_type for info in zf.infolist()}


def test_a_documents_pictures_are_stored_and_its_xml_deflated(tmp_path):
    source = tmp_path / "report.docx"
    source.write_bytes(_docx_with_photo())
    (tmp_path / "out").mkdir()
    result = sanitize_file(source, tmp_path / "out", mode="basic")
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        kinds = _kinds(zf)
        assert zf.read("word/media/photo1.jpeg")[:3] == b"\xff\xd8\xff"
    assert kinds["word/media/photo1.jpeg"] == zipfile.ZIP_STORED
    assert kinds["word/document.xml"] == zipfile.ZIP_DEFLATED
    assert kinds["[Content_Types].xml"] == zipfile.ZIP_DEFLATED


def test_an_archives_packages_and_pictures_are_stored_and_its_text_deflated(tmp_path):
    source = tmp_path / "bundle.zip"
    with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("report.docx", _docx_with_photo())
        zf.writestr("photo.jpg", _photo())
        zf.writestr("notes.txt", "Meeting notes.\n" * 200)
    (tmp_path / "out").mkdir()
    result = sanitize_file(source, tmp_path / "out", mode="basic")
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        kinds = _kinds(zf)
        assert zf.testzip() is None
    assert kinds == {"report.docx": zipfile.ZIP_STORED, "photo.jpg": zipfile.ZIP_STORED,
                     "notes.txt": zipfile.ZIP_DEFLATED}
