"""Every policy decision x every family that has such content, on generated samples: the output
is read back with independent tools (pikepdf/qpdf, lxml over the package's parts, Pillow) to see
that `remove` removed the content, `keep` kept it, `sanitize`/`anonymise` did their part, and
`refuse` refused the file with the rule's code. Plus allowedTypes, maxPages and output."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pikepdf
import pytest
from lxml import etree
from pikepdf import Array, Dictionary, Name, String
from PIL import Image

from sanitas.engine import sanitize_file
from sanitas.engine.policy import Policy, Rule
from sanitas.engine.report import REFUSAL_CODES, RejectionCode, Result
from tests.engine.corpus import _gps_exif, clean_pdf, hostile_jpeg, picture
from tests.engine.corpus_office import (
    CT_BASE,
    ODS,
    ODT,
    PML,
    R,
    _rels,
    _sheet,
    _types,
    _zip,
    docx,
    minimal_pptx,
    odf,
    reviewed_docx,
    reviewed_odt,
    xlsx,
)
from tests.engine.samples import epub_bytes, xhtml

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
       b'rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/" pdf:Producer="SECRET-XMP"/>'
       b'</rdf:RDF></x:xmpmeta><?xpacket end="w"?>')


# --- samples (written once per module) -----------------------------------------------------

def _pdf_sample() -> pikepdf.Pdf:
    """One page with a JavaScript open action, an attachment, a web link, a comment by a named
    reviewer, document info and XMP, and a fillable text field."""
    pdf = clean_pdf(pages=1, with_image=False)
    pdf.Root.OpenAction = pdf.make_indirect(Dictionary(
        Type=Name.Action, S=Name.JavaScript, JS=String("app.alert('EVIL-js')")))
    attachment = pikepdf.Stream(pdf, b"ATTACHED-PAYLOAD plain text")
    attachment.Type = Name.EmbeddedFile
    spec = pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String("note.txt"),
                                        UF=String("note.txt"), EF=Dictionary(F=attachment)))
    pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=Array([String("note.txt"),
                                                                      spec])))
    page = pdf.pages[0]
    link = pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Link,
                                        Rect=Array([72, 72, 200, 90]),
                                        A=Dictionary(S=Name.URI,
                                                     URI=String("https://example.com/doc"))))
    comment = pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Text,
                                           Rect=Array([300, 300, 320, 320]),
                                           T=String("Alice Reviewer"),
                                           Contents=String("Please check")))
    field = pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Widget, FT=Name.Tx,
                                         T=String("customer"), V=String("ACME"),
                                         Rect=Array([72, 400, 300, 420]), P=page.obj))
    page.obj.Annots = Array([link, comment, field])
    pdf.Root.AcroForm = Dictionary(Fields=Array([field]))
    pdf.trailer.Info = pdf.make_indirect(Dictionary(Author=String("Secret Author")))
    pdf.Root.Metadata = pikepdf.Stream(pdf, XMP)
    pdf.Root.Metadata.Type = Name.Metadata
    pdf.Root.Metadata.Subtype = Name.XML
    return pdf


def _docx_sample() -> bytes:
    """A hidden text run, an external hyperlink, a remote template and the corpus's metadata."""
    body = ('<w:p><w:r><w:t xml:space="preserve">Visible words. </w:t></w:r><w:r><w:rPr>'
            '<w:vanish/></w:rPr><w:t>HIDDEN-WORDS</w:t></w:r>'
            '<w:hyperlink r:id="rIdLink"><w:r><w:t>link text</w:t></w:r></w:hyperlink></w:p>'
            '<w:p><w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:name w:val="Customer"/>'
            '<w:textInput/></w:ffData></w:fldChar></w:r><w:r><w:instrText xml:space="preserve">'
            ' FORMTEXT </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>'
            '<w:r><w:t>FIELD-VALUE</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>')
    settings = (f'<?xml version="1.0" encoding="UTF-8"?><w:settings xmlns:w="{W}" xmlns:r='
                '"http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
                '<w:attachedTemplate r:id="rIdTpl"/></w:settings>')
    return docx(body, doc_rels=[("rIdLink", f"{R}/hyperlink", "https://example.com/page",
                                 "External")],
                settings=settings,
                parts={"word/_rels/settings.xml.rels": _rels([
                    ("rIdTpl", f"{R}/attachedTemplate", "http://EVIL.example/t.dotm",
                     "External")])})


def _docm_sample() -> bytes:
    base = docx('<w:p><w:r><w:t>Macro document</w:t></w:r></w:p>',
                main_ct="application/vnd.ms-word.document.macroEnabled.main+xml",
                doc_rels=[("rIdVba", "http://schemas.microsoft.com/office/2006/relationships/"
                           "vbaProject", "vbaProject.bin")],
                parts={"word/vbaProject.bin": b"\xd0\xcf\x11\xe0EVIL-VBA"},
                overrides={"/word/vbaProject.bin": "application/vnd.ms-office.vbaProject"})
    return base


def _xlsx_sample() -> bytes:
    sheets = [("Data", f"{R}/worksheet", "worksheets/sheet1.xml", _sheet(
                  '<row r="1"><c r="A1" t="inlineStr"><is><t>visible</t></is></c></row>')),
              ("Secret", f"{R}/worksheet", "worksheets/sheet2.xml", _sheet(
                  '<row r="1"><c r="A1" t="inlineStr"><is><t>HIDDEN-CELL</t></is></c></row>'))]
    data = xlsx(sheets)
    return _patch(data, "xl/workbook.xml", lambda x: x.replace(
        b'<sheet name="Secret"', b'<sheet name="Secret" state="hidden"'))


def _pptx_sample() -> bytes:
    base = minimal_pptx()
    with zipfile.ZipFile(io.BytesIO(base)) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    hidden = parts["ppt/slides/slide1.xml"].replace(b"SLIDE-TEXT-UNIFORM", b"HIDDEN-SLIDE")
    hidden = hidden.replace(b"<p:sld ", b'<p:sld show="0" ', 1)
    parts["ppt/slides/slide2.xml"] = hidden
    parts["ppt/presentation.xml"] = parts["ppt/presentation.xml"].replace(
        b"</p:sldIdLst>", b'<p:sldId id="257" r:id="rId3"/></p:sldIdLst>')
    parts["ppt/_rels/presentation.xml.rels"] = _rels([
        ("rId2", f"{R}/slide", "slides/slide1.xml"), ("rId3", f"{R}/slide", "slides/slide2.xml")
    ]).encode()
    parts["[Content_Types].xml"] = _types(CT_BASE, {
        "/ppt/presentation.xml": f"{PML}.presentation.main+xml",
        "/ppt/slides/slide1.xml": f"{PML}.slide+xml",
        "/ppt/slides/slide2.xml": f"{PML}.slide+xml"}).encode()
    return _zip(parts)


def _patch(data: bytes, name: str, change) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    parts[name] = change(parts[name])
    return _zip(parts)


def _odt_sample() -> bytes:
    """A hidden section, hidden-by-style text and a form with a control."""
    styles = ('<style:style style:name="Hid" style:family="text"><style:text-properties '
              'text:display="none"/></style:style>')
    body = ('<office:text><office:forms><form:form form:name="F"><form:text form:name="customer"'
            '/></form:form></office:forms><text:p>Visible paragraph <text:span text:style-name='
            '"Hid">HIDDEN-SPAN</text:span></text:p><text:section text:name="S" text:display='
            '"none"><text:p>HIDDEN-SECTION</text:p></text:section><text:p><draw:control '
            'draw:control="c1" svg:width="2cm" svg:height="1cm"/>after</text:p></office:text>')
    return odf(ODT, body, styles=styles)


def _odt_with_object() -> bytes:
    """A text document with an embedded spreadsheet object (a sub-document)."""
    from tests.engine.corpus_office import ODF_NS

    body = ('<office:text><text:p>Before<draw:frame draw:name="Obj" svg:width="4cm" '
            'svg:height="2cm"><draw:object xlink:href="./Object 1" xlink:type="simple" '
            'xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p></office:text>')
    inner = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS}>'
             '<office:body><office:spreadsheet><table:table table:name="T"><table:table-row>'
             '<table:table-cell office:value-type="string"><text:p>EMBEDDED-CELL</text:p>'
             '</table:table-cell></table:table-row></table:table><table:table table:name="H" '
             'table:style-name="ta2"><table:table-row><table:table-cell><text:p>EMBEDDED-'
             'HIDDEN</text:p></table:table-cell></table:table-row></table:table>'
             '</office:spreadsheet></office:body></office:document-content>').replace(
        "<office:body>", '<office:automatic-styles><style:style style:name="ta2" '
        'style:family="table"><style:table-properties table:display="false"/></style:style>'
        "</office:automatic-styles><office:body>")
    return odf(ODT, body, files={"Object 1/content.xml": inner},
               manifest_extra={"Object 1/": ODS, "Object 1/content.xml": "text/xml"})


def _ods_sample() -> bytes:
    styles = ('<style:style style:name="ta2" style:family="table"><style:table-properties '
              'table:display="false"/></style:style>')
    body = ('<office:spreadsheet><table:table table:name="Data"><table:table-row><table:table-'
            'cell office:value-type="string"><text:p>visible</text:p></table:table-cell>'
            '</table:table-row></table:table><table:table table:name="Secret" table:style-name='
            '"ta2"><table:table-row><table:table-cell office:value-type="string"><text:p>'
            'HIDDEN-CELL</text:p></table:table-cell></table:table-row></table:table>'
            '</office:spreadsheet>')
    return odf(ODS, body, styles=styles)


def _embedding_docx() -> bytes:
    """An Excel workbook with a macro sheet embedded as a package, and an OLE object."""
    def obj(shape: int, rid: str, prog: str) -> str:
        return (f'<w:p><w:r><w:object><v:shape id="_x0000_i{shape}" style="width:72pt;height:'
                f'36pt"><v:imagedata r:id="rIdImg" o:title=""/></v:shape><o:OLEObject Type='
                f'"Embed" ProgID="{prog}" ShapeID="_x0000_i{shape}" DrawAspect="Content" '
                f'ObjectID="_{shape}" r:id="{rid}"/></w:object></w:r></w:p>')

    workbook = _patch(_xlsx_sample(), "xl/worksheets/sheet1.xml", lambda x: x.replace(
        b"visible", b"EMBEDDED-CELL"))
    return docx(obj(1, "rIdPkg", "Excel.Sheet.12") + obj(2, "rIdOle", "Package"),
                doc_rels=[("rIdPkg", f"{R}/package", "embeddings/Book.xlsx"),
                          ("rIdOle", f"{R}/oleObject", "embeddings/oleObject1.bin")],
                parts={"word/embeddings/Book.xlsx": workbook,
                       "word/embeddings/oleObject1.bin": b"\xd0\xcf\x11\xe0OLE-PAYLOAD"},
                overrides={"/word/embeddings/Book.xlsx": "application/vnd.openxmlformats-"
                           "officedocument.spreadsheetml.sheet",
                           "/word/embeddings/oleObject1.bin": "application/vnd.openxmlformats-"
                           "officedocument.oleObject"})


def _embedding_xlsx() -> bytes:
    """A worksheet with an embedded Word package and an OLE object."""
    objects = ('<oleObjects><oleObject progId="Word.Document.12" shapeId="1025" r:id="rIdPkg"/>'
               '<oleObject progId="Package" shapeId="1026" r:id="rIdOle"/></oleObjects>')
    sheet = _sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>cells</t></is></c></row>',
                   objects)
    inner = docx('<w:p><w:r><w:t>EMBEDDED-WORDS</w:t></w:r><w:r><w:rPr><w:vanish/></w:rPr>'
                 '<w:t>EMBEDDED-HIDDEN</w:t></w:r></w:p>')
    return xlsx([("Data", f"{R}/worksheet", "worksheets/sheet1.xml", sheet)], parts={
        "xl/worksheets/_rels/sheet1.xml.rels": _rels([
            ("rIdPkg", f"{R}/package", "../embeddings/Doc.docx"),
            ("rIdOle", f"{R}/oleObject", "../embeddings/oleObject1.bin")]),
        "xl/embeddings/Doc.docx": inner,
        "xl/embeddings/oleObject1.bin": b"\xd0\xcf\x11\xe0OLE-PAYLOAD"}, overrides={
        "/xl/embeddings/Doc.docx": "application/vnd.openxmlformats-officedocument."
                                   "wordprocessingml.document",
        "/xl/embeddings/oleObject1.bin": "application/vnd.openxmlformats-officedocument."
                                         "oleObject"})


def _embedding_pptx() -> bytes:
    frame = ('<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="5" name="Object"/>'
             '<p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="0"/>'
             '<a:ext cx="914400" cy="914400"/></p:xfrm><a:graphic><a:graphicData uri="http://'
             'schemas.openxmlformats.org/presentationml/2006/ole"><p:oleObj progId="Package" '
             'r:id="rIdOle"><p:embed/></p:oleObj></a:graphicData></a:graphic></p:graphicFrame>')
    with zipfile.ZipFile(io.BytesIO(minimal_pptx())) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    parts["ppt/slides/slide1.xml"] = parts["ppt/slides/slide1.xml"].replace(
        b"</p:spTree>", frame.encode() + b"</p:spTree>")
    parts["ppt/slides/_rels/slide1.xml.rels"] = _rels([
        ("rIdOle", f"{R}/oleObject", "../embeddings/oleObject1.bin")]).encode()
    parts["ppt/embeddings/oleObject1.bin"] = b"\xd0\xcf\x11\xe0OLE-PAYLOAD"
    parts["[Content_Types].xml"] = _types(CT_BASE, {
        "/ppt/presentation.xml": f"{PML}.presentation.main+xml",
        "/ppt/slides/slide1.xml": f"{PML}.slide+xml",
        "/ppt/embeddings/oleObject1.bin": "application/vnd.openxmlformats-officedocument."
                                          "oleObject"}).encode()
    return _zip(parts)


def _png_with_gps() -> bytes:
    buffer = io.BytesIO()
    picture().save(buffer, "PNG", exif=_gps_exif())
    return buffer.getvalue()


def _epub_sample() -> bytes:
    chapter = xhtml('<h1>One</h1><p>Read <a href="https://example.com/more">more</a>.</p>'
                    '<script>alert("EVIL")</script>')
    return epub_bytes({"ch1.xhtml": chapter}, [("ch1", "ch1.xhtml", "application/xhtml+xml",
                                                 "scripted")], ["ch1"],
                      metadata='<dc:creator>Secret Author</dc:creator><meta property='
                               '"dcterms:modified">2024-05-01T10:00:00Z</meta>')


HTML = (b"<!DOCTYPE html><html><head><title>t</title><meta name='author' content='Secret'>"
        b"</head><body><p>Visible</p><script>alert('EVIL')</script>"
        b"<a href='https://example.com/x'>web link</a>"
        b"<form><input name='q'></form></body></html>")
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       b'width="20" height="20"><title>SECRET-TITLE</title><script>alert(1)</script><a xlink:href="https://example.com/">'
       b'<rect width="10" height="10"/></a></svg>')


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("policy-samples")
    out: dict[str, Path] = {}
    pdf = _pdf_sample()
    pdf.save(folder / "sample.pdf", fix_metadata_version=False)
    out["pdf"] = folder / "sample.pdf"
    two = clean_pdf(pages=2, with_image=False)
    two.save(folder / "two.pdf")
    out["two_pages"] = folder / "two.pdf"
    for name, data in (("docx", _docx_sample()), ("docm", _docm_sample()),
                       ("reviewed.docx", reviewed_docx()), ("xlsx", _xlsx_sample()),
                       ("pptx", _pptx_sample()), ("html", HTML), ("svg", SVG),
                       ("odt", _odt_sample()), ("ods", _ods_sample()),
                       ("reviewed.odt", reviewed_odt()), ("epub", _epub_sample()),
                       ("embedding.docx", _embedding_docx()),
                       ("embedding.xlsx", _embedding_xlsx()),
                       ("embedding.pptx", _embedding_pptx()),
                       ("embedding.odt", _odt_with_object()),
                       ("photo.docx", docx('<w:p><w:r><w:t>Photo</w:t></w:r></w:p>', parts={
                           "word/media/image1.png": _png_with_gps()}))):
        path = folder / (name if "." in name else f"sample.{name}")
        path.write_bytes(data)
        out[name] = path
    out["jpeg"] = hostile_jpeg(folder / "photo.jpg")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("photo.jpg", out["jpeg"].read_bytes())
        zf.writestr("macro.docm", _docm_sample())
    out["zip"] = folder / "bundle.zip"
    out["zip"].write_bytes(buffer.getvalue())
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
    assert "which this policy refuses" in (result.reason or "")


def parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def xml(data: bytes) -> etree._Element:
    return etree.fromstring(data)


def found(result: Result, kind: str) -> set[str]:
    return {f.action for f in result.findings if f.kind == kind}


# --- refuse: every rule, every family that has such content -----------------------------------

@pytest.mark.parametrize(("sample", "rule"), [
    ("pdf", Rule.JAVASCRIPT), ("pdf", Rule.EMBEDDED_FILES), ("pdf", Rule.HYPERLINKS),
    ("pdf", Rule.REVIEW_DATA), ("pdf", Rule.DOCUMENT_METADATA), ("pdf", Rule.FORM_FIELDS),
    ("docm", Rule.MACROS), ("docx", Rule.HYPERLINKS), ("docx", Rule.EXTERNAL_REFERENCES),
    ("docx", Rule.DOCUMENT_METADATA), ("docx", Rule.HIDDEN_CONTENT), ("docx", Rule.FORM_FIELDS),
    ("reviewed.docx", Rule.REVIEW_DATA), ("xlsx", Rule.HIDDEN_CONTENT),
    ("pptx", Rule.HIDDEN_CONTENT), ("jpeg", Rule.IMAGE_METADATA),
    ("html", Rule.JAVASCRIPT), ("html", Rule.HYPERLINKS), ("html", Rule.FORM_FIELDS),
    ("html", Rule.DOCUMENT_METADATA), ("svg", Rule.JAVASCRIPT), ("svg", Rule.HYPERLINKS),
    ("svg", Rule.DOCUMENT_METADATA),
    ("zip", Rule.MACROS), ("zip", Rule.IMAGE_METADATA),
    ("odt", Rule.HIDDEN_CONTENT), ("odt", Rule.FORM_FIELDS), ("odt", Rule.DOCUMENT_METADATA),
    ("ods", Rule.HIDDEN_CONTENT), ("reviewed.odt", Rule.REVIEW_DATA),
    ("epub", Rule.JAVASCRIPT), ("epub", Rule.HYPERLINKS), ("epub", Rule.DOCUMENT_METADATA),
    ("photo.docx", Rule.IMAGE_METADATA), ("embedding.docx", Rule.EMBEDDED_FILES),
    ("embedding.xlsx", Rule.EMBEDDED_FILES), ("embedding.odt", Rule.EMBEDDED_FILES),
])
def test_refuse(samples, tmp_path, sample, rule):
    refused(run(samples[sample], tmp_path, **{rule.value: "refuse"}), rule)


def test_refusal_names_the_content_and_where(samples, tmp_path):
    result = run(samples["docm"], tmp_path, macros="refuse")
    assert result.reason == ("The file contains macros (word/vbaProject.bin), which this "
                             "policy refuses."), result.reason


def test_nothing_refused_without_such_content(samples, tmp_path):
    # the photo has no macros, forms or hidden content: refusing those changes nothing
    assert run(samples["jpeg"], tmp_path, macros="refuse", formFields="refuse",
               hiddenContent="refuse").status == "ok"


# --- PDF ---------------------------------------------------------------------------------------

def test_pdf_remove_and_keep(samples, tmp_path):
    removed = ok(run(samples["pdf"], tmp_path, hyperlinks="remove", formFields="remove"))
    with pikepdf.open(removed) as pdf:
        assert ("/OpenAction" not in pdf.Root and "/Names" not in pdf.Root) or \
            "/EmbeddedFiles" not in pdf.Root.Names
        assert "/Info" not in pdf.trailer and "/Metadata" not in pdf.Root
        assert "/AcroForm" not in pdf.Root
        annots = list(pdf.pages[0].get("/Annots", []))
        assert all("/A" not in a for a in annots)  # the link went
        assert all(str(a.get("/Subtype")) != "/Widget" for a in annots)
        assert all("/T" not in a for a in annots)  # the comment's author went
    kept = ok(run(samples["pdf"], tmp_path, embeddedFiles="keep", documentMetadata="keep",
                  reviewData="keep", hyperlinks="keep", formFields="keep"))
    with pikepdf.open(kept) as pdf:
        assert "/OpenAction" not in pdf.Root  # javascript is never kept
        names = pdf.Root.Names.EmbeddedFiles.Names
        assert bytes(names[1].EF.F.read_bytes()).startswith(b"ATTACHED-PAYLOAD")
        assert str(pdf.trailer.Info.Author) == "Secret Author"
        assert b"SECRET-XMP" in pdf.Root.Metadata.read_bytes()
        assert [str(f.T) for f in pdf.Root.AcroForm.Fields] == ["customer"]
        annots = list(pdf.pages[0].Annots)
        assert any(str(a.get("/T", "")) == "Alice Reviewer" for a in annots)
        assert any("/A" in a and str(a.A.URI) == "https://example.com/doc" for a in annots)


def test_pdf_anonymise(samples, tmp_path):
    out = ok(run(samples["pdf"], tmp_path, reviewData="anonymise"))
    with pikepdf.open(out) as pdf:
        authors = {str(a.T) for a in pdf.pages[0].Annots
                   if "/T" in a and str(a.Subtype) != "/Widget"}
    assert authors == {"Author 1"}


# --- OOXML -------------------------------------------------------------------------------------

def test_docx_hidden_text(samples, tmp_path):
    kept = parts(ok(run(samples["docx"], tmp_path)))  # basic: hidden text stays
    assert b"HIDDEN-WORDS" in kept["word/document.xml"]
    result = run(samples["docx"], tmp_path, hiddenContent="remove")
    removed = parts(ok(result))
    body = xml(removed["word/document.xml"])
    assert "HIDDEN-WORDS" not in "".join(body.itertext())
    assert "Visible words." in "".join(body.itertext())
    assert found(result, "hidden_text") == {"removed"}


def test_docx_embedded_objects(samples, tmp_path):
    def objects(out: dict[str, bytes]) -> list[str]:
        return [e.get("ProgID") for e in xml(out["word/document.xml"]).iter("{*}OLEObject")]

    removed = parts(ok(run(samples["embedding.docx"], tmp_path)))  # basic: previews only
    assert not any("embeddings/" in n for n in removed) and objects(removed) == []
    # "keep" is "sanitize": nothing embedded is kept without going through the engine (#19)
    for action in ("keep", "sanitize"):
        result = run(samples["embedding.docx"], tmp_path, embeddedFiles=action,
                     hiddenContent="remove")
        cleaned = parts(ok(result))
        assert "word/embeddings/oleObject1.bin" not in cleaned  # an OLE object can't be cleaned
        assert objects(cleaned) == ["Excel.Sheet.12"]
        inner = parts_of(cleaned["word/embeddings/Book.xlsx"])
        assert b"EMBEDDED-CELL" in b"".join(inner.values())
        assert b"HIDDEN-CELL" not in b"".join(inner.values())  # cleaned under the same policy
        rels = xml(cleaned["word/_rels/document.xml.rels"])
        assert {r.get("Target") for r in rels if r.get("Type").endswith("/package")} == {
            "embeddings/Book.xlsx"}
        assert any(f.kind == "ole_object" and f.action == "removed" for f in result.findings)


def test_xlsx_embedded_objects(samples, tmp_path):
    def objects(out: dict[str, bytes]) -> list[str]:
        sheet = xml(out["xl/worksheets/sheet1.xml"])
        return [e.get("progId") for e in sheet.iter("{*}oleObject")]

    removed = parts(ok(run(samples["embedding.xlsx"], tmp_path)))
    assert not any("embeddings/" in n for n in removed) and objects(removed) == []
    for action in ("keep", "sanitize"):
        cleaned = parts(ok(run(samples["embedding.xlsx"], tmp_path, embeddedFiles=action,
                               hiddenContent="remove")))
        assert "xl/embeddings/oleObject1.bin" not in cleaned and objects(cleaned) == [
            "Word.Document.12"]
        inner = parts_of(cleaned["xl/embeddings/Doc.docx"])
        assert b"EMBEDDED-WORDS" in inner["word/document.xml"]
        assert b"EMBEDDED-HIDDEN" not in inner["word/document.xml"]


def test_pptx_embedded_object(samples, tmp_path):
    def objects(out: dict[str, bytes]) -> list[str]:
        return [e.get("progId") for e in xml(out["ppt/slides/slide1.xml"]).iter("{*}oleObj")]

    removed = parts(ok(run(samples["embedding.pptx"], tmp_path)))
    assert objects(removed) == [] and "ppt/embeddings/oleObject1.bin" not in removed
    kept = parts(ok(run(samples["embedding.pptx"], tmp_path, embeddedFiles="keep")))
    assert objects(kept) == [] and "ppt/embeddings/oleObject1.bin" not in kept  # OLE: removed
    refused(run(samples["embedding.pptx"], tmp_path, embeddedFiles="refuse"),
            Rule.EMBEDDED_FILES)


def parts_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def test_docx_form_fields(samples, tmp_path):
    kept = parts(ok(run(samples["docx"], tmp_path)))  # basic keeps the form field
    assert list(xml(kept["word/document.xml"]).iter(f"{{{W}}}ffData"))
    removed = parts(ok(run(samples["docx"], tmp_path, formFields="remove")))
    body = xml(removed["word/document.xml"])
    assert not list(body.iter(f"{{{W}}}ffData")) and not list(body.iter(f"{{{W}}}fldChar"))
    assert "FIELD-VALUE" in "".join(body.itertext())  # the value stays as plain text


def test_docx_metadata_and_links(samples, tmp_path):
    kept = parts(ok(run(samples["docx"], tmp_path, documentMetadata="keep")))
    core = xml(kept["docProps/core.xml"])
    assert [e.text for e in core.iter("{*}creator")] == ["Secret Author"]
    assert b"Secret Corp" in kept["docProps/app.xml"]
    removed = parts(ok(run(samples["docx"], tmp_path, hyperlinks="remove")))
    assert b"Secret Author" not in removed["docProps/core.xml"]
    assert b"example.com/page" not in removed["word/_rels/document.xml.rels"]
    linked = parts(ok(run(samples["docx"], tmp_path)))  # basic keeps web links
    assert b"https://example.com/page" in linked["word/_rels/document.xml.rels"]
    assert b"EVIL.example" not in b"".join(linked.values())  # the remote template went


def test_docx_external_references(samples, tmp_path):
    removed = parts(ok(run(samples["docx"], tmp_path)))
    assert b"EVIL.example" not in b"".join(removed.values())
    assert not list(xml(removed["word/settings.xml"]).iter(f"{{{W}}}attachedTemplate"))
    # a remote template's macros would run: it goes under "keep" too (#19)
    result = run(samples["docx"], tmp_path, externalReferences="keep")
    kept = parts(ok(result))
    assert b"EVIL.example" not in b"".join(kept.values())
    assert not list(xml(kept["word/settings.xml"]).iter(f"{{{W}}}attachedTemplate"))
    assert any(f.kind == "remote_template" and f.action == "removed" and
               "under every policy" in f.detail for f in result.findings)


def test_docm_macros_removed(samples, tmp_path):
    out = parts(ok(run(samples["docm"], tmp_path)))
    assert not any("vbaproject" in n.lower() for n in out)


def test_docx_review_data(samples, tmp_path):
    kept = parts(ok(run(samples["reviewed.docx"], tmp_path, reviewData="keep")))
    assert "word/comments.xml" in kept
    text = kept["word/document.xml"] + kept["word/comments.xml"]
    assert b"Alice Reviewer" in text and b"INSERTED-ALPHA" in text
    assert b"<w:ins " in kept["word/document.xml"]  # the tracked change is still one
    removed = parts(ok(run(samples["reviewed.docx"], tmp_path)))
    assert "word/comments.xml" not in removed
    assert b"Alice Reviewer" not in b"".join(removed.values())
    anonymised = parts(ok(run(samples["reviewed.docx"], tmp_path, reviewData="anonymise")))
    assert b"Alice Reviewer" not in b"".join(anonymised.values())
    assert b"Author 1" in b"".join(anonymised.values())


def test_xlsx_hidden_sheet(samples, tmp_path):
    kept = parts(ok(run(samples["xlsx"], tmp_path)))
    assert b"HIDDEN-CELL" in b"".join(kept.values())
    result = run(samples["xlsx"], tmp_path, hiddenContent="remove")
    removed = parts(ok(result))
    assert b"HIDDEN-CELL" not in b"".join(removed.values())
    names = [s.get("name") for s in xml(removed["xl/workbook.xml"]).iter("{*}sheet")]
    assert names == ["Data"]
    assert found(result, "hidden_sheet") == {"removed"}


def test_pptx_hidden_slide(samples, tmp_path):
    kept = parts(ok(run(samples["pptx"], tmp_path)))
    assert b"HIDDEN-SLIDE" in b"".join(kept.values())
    removed = parts(ok(run(samples["pptx"], tmp_path, hiddenContent="remove")))
    assert b"HIDDEN-SLIDE" not in b"".join(removed.values())
    ids = list(xml(removed["ppt/presentation.xml"]).iter("{*}sldId"))
    assert len(ids) == 1
    rels = xml(removed["ppt/_rels/presentation.xml.rels"])
    targets = {r.get("Id"): r.get("Target") for r in rels}
    rid = ids[0].get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")
    assert targets[rid].endswith("slide1.xml")


# --- OpenDocument -----------------------------------------------------------------------------

def test_odf_hidden_forms_metadata(samples, tmp_path):
    kept = parts(ok(run(samples["odt"], tmp_path, documentMetadata="keep")))
    content = kept["content.xml"]
    assert b"HIDDEN-SPAN" in content and b"HIDDEN-SECTION" in content  # basic keeps them
    assert b"form:form" in content and b"draw:control" in content
    assert [e.text for e in xml(kept["meta.xml"]).iter("{*}creator")] == ["Secret Author"]
    result = run(samples["odt"], tmp_path, hiddenContent="remove", formFields="remove")
    removed = parts(ok(result))
    text = "".join(xml(removed["content.xml"]).itertext())
    assert "HIDDEN-SPAN" not in text and "HIDDEN-SECTION" not in text
    assert "Visible paragraph" in text and "after" in text
    root = xml(removed["content.xml"])
    assert not list(root.iter("{*}form")) and not list(root.iter("{*}control"))
    assert b"Secret Author" not in removed["meta.xml"]
    sheet = parts(ok(run(samples["ods"], tmp_path, hiddenContent="remove")))
    names = [t.get("{urn:oasis:names:tc:opendocument:xmlns:table:1.0}name")
             for t in xml(sheet["content.xml"]).iter("{*}table")]
    assert names == ["Data"] and b"HIDDEN-CELL" not in sheet["content.xml"]


def test_odf_embedded_document(samples, tmp_path):
    removed = parts(ok(run(samples["embedding.odt"], tmp_path)))
    assert not any(n.startswith("Object 1") for n in removed)
    assert not list(xml(removed["content.xml"]).iter("{*}object"))
    for action in ("keep", "sanitize"):
        kept = parts(ok(run(samples["embedding.odt"], tmp_path, embeddedFiles=action,
                            hiddenContent="remove")))
        inner = kept["Object 1/content.xml"]
        assert b"EMBEDDED-CELL" in inner and b"EMBEDDED-HIDDEN" not in inner  # cleaned inside
        assert list(xml(kept["content.xml"]).iter("{*}object"))
        paths = {e.get("{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}full-path")
                 for e in xml(kept["META-INF/manifest.xml"])}
        assert {"Object 1/", "Object 1/content.xml"} <= paths


def test_odf_review_data_kept(samples, tmp_path):
    kept = parts(ok(run(samples["reviewed.odt"], tmp_path, reviewData="keep")))
    content = kept["content.xml"]
    assert b"Alice Reviewer" in content and b"ODT-COMMENT-AMBER" in content
    assert b"ODT-DELETED-YANKEE" in content  # the deletion record stays
    removed = parts(ok(run(samples["reviewed.odt"], tmp_path)))
    assert b"Alice Reviewer" not in removed["content.xml"]


# --- images ------------------------------------------------------------------------------------

def test_image_metadata(samples, tmp_path):
    removed = ok(run(samples["jpeg"], tmp_path))
    with Image.open(removed) as image:
        assert not image.getexif() and "xmp" not in image.info and "comment" not in image.info
    result = run(samples["jpeg"], tmp_path, imageMetadata="keep")
    kept = ok(result)
    with Image.open(kept) as image:
        exif = image.getexif()
        assert exif.get(0x010F) == "EVIL-camera-maker"
        assert exif.get_ifd(0x8825)  # the GPS position stays
        assert exif.get(0x0112) in (None, 1)  # the pixels were turned upright
        assert b"EVIL-xmp" in image.info.get("xmp", b"")
        assert image.info.get("comment") == b"EVIL-comment"
    assert found(result, "gps_location") == {"kept"}


def test_pictures_inside_documents(samples, tmp_path):
    def gps(out: dict[str, bytes]) -> dict:
        with Image.open(io.BytesIO(out["word/media/image1.png"])) as image:
            return dict(image.getexif().get_ifd(0x8825))

    with Image.open(io.BytesIO(parts(samples["photo.docx"])["word/media/image1.png"])) as image:
        assert image.getexif().get_ifd(0x8825)  # the sample has a position to lose
    assert not gps(parts(ok(run(samples["photo.docx"], tmp_path))))
    result = run(samples["photo.docx"], tmp_path, imageMetadata="keep")
    assert gps(parts(ok(result)))
    assert found(result, "gps_location") == {"kept"}


# --- markup ------------------------------------------------------------------------------------

def test_html_and_svg_links(samples, tmp_path):
    kept = ok(run(samples["html"], tmp_path)).read_bytes()
    assert b"https://example.com/x" in kept and b"alert" not in kept
    removed = ok(run(samples["html"], tmp_path, hyperlinks="remove")).read_bytes()
    assert b"https://example.com/x" not in removed and b"web link" in removed
    svg_kept = ok(run(samples["svg"], tmp_path)).read_bytes()
    assert b"https://example.com/" in svg_kept and b"<script" not in svg_kept
    svg_removed = ok(run(samples["svg"], tmp_path, hyperlinks="remove")).read_bytes()
    assert b"https://example.com/" not in svg_removed
    assert b"SECRET-TITLE" not in svg_kept
    titled = ok(run(samples["svg"], tmp_path, documentMetadata="keep")).read_bytes()
    assert [t.text for t in xml(titled).iter("{*}title")] == ["SECRET-TITLE"]


def test_epub_metadata_and_links(samples, tmp_path):
    def opf(out: dict[str, bytes]) -> etree._Element:
        return xml(next(v for k, v in out.items() if k.endswith(".opf")))

    basic = parts(ok(run(samples["epub"], tmp_path)))
    assert not [e.text for e in opf(basic).iter("{*}creator")]
    chapter = next(v for k, v in basic.items() if k.endswith("ch1.xhtml"))
    assert b"https://example.com/more" in chapter and b"<script" not in chapter
    kept = parts(ok(run(samples["epub"], tmp_path, documentMetadata="keep",
                        hyperlinks="remove")))
    assert [e.text for e in opf(kept).iter("{*}creator")] == ["Secret Author"]
    assert "2024-05-01T10:00:00Z" in [e.text for e in opf(kept).iter("{*}meta")]
    chapter = next(v for k, v in kept.items() if k.endswith("ch1.xhtml"))
    assert b"https://example.com/more" not in chapter and b"more" in chapter


# --- archives: members under the same policy ---------------------------------------------------

def test_archive_members_follow_the_policy(samples, tmp_path):
    out = ok(run(samples["zip"], tmp_path, imageMetadata="keep"))
    with zipfile.ZipFile(out) as zf:
        photo = next(n for n in zf.namelist() if n.endswith(".jpg"))
        with Image.open(io.BytesIO(zf.read(photo))) as image:
            assert image.getexif().get(0x010F) == "EVIL-camera-maker"
        docx_name = next(n for n in zf.namelist() if n.endswith(".docx"))
        with zipfile.ZipFile(io.BytesIO(zf.read(docx_name))) as inner:
            assert not any("vbaproject" in n.lower() for n in inner.namelist())


# --- types, pages, output ----------------------------------------------------------------------

def test_allowed_types(samples, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    only_pdf = Policy(allowed_types=frozenset({"pdf"}))
    result = sanitize_file(samples["docx"], out, policy=only_pdf)
    assert result.status == "rejected" and result.code == RejectionCode.TYPE_NOT_ALLOWED
    assert "docx" in (result.reason or "")
    assert sanitize_file(samples["jpeg"], out, policy=Policy(
        allowed_types=frozenset({"image"}))).status == "ok"  # a family name
    assert sanitize_file(samples["two_pages"], out, policy=only_pdf).status == "ok"


def test_max_pages_and_output(samples, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    result = sanitize_file(samples["two_pages"], out, policy=Policy(output="pdf", max_pages=1))
    assert result.status == "rejected" and result.code == RejectionCode.TOO_COMPLEX
    assert "maxPages" in (result.reason or "") and "1" in (result.reason or "")
    rebuilt = sanitize_file(samples["two_pages"], out, policy=Policy(output="pdf"))
    assert rebuilt.status == "ok" and rebuilt.pages_rebuilt == [1, 2]
    same = sanitize_file(samples["two_pages"], out)
    assert same.status == "ok" and same.pages_rebuilt == []
    # mode "advanced" upgrades a policy whose output is "same"
    upgraded = sanitize_file(samples["two_pages"], out, mode="advanced",
                             policy=Policy().with_rules(hyperlinks="remove"))
    assert upgraded.pages_rebuilt == [1, 2]


def test_pdf_attachments_sanitized_inside(samples, tmp_path):
    """embeddedFiles "sanitize": each attachment goes through its own family and comes back
    under its new name; one that cannot be made safe is removed."""
    pdf = clean_pdf(pages=1, with_image=False)
    photo = pikepdf.Stream(pdf, samples["jpeg"].read_bytes())
    photo.Type = Name.EmbeddedFile
    program = pikepdf.Stream(pdf, b"MZ\x90\x00" + b"\x00" * 60 + b"This program cannot be run")
    program.Type = Name.EmbeddedFile
    specs = [pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String(name), UF=String(name),
                                          EF=Dictionary(F=stream)))
             for name, stream in (("photo.jpg", photo), ("tool.exe", program))]
    pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=Array([
        String("photo.jpg"), specs[0], String("tool.exe"), specs[1]])))
    source = tmp_path / "attachments.pdf"
    pdf.save(source)
    result = run(source, tmp_path, embeddedFiles="sanitize")
    with pikepdf.open(ok(result)) as out:
        pairs = list(out.Root.Names.EmbeddedFiles.Names)
        assert [str(p) for p in pairs[::2]] == ["photo.jpg"]  # the program was removed
        data = pairs[1].EF.F.read_bytes()
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "JPEG" and not image.getexif()  # cleaned: no EXIF left
    assert b"EVIL-trailer" not in data
    assert any(f.kind == "gps_location" and f.location.startswith("attachment")
               for f in result.findings)
    assert {f.action for f in result.findings if f.kind == "embedded_file"} >= {
        "converted", "removed"}
