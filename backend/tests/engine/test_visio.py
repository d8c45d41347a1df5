"""Visio drawings, templates and stencils (issue 22): cleaned like the other OPC packages.
A hostile macro-enabled drawing loses its macros, add-on events, code-running ShapeSheet
formulas, data connections, embedded objects, external links, comments, reviewers and
document properties; a clean drawing keeps its pages, masters, pictures and text, and
LibreOffice still draws the shape text from the output."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from sanitas.engine import detect, ooxml, sanitize_file
from sanitas.engine.report import Context, Policy
from tests.engine.fidelity import pdf_text
from tests.engine.render_office import convert_many
from tests.engine.visio_corpus import AUTHOR, MAIN_TYPES, SHAPE_TEXT, package

ACTIVE_FUNCTIONS = (b"CALLTHIS", b"RUNADDON", b"RUNMACRO", b"SETF(")


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _sanitized(tmp_path: Path, data: bytes, name: str, **kwargs):
    source = tmp_path / name
    source.write_bytes(data)
    out = tmp_path / f"out-{source.stem}-{source.suffix[1:]}"
    out.mkdir()
    result = sanitize_file(source, out, **kwargs)
    assert result.status == "ok", result.reason
    return result, Path(result.output)


def test_a_hostile_drawing_comes_back_as_a_clean_vsdx(tmp_path):
    result, output = _sanitized(tmp_path, package("vsdm", hostile=True), "plans.vsdm")
    assert result.detected_type == "vsdm" and output.suffix == ".vsdx"
    members = _members(output)
    names = {n.lower() for n in members}
    for gone in ("visio/vbaproject.bin", "visio/connections.xml", "visio/recordsets.xml",
                 "visio/comments.xml", "docprops/custom.xml", "docprops/thumbnail.emf",
                 "visio/embeddings/oleobject1.bin"):
        assert gone not in names, gone
    everything = b"".join(members.values())
    for word in (*ACTIVE_FUNCTIONS, b"EventList", b"EvilAddon", b"calc.exe",
                 b"attacker.example", AUTHOR.encode(), b"Evil Corp", b"Secret project",
                 b"vbaProject", b"macroEnabled", b"Annotation"):
        assert word not in everything, word
    types = members["[Content_Types].xml"].decode()
    assert MAIN_TYPES["vsdx"] in types and "macroEnabled" not in types
    page = etree.fromstring(members["visio/pages/page1.xml"])
    assert SHAPE_TEXT in "".join(page.itertext())
    # the formulas go, the values stay; the embedded object's shape loses only its object
    cells = {c.get("N"): c for c in page.iter("{*}Cell")}
    assert cells["EventDblClick"].get("V") == "0" and cells["EventDblClick"].get("F") is None
    assert not [f for f in page.iter("{*}ForeignData") if f.get("ForeignType") == "Object"]
    assert b"https://example.org/kept" in members["visio/pages/page1.xml"]  # hyperlinks: keep
    page_rels = members["visio/pages/_rels/page1.xml.rels"].decode()
    assert "oleObject" not in page_rels and "External" not in page_rels
    kinds = {(f.kind, f.action) for f in result.findings}
    assert {("macro", "removed"), ("macro", "converted"), ("data_connection", "removed"),
            ("ole_object", "removed"), ("comments", "removed"), ("personal_data", "removed"),
            ("hyperlink", "removed"), ("custom_properties", "removed"),
            ("macro_enabled_type", "converted")} <= kinds


def test_hyperlinks_remove_takes_every_link_out_of_the_shapes(tmp_path):
    policy = Policy().with_rules(hyperlinks="remove")
    _result, output = _sanitized(tmp_path, package("vsdm", hostile=True), "links.vsdm",
                                 policy=policy)
    page = _members(output)["visio/pages/page1.xml"]
    assert b"example.org" not in page and b'N="Hyperlink"' not in page


@pytest.mark.parametrize(("kind", "output"), [
    ("vsdx", "vsdx"), ("vsdm", "vsdx"), ("vstx", "vstx"), ("vstm", "vstx"), ("vssx", "vssx"),
    ("vssm", "vssx")])
def test_each_visio_kind_is_detected_and_keeps_its_macro_free_type(tmp_path, kind, output):
    source = tmp_path / f"drawing.{kind}"
    source.write_bytes(package(kind, hostile=kind.endswith("m")))
    assert detect.detect(source, source.name).kind == kind
    ctx = Context(workdir=tmp_path)
    assert ooxml.sanitize(source, tmp_path / "out", ctx, kind) == output
    types = _members(tmp_path / "out")["[Content_Types].xml"].decode()
    assert MAIN_TYPES[output] in types


def test_a_clean_drawing_keeps_its_pages_masters_and_pictures(tmp_path):
    result, output = _sanitized(tmp_path, package("vsdx"), "clean.vsdx")
    assert {f.kind for f in result.findings} == {"metadata"}
    members = _members(output)
    original = {n: d for n, d in _members_of(package("vsdx")).items()}
    for name in ("visio/document.xml", "visio/pages/pages.xml", "visio/pages/page1.xml",
                 "visio/masters/masters.xml", "visio/masters/master1.xml", "visio/windows.xml",
                 "visio/media/image1.png"):
        assert name in members, name
    for name in ("visio/pages/page1.xml", "visio/masters/master1.xml"):
        assert etree.tostring(etree.fromstring(members[name]), method="c14n") == \
            etree.tostring(etree.fromstring(original[name]), method="c14n")
    # LibreOffice (libvisio) opens the output and draws the shape's text
    pdf = convert_many([output], "pdf", tmp_path / "pdf", tmp_path / "lo")[output]
    assert SHAPE_TEXT in " ".join(pdf_text(pdf).split())


def _members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_a_drawing_without_content_types_is_detected_and_repaired(tmp_path):
    result, output = _sanitized(tmp_path, package("vsdx", content_types=False), "bare.zip")
    assert result.detected_type == "vsdx" and output.suffix == ".vsdx"
    types = _members(output)["[Content_Types].xml"].decode()
    assert MAIN_TYPES["vsdx"] in types and "application/vnd.ms-visio.page+xml" in types


def test_anonymised_review_data_keeps_the_comments_without_their_authors(tmp_path):
    policy = Policy().with_rules(reviewData="anonymise")
    result, output = _sanitized(tmp_path, package("vsdm", hostile=True), "review.vsdm",
                                policy=policy)
    members = _members(output)
    comments = etree.fromstring(members["visio/comments.xml"])
    author = next(comments.iter("{*}AuthorEntry"))
    assert author.get("Name") == "Author 1" and author.get("ResolutionID") is None
    entry = next(comments.iter("{*}CommentEntry"))
    assert entry.get("Date") == "1970-01-01T00:00:00Z" and entry.text == "A note by Author 1"
    assert AUTHOR.encode() not in b"".join(members.values())
    assert ("comments", "kept") in {(f.kind, f.action) for f in result.findings}
