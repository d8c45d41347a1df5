"""OOXML sanitizer: hostile corpus checked with independent tools (oletools, a raw byte scan,
LibreOffice opening the result), clean corpus checked for visual fidelity (SSIM >= 0.98)."""

from __future__ import annotations

import io
import re
import time
import zipfile
from pathlib import Path

import pytest
from lxml import etree
from oletools import oleobj
from oletools.olevba import VBA_Parser

from sanitas.engine import ooxml
from sanitas.engine.report import Context, Policy, Rejected
from tests.engine import corpus_office as corpus
from tests.engine.cfb_office import write_cfb
from tests.engine.fidelity import min_page_ssim, pdf_text, render_pdf
from tests.engine.render_office import convert_many

HOSTILE = ["hostile.docm", "hostile.xlsm", "hostile.pptm"]
CLEAN = ["clean.docx", "clean.xlsx", "clean.pptx"]
TIMINGS: dict[str, float] = {}


def _sanitize(src: Path, out_dir: Path, keep_links: bool = True, tag: str = "out"):
    ctx = Context(policy=Policy().with_rules(hyperlinks="keep" if keep_links else "remove"),
                  workdir=out_dir / f"work-{src.stem}")
    tmp = out_dir / f"{tag}-{src.stem}.tmp"
    started = time.perf_counter()
    ext = ooxml.sanitize(src, tmp, ctx, src.suffix.lstrip("."))
    TIMINGS[f"{src.name} ({tag})"] = time.perf_counter() - started
    final = out_dir / f"{tag}-{src.stem}-{src.suffix.lstrip('.')}.{ext}"
    tmp.rename(final)
    return final, ctx


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    root = tmp_path_factory.mktemp("ooxml")
    src = root / "src"
    files = corpus.write_all(src)
    # A real PowerPoint package comes from LibreOffice (hand-written pptx needs a full theme)
    made = convert_many([files["clean.odp"]], "pptx", src, root / "lo")
    files["clean.pptx"] = made[files["clean.odp"]]
    files["hostile.pptm"] = src / "hostile.pptm"
    files["hostile.pptm"].write_bytes(corpus.hostile_pptm(files["clean.pptx"].read_bytes()))
    out = root / "out"
    out.mkdir()
    results, strict = {}, {}
    for name in CLEAN + HOSTILE:
        results[name] = _sanitize(files[name], out)
    for name in HOSTILE:
        strict[name] = _sanitize(files[name], out, keep_links=False, tag="nolinks")
    # One LibreOffice process renders every original and output that the tests look at.
    originals = {}
    for n in CLEAN:  # distinct names: soffice names its outputs after the input stems
        originals[n] = root / f"orig-{n.replace('.', '-')}.{n.rsplit('.', 1)[1]}"
        originals[n].write_bytes(files[n].read_bytes())
    to_render = list(originals.values()) + [results[n][0] for n in CLEAN + HOSTILE]
    pdfs = convert_many(to_render, "pdf", root / "pdf", root / "lo")
    return {"files": files, "results": results, "strict": strict, "pdfs": pdfs, "root": root,
            "originals": originals}


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


# ----------------------------------------------------------------------------- independent checks

@pytest.mark.parametrize("name", HOSTILE)
def test_olevba_finds_macros_in_input_but_not_output(office, name):
    src = office["files"][name]
    assert VBA_Parser(str(src)).detect_vba_macros(), "corpus must carry real VBA"
    for variant in ("results", "strict"):
        out = office[variant][name][0]
        parser = VBA_Parser(str(out))
        assert not parser.detect_vba_macros()
        assert not parser.detect_xlm_macros()


@pytest.mark.parametrize("name", HOSTILE)
def test_oleobj_finds_objects_in_input_but_not_output(office, name):
    src = office["files"][name]
    assert len(list(oleobj.find_ole(str(src), None))) > 0
    for variant in ("results", "strict"):
        out = office[variant][name][0]
        assert list(oleobj.find_ole(str(out), None)) == []


FORBIDDEN = [
    b"vbaProject", b"vbaData", b"keyMapCustomizations", b"attachedToolbars", b"macrosheet",
    b"Macro1", b"Auto_Open", b"auto_open", b"oleObject", b"activeX", b"OLEObject", b"oleObj",
    b"TargetMode=\"External\"", b"DDEAUTO", b"INCLUDEPICTURE", b"attacker.invalid",
    b"customXml", b"custom-properties", b"connections", b"queryTable", b"externalLink",
    b"printerSettings", b"FmlaMacro", b"ppaction://program", b"ppaction://macro", b"EXEC(",
    b"WEBSERVICE", b"cmd|", b"mailMerge", b"docVar", b"entryMacro", b"exitMacro", b"SECRET",
    b"Secret Author", b"Secret Corp", b"calc.exe", b"altChunk", b"subDoc", b"customUI",
    b"p:cmd", b"<p:controls", b"<controls", b"w:control", b"Ole10Native", b"payload.exe",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_raw_byte_scan_of_every_member(office, name):
    out = office["strict"][name][0]
    members = _members(out)
    src_blob = b"".join(_members(office["files"][name]).values())
    for token in FORBIDDEN:
        for member, data in members.items():
            assert token not in data, f"{token!r} survived in {member}"
    hit = [t for t in FORBIDDEN if t in src_blob]
    assert len(hit) >= 8, "the corpus must contain what the scan looks for"
    for member, data in members.items():
        # a DDE instruction in a complex field, whatever the run splitting
        text = re.sub(rb"<[^>]+>", b"", b"".join(re.findall(rb"<w:instrText[^>]*>[^<]*<", data)))
        assert b"DDE" not in text.upper(), member


@pytest.mark.parametrize("name", HOSTILE)
def test_links_kept_only_as_plain_web_links(office, name):
    out = office["results"][name][0]
    for member, data in _members(out).items():
        if not member.endswith(".rels"):
            continue
        for rel in etree.fromstring(data):
            if rel.get("TargetMode") == "External":
                assert rel.get("Type").endswith("/hyperlink"), (member, rel.attrib)
                assert re.match(r"^(https?://|mailto:)", rel.get("Target")), rel.get("Target")
    if name != "hostile.pptm":
        blob = b"".join(_members(out).values())
        assert b"https://example.org/" in blob


REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


@pytest.mark.parametrize("name", CLEAN + HOSTILE)
def test_package_is_consistent(office, name):
    """What Office checks before it offers a repair: every relationship target exists, every
    part has a content type, no override names a missing part, every r:id resolves."""
    out = office["results"][name][0]
    members = _members(out)
    assert next(iter(members)) == "[Content_Types].xml"
    types = etree.fromstring(members["[Content_Types].xml"])
    defaults = {e.get("Extension").lower() for e in types if e.tag.endswith("Default")}
    overrides = {e.get("PartName") for e in types if e.tag.endswith("Override")}
    for part in overrides:
        assert part.lstrip("/") in members, f"override for missing part {part}"
    for part in members:
        if part == "[Content_Types].xml":
            continue
        ext = part.rsplit(".", 1)[-1].lower()
        assert "/" + part in overrides or ext in defaults, f"no content type for {part}"
    for part, data in members.items():
        if not part.endswith(".rels"):
            continue
        source_dir = part.rsplit("_rels/", 1)[0]
        source = source_dir + part.rsplit("/", 1)[-1][: -len(".rels")]
        ids = set()
        for rel in etree.fromstring(data):
            ids.add(rel.get("Id"))
            if rel.get("TargetMode") != "External":
                target = rel.get("Target")
                resolved = target.lstrip("/") if target.startswith("/") else \
                    _norm(source_dir + target)
                assert resolved in members, f"{part}: dangling {target}"
        if source in members and source.endswith(".xml"):
            for el in etree.fromstring(members[source]).iter():
                for attr, value in el.attrib.items():
                    if attr.startswith("{" + REL_NS) and value:
                        assert value in ids, f"{source}: {attr}={value} has no relationship"
    # Every XML part referencing a relationship must have a .rels part
    for part, data in members.items():
        if part.endswith(".xml") and b'r:id="' in data:
            rels_name = part.rsplit("/", 1)[0] + "/_rels/" + part.rsplit("/", 1)[1] + ".rels"
            assert rels_name in members, part


def _norm(path: str) -> str:
    import posixpath

    return posixpath.normpath(path)


@pytest.mark.parametrize("name", HOSTILE)
def test_libreoffice_opens_sanitized_output_and_content_survives(office, name):
    out = office["results"][name][0]
    pdf = office["pdfs"].get(out)
    assert pdf is not None, f"LibreOffice could not convert {out.name}"
    pages = render_pdf(pdf)
    assert len(pages) >= 1
    text = pdf_text(pdf)
    expected = {"hostile.docm": ["Hostile document body text", "dde-complex-result", "web link"],
                "hostile.xlsm": ["Item 1", "Total"],
                "hostile.pptm": ["Sanitas clean slide title"]}[name]
    for snippet in expected:
        assert snippet in text, f"{snippet!r} missing from the rendered output"


@pytest.mark.parametrize("name", CLEAN)
def test_clean_documents_keep_their_look(office, name):
    original = office["pdfs"][office["originals"][name]]
    sanitized = office["pdfs"][office["results"][name][0]]
    assert min_page_ssim(original, sanitized) >= 0.98


@pytest.mark.parametrize("name", CLEAN)
def test_clean_documents_only_lose_metadata(office, name):
    _out, ctx = office["results"][name]
    assert {f.kind for f in ctx.findings} <= {"metadata"}


# ------------------------------------------------------------------------------ what was done

def test_docm_findings_and_rebuild(office):
    out, ctx = office["results"]["hostile.docm"]
    assert out.suffix == ".docx"
    kinds = {f.kind for f in ctx.findings}
    assert {"macro", "dde", "field", "remote_template", "ole_object", "activex",
            "custom_properties", "custom_xml", "external_relationship", "hyperlink",
            "macro_enabled_type", "data_connection", "hidden_data"} <= kinds
    members = _members(out)
    ct = members["[Content_Types].xml"]
    assert b"macroEnabled" not in ct
    doc = members["word/document.xml"].decode()
    # OLE object and ActiveX control become pictures of their previews
    assert doc.count("<w:pict>") == 2 and "v:imagedata" in doc
    # safe fields stay live, hostile ones keep only their last result
    assert "PAGE" in doc and "dde-simple-result" in doc and "dde-complex-result" in doc
    assert "includepicture-result" in doc and "unc-link" in doc
    assert "FORMTEXT" in doc and "custom xml wrapped" in doc


def test_xlsm_workbook_is_repaired_not_broken(office):
    out, ctx = office["results"]["hostile.xlsm"]
    assert out.suffix == ".xlsx"
    members = _members(out)
    wb = etree.fromstring(members["xl/workbook.xml"])
    ns = {"s": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    sheets = wb.findall(".//s:sheet", ns)
    assert [s.get("name") for s in sheets] == ["Data"]
    names = {d.get("name"): d for d in wb.findall(".//s:definedName", ns)}
    assert set(names) == {"_xlnm.Print_Area", "Keep"}
    assert names["_xlnm.Print_Area"].get("localSheetId") == "0"  # was 1 before Macro1 went
    assert wb.find(".//s:workbookView", ns).get("activeTab") == "0"
    sheet = members["xl/worksheets/sheet2.xml"].decode()
    assert "<v>42</v>" in sheet and "<f>[1]" not in sheet and "cmd|" not in sheet
    assert "SUM(B1:B10)" in sheet and '"A|B"' in sheet  # ordinary formulas are untouched
    table = members["xl/tables/table1.xml"].decode()
    assert 'tableType="queryTable"' not in table
    kinds = {f.kind for f in ctx.findings}
    assert {"xlm_macro", "macro", "external_link", "data_connection", "printer_settings",
            "ole_object", "activex", "formula"} <= kinds


def test_pptm_ole_object_becomes_its_preview(office):
    out, _ctx = office["results"]["hostile.pptm"]
    assert out.suffix == ".pptx"
    slide = _members(out)["ppt/slides/slide1.xml"].decode()
    assert 'name="Object 1"' in slide and "graphicFrame" not in slide.split("Object 1")[0][-200:]
    assert "<p:timing" not in slide and "hlinkClick" not in slide


def test_timings_are_reasonable(office):
    # the OOXML rebuild itself is pure Python: well under a second for these documents
    assert max(TIMINGS.values()) < 5, TIMINGS
    print("ooxml sanitize timings (s):", {k: round(v, 3) for k, v in TIMINGS.items()})


# -------------------------------------------------------------------------- hostile containers

def _reject(tmp_path, data: bytes, kind="docx") -> str:
    src = tmp_path / f"in.{kind}"
    src.write_bytes(data)
    with pytest.raises(Rejected) as exc:
        ooxml.sanitize(src, tmp_path / "out", Context(workdir=tmp_path / "w"), kind)
    return exc.value.reason


def _with(parts_update: dict, base: bytes | None = None, drop=()) -> bytes:
    base = base or corpus.clean_docx()
    zin = zipfile.ZipFile(io.BytesIO(base))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in zin.namelist():
            if n not in parts_update and n not in drop:
                zf.writestr(n, zin.read(n))
        for n, d in parts_update.items():
            zf.writestr(n, d)
    return buf.getvalue()


def test_rejects_xxe_and_billion_laughs(tmp_path):
    xxe = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
           '<w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>')
    assert "DTD" in _reject(tmp_path, _with({"word/document.xml": xxe}))
    lol = ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
           '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">&b;</Types>')
    assert "DTD" in _reject(tmp_path, _with({"[Content_Types].xml": lol}))


def test_rejects_zip_bomb_and_unsafe_names(tmp_path):
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/media/big.png", b"\0" * (40 * 1024 * 1024))
    assert "zip bomb" in _reject(tmp_path, bomb.getvalue())
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w", zipfile.ZIP_STORED) as zf:
        for i in range(10_001):
            zf.writestr(f"p/{i}", b"")
    assert "parts" in _reject(tmp_path, many.getvalue())
    for bad in ("../evil.xml", "/abs.xml", "word\\..\\x.xml", "a//b.xml"):
        assert "unsafe part name" in _reject(tmp_path, _with({bad: b"x"}))


def test_rejects_duplicate_parts(tmp_path):
    base = corpus.clean_docx()
    buf = io.BytesIO(base)
    with zipfile.ZipFile(buf, "a") as zf, pytest.warns(UserWarning):
        zf.writestr("word/document.xml", b"<other/>")
    assert "twice" in _reject(tmp_path, buf.getvalue())


def test_rejects_encrypted_corrupt_and_non_documents(tmp_path):
    enc = write_cfb({"EncryptionInfo": b"\x04\x00\x04\x00" + b"\0" * 100,
                     "EncryptedPackage": b"\0" * 5000})
    assert "encrypted" in _reject(tmp_path, enc)
    assert "damaged" in _reject(tmp_path, corpus.clean_docx()[:500])
    # without content types a package is repaired when its main part shows its kind
    # (test_formats_family), refused when it does not
    assert "Content_Types" in _reject(tmp_path, _with({"word/document.xml": b"<notes/>"},
                                                      drop=("[Content_Types].xml",)))
    assert "main document" in _reject(tmp_path, _with({}, drop=("word/document.xml",)))
    addin = corpus.clean_docx().replace(b"x", b"x")
    addin = _with({"[Content_Types].xml": _members_of(addin)["[Content_Types].xml"].replace(
        b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        b"application/vnd.ms-excel.addin.macroEnabled.main+xml")}, base=addin)
    assert "add-in" in _reject(tmp_path, addin)
    deep = ('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            + "<w:x>" * 300 + "</w:x>" * 300 + "</w:document>")
    reason = _reject(tmp_path, _with({"word/document.xml": deep}))
    assert "deep" in reason or "depth" in reason


def _members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def test_embedded_photo_loses_exif_and_orphans_are_dropped(tmp_path):
    data = _with({"word/media/image1.png": corpus.jpeg_with_gps(),
                  "word/orphan.xml": b"<secret>SECRET-ORPHAN</secret>"})
    src = tmp_path / "in.docx"
    src.write_bytes(data)
    ctx = Context(workdir=tmp_path / "w")
    ooxml.sanitize(src, tmp_path / "out.docx", ctx, "docx")
    members = _members(tmp_path / "out.docx")
    img = members["word/media/image1.png"]
    assert img.startswith(b"\xff\xd8") and b"SecretCameraMaker" not in img
    assert b"SECRET-ORPHAN" not in b"".join(members.values())
    ct = members["[Content_Types].xml"].decode()
    assert 'PartName="/word/media/image1.png" ContentType="image/jpeg"' in ct
    assert any(f.kind == "orphan_part" for f in ctx.findings)


def test_relationship_to_a_disguised_binary_is_dropped(tmp_path):
    # an "image" relationship whose target is really an OLE container or an executable
    data = _with({"word/media/image1.png": b"MZ\x90\x00 not an image at all"})
    src = tmp_path / "in.docx"
    src.write_bytes(data)
    ctx = Context(workdir=tmp_path / "w")
    ooxml.sanitize(src, tmp_path / "out.docx", ctx, "docx")
    members = _members(tmp_path / "out.docx")
    assert "word/media/image1.png" not in members
    assert b'r:embed="rIdImg"' not in members["word/document.xml"]
    assert any(f.kind == "invalid_image" for f in ctx.findings)


def test_strict_ooxml_is_cleaned_like_transitional(tmp_path):
    body = (corpus._p("strict body")
            + corpus._complex_field([" DDEAUTO c:\\\\x.exe "], "strict-dde-result")
            + '<w:p><w:r><w:pict><v:shape style="width:10pt;height:10pt" o:href="file://'
              'attacker.invalid/x"><v:imagedata src="\\\\attacker.invalid\\share\\i.png"/>'
              "</v:shape></w:pict></w:r></w:p>"
            + "<!-- SECRET-COMMENT -->")
    data = corpus.docx(body)
    strict = {}
    for name, part in _members_of(data).items():
        strict[name] = (part.replace(
            b"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
            b"http://purl.oclc.org/ooxml/wordprocessingml/main").replace(
            b"http://schemas.openxmlformats.org/officeDocument/2006/relationships",
            b"http://purl.oclc.org/ooxml/officeDocument/relationships"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, part in strict.items():
            zf.writestr(name, part)
    src = tmp_path / "strict.docx"
    src.write_bytes(buf.getvalue())
    ctx = Context(workdir=tmp_path / "w")
    assert ooxml.sanitize(src, tmp_path / "out.docx", ctx, "docx") == "docx"
    doc = _members(tmp_path / "out.docx")["word/document.xml"]
    assert b"purl.oclc.org/ooxml/wordprocessingml/main" in doc
    assert b"DDEAUTO" not in doc and b"strict-dde-result" in doc
    assert b"attacker.invalid" not in doc and b"SECRET-COMMENT" not in doc
    assert any(f.kind == "dde" for f in ctx.findings)


def test_findings_are_capped_for_hostile_floods(tmp_path):
    body = "".join(corpus._complex_field([f" DDEAUTO c:\\\\x{i}.exe "], f"r{i}")
                   for i in range(400))
    src = tmp_path / "flood.docx"
    src.write_bytes(corpus.docx(body))
    ctx = Context(workdir=tmp_path / "w")
    ooxml.sanitize(src, tmp_path / "out.docx", ctx, "docx")
    dde = [f for f in ctx.closed_findings() if f.kind == "dde"]
    assert 100 <= len(dde) <= 101 and "300 more" in dde[-1].detail
    assert b"DDEAUTO" not in _members(tmp_path / "out.docx")["word/document.xml"]


def test_macro_sheet_disguised_as_worksheet_and_external_validation(tmp_path):
    disguised = ('<?xml version="1.0"?><xm:macrosheet xmlns:xm="http://schemas.microsoft.com/office/'
                 'excel/2006/main" xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                 '<sheetData><row r="1"><c r="A1"><f>EXEC("calc")</f></c></row></sheetData>'
                 "</xm:macrosheet>")
    validation = corpus._sheet(corpus.CLEAN_ROWS, (
        '<dataValidations count="1"><dataValidation type="list" sqref="A1"><formula1>[1]Sheet1!'
        "$A$1:$A$3</formula1></dataValidation></dataValidations>"))
    data = corpus.xlsx([("Data", f"{corpus.R}/worksheet", "worksheets/sheet1.xml", validation),
                        ("Hidden", f"{corpus.R}/worksheet", "worksheets/sheet2.xml", disguised)],
                       defined_names='<definedName name="x">Hidden!$A$1</definedName>')
    src = tmp_path / "in.xlsx"
    src.write_bytes(data)
    ctx = Context(workdir=tmp_path / "w")
    ooxml.sanitize(src, tmp_path / "out.xlsx", ctx, "xlsx")
    members = _members(tmp_path / "out.xlsx")
    assert "xl/worksheets/sheet2.xml" not in members
    wb = members["xl/workbook.xml"].decode()
    assert 'name="Hidden"' not in wb and "definedName" not in wb
    assert b"dataValidation " not in members["xl/worksheets/sheet1.xml"]
    assert {"xlm_macro", "external_link"} <= {f.kind for f in ctx.findings}


def test_type_comes_from_the_package_not_the_claimed_kind(office, tmp_path):
    # an xlsm handed over as "docx" still comes out as a macro-free workbook
    src = tmp_path / "claims-docx.docx"
    src.write_bytes(office["files"]["hostile.xlsm"].read_bytes())
    ctx = Context(workdir=tmp_path / "w")
    assert ooxml.sanitize(src, tmp_path / "out", ctx, "docx") == "xlsx"
    assert not VBA_Parser(str(tmp_path / "out")).detect_vba_macros()


@pytest.mark.slow
def test_xlsb_macros_are_reported_and_the_rewrite_is_macro_free(tmp_path):
    # No tool here writes real BIFF12; LibreOffice's lenient xlsb import turns this shell into an
    # empty workbook. What matters: the VBA is reported, and nothing active comes out.
    parts = {
        "[Content_Types].xml": corpus._types(corpus.CT_BASE, {
            "/xl/workbook.bin": "application/vnd.ms-excel.sheet.binary.macroEnabled.main"}),
        "_rels/.rels": corpus._rels([("rId1", f"{corpus.R}/officeDocument", "xl/workbook.bin")]),
        "xl/workbook.bin": b"\x83\x01\x00 not really BIFF12",
        "xl/_rels/workbook.bin.rels": corpus._rels([("rId1", f"{corpus.MSR}/vbaProject",
                                                     "vbaProject.bin")]),
        "xl/vbaProject.bin": corpus.vba_project_bin(),
    }
    src = tmp_path / "book.xlsb"
    src.write_bytes(corpus._zip(parts))
    ctx = Context(workdir=tmp_path / "w")
    assert ooxml.sanitize(src, tmp_path / "out", ctx, "xlsb") == "xlsx"
    assert any(f.kind == "macro" and "AutoOpen" in f.detail for f in ctx.findings)
    assert any(f.kind == "binary_workbook" for f in ctx.findings)
    assert not VBA_Parser(str(tmp_path / "out")).detect_vba_macros()
    assert b"vbaProject" not in b"".join(_members(tmp_path / "out").values())


def test_pivot_fed_by_a_connection_is_unlinked(tmp_path):
    cache = ('<?xml version="1.0"?><pivotCacheDefinition xmlns="http://schemas.openxmlformats.org/'
             'spreadsheetml/2006/main" refreshOnLoad="1"><cacheSource type="external" '
             'connectionId="1"/><cacheFields count="0"/></pivotCacheDefinition>')
    pivot = ('<?xml version="1.0"?><pivotTableDefinition xmlns="http://schemas.openxmlformats.org/'
             'spreadsheetml/2006/main" name="P" cacheId="5"><location ref="E1:E2" '
             'firstHeaderRow="1" firstDataRow="1" firstDataCol="0"/></pivotTableDefinition>')
    parts = {
        "xl/pivotCache/pivotCacheDefinition1.xml": cache,
        "xl/pivotTables/pivotTable1.xml": pivot,
        "xl/pivotTables/_rels/pivotTable1.xml.rels": corpus._rels([(
            "rId1", f"{corpus.R}/pivotCacheDefinition",
            "../pivotCache/pivotCacheDefinition1.xml")]),
        "xl/worksheets/_rels/sheet1.xml.rels": corpus._rels([(
            "rId1", f"{corpus.R}/pivotTable", "../pivotTables/pivotTable1.xml")]),
    }
    ov = {"/xl/pivotCache/pivotCacheDefinition1.xml": f"{corpus.SML}.pivotCacheDefinition+xml",
          "/xl/pivotTables/pivotTable1.xml": f"{corpus.SML}.pivotTable+xml"}
    data = corpus.xlsx([("Data", f"{corpus.R}/worksheet", "worksheets/sheet1.xml",
                         corpus._sheet(corpus.CLEAN_ROWS))],
                       workbook_extra='<pivotCaches><pivotCache cacheId="5" r:id="rIdPc"/>'
                                      "</pivotCaches>",
                       wb_rels=[("rIdPc", f"{corpus.R}/pivotCacheDefinition",
                                 "pivotCache/pivotCacheDefinition1.xml")],
                       parts=parts, overrides=ov)
    src = tmp_path / "pivot.xlsx"
    src.write_bytes(data)
    ctx = Context(workdir=tmp_path / "w")
    ooxml.sanitize(src, tmp_path / "out.xlsx", ctx, "xlsx")
    members = _members(tmp_path / "out.xlsx")
    assert not any("pivot" in n for n in members)
    assert b"pivotCache" not in members["xl/workbook.xml"]
    assert any(f.kind == "data_connection" for f in ctx.findings)


def _mutations(data: bytes, rng):
    """Structure-aware damage: XML truncated or spliced, relationships retargeted, ids swapped."""
    members = _members_of(data)
    names = list(members)
    victim = rng.choice(names)
    blob = members[victim]
    choice = rng.randrange(6)
    if choice == 0:
        blob = blob[: rng.randrange(1, max(2, len(blob)))]
    elif choice == 1:
        i = rng.randrange(len(blob) + 1)
        blob = blob[:i] + rng.choice([b"<x>", b"</w:p>", b"&amp;", b"\x00", b"]]>"]) + blob[i:]
    elif choice == 2:
        blob = re.sub(rb'Target="[^"]*"', rng.choice(
            [b'Target="../../../../etc/passwd"', b'Target="/"', b'Target=""',
             b'Target="http://[::1"', b'Target="word/document.xml"', b'Target="%00"']), blob)
    elif choice == 3:
        blob = re.sub(rb'r:id="[^"]*"', b'r:id="rIdNope"', blob)
    elif choice == 4:
        blob = blob.replace(b"w:fldCharType=\"end\"", b"w:fldCharType=\"begin\"")
    else:
        members.pop(victim)
        return _zip_of(members)
    members[victim] = blob
    return _zip_of(members)


def _zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    return buf.getvalue()


def test_damaged_packages_are_rejected_or_rebuilt_never_crash(office, tmp_path):
    import random

    rng = random.Random(1234)
    outcomes = {"ok": 0, "rejected": 0}
    for i in range(120):
        base = office["files"][rng.choice(HOSTILE + CLEAN)].read_bytes()
        src = tmp_path / f"m{i}.bin"
        src.write_bytes(_mutations(base, rng))
        out = tmp_path / f"o{i}"
        try:
            ooxml.sanitize(src, out, Context(workdir=tmp_path / "w"), "docx")
        except Rejected as exc:
            assert exc.reason.endswith(".") and len(exc.reason) < 400
            outcomes["rejected"] += 1
            continue
        outcomes["ok"] += 1
        members = _members(out)  # a readable package came out
        assert b"vbaProject" not in b"".join(members.values())
    assert outcomes["ok"] > 10 and outcomes["rejected"] > 10, outcomes


def test_utf16_parts_get_the_same_cleaning(tmp_path):
    body = (corpus._p("utf16 body") + corpus._complex_field([" DDEAUTO c:\\\\x.exe "], "res")
            + corpus._inline_image("rIdExtImg", "r:link", 3))
    data = corpus.docx(body, doc_rels=[("rIdExtImg", f"{corpus.R}/image",
                                        f"{corpus.EVIL}/beacon.png", True)])
    members = _members_of(data)
    doc = members["word/document.xml"].decode().replace('encoding="UTF-8"', 'encoding="UTF-16"')
    members["word/document.xml"] = doc.encode("utf-16")
    src = tmp_path / "u16.docx"
    src.write_bytes(_zip_of(members))
    ooxml.sanitize(src, tmp_path / "out.docx", Context(workdir=tmp_path / "w"), "docx")
    out = _members(tmp_path / "out.docx")
    assert b"DDEAUTO" not in out["word/document.xml"] and b"res" in out["word/document.xml"]
    assert b"rIdExtImg" not in out["word/document.xml"]
    assert b"attacker.invalid" not in b"".join(out.values())


def test_polyglot_prefix_comment_and_trailer_do_not_survive(tmp_path):
    buf = io.BytesIO(corpus.clean_docx())
    with zipfile.ZipFile(buf, "a") as zf:
        zf.comment = b"EVIL-ZIP-COMMENT"
    data = b"MZ\x90\x00EVIL-PREFIX" + buf.getvalue() + b"EVIL-TRAILER"
    src = tmp_path / "poly.docx"
    src.write_bytes(data)
    ooxml.sanitize(src, tmp_path / "out.docx", Context(workdir=tmp_path / "w"), "docx")
    out = (tmp_path / "out.docx").read_bytes()
    assert out.startswith(b"PK\x03\x04") and b"EVIL" not in out
