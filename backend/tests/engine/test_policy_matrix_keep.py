"""The `keep` cells closed after the first policy matrix: external references kept in PDF,
OpenDocument, HTML/SVG/XML and EPUB (web addresses only); OLE objects and applets kept in
OpenDocument; picture metadata kept for TIFF, GIF, HEIF/AVIF/JPEG XL and IPTC; spreadsheet form
controls. Each output is read back with independent tools (pikepdf, lxml over the package's
parts, Pillow): keep keeps, remove removes, refuse refuses with the rule's code, and the
built-in basic policy does what it did before."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pikepdf
import pytest
from lxml import etree
from pikepdf import Array, Dictionary, Name, String
from PIL import Image

from sanitas.engine import sanitize_file
from sanitas.engine.policy import Policy, Rule
from sanitas.engine.report import REFUSAL_CODES, Result
from tests.engine.corpus import _gps_exif, clean_pdf, picture
from tests.engine.corpus_office import ODT, R, _rels, _sheet, odf, xlsx
from tests.engine.samples import epub_bytes, xhtml

WEB = "https://example.com"
XMP = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-'
       b'rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/'
       b'1.1/"><dc:creator>XMP-CREATOR</dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>')
IPTC = b"\x1c\x02\x78\x00\x0cIPTC-CAPTION"  # record 2, dataset 120 (caption)
OPF_NS = "http://www.idpf.org/2007/opf"
XLINK = "{http://www.w3.org/1999/xlink}href"


# --- samples -----------------------------------------------------------------------------------

def _pdf_with_external_references() -> pikepdf.Pdf:
    """A GoToR link to a web address, one to a network share, a base URI, a reference XObject
    naming a web address and a stream whose data lives in a local file."""
    pdf = clean_pdf(pages=1, with_image=False)
    page = pdf.pages[0]

    def link(y: int, target: pikepdf.Object) -> pikepdf.Object:
        return pdf.make_indirect(Dictionary(
            Type=Name.Annot, Subtype=Name.Link, Rect=Array([72, y, 200, y + 18]),
            A=Dictionary(S=Name.GoToR, F=target, D=Array([0, Name.Fit]))))

    page.obj.Annots = Array([
        link(72, Dictionary(FS=Name.URL, F=String(f"{WEB}/other.pdf"))),
        link(120, String("\\\\fileserver\\share\\secret.pdf"))])
    pdf.Root.URI = Dictionary(Base=String(f"{WEB}/base/"))
    form = pikepdf.Stream(pdf, b"")
    form.Type, form.Subtype = Name.XObject, Name.Form
    form.BBox = Array([0, 0, 10, 10])
    form.Ref = Dictionary(F=Dictionary(FS=Name.URL, F=String(f"{WEB}/ref.pdf")), Page=0)
    external = pikepdf.Stream(pdf, b"")
    external.F = String("C:\\data\\stream.bin")
    page.obj.Resources = Dictionary(XObject=Dictionary(Ref1=pdf.make_indirect(form)))
    page.obj.ExtraData = pdf.make_indirect(external)
    return pdf


HTML = (f"<!DOCTYPE html><html><head><title>t</title>"
        f"<link rel='stylesheet' href='{WEB}/site.css'>"
        f"<link rel='stylesheet' href='file:///etc/local.css'>"
        f"<style>@import url({WEB}/more.css); @import 'file:///etc/x.css';"
        f" body {{ background: url({WEB}/bg.png) }} p {{ background: url(file:///c/x.png) }}"
        f"</style></head><body><p>Visible</p><img src='{WEB}/remote.png' alt='r'>"
        r"<img src='\\fileserver\share\pic.png' alt='s'>"
        f"<script src='{WEB}/evil.js'></script></body></html>").encode()
SVG = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       f'width="20" height="20"><image xlink:href="{WEB}/remote.png" width="5" height="5"/>'
       f'<image xlink:href="file:///etc/local.png" width="5" height="5"/>'
       f'<rect width="10" height="10" style="fill: url({WEB}/paint.svg#p)"/></svg>').encode()
XML = (f'<doc xmlns:h="http://www.w3.org/1999/xhtml"><h:img src="{WEB}/remote.png"/>'
       f'<h:img src="file:///etc/local.png"/></doc>').encode()


def _epub() -> bytes:
    chapter = xhtml(f'<p>Text</p><img src="{WEB}/remote.png" alt="r"/>'
                    '<img src="file:///etc/local.png" alt="l"/>',
                    head=f'<link rel="stylesheet" href="{WEB}/book.css"/>')
    css = f"p {{ background: url({WEB}/bg.png) }} h1 {{ background: url(file:///x.png) }}"
    return epub_bytes({"ch1.xhtml": chapter, "style.css": css},
                      [("ch1", "ch1.xhtml", "application/xhtml+xml", "remote-resources"),
                       ("css", "style.css", "text/css", ""),
                       ("font", f"{WEB}/font.woff", "font/woff", "")], ["ch1"])


def _odt_links_and_objects() -> bytes:
    body = ('<office:text><text:p>Pictures<draw:frame draw:name="Web" svg:width="2cm" '
            f'svg:height="2cm"><draw:image xlink:href="{WEB}/pic.png" xlink:type="simple"/>'
            '</draw:frame><draw:frame draw:name="Share" svg:width="2cm" svg:height="2cm">'
            '<draw:image xlink:href="file:///C:/secret/pic.png" xlink:type="simple"/>'
            '</draw:frame><draw:frame draw:name="Ole" svg:width="2cm" svg:height="2cm">'
            '<draw:object-ole xlink:href="./Object 1" xlink:type="simple" draw:class-id='
            '"00020820-0000-0000-C000-000000000046"/></draw:frame><draw:frame draw:name="App" '
            'svg:width="2cm" svg:height="2cm"><draw:applet draw:code="Evil.class" '
            'draw:may-script="false"/></draw:frame></text:p>'
            '<text:section text:name="WebSection"><text:section-source xlink:href='
            f'"{WEB}/part.odt" xlink:type="simple"/></text:section>'
            '<text:section text:name="ShareSection"><text:section-source xlink:href='
            '"file:///fileserver/share/part.odt" xlink:type="simple"/></text:section>'
            '</office:text>')
    return odf(ODT, body, files={"Object 1": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1OLE-PAYLOAD"},
               manifest_extra={"Object 1": "application/vnd.sun.star.oleobject"})


VML_NS = ('xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:'
          'office" xmlns:x="urn:schemas-microsoft-com:office:excel"')


def _xlsx_form_controls() -> bytes:
    """A check box as Excel writes it: the legacy VML shape and the control-property part."""
    tail = ('<legacyDrawing r:id="rIdV"/><controls><control shapeId="1025" r:id="rIdC" '
            'name="Check Box 1"/></controls>')
    sheet = _sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>Agree?</t></is></c></row>', tail)
    vml = (f'<xml {VML_NS}><v:shape id="_x0000_s1025" type="#_x0000_t201"><v:textbox><div>'
           'CHECKBOX-LABEL</div></v:textbox><x:ClientData ObjectType="Checkbox"><x:Anchor>1, 0, '
           '1, 0, 3, 0, 2, 0</x:Anchor><x:Checked>1</x:Checked><x:FmlaLink>$B$1</x:FmlaLink>'
           '</x:ClientData></v:shape></xml>')
    ctrl = ('<?xml version="1.0" encoding="UTF-8"?><formControlPr xmlns="http://schemas.microsoft'
            '.com/office/spreadsheetml/2009/9/main" objectType="CheckBox" checked="Checked" '
            'fmlaLink="$B$1"/>')
    return xlsx([("Form", f"{R}/worksheet", "worksheets/sheet1.xml", sheet)], parts={
        "xl/worksheets/_rels/sheet1.xml.rels": _rels([
            ("rIdV", f"{R}/vmlDrawing", "../drawings/vmlDrawing1.vml"),
            ("rIdC", f"{R}/ctrlProp", "../ctrlProps/ctrlProp1.xml")]),
        "xl/drawings/vmlDrawing1.vml": vml, "xl/ctrlProps/ctrlProp1.xml": ctrl},
        overrides={"/xl/drawings/vmlDrawing1.vml":
                   "application/vnd.openxmlformats-officedocument.vmlDrawing",
                   "/xl/ctrlProps/ctrlProp1.xml":
                   "application/vnd.ms-excel.controlproperties+xml"})


def _photo_exif() -> Image.Exif:
    exif = _gps_exif()
    exif[0x010F] = "MAKER-X"
    return exif


def _tiff() -> bytes:
    tags = Image.Exif()
    tags.load(_photo_exif().tobytes())
    tags[700] = XMP
    tags[33723] = IPTC
    tags[270] = "DESCRIPTION-X"
    out = io.BytesIO()
    picture().save(out, "TIFF", exif=tags)
    return out.getvalue()


def _gif(animated: bool) -> bytes:
    out = io.BytesIO()
    frames = [picture().convert("P"), picture().rotate(90).convert("P")]
    if animated:
        frames[0].save(out, "GIF", save_all=True, append_images=frames[1:],
                       comment=b"GIF-COMMENT")
    else:
        frames[0].save(out, "GIF", comment=b"GIF-COMMENT")
    return out.getvalue()


def _jpeg_with_iptc() -> bytes:
    """EXIF plus a Photoshop APP13 segment with an IPTC record and a thumbnail resource."""
    def resource(code: int, data: bytes) -> bytes:
        return (b"8BIM" + struct.pack(">H", code) + b"\x00\x00" + struct.pack(">I", len(data))
                + data + (b"\x00" if len(data) % 2 else b""))

    app13 = b"Photoshop 3.0\x00" + resource(0x0404, IPTC) + resource(0x040C, b"THUMBNAIL")
    out = io.BytesIO()
    picture().save(out, "JPEG", exif=_photo_exif(),
                   extra=b"\xff\xed" + struct.pack(">H", len(app13) + 2) + app13)
    return out.getvalue()


def _modern(kind: str) -> bytes:
    out = io.BytesIO()
    if kind == "heic":
        import pillow_heif

        pillow_heif.register_heif_opener()
        picture().save(out, "HEIF", exif=_photo_exif().tobytes(), xmp=XMP)
    elif kind == "avif":
        picture().save(out, "AVIF", exif=_photo_exif(), xmp=XMP)
    else:
        import pillow_jxl  # noqa: F401 - registers the JXL writer

        picture().save(out, "JXL", exif=_photo_exif().tobytes())
    return out.getvalue()


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keep-samples")
    out: dict[str, Path] = {}
    _pdf_with_external_references().save(folder / "refs.pdf")
    out["pdf"] = folder / "refs.pdf"
    for name, data in (("page.html", HTML), ("image.svg", SVG), ("doc.xml", XML),
                       ("book.epub", _epub()), ("links.odt", _odt_links_and_objects()),
                       ("form.xlsx", _xlsx_form_controls()), ("photo.tiff", _tiff()),
                       ("still.gif", _gif(False)), ("moving.gif", _gif(True)),
                       ("iptc.jpg", _jpeg_with_iptc())):
        out[name] = folder / name
        out[name].write_bytes(data)
    return out


def run(path: Path, tmp_path: Path, **rules: str) -> Result:
    out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
    out.mkdir()
    return sanitize_file(path, out, policy=Policy().with_rules(**rules))


def ok(result: Result) -> Path:
    assert result.status == "ok", (result.reason, result.code)
    assert result.output is not None
    return Path(result.output)


def refused(result: Result, rule: Rule) -> None:
    assert result.status == "rejected", result.findings
    assert result.code == REFUSAL_CODES[rule], (result.code, result.reason)


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def actions(result: Result, kind: str) -> set[str]:
    return {f.action for f in result.findings if f.kind == kind}


# --- externalReferences: PDF -------------------------------------------------------------------

def _gotor_targets(path: Path) -> list[str]:
    with pikepdf.open(path) as pdf:
        found = []
        for annot in pdf.pages[0].obj.get("/Annots", Array()):
            action = annot.get("/A")
            if isinstance(action, Dictionary) and action.get("/S") == Name.GoToR:
                spec = action.F
                found.append(str(spec.F if isinstance(spec, Dictionary) else spec))
        return found


def _pdf_state(path: Path) -> dict[str, object]:
    with pikepdf.open(path) as pdf:
        form = pdf.pages[0].obj.Resources.XObject.Ref1
        extra = pdf.pages[0].obj.get("/ExtraData")
        return {"base": str(pdf.Root.URI.Base) if "/URI" in pdf.Root else None,
                "ref": "/Ref" in form,
                "external_stream": isinstance(extra, pikepdf.Stream) and "/F" in extra}


def test_pdf_external_references(samples, tmp_path):
    kept = run(samples["pdf"], tmp_path, externalReferences="keep")
    path = ok(kept)
    assert _gotor_targets(path) == [f"{WEB}/other.pdf"]  # the network share went
    assert _pdf_state(path) == {"base": f"{WEB}/base/", "ref": True, "external_stream": False}
    assert "kept" in actions(kept, "remote_goto") and "removed" in actions(kept, "remote_goto")
    assert actions(kept, "base_uri") == {"kept"}
    assert "kept" in actions(kept, "external_reference")

    removed = run(samples["pdf"], tmp_path)  # basic: remove
    path = ok(removed)
    assert _gotor_targets(path) == []
    assert _pdf_state(path) == {"base": None, "ref": False, "external_stream": False}
    assert actions(removed, "remote_goto") == {"removed"}
    assert "kept" not in actions(removed, "external_reference")

    refused(run(samples["pdf"], tmp_path, externalReferences="refuse"),
            Rule.EXTERNAL_REFERENCES)


# --- externalReferences: HTML, SVG, XML ----------------------------------------------------------

def _csp(document: etree._Element) -> str:
    return next(m.get("content") for m in document.iter("meta")
                if m.get("http-equiv") == "Content-Security-Policy")


def test_html_remote_loads(samples, tmp_path):
    import lxml.html

    kept = run(samples["page.html"], tmp_path, externalReferences="keep")
    document = lxml.html.fromstring(ok(kept).read_bytes())
    assert [i.get("src") for i in document.iter("img")] == [f"{WEB}/remote.png", None]
    assert [link.get("href") for link in document.iter("link")] == [f"{WEB}/site.css"]
    style = "".join(s.text or "" for s in document.iter("style"))
    assert f"url({WEB}/bg.png)" in style and "file:" not in style
    assert f"@import url({WEB}/more.css)" in style
    assert not list(document.iter("script"))
    policy = dict(d.strip().split(" ", 1) for d in _csp(document).split(";") if d.strip())
    assert "https:" in policy["img-src"] and "https:" in policy["style-src"]
    assert policy["default-src"] == "'none'" and "script-src" not in policy  # no scripts
    assert "kept" in actions(kept, "external_reference")

    removed = run(samples["page.html"], tmp_path)
    document = lxml.html.fromstring(ok(removed).read_bytes())
    assert [i.get("src") for i in document.iter("img")] == [None, None]
    assert not list(document.iter("link"))
    assert "https:" not in _csp(document)
    assert "@import" not in "".join(s.text or "" for s in document.iter("style"))
    assert actions(removed, "external_reference") == {"removed"}

    refused(run(samples["page.html"], tmp_path, externalReferences="refuse"),
            Rule.EXTERNAL_REFERENCES)


def test_svg_and_xml_remote_loads(samples, tmp_path):
    kept = etree.fromstring(ok(run(samples["image.svg"], tmp_path,
                                   externalReferences="keep")).read_bytes())
    assert [i.get(XLINK) for i in kept.iter("{*}image")] == [f"{WEB}/remote.png"]
    assert f"url({WEB}/paint.svg#p)" in next(kept.iter("{*}rect")).get("style")
    removed = etree.fromstring(ok(run(samples["image.svg"], tmp_path)).read_bytes())
    assert not list(removed.iter("{*}image"))
    assert WEB not in next(removed.iter("{*}rect")).get("style", "")
    refused(run(samples["image.svg"], tmp_path, externalReferences="refuse"),
            Rule.EXTERNAL_REFERENCES)

    kept = etree.fromstring(ok(run(samples["doc.xml"], tmp_path,
                                   externalReferences="keep")).read_bytes())
    assert [i.get("src") for i in kept.iter("{*}img")] == [f"{WEB}/remote.png", None]
    removed = etree.fromstring(ok(run(samples["doc.xml"], tmp_path)).read_bytes())
    assert [i.get("src") for i in removed.iter("{*}img")] == [None, None]


# --- externalReferences: EPUB ------------------------------------------------------------------

def test_epub_remote_loads(samples, tmp_path):
    def read(result: Result) -> tuple[etree._Element, etree._Element, str]:
        members = parts(ok(result))
        opf = etree.fromstring(next(v for k, v in members.items() if k.endswith(".opf")))
        chapter = etree.fromstring(next(v for k, v in members.items()
                                        if k.endswith("ch1.xhtml")))
        css = next(v for k, v in members.items() if k.endswith("style.css")).decode()
        return opf, chapter, css

    result = run(samples["book.epub"], tmp_path, externalReferences="keep")
    opf, chapter, css = read(result)
    assert [i.get("src") for i in chapter.iter("{*}img")] == [f"{WEB}/remote.png", None]
    assert [link.get("href") for link in chapter.iter("{*}link")] == [f"{WEB}/book.css"]
    assert f"url({WEB}/bg.png)" in css and "file:" not in css
    items = {i.get("id"): i for i in opf.iter(f"{{{OPF_NS}}}item")}
    assert items["font"].get("href") == f"{WEB}/font.woff"
    assert "remote-resources" in items["ch1"].get("properties", "")
    assert "kept" in actions(result, "external_reference")

    result = run(samples["book.epub"], tmp_path)
    opf, chapter, css = read(result)
    assert [i.get("src") for i in chapter.iter("{*}img")] == [None, None]
    assert not list(chapter.iter("{*}link")) and WEB not in css
    items = {i.get("id"): i for i in opf.iter(f"{{{OPF_NS}}}item")}
    assert "font" not in items and not items["ch1"].get("properties")

    refused(run(samples["book.epub"], tmp_path, externalReferences="refuse"),
            Rule.EXTERNAL_REFERENCES)


# --- externalReferences and embeddedFiles: OpenDocument ------------------------------------------

def _odt(result: Result) -> tuple[dict[str, bytes], etree._Element]:
    members = parts(ok(result))
    return members, etree.fromstring(members["content.xml"])


def _hrefs(content: etree._Element, tag: str) -> list[str | None]:
    return [el.get(XLINK) for el in content.iter(f"{{*}}{tag}")]


def test_odf_external_references(samples, tmp_path):
    result = run(samples["links.odt"], tmp_path, externalReferences="keep")
    _, content = _odt(result)
    assert _hrefs(content, "image") == [f"{WEB}/pic.png"]
    assert _hrefs(content, "section-source") == [f"{WEB}/part.odt"]
    assert actions(result, "external_relationship") == {"kept", "removed"}

    result = run(samples["links.odt"], tmp_path)
    _, content = _odt(result)
    assert _hrefs(content, "image") == [] and _hrefs(content, "section-source") == []
    assert "kept" not in actions(result, "external_relationship")

    refused(run(samples["links.odt"], tmp_path, externalReferences="refuse"),
            Rule.EXTERNAL_REFERENCES)


def test_odf_ole_objects_and_applets(samples, tmp_path):
    # An OLE object may wrap any file and an applet is code: under "keep" they go as under
    # basic (remove) and sanitize (#19: nothing is kept without going through the engine).
    for rules in ({}, {"embeddedFiles": "sanitize"}, {"embeddedFiles": "keep"}):
        result = run(samples["links.odt"], tmp_path, **rules)
        members, content = _odt(result)
        assert "Object 1" not in members
        assert not list(content.iter("{*}object-ole")) and not list(content.iter("{*}applet"))
        assert actions(result, "ole_object") == {"removed"}
        assert b"OLE-PAYLOAD" not in b"".join(members.values())

    refused(run(samples["links.odt"], tmp_path, embeddedFiles="refuse"), Rule.EMBEDDED_FILES)


# --- imageMetadata ------------------------------------------------------------------------------

def _tiff_tags(path: Path) -> dict[int, object]:
    with Image.open(path) as image:
        tags = dict(image.tag_v2)
        tags["gps"] = dict(image.getexif().get_ifd(0x8825))
        return tags


def test_tiff_metadata(samples, tmp_path):
    result = run(samples["photo.tiff"], tmp_path, imageMetadata="keep")
    tags = _tiff_tags(ok(result))
    assert tags[271] == "MAKER-X" and tags[270] == "DESCRIPTION-X"
    assert tags["gps"]
    assert XMP in bytes(tags[700]) and bytes(tags[33723]) == IPTC
    for kind in ("exif", "gps_location", "xmp_metadata", "iptc"):
        assert actions(result, kind) == {"kept"}, kind

    result = run(samples["photo.tiff"], tmp_path)
    tags = _tiff_tags(ok(result))
    assert not {271, 270, 700, 33723} & set(tags) and not tags["gps"]
    assert actions(result, "exif") == {"removed"}
    refused(run(samples["photo.tiff"], tmp_path, imageMetadata="refuse"), Rule.IMAGE_METADATA)


@pytest.mark.parametrize("name", ["still.gif", "moving.gif"])
def test_gif_comments(samples, tmp_path, name):
    result = run(samples[name], tmp_path, imageMetadata="keep")
    with Image.open(ok(result)) as image:
        assert image.info.get("comment") == b"GIF-COMMENT"
    assert actions(result, "comment") == {"kept"}
    result = run(samples[name], tmp_path)
    with Image.open(ok(result)) as image:
        assert "comment" not in image.info
    assert actions(result, "comment") == {"removed"}
    refused(run(samples[name], tmp_path, imageMetadata="refuse"), Rule.IMAGE_METADATA)


def test_jpeg_iptc(samples, tmp_path):
    result = run(samples["iptc.jpg"], tmp_path, imageMetadata="keep")
    with Image.open(ok(result)) as image:
        resources = image.info.get("photoshop") or {}
        assert resources.get(0x0404) == IPTC
        assert 0x040C not in resources  # the Photoshop thumbnail is not carried
        assert image.getexif().get(0x010F) == "MAKER-X"
    assert actions(result, "iptc") == {"kept"}
    result = run(samples["iptc.jpg"], tmp_path)
    with Image.open(ok(result)) as image:
        assert "photoshop" not in image.info
    assert actions(result, "iptc") == {"removed"}


@pytest.mark.parametrize("kind", ["heic", "avif", "jxl"])
def test_modern_formats_metadata(tmp_path, kind):
    from sanitas.engine.image import _can_write, load_plugin

    try:
        load_plugin(kind)
        data = _modern(kind)
    except Exception as exc:  # noqa: BLE001 - a codec this installation lacks
        pytest.skip(f"{kind} cannot be written here: {exc}")
    if kind == "avif" and not _can_write("avif"):
        pytest.skip("no AVIF encoder")
    source = tmp_path / f"photo.{kind}"
    source.write_bytes(data)
    result = run(source, tmp_path, imageMetadata="keep")
    with Image.open(ok(result)) as image:
        exif = image.getexif()
        assert exif.get(0x010F) == "MAKER-X" and exif.get_ifd(0x8825)
        if kind != "jxl":  # the JPEG XL reader hands over EXIF only
            assert b"XMP-CREATOR" in (image.info.get("xmp") or b"")
    assert actions(result, "gps_location") == {"kept"}
    result = run(source, tmp_path)
    with Image.open(ok(result)) as image:
        assert not image.getexif().get(0x010F) and not image.info.get("xmp")
    assert actions(result, "exif") == {"removed"}


# --- formFields: spreadsheet form controls ------------------------------------------------------

def _vml_controls(members: dict[str, bytes]) -> list[str]:
    root = etree.fromstring(members["xl/drawings/vmlDrawing1.vml"])
    return [c.get("ObjectType") for c in root.iter("{urn:schemas-microsoft-com:office:excel}"
                                                   "ClientData")]


def test_spreadsheet_form_controls(samples, tmp_path):
    basic = run(samples["form.xlsx"], tmp_path)
    members = parts(ok(basic))
    # keep (basic): the check box stays in its legacy VML form, which Excel reads; the
    # control-property part goes, as it always has.
    assert _vml_controls(members) == ["Checkbox"]
    assert not any(n.startswith("xl/ctrlProps/") for n in members)
    assert b"CHECKBOX-LABEL" in members["xl/drawings/vmlDrawing1.vml"]

    removed = run(samples["form.xlsx"], tmp_path, formFields="remove")
    members = parts(ok(removed))
    assert _vml_controls(members) == []
    assert b"CHECKBOX-LABEL" not in members["xl/drawings/vmlDrawing1.vml"]
    assert any(f.kind == "form_control" and f.location.endswith(".vml")
               for f in removed.findings)

    refused(run(samples["form.xlsx"], tmp_path, formFields="refuse"), Rule.FORM_FIELDS)


def test_vml_only_form_controls_refused(samples, tmp_path):
    """An Excel 2007 file has its controls in the VML drawing only: refuse still sees them."""
    def vml_only(data: bytes) -> bytes:
        members = parts_of(data)
        del members["xl/ctrlProps/ctrlProp1.xml"]
        members["xl/worksheets/_rels/sheet1.xml.rels"] = _rels([
            ("rIdV", f"{R}/vmlDrawing", "../drawings/vmlDrawing1.vml")]).encode()
        members["xl/worksheets/sheet1.xml"] = members["xl/worksheets/sheet1.xml"].replace(
            b'<controls><control shapeId="1025" r:id="rIdC" name="Check Box 1"/></controls>',
            b"")
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            for name, value in members.items():
                zf.writestr(name, value)
        return buffer.getvalue()

    source = tmp_path / "legacy.xlsx"
    source.write_bytes(vml_only(samples["form.xlsx"].read_bytes()))
    refused(run(source, tmp_path, formFields="refuse"), Rule.FORM_FIELDS)
    assert _vml_controls(parts(ok(run(source, tmp_path)))) == ["Checkbox"]


def parts_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}
