"""Legacy Office and RTF: oletools findings before conversion, LibreOffice conversion to OOXML,
then the OOXML sanitizer; plus the office -> PDF step used by advanced mode."""

from __future__ import annotations

import struct
import time
import zipfile
from pathlib import Path

import olefile
import pytest
from oletools import oleobj
from oletools.olevba import VBA_Parser

from sanitas.engine import legacy_office, ooxml
from sanitas.engine.report import Context, Rejected
from tests.engine import corpus_office as corpus
from tests.engine.cfb_office import write_cfb
from tests.engine.fidelity import min_page_ssim, pdf_text
from tests.engine.render_office import convert_many

TIMINGS: dict[str, float] = {}
CASES = {"macro.doc": "doc", "macro.xls": "xls", "hostile.rtf": "rtf", "clean.ppt": "ppt"}
pytestmark = pytest.mark.slow  # about ten LibreOffice runs


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    root = tmp_path_factory.mktemp("legacy")
    src = root / "src"
    files = corpus.write_all(src)
    lo = root / "lo"
    # Legacy originals come from LibreOffice (the only writer of these formats here)
    for source, target in ((files["clean.docx"], "doc"), (files["clean.docx"], "rtf"),
                           (files["clean.xlsx"], "xls"), (files["clean.odp"], "ppt")):
        made = convert_many([source], target, src, lo)
        assert source in made, f"LibreOffice could not write the {target} original"
    (src / "macro.doc").write_bytes(corpus.macro_doc((src / "clean.doc").read_bytes()))
    (src / "macro.xls").write_bytes(corpus.macro_xls((src / "clean.xls").read_bytes()))
    (src / "hostile.rtf").write_bytes(corpus.hostile_rtf((src / "clean.rtf").read_bytes()))
    out = root / "out"
    out.mkdir()
    results = {}
    for name, kind in CASES.items():
        ctx = Context(workdir=root / f"work-{name}")
        started = time.perf_counter()
        converted = legacy_office.to_ooxml(src / name, ctx, kind)
        final = out / f"out-{name.replace('.', '-')}.tmp"
        ext = ooxml.sanitize(converted, final, ctx, converted.suffix.lstrip("."))
        TIMINGS[name] = time.perf_counter() - started
        results[name] = (final.rename(final.with_suffix("." + ext)), ctx)
    # to_pdf (advanced mode's first step), from a file whose name says nothing of its type
    macro_pdf_ctx = Context(workdir=root / "work-pdf-macro")
    nameless = root / "upload.bin"
    nameless.write_bytes((src / "macro.doc").read_bytes())
    started = time.perf_counter()
    to_pdf = {"macro.doc": legacy_office.to_pdf(nameless, macro_pdf_ctx)}
    TIMINGS["to_pdf"] = time.perf_counter() - started
    originals = {}
    for name in ("macro.doc", "clean.ppt", "macro.xls"):  # distinct stems for soffice
        originals[name] = root / f"orig-{name.replace('.', '-')}.{name.rsplit('.', 1)[1]}"
        originals[name].write_bytes((src / name).read_bytes())
    pdfs = convert_many([*originals.values(), *(results[n][0] for n in CASES)], "pdf",
                        root / "pdf", lo)
    return {"src": src, "results": results, "pdfs": pdfs, "to_pdf": to_pdf, "files": files,
            "originals": originals, "macro_pdf_ctx": macro_pdf_ctx}


def _blob(path: Path) -> bytes:
    with zipfile.ZipFile(path) as zf:
        return b"".join(zf.read(n) for n in zf.namelist())


@pytest.mark.parametrize("name", ["macro.doc", "macro.xls"])
def test_vba_is_reported_and_gone(legacy, name):
    src = legacy["src"] / name
    assert VBA_Parser(str(src)).detect_vba_macros()
    out, ctx = legacy["results"][name]
    macros = [f for f in ctx.findings if f.kind == "macro" and "VBA" in f.location]
    assert macros and "AutoOpen" in macros[0].detail
    assert any(f.kind == "ole_object" and f.action == "removed" for f in ctx.findings)
    assert not VBA_Parser(str(out)).detect_vba_macros()
    assert list(oleobj.find_ole(str(out), None)) == []
    assert b"vbaProject" not in _blob(out) and b"payload.exe" not in _blob(out)


def test_rtf_objects_and_dde_are_reported_and_gone(legacy):
    out, ctx = legacy["results"]["hostile.rtf"]
    assert out.suffix == ".docx"
    obj = [f for f in ctx.findings if f.kind == "ole_object"]
    assert obj and "payload.exe" in obj[0].detail
    assert any(f.kind == "dde" and f.location == "word/document.xml" for f in ctx.findings)
    blob = _blob(out)
    assert b"DDEAUTO" not in blob and b"payload.exe" not in blob and b"calc.exe" not in blob
    assert list(oleobj.find_ole(str(out), None)) == []
    text = pdf_text(legacy["pdfs"][out])
    assert "Hostile RTF paragraph." in text and "dde-rtf-result" in text


@pytest.mark.parametrize("name,ext", [("macro.doc", ".docx"), ("clean.ppt", ".pptx"),
                                      ("macro.xls", ".xlsx")])
def test_converted_documents_open_and_look_the_same(legacy, name, ext):
    out, _ = legacy["results"][name]
    assert out.suffix == ext
    pdf = legacy["pdfs"].get(out)
    assert pdf is not None, "LibreOffice could not open the converted document"
    original = legacy["pdfs"][legacy["originals"][name]]
    # a format conversion, not a byte-for-byte rebuild: same pages, same look
    assert min_page_ssim(original, pdf) >= 0.95


def test_to_pdf_renders_by_content_not_name(legacy):
    for name, pdf in legacy["to_pdf"].items():
        assert pdf.suffix == ".pdf" and pdf.read_bytes().startswith(b"%PDF")
        assert "sanitas clean" in pdf_text(pdf).lower(), name


def test_to_pdf_of_a_legacy_file_reports_its_macros(legacy):
    ctx = legacy["macro_pdf_ctx"]
    assert any(f.kind == "macro" and "AutoOpen" in f.detail for f in ctx.findings)
    assert "Sanitas clean document" in pdf_text(legacy["to_pdf"]["macro.doc"])


def test_timings(legacy):
    print("legacy conversion timings (s):", {k: round(v, 2) for k, v in TIMINGS.items()})
    assert max(TIMINGS.values()) < 60


def test_encrypted_doc_is_rejected_before_conversion(legacy, tmp_path):
    with olefile.OleFileIO(str(legacy["src"] / "clean.doc")) as ole:
        streams = {"/".join(e): ole.openstream(e).read() for e in ole.listdir()}
    fib = bytearray(streams["WordDocument"])
    flags = struct.unpack_from("<H", fib, 10)[0] | 0x0100  # fEncrypted
    struct.pack_into("<H", fib, 10, flags)
    streams["WordDocument"] = bytes(fib)
    src = tmp_path / "enc.doc"
    src.write_bytes(write_cfb(streams))
    ctx = Context(workdir=tmp_path / "w")
    with pytest.raises(Rejected, match="encrypted"):
        legacy_office.to_ooxml(src, ctx, "doc")
    assert not (tmp_path / "w" / "lo-profile").exists()  # LibreOffice never started


def test_not_an_ole_file_is_rejected(tmp_path):
    src = tmp_path / "x.doc"
    src.write_bytes(b"MZ\x90\x00 this is an executable, not a document")
    with pytest.raises(Rejected, match="not a valid DOC"):
        legacy_office.to_ooxml(src, Context(workdir=tmp_path / "w"), "doc")


def test_damaged_document_is_rejected_with_a_reason(tmp_path):
    src = tmp_path / "broken.xls"
    src.write_bytes(write_cfb({"Workbook": b"\xff" * 6000}))
    with pytest.raises(Rejected) as exc:
        legacy_office.to_ooxml(src, Context(workdir=tmp_path / "w"), "xls")
    assert "LibreOffice" in exc.value.reason


@pytest.mark.parametrize("name", ["macro.doc", "macro.xls", "hostile.rtf"])
def test_every_keep_yields_no_active_content(legacy, tmp_path, name):
    """Issue 19: a legacy document sanitized with every rule that offers `keep` set to keep
    (embedded files and external references included) comes out with nothing active in it,
    embedded objects and their packages (the .doc's OLE package wraps a program) included."""
    from sanitas.engine import sanitize_file
    from sanitas.engine.policy import CHOICES, Action, Policy
    from tests.engine.active_scan import active_content

    source = legacy["src"] / name
    assert active_content(source.read_bytes(), name) or name == "hostile.rtf"
    every_keep = {rule.value: "keep" for rule, offered in CHOICES.items()
                  if Action.KEEP in offered}
    result = sanitize_file(source, tmp_path, policy=Policy().with_rules(**every_keep))
    assert result.status == "ok", (result.reason, result.code)
    assert active_content(Path(result.output).read_bytes(), name) == []
