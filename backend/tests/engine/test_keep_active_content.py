"""Issue 19: no `keep` anywhere yields active content. For every rule that offers `keep` (alone,
and all of them at once), every hostile sample (programs, scripts, scripted PDFs, macro
documents and OLE objects inside PDFs, office documents, OpenDocument files and archives;
references that load documents able to run code) is sanitized, and the output is scanned the
way an evaluator would (`active_scan`: olevba, the PDF action names, executables by magic,
OLE packages, remote templates/OLE links/frames), every container opened recursively.

`keep` for embedded files means "kept after going through the engine with the same policy":
the tests also check what stays (cleaned attachments and packages under their new type), what
is dropped, and that the findings say so. The sandbox suite runs the key cases for real
(tests/sandbox/test_keep_active_content.py)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name, String

from sanitas.engine import nested, sanitize_file
from sanitas.engine.policy import CHOICES, Action, Policy, Rule
from sanitas.engine.report import Result
from tests.engine.active_scan import active_content
from tests.engine.corpus import clean_pdf
from tests.engine.hostile_keep import EXE, write_all

KEEP_RULES = [rule for rule, offered in CHOICES.items() if Action.KEEP in offered]
EVERY_KEEP = {rule.value: "keep" for rule in KEEP_RULES}
POLICIES = {**{rule.value: {rule.value: "keep"} for rule in KEEP_RULES}, "every keep": EVERY_KEEP}
SAMPLES = ["attachments.pdf", "script.pdf", "hostile.pdf", "embedding.docx", "macro.docm",
           "macro.xlsm", "macro.odt", "embedding.odt", "bundle.zip", "page.html", "image.svg",
           "book.epub"]


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("hostile-keep"))


def run(path: Path, tmp_path: Path, rules: dict[str, str]) -> Result:
    out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
    out.mkdir()
    return sanitize_file(path, out, policy=Policy().with_rules(**rules))


def output(result: Result) -> bytes:
    assert result.status == "ok", (result.reason, result.code)
    assert result.output is not None
    return Path(result.output).read_bytes()


def test_the_rule_table_offers_keep_only_where_it_is_made_safe():
    # macros and JavaScript offer no keep: nothing could make them safe
    assert {Rule.MACROS, Rule.JAVASCRIPT}.isdisjoint(KEEP_RULES)
    # encrypted content nobody can read is held back or passed as not inspected: no keep
    assert set(KEEP_RULES) == set(Rule) - {Rule.MACROS, Rule.JAVASCRIPT, Rule.ENCRYPTED_CONTENT}


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_samples_are_hostile(samples, sample):
    assert active_content(samples[sample].read_bytes(), sample)


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("policy", list(POLICIES))
def test_no_keep_yields_active_content(samples, tmp_path, sample, policy):
    result = run(samples[sample], tmp_path, POLICIES[policy])
    assert active_content(output(result), sample) == []


# --- what "keep" keeps, and what it reports dropping --------------------------------------------

def _attachments(data: bytes) -> dict[str, bytes]:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        pairs = list(pdf.Root.Names.EmbeddedFiles.Names)
        return {str(pairs[i]): bytes(pairs[i + 1].EF.F.read_bytes())
                for i in range(0, len(pairs), 2)}


def _removed(result: Result, kind: str) -> list[str]:
    return [f"{f.location} {f.detail}" for f in result.findings
            if f.kind == kind and f.action == "removed"]


def test_pdf_attachments_kept_after_the_engine(samples, tmp_path):
    result = run(samples["attachments.pdf"], tmp_path, {"embeddedFiles": "keep"})
    data = output(result)
    kept = _attachments(data)
    # the names stay listed; the macro document is now a macro-free .docx, the PDF is clean
    assert sorted(kept) == ["bundle.zip", "evil.pdf", "macro.docm", "notes.txt"]
    assert kept["notes.txt"] == b"plain notes\n"  # the /DOS variant (a program) went
    assert kept["evil.pdf"].startswith(b"%PDF-")
    with zipfile.ZipFile(io.BytesIO(kept["bundle.zip"])) as bundle:
        # programs and scripts dropped, at every level
        assert sorted(bundle.namelist()) == ["macro.docx", "nested.zip"]
        with zipfile.ZipFile(io.BytesIO(bundle.read("nested.zip"))) as nested:
            assert nested.namelist() == []
    with pikepdf.open(io.BytesIO(data)) as pdf:
        specs = pdf.Root.Names.EmbeddedFiles.Names
        names = {str(specs[i + 1].F) for i in range(0, len(specs), 2)}
        assert "macro.docx" in names  # the file name follows the new type
        assert not [a for a in pdf.pages[0].get("/Annots", [])
                    if str(a.get("/Subtype")) == "/FileAttachment"]  # the ELF's annotation
    dropped = " | ".join(_removed(result, "embedded_file"))
    for name in ("invoice.exe", "dropper.js", "object.bin", "macho", "tool"):
        assert name in dropped, (name, dropped)
    assert "executables or scripts" in dropped
    assert any("macro.docm" in f.location and f.kind == "macro" for f in result.findings)
    assert any(f.kind == "archive_member" and "invoice.exe" in f.location
               for f in result.findings)


def test_pdf_attachment_in_pdf_follows_the_same_policy(samples, tmp_path):
    result = run(samples["attachments.pdf"], tmp_path, {"embeddedFiles": "keep"})
    inner = _attachments(output(result))["evil.pdf"]
    assert sorted(_attachments(inner)) == []  # its own program and script went
    assert any(f.location.startswith("attachment evil.pdf: attachment a.exe")
               for f in result.findings)


def test_office_embeddings_kept_after_the_engine(samples, tmp_path):
    result = run(samples["embedding.docx"], tmp_path, EVERY_KEEP)
    with zipfile.ZipFile(io.BytesIO(output(result))) as package:
        names = package.namelist()
        rels = package.read("word/_rels/document.xml.rels")
        settings_rels = package.read("word/_rels/settings.xml.rels") \
            if "word/_rels/settings.xml.rels" in names else b""
        inner = package.read("word/embeddings/Macro.docm")
    assert "word/embeddings/oleObject1.bin" not in names
    with zipfile.ZipFile(io.BytesIO(inner)) as embedded:
        assert not any("vbaproject" in n.lower() for n in embedded.namelist())
    assert b"https://attacker.invalid/pixel.png" in rels  # a linked picture is kept
    for active in (b"payload.hta", b"sub.docm"):
        assert active not in rels
    assert b"template.dotm" not in settings_rels
    removed = _removed(result, "ole_object")
    assert any("oleObject1.bin" in r and "may wrap any file" in r for r in removed)
    assert any("rIdLink" in r for r in removed)  # the OLE link
    assert any(f.kind == "remote_template" and "under every policy" in f.detail
               for f in result.findings)
    assert any(f.kind == "external_relationship" and "sub.docm" in f.detail and
               f.action == "removed" for f in result.findings)


def test_odf_objects_under_keep(samples, tmp_path):
    result = run(samples["embedding.odt"], tmp_path, EVERY_KEEP)
    with zipfile.ZipFile(io.BytesIO(output(result))) as package:
        names = package.namelist()
        content = package.read("content.xml")
        inner = package.read("Object 2/content.xml")
    assert "Object 1" not in names and not any("Basic" in n for n in names)
    assert b"EMBEDDED-TEXT" in inner and b"event-listener" not in inner  # cleaned, kept
    assert b"floating-frame" not in content and b"object.odt" not in content
    assert {f.kind for f in result.findings if f.action == "removed"} >= {
        "embedded_object", "ole_object", "external_relationship", "macro"}


# --- the archive limits hold for files inside files ----------------------------------------------

def _pdf_in_pdf(levels: int) -> bytes:
    data = b""
    for level in range(levels):
        pdf = clean_pdf(pages=1, with_image=False)
        if data:
            stream = pikepdf.Stream(pdf, data)
            stream.Type = Name.EmbeddedFile
            spec = pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String(f"level{level}.pdf"),
                                                EF=Dictionary(F=stream)))
            pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=Array([
                String(f"level{level}.pdf"), spec])))
        buffer = io.BytesIO()
        pdf.save(buffer)
        data = buffer.getvalue()
    return data


def _depth(data: bytes) -> int:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        names = pdf.Root.get("/Names")
        tree = names.get("/EmbeddedFiles") if names is not None else None
        pairs = list(tree.Names) if tree is not None else []
        return 1 + _depth(bytes(pairs[1].EF.F.read_bytes())) if pairs else 0


def test_nesting_depth_of_attachments(tmp_path):
    source = tmp_path / "deep.pdf"
    source.write_bytes(_pdf_in_pdf(nested.MAX_DEPTH + 3))
    result = run(source, tmp_path, {"embeddedFiles": "keep"})
    assert _depth(output(result)) == nested.MAX_DEPTH
    assert any(f.kind == "embedded_file" and "nested inside each other too deeply" in f.detail
               for f in result.findings)


def test_count_and_size_budget_shared_by_every_level(tmp_path, monkeypatch):
    pdf = clean_pdf(pages=1, with_image=False)
    pairs = Array()
    for n in range(6):
        stream = pikepdf.Stream(pdf, f"note {n}\n".encode())
        stream.Type = Name.EmbeddedFile
        pairs.extend([String(f"n{n}.txt"), pdf.make_indirect(Dictionary(
            Type=Name.Filespec, F=String(f"n{n}.txt"), EF=Dictionary(F=stream)))])
    pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=pairs))
    source = tmp_path / "many.pdf"
    pdf.save(source)
    monkeypatch.setattr(nested, "MAX_MEMBERS", 4)
    result = run(source, tmp_path, {"embeddedFiles": "keep"})
    assert len(_attachments(output(result))) == 4
    assert sum("too many files inside it" in f.detail for f in result.findings) == 2
    monkeypatch.setattr(nested, "MAX_MEMBERS", 5000)
    monkeypatch.setattr(nested, "MAX_TOTAL_UNCOMPRESSED", 20)
    result = run(source, tmp_path, {"embeddedFiles": "keep"})
    assert len(_attachments(output(result))) == 2  # 7 + 7 bytes fit, the third does not
    assert any("bomb protection" in f.detail for f in result.findings)


def test_flate_bomb_attachment_is_dropped(tmp_path, monkeypatch):
    import zlib

    pdf = clean_pdf(pages=1, with_image=False)
    stream = pikepdf.Stream(pdf, zlib.compress(b"\0" * 5_000_000))
    stream.Filter = Name.FlateDecode
    stream.Type = Name.EmbeddedFile
    pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=Array([String("zeros.bin"),
        pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String("zeros.bin"),
                                     EF=Dictionary(F=stream)))])))
    source = tmp_path / "bomb.pdf"
    pdf.save(source)
    monkeypatch.setattr(nested, "MAX_MEMBER_UNCOMPRESSED", 1_000_000)
    result = run(source, tmp_path, {"embeddedFiles": "keep"})
    assert _attachments(output(result)) == {}
    assert any("bomb protection" in f.detail for f in result.findings)


def test_program_attachment_never_kept_by_any_embedded_files_action(tmp_path):
    pdf = clean_pdf(pages=1, with_image=False)
    stream = pikepdf.Stream(pdf, EXE)
    stream.Type = Name.EmbeddedFile
    pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=Array([String("invoice.exe"),
        pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String("invoice.exe"),
                                     EF=Dictionary(F=stream)))])))
    source = tmp_path / "invoice.pdf"
    pdf.save(source)
    for action in ("keep", "sanitize", "remove"):
        data = output(run(source, tmp_path, {"embeddedFiles": action}))
        assert b"This program cannot be run" not in data
        assert active_content(data, "invoice.pdf") == []
