"""PDF: every hiding place emptied (checked on qpdf's fully decompressed output), the document
itself intact (SSIM), links as policy says."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest

from sanitas.engine import sanitize_file
from sanitas.engine.report import Policy
from tests.engine.fidelity import min_page_ssim
from tests.engine.pdfscan import pdf_dangers, qpdf_expanded


@pytest.mark.parametrize("name", ["hostile.pdf", "hostile-objstm.pdf", "incremental.pdf",
                                  "polyglot.pdf"])
def test_no_active_content_survives(corpus, out_dir, name):
    result = sanitize_file(corpus[name], out_dir)
    assert result.status == "ok", result.reason
    assert pdf_dangers(Path(result.output)) == set()


def test_hostile_findings_name_each_hiding_place(corpus, out_dir):
    result = sanitize_file(corpus["hostile.pdf"], out_dir)
    kinds = {f.kind for f in result.findings}
    assert {"open_action", "javascript", "additional_action", "launch_action", "submit_form",
            "import_data", "remote_goto", "embedded_goto", "embedded_file", "file_attachment",
            "rich_media", "3d_content", "movie", "sound", "xfa_form", "form_field_script",
            "document_info", "xmp_metadata", "unsafe_link"} <= kinds
    assert all(f.action in ("removed", "converted", "kept") for f in result.findings)


def test_incremental_update_and_trailer_are_reported(corpus, out_dir):
    inc = sanitize_file(corpus["incremental.pdf"], out_dir)
    assert {"incremental_update", "open_action"} <= {f.kind for f in inc.findings}
    poly = sanitize_file(corpus["polyglot.pdf"], out_dir)
    assert "trailing_data" in {f.kind for f in poly.findings}
    data = Path(poly.output).read_bytes()
    assert b"PK\x03\x04" not in data and data.rstrip().endswith(b"%%EOF")


def test_safe_links_kept_by_default_and_removed_by_policy(corpus, out_dir):
    kept = sanitize_file(corpus["hostile.pdf"], out_dir)
    with pikepdf.open(kept.output) as pdf:
        uris = [str(a.A.URI) for a in pdf.pages[0].Annots if "/A" in a and "/URI" in a.A]
        gotos = [a for a in pdf.pages[0].Annots if "/A" in a and a.A.S == "/GoTo"]
    assert uris == ["https://example.com/ok"] and len(gotos) == 1
    removed = sanitize_file(corpus["hostile.pdf"], out_dir,
                            policy=Policy().with_rules(hyperlinks="remove"))
    assert b"example.com" not in qpdf_expanded(Path(removed.output))
    assert any(f.kind == "link" for f in removed.findings)


def test_document_survives_visually(corpus, out_dir):
    for name in ("clean.pdf", "hostile.pdf", "incremental.pdf"):
        result = sanitize_file(corpus[name], out_dir)
        assert min_page_ssim(corpus[name], Path(result.output)) >= 0.98, name


def test_structure_kept(corpus, out_dir):
    result = sanitize_file(corpus["hostile.pdf"], out_dir)
    with pikepdf.open(result.output) as pdf:
        assert len(pdf.pages) == 2
        assert "/Outlines" in pdf.Root and "/AcroForm" in pdf.Root
        assert len(pdf.Root.AcroForm.Fields) == 2
        assert "/Info" not in pdf.trailer


def test_damaged_pdf_rejected_with_reason(tmp_path, out_dir):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\n%%EOF")
    result = sanitize_file(broken, out_dir)
    assert result.status == "rejected"
    assert result.reason and "PDF" in result.reason


def test_external_streams_and_reference_xobjects_removed(tmp_path, out_dir):
    from pikepdf import Dictionary, Name, String

    from tests.engine.corpus import clean_pdf, save_pdf

    pdf = clean_pdf(pages=1, with_image=False)
    external = pdf.make_stream(b"", F=String("\\\\EVIL\\share\\data.bin"))
    form = pdf.make_stream(b"", Type=Name.XObject, Subtype=Name.Form, BBox=[0, 0, 10, 10],
                           Ref=Dictionary(F=String("EVIL-other.pdf"), Page=0))
    pdf.pages[0].Resources.XObject = Dictionary(Ext=external, Fm=form)
    source = save_pdf(pdf, tmp_path / "external.pdf")
    result = sanitize_file(source, out_dir)
    assert result.status == "ok"
    assert b"EVIL" not in qpdf_expanded(Path(result.output))
    assert any(f.kind == "external_reference" for f in result.findings)


def test_non_action_s_keys_survive(tmp_path, out_dir):
    """/S also names transparency groups, border styles and structure types: not actions."""
    from pikepdf import Array, Dictionary, Name

    from tests.engine.corpus import clean_pdf, save_pdf

    pdf = clean_pdf(pages=1, with_image=False)
    page = pdf.pages[0]
    page.obj.Group = Dictionary(S=Name.Transparency, CS=Name.DeviceRGB)
    page.Annots = Array([pdf.make_indirect(Dictionary(
        Type=Name.Annot, Subtype=Name.Link, Rect=Array([0, 0, 10, 10]),
        BS=Dictionary(S=Name.D, W=1), Dest=Array([page.obj, Name.Fit])))])
    element = pdf.make_indirect(Dictionary(S=Name.P, K=0, Pg=page.obj))
    pdf.Root.StructTreeRoot = Dictionary(Type=Name.StructTreeRoot, K=Array([element]))
    result = sanitize_file(save_pdf(pdf, tmp_path / "tagged.pdf"), out_dir)
    with pikepdf.open(result.output) as out:
        assert out.pages[0].obj.Group.S == "/Transparency"
        assert out.pages[0].Annots[0].BS.S == "/D"
        assert out.Root.StructTreeRoot.K[0].S == "/P"
