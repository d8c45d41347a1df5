"""Fidelity of legacy conversions (issue 22).

Embedded objects: an .xls holding an MS Graph chart keeps the chart as the picture it showed
(LibreOffice's .xlsx export leaves embedded objects out, so the sheet used to lose the chart
and the page it printed on), reported by name; a LibreOffice chart stays an .xlsx chart; a
clean workbook reports no XLM macro. The MS Graph object is made here: an OLE storage with MS
Graph's class id and CompObj (its Workbook stream a bare BIFF8 chart substream) plus a preview
picture, embedded in an .ods as a foreign object, which LibreOffice writes into the .xls as an
MBD storage like Excel's.

Headers and footers: fields showing document properties (TITLE, AUTHOR...) keep the text they
showed once the properties are removed (LibreOffice updates them on opening: the header of
the cleaned document used to read "Title: " instead of "Title: Quarterly")."""

from __future__ import annotations

import io
import struct
import uuid
import zipfile
from pathlib import Path

import olefile
import pytest
from oletools import oleobj
from PIL import Image, ImageDraw

from sanitas.engine import legacy_office, sanitize_file
from tests.engine import corpus_office as corpus
from tests.engine.cfb_office import write_cfb
from tests.engine.fidelity import min_page_ssim, pdf_text, render_pdf
from tests.engine.render_office import convert_many

pytestmark = pytest.mark.slow  # about twelve LibreOffice runs

MSGRAPH_CLSID = "00020803-0000-0000-c000-000000000046"
BARS = [3, 9, 5, 12]


def _lpstr(text: bytes) -> bytes:
    return struct.pack("<I", len(text) + 1) + text + b"\0"


def compobj(clsid: str, user_type: bytes, prog_id: bytes) -> bytes:
    """A CompObj stream (MS-OLEDS 2.3.8) the way Office writes it."""
    return (b"\x01\x00\xfe\xff\x03\x0a\x00\x00\xff\xff\xff\xff" + uuid.UUID(clsid).bytes_le
            + _lpstr(user_type) + _lpstr(b"Biff8") + _lpstr(prog_id)
            + struct.pack("<I", 0x71B239F4) + b"\0" * 12)


def msgraph_object() -> bytes:
    """An embedded MS Graph chart's storage (the root carries MS Graph's class id)."""
    bof = struct.pack("<HH", 0x0809, 16) + struct.pack("<HHHHII", 0x0600, 0x0020, 0, 0, 0, 0)
    eof = struct.pack("<HH", 0x000A, 0)
    cfb = bytearray(write_cfb({
        "\x01CompObj": compobj(MSGRAPH_CLSID, b"Microsoft Graph Chart", b"MSGraph.Chart.8"),
        "\x01Ole": struct.pack("<IIII", 0x02000001, 0, 0, 0) + b"\0" * 4,
        "Workbook": bof + eof}))
    first_dir = struct.unpack_from("<I", cfb, 0x30)[0]
    root_clsid = 512 + first_dir * 512 + 0x50  # the root entry's CLSID field
    cfb[root_clsid:root_clsid + 16] = uuid.UUID(MSGRAPH_CLSID).bytes_le
    return bytes(cfb)


def chart_preview() -> bytes:
    im = Image.new("RGB", (480, 320), "white")
    draw = ImageDraw.Draw(im)
    for i, v in enumerate(BARS):
        draw.rectangle([60 + i * 100, 300 - v * 22, 120 + i * 100, 300], fill=(40, 90, 200))
    draw.line([50, 300, 460, 300], fill="black", width=3)
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


def graph_ods() -> bytes:
    """One sheet: a line of text, and below it (reaching onto a second printed page) an MS
    Graph chart named "Sales"."""
    frame = ('<draw:frame draw:name="Sales" svg:width="12cm" svg:height="9cm" svg:x="1cm" '
             'svg:y="22cm" draw:z-index="0"><draw:object-ole xlink:href="./Object 1" '
             'xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/><draw:image '
             'xlink:href="./ObjectReplacements/Object 1" xlink:type="simple" xlink:show="embed" '
             'xlink:actuate="onLoad"/></draw:frame>')
    body = ('<office:spreadsheet><table:table table:name="Data"><table:shapes>' + frame +
            '</table:shapes><table:table-row><table:table-cell office:value-type="string">'
            '<text:p>Quarterly sales, chart below</text:p></table:table-cell></table:table-row>'
            '</table:table></office:spreadsheet>')
    files = {"Object 1": msgraph_object(), "ObjectReplacements/Object 1": chart_preview()}
    return corpus.odf(corpus.ODS, body, files=files, manifest_extra={
        "Object 1": "application/vnd.sun.star.oleobject",
        "ObjectReplacements/Object 1": "image/png"})


def graph_odp() -> bytes:
    """One slide: a title and the same MS Graph chart (PowerPoint keeps it as a compressed
    ExOleObjStg record inside its "PowerPoint Document" stream)."""
    frame = ('<draw:frame draw:name="Sales" svg:width="12cm" svg:height="8cm" svg:x="1cm" '
             'svg:y="4cm"><draw:object-ole xlink:href="./Object 1" xlink:type="simple" '
             'xlink:show="embed" xlink:actuate="onLoad"/><draw:image xlink:href="./'
             'ObjectReplacements/Object 1" xlink:type="simple" xlink:show="embed" '
             'xlink:actuate="onLoad"/></draw:frame>')
    body = ('<office:presentation><draw:page draw:name="Slide1"><draw:frame svg:width="20cm" '
            'svg:height="2cm" svg:x="2cm" svg:y="1cm"><draw:text-box><text:p>Quarterly sales'
            '</text:p></draw:text-box></draw:frame>' + frame + '</draw:page></office:presentation>')
    files = {"Object 1": msgraph_object(), "ObjectReplacements/Object 1": chart_preview()}
    return corpus.odf(corpus.ODP, body, files=files, manifest_extra={
        "Object 1": "application/vnd.sun.star.oleobject",
        "ObjectReplacements/Object 1": "image/png"})


def damage_ppt_object(ppt: bytes) -> bytes:
    """The same presentation with its compressed embedded object's zlib data overwritten."""
    with olefile.OleFileIO(ppt) as ole:
        streams = {"/".join(e): ole.openstream(e).read() for e in ole.listdir()}
    doc = bytearray(streams["PowerPoint Document"])
    at = doc.find(b"\x10\x00\x11\x10")  # ExOleObjStg, compressed (recInstance 1)
    assert at > 0
    doc[at + 8 + 4 + 2 + 16:at + 8 + 4 + 2 + 80] = b"\xff" * 64
    streams["PowerPoint Document"] = bytes(doc)
    return write_cfb(streams)


CHART_NS = ('xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
            'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
            f'xmlns:r="{corpus.R}"')


def chart_xlsx() -> bytes:
    """A workbook with a DrawingML bar chart of its cells (LibreOffice writes it into .xls as
    native BIFF chart records, not as an OLE object)."""
    pts = "".join(f'<c:pt idx="{i}"><c:v>{v}</c:v></c:pt>' for i, v in enumerate(BARS))
    cats = "".join(f'<c:pt idx="{i}"><c:v>Q{i + 1}</c:v></c:pt>' for i in range(len(BARS)))
    chart = (f'<?xml version="1.0" encoding="UTF-8"?><c:chartSpace {CHART_NS}><c:chart>'
             '<c:plotArea><c:barChart><c:barDir val="col"/><c:grouping val="clustered"/>'
             '<c:ser><c:idx val="0"/><c:order val="0"/><c:cat><c:strRef><c:f>Data!$A$1:$A$4'
             f'</c:f><c:strCache><c:ptCount val="4"/>{cats}</c:strCache></c:strRef></c:cat>'
             '<c:val><c:numRef><c:f>Data!$B$1:$B$4</c:f><c:numCache><c:ptCount val="4"/>'
             f'{pts}</c:numCache></c:numRef></c:val></c:ser><c:axId val="1"/><c:axId val="2"/>'
             '</c:barChart><c:catAx><c:axId val="1"/><c:scaling><c:orientation val="minMax"/>'
             '</c:scaling><c:axPos val="b"/><c:crossAx val="2"/></c:catAx><c:valAx><c:axId '
             'val="2"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:axPos val="l"/>'
             '<c:crossAx val="1"/></c:valAx></c:plotArea></c:chart></c:chartSpace>')
    xdr = ('xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" '
           f'{CHART_NS}')
    drawing = (f'<?xml version="1.0" encoding="UTF-8"?><xdr:wsDr {xdr}><xdr:twoCellAnchor>'
               '<xdr:from><xdr:col>3</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>1</xdr:row>'
               '<xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>10</xdr:col><xdr:colOff>0'
               '</xdr:colOff><xdr:row>18</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>'
               '<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Sales"/>'
               '<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/>'
               '<a:ext cx="0" cy="0"/></xdr:xfrm><a:graphic><a:graphicData uri="http://schemas.'
               'openxmlformats.org/drawingml/2006/chart"><c:chart r:id="rId1"/></a:graphicData>'
               '</a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>')
    rows = "".join(f'<row r="{i + 1}"><c r="A{i + 1}" t="inlineStr"><is><t>Q{i + 1}</t></is></c>'
                   f'<c r="B{i + 1}"><v>{v}</v></c></row>' for i, v in enumerate(BARS))
    dml = "application/vnd.openxmlformats-officedocument.drawingml"
    r = corpus.R
    return corpus.xlsx(
        [("Data", f"{r}/worksheet", "worksheets/sheet1.xml",
          corpus._sheet(rows, '<drawing r:id="rId1"/>'))],
        parts={"xl/worksheets/_rels/sheet1.xml.rels":
               corpus._rels([("rId1", f"{r}/drawing", "../drawings/drawing1.xml")]),
               "xl/drawings/drawing1.xml": drawing,
               "xl/drawings/_rels/drawing1.xml.rels":
               corpus._rels([("rId1", f"{r}/chart", "../charts/chart1.xml")]),
               "xl/charts/chart1.xml": chart},
        overrides={"/xl/drawings/drawing1.xml": f"{dml}.drawing+xml",
                   "/xl/charts/chart1.xml": f"{dml}.chart+xml"})


@pytest.fixture(scope="module")
def workbooks(tmp_path_factory):
    root = tmp_path_factory.mktemp("legacy-objects")
    src = root / "src"
    src.mkdir()
    (src / "graph.ods").write_bytes(graph_ods())
    (src / "chart.xlsx").write_bytes(chart_xlsx())
    (src / "fields.docx").write_bytes(property_fields_docx())
    (src / "slides.odp").write_bytes(graph_odp())
    lo = root / "lo"
    made = convert_many([src / "graph.ods", src / "chart.xlsx"], "xls", root / "xls", lo)
    assert len(made) == 2, "LibreOffice could not write the .xls originals"
    made_doc = convert_many([src / "fields.docx"], "doc", root / "doc", lo)
    assert made_doc, "LibreOffice could not write the .doc original"
    made_ppt = convert_many([src / "slides.odp"], "ppt", root / "ppt", lo)
    assert made_ppt, "LibreOffice could not write the .ppt original"
    results = {}
    for name, path in (("graph", made[src / "graph.ods"]), ("chart", made[src / "chart.xlsx"]),
                       ("fields", made_doc[src / "fields.docx"]),
                       ("slides", made_ppt[src / "slides.odp"])):
        out = root / f"out-{name}"
        out.mkdir()
        results[name] = (path, sanitize_file(path, out, original_name=path.name))
    # PDFs of the originals and of the outputs (distinct stems for soffice)
    pdf_in = {}
    for name, (path, result) in results.items():
        assert result.status == "ok", (result.reason, result.code)
        pdf_in[f"orig-{name}"] = root / f"orig-{name}{path.suffix}"
        pdf_in[f"orig-{name}"].write_bytes(path.read_bytes())
        pdf_in[f"clean-{name}"] = root / f"clean-{name}{Path(result.output).suffix}"
        pdf_in[f"clean-{name}"].write_bytes(Path(result.output).read_bytes())
    pdfs = convert_many(list(pdf_in.values()), "pdf", root / "pdf", lo)
    return {"results": results, "pdf": {k: pdfs.get(p) for k, p in pdf_in.items()}}


def test_the_original_holds_an_ms_graph_object(workbooks):
    path, _ = workbooks["results"]["graph"]
    with olefile.OleFileIO(str(path)) as ole:
        storages = [e for e in ole.listdir(streams=False, storages=True)
                    if e[0].startswith("MBD")]
        assert storages, "LibreOffice wrote no embedded object storage into the .xls"
        comp = ole.openstream([storages[0][0], "\x01CompObj"]).read()
    assert legacy_office.compobj_type(comp) == "MSGraph.Chart.8 (Microsoft Graph Chart)"


def test_ms_graph_chart_becomes_its_picture_and_keeps_the_pages(workbooks):
    _, result = workbooks["results"]["graph"]
    original, cleaned = workbooks["pdf"]["orig-graph"], workbooks["pdf"]["clean-graph"]
    assert original is not None and cleaned is not None
    pages = render_pdf(original)
    assert len(pages) == 2  # the chart reaches onto a second page
    # same pages (the chart dropped, the sheet printed on one page), the chart drawn
    assert min_page_ssim(original, cleaned) >= 0.9
    out = Path(result.output)
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        drawing = zf.read("xl/drawings/drawing1.xml")
    assert any(n.startswith("xl/media/") for n in names)
    assert b'name="Sales"' in drawing and b"<xdr:pic" in drawing
    # the object itself is not carried over
    assert not any("embeddings" in n or "oleObject" in n for n in names)
    assert list(oleobj.find_ole(str(out), None)) == []
    blob = out.read_bytes()
    assert b"MSGraph" not in blob


def test_the_report_names_the_object(workbooks):
    _, result = workbooks["results"]["graph"]
    objects = [f for f in result.findings if f.kind == "ole_object"]
    converted = [f for f in objects if f.action == "converted"]
    assert [(f.location, f.detail) for f in converted] == [
        ("sheet 'Data': object 'Sales'",
         "MSGraph.Chart.8 (Microsoft Graph Chart) replaced by its preview picture")]
    removed = [f for f in objects if f.action == "removed"]
    assert removed and all("MSGraph.Chart.8" in f.detail for f in removed)


def test_a_libreoffice_chart_stays_a_chart(workbooks):
    _, result = workbooks["results"]["chart"]
    with zipfile.ZipFile(result.output) as zf:
        assert "xl/charts/chart1.xml" in zf.namelist()
    assert not any(f.kind == "ole_object" for f in result.findings)
    assert min_page_ssim(workbooks["pdf"]["orig-chart"], workbooks["pdf"]["clean-chart"]) >= 0.95


def test_a_clean_workbook_reports_no_xlm_macro(workbooks):
    # oletools lists a workbook's sheet records as "xlm_macro.txt" without any macro sheet
    for name in ("graph", "chart"):
        _, result = workbooks["results"][name]
        assert not [f for f in result.findings if f.kind in ("xlm_macro", "macro")]


def _field(instr: str, result: str) -> str:
    return ('<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">'
            f' {instr} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r>'
            f'<w:t xml:space="preserve">{result}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/>'
            '</w:r>')


def _text(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def property_fields_docx() -> bytes:
    """Two pages whose header shows the title and author through fields and whose footer
    shows the page number and who saved it last (LibreOffice keeps the fields in the .doc)."""
    header = (f'<?xml version="1.0" encoding="UTF-8"?><w:hdr {corpus.NS_W}><w:p>'
              + _text("Title: ") + _field("TITLE", "Quarterly") + _text(" by ")
              + _field("AUTHOR", "Secret Author") + "</w:p></w:hdr>")
    footer = (f'<?xml version="1.0" encoding="UTF-8"?><w:ftr {corpus.NS_W}><w:p>'
              + _text("Page ") + _field("PAGE", "1") + _text(" saved by ")
              + _field("LASTSAVEDBY", "Someone") + "</w:p></w:ftr>")
    body = "".join(corpus._p(f"Paragraph {i}: the quick brown fox jumps over the lazy dog.")
                   for i in range(1, 70))
    sect = corpus.SECT.replace('<w:pgSz', '<w:footerReference w:type="default" r:id="rIdFtr"/>'
                               '<w:pgSz')
    r, wml = corpus.R, corpus.WML
    data = corpus.docx(body, doc_rels=[("rIdFtr", f"{r}/footer", "footer1.xml")],
                       parts={"word/header1.xml": header, "word/footer1.xml": footer},
                       overrides={"/word/footer1.xml": f"{wml}.footer+xml"})
    return corpus._patch_zip(data, {"word/document.xml": lambda s: s.replace(corpus.SECT, sect)})


def test_header_and_footer_fields_keep_the_text_they_showed(workbooks):
    _, result = workbooks["results"]["fields"]
    original, cleaned = workbooks["pdf"]["orig-fields"], workbooks["pdf"]["clean-fields"]
    assert original is not None and cleaned is not None
    shown = pdf_text(original)
    assert shown.count("Title: Quarterly by Secret Author") == 2  # two pages
    assert pdf_text(cleaned).count("Title: Quarterly by Secret Author") == 2
    assert pdf_text(cleaned).count("saved by Someone") == 2
    assert min_page_ssim(original, cleaned) >= 0.98
    with zipfile.ZipFile(result.output) as zf:
        header = next(zf.read(n) for n in zf.namelist() if n.startswith("word/header"))
        core = zf.read("docProps/core.xml")
    assert b"TITLE" not in header and b"AUTHOR" not in header  # plain text now
    assert b"Quarterly" not in core and b"Secret Author" not in core  # the properties go
    frozen = [f for f in result.findings if f.kind == "metadata" and f.action == "converted"
              and "showing document properties" in f.detail]
    assert {f.detail.split("(")[1].split(")")[0] for f in frozen} == {"AUTHOR, TITLE",
                                                                     "LASTSAVEDBY"}


@pytest.mark.parametrize("data,expected", [
    (compobj(MSGRAPH_CLSID, b"Microsoft Graph Chart", b"MSGraph.Chart.8"),
     "MSGraph.Chart.8 (Microsoft Graph Chart)"),
    (compobj(MSGRAPH_CLSID, b"", b"Excel.Chart.8"), "Excel.Chart.8"),
    (b"\x01\x00\xfe\xff" + b"\0" * 24 + _lpstr(b"Paint\x07Brush") + b"\0" * 4
     + _lpstr(b"PBrush"), "PBrush (PaintBrush)"),
    (b"\x01\x00\xfe\xff" + b"\0" * 24 + struct.pack("<I", 0xFFFFFF00) + b"xx", ""),
    (b"", ""),
])
def test_compobj_type_is_bounded_and_printable(data, expected):
    assert legacy_office.compobj_type(data) == expected


def test_a_presentation_names_its_embedded_object(workbooks):
    # oletools' PowerPoint walk stops at the first stream that is not records (CompObj), so the
    # presentation's objects went unreported
    _, result = workbooks["results"]["slides"]
    objects = [(f.action, f.location, f.detail) for f in result.findings
               if f.kind == "ole_object"]
    assert ("removed", "PPT document: PowerPoint object 1", "embedded OLE object MSGraph.Chart.8 "
            "(Microsoft Graph Chart) (not carried into the converted document)") in objects
    assert any(a == "converted" and "preview image" in d for a, _, d in objects)
    with zipfile.ZipFile(result.output) as zf:
        assert not any("embeddings" in n for n in zf.namelist())
    assert min_page_ssim(workbooks["pdf"]["orig-slides"], workbooks["pdf"]["clean-slides"]) >= 0.95


def test_a_damaged_presentation_object_is_reported_as_damaged(workbooks):
    from sanitas.engine.report import Context

    path, _ = workbooks["results"]["slides"]
    ctx = Context()
    count = legacy_office.report_ole_contents(damage_ppt_object(path.read_bytes()), "PPT", ctx)
    assert count == 0  # no storage-level object: PowerPoint keeps it in a record
    assert [(f.location, f.detail) for f in ctx.findings if f.kind == "ole_object"] == [
        ("PPT: PowerPoint object 1", "embedded OLE object whose data is damaged (it cannot be "
         "read; not carried into the converted document)")]


def test_objects_are_named_by_their_declared_type():
    """Storage-level objects of a Word file: each named by its CompObj; a LibreOffice chart
    (LibreOffice reads it back as a chart and writes chart data) is reported as converted."""
    from sanitas.engine.report import Context

    lo_chart = "0dd0a57f-cf3b-4fd2-bda4-9442719b2a73"
    doc = write_cfb({
        "WordDocument": b"\0" * 64,
        "ObjectPool/_1/\x01CompObj": compobj(MSGRAPH_CLSID, b"Microsoft Graph Chart",
                                             b"MSGraph.Chart.8"),
        "ObjectPool/_2/\x01CompObj": compobj(lo_chart, b"Embedded Object",
                                             b"LibreOffice.ChartDocument.1"),
        "ObjectPool/_3/\x01Ole": b"\0" * 20,  # declares nothing
    })
    ctx = Context()
    assert legacy_office.report_ole_contents(doc, "DOC", ctx) == 3
    assert [(f.action, f.location, f.detail) for f in ctx.findings] == [
        ("removed", "DOC: ObjectPool/_1", "embedded OLE object MSGraph.Chart.8 (Microsoft Graph "
         "Chart) (not carried into the converted document)"),
        ("converted", "DOC: ObjectPool/_2", "embedded LibreOffice.ChartDocument.1 (Embedded "
         "Object) object: LibreOffice reads it as a chart, written as chart data (no OLE object "
         "is carried over)"),
        ("removed", "DOC: ObjectPool/_3", "embedded OLE object (not carried into the converted "
         "document)")]
