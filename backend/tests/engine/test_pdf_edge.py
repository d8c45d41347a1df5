"""PDF edge cases: permissions-only encryption, user passwords, truncated files, and the
authors of annotations (comments) - with form field names, which are not authors, kept."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from pikepdf import Array, Dictionary, Name, String

from sanitas.engine import pdf as pdf_family
from sanitas.engine import sanitize_file
from sanitas.engine.report import Context, Policy, Rejected, RejectionCode
from tests.engine.corpus import clean_pdf, hostile_pdf, save_pdf

PASSWORD = "Tr0ub4dor-&-3"
CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b")


def strictly_valid(path: Path) -> int:
    """pikepdf opens it with recovery off and no warning, and PDFium agrees on the pages."""
    with pikepdf.open(path, attempt_recovery=False) as pdf:
        pages = len(pdf.pages)
        for _ in pdf.objects:
            pass
        assert pdf.get_warnings() == []
        assert not pdf.is_encrypted
    document = pdfium.PdfDocument(str(path))
    try:
        assert len(document) == pages
        document[0].render(scale=0.2).close()
    finally:
        document.close()
    return pages


def _run(src: Path, tmp_path: Path, password: str | None = None,
         policy: Policy | None = None) -> tuple[Path, Context]:
    """The PDF sanitizer itself, with a password in the Context (as the sandbox child sets
    it from the upload)."""
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    ctx = Context(workdir=workdir, password=password, policy=policy or Policy())
    dst = tmp_path / "out.pdf"
    assert pdf_family.sanitize(src, dst, ctx) == "pdf"
    return dst, ctx


def _findings(ctx: Context) -> set[tuple[str, str, str, str]]:
    return {(f.kind, f.location, f.action, f.detail) for f in ctx.closed_findings()}


# --- encryption ------------------------------------------------------------------------------

def test_owner_password_only_pdf_is_opened_and_comes_out_unencrypted(tmp_path, out_dir):
    src = tmp_path / "restricted.pdf"
    clean_pdf(pages=3).save(src, encryption=pikepdf.Encryption(
        owner="o", user="", allow=pikepdf.Permissions(extract=False, modify_other=False)))
    with pikepdf.open(src) as check:
        assert check.is_encrypted and not check.allow.extract
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    assert strictly_valid(Path(result.output)) == 3
    raw = Path(result.output).read_bytes()
    assert b"/Encrypt" not in raw
    found = [(f.kind, f.location, f.action, f.detail) for f in result.findings]
    assert ("encryption", "document", "removed",
            "permissions password and restrictions removed") in found
    # the text is readable again (it was encrypted in the input)
    document = pdfium.PdfDocument(result.output)
    try:
        assert "Page 2" in document[1].get_textpage().get_text_range()
    finally:
        document.close()


@pytest.fixture
def locked(tmp_path) -> Path:
    src = tmp_path / "locked.pdf"
    clean_pdf(pages=2).save(src, encryption=pikepdf.Encryption(owner="owner-secret",
                                                                user=PASSWORD))
    return src


def test_user_password_pdf_without_a_password_is_refused_as_encrypted(locked, tmp_path,
                                                                      out_dir):
    result = sanitize_file(locked, out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.ENCRYPTED
    assert "password" in result.reason and "upload" in result.reason.lower()
    with pytest.raises(Rejected) as refused:
        _run(locked, tmp_path)
    assert refused.value.code == RejectionCode.ENCRYPTED


def test_a_wrong_password_is_refused_as_such(locked, tmp_path, caplog):
    with caplog.at_level(logging.DEBUG), pytest.raises(Rejected) as refused:
        _run(locked, tmp_path, password="not-" + PASSWORD)
    assert refused.value.code == RejectionCode.WRONG_PASSWORD
    assert refused.value.reason == "The password given does not open the PDF."
    assert PASSWORD not in caplog.text


@pytest.mark.parametrize("password", [PASSWORD, "owner-secret"])
def test_the_right_password_opens_it_and_the_output_is_not_encrypted(locked, tmp_path, caplog,
                                                                     password):
    with caplog.at_level(logging.DEBUG):
        dst, ctx = _run(locked, tmp_path, password=password)
    assert strictly_valid(dst) == 2
    assert ("encryption", "document", "removed",
            "opened with the password given; the output is not encrypted") in _findings(ctx)
    report = json.dumps([vars(f) for f in ctx.closed_findings()])
    assert password not in report and password not in caplog.text
    assert password not in repr(ctx)
    assert password.encode() not in dst.read_bytes()


def test_a_password_given_for_an_unencrypted_pdf_changes_nothing(tmp_path):
    src = save_pdf(clean_pdf(pages=1), tmp_path / "plain.pdf")
    dst, ctx = _run(src, tmp_path, password="unused")
    assert strictly_valid(dst) == 1
    assert not [f for f in ctx.closed_findings() if f.kind == "encryption"]


def test_a_certificate_encrypted_pdf_is_refused_as_encrypted(tmp_path, out_dir):
    """A security handler other than the password one (public-key, recipients' certificates)
    is encrypted, not damaged."""
    src = tmp_path / "standard.pdf"
    clean_pdf(pages=1).save(src, object_stream_mode=pikepdf.ObjectStreamMode.disable,
                            encryption=pikepdf.Encryption(owner="o", user="", R=4, aes=False,
                                                          metadata=False))
    data = src.read_bytes()
    assert data.count(b"/Filter /Standard") == 1
    src.write_bytes(data.replace(b"/Filter /Standard", b"/Filter /PubSecXX"))
    result = sanitize_file(src, out_dir)
    assert (result.status, result.code) == ("rejected", RejectionCode.ENCRYPTED)
    assert "certificates" in result.reason


# --- truncated files -------------------------------------------------------------------------

@pytest.mark.parametrize("name,make,object_streams", [
    ("clean", lambda: clean_pdf(pages=4), False),
    ("clean-objstm", lambda: clean_pdf(pages=4), True),
    ("hostile", hostile_pdf, False),
])
def test_a_truncated_pdf_comes_out_valid_or_is_refused_as_damaged(name, make, object_streams,
                                                                 tmp_path, out_dir):
    data = save_pdf(make(), tmp_path / f"{name}.pdf", object_streams=object_streams).read_bytes()
    outcomes = {"ok": 0, "damaged": 0}
    problems = []
    for step in range(1, 30):
        cut = len(data) * step // 30
        src = tmp_path / f"{name}-{cut}.pdf"
        src.write_bytes(data[:cut])
        result = sanitize_file(src, out_dir, original_name=f"{name}.pdf")
        if result.status == "rejected":
            if result.code not in (RejectionCode.DAMAGED, RejectionCode.NO_CONTENT) or \
                    CLASS_NAME.search(result.reason or ""):
                problems.append(f"cut {cut}: {result.code} {result.reason!r}")
            outcomes["damaged"] += 1
            continue
        try:
            assert strictly_valid(Path(result.output)) >= 1
        except (AssertionError, pikepdf.PdfError, pdfium.PdfiumError) as exc:
            problems.append(f"cut {cut}: released but invalid: {exc!r:.200}")
        outcomes["ok"] += 1
        Path(result.output).unlink()
    assert not problems, (outcomes, problems)
    # qpdf rebuilds a cut file from its objects; one whose objects sit in object streams
    # indexed by the (lost) cross-reference stream cannot be rebuilt
    assert outcomes["damaged" if object_streams else "ok"] > 0, outcomes


def test_an_unreadable_rebuild_of_a_damaged_pdf_is_refused_as_damaged(tmp_path, out_dir,
                                                                      monkeypatch):
    """When the read-back fails, a damaged (repaired) input is the reason, not the engine."""
    def failing_check(path, pages):
        raise Rejected(pdf_family.UNREADABLE_OUTPUT, RejectionCode.INVALID_OUTPUT)

    monkeypatch.setattr(pdf_family, "check_output", failing_check)
    data = save_pdf(clean_pdf(pages=2), tmp_path / "whole.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[:-40])  # the trailer and %%EOF gone: qpdf repairs it
    result = sanitize_file(cut, out_dir)
    assert (result.status, result.code) == ("rejected", RejectionCode.DAMAGED)
    result = sanitize_file(tmp_path / "whole.pdf", out_dir)
    assert (result.status, result.code) == ("rejected", RejectionCode.INVALID_OUTPUT)
    assert list(out_dir.iterdir()) == []


# --- annotation authors ----------------------------------------------------------------------

JANE, BOB = "Jane Plantedauthor", "Bob Secondreviewer"


def annotated_pdf(path: Path) -> Path:
    """Two pages of comments by two people (a note with its pop-up, a reply, a highlight, a
    free-text box, an ink mark, a link) and a form whose field names must survive."""
    pdf = clean_pdf(pages=2, with_image=False)
    page1, page2 = pdf.pages[0], pdf.pages[1]

    def annot(**entries):
        return pdf.make_indirect(Dictionary(Type=Name.Annot, Rect=Array([72, 600, 200, 640]),
                                            **entries))

    note = annot(Subtype=Name.Text, T=String(JANE), Contents=String("Please fix this sentence"),
                 M=String("D:20240501120000Z"), CreationDate=String("D:20240501110000Z"),
                 NM=String(f"{JANE}-0001"))
    popup = annot(Subtype=Name.Popup, Parent=note, T=String(JANE))
    note.Popup = popup
    reply = annot(Subtype=Name.Text, T=String(BOB), IRT=note, RT=Name.R,
                  Contents=String("Done"), NM=String("4f1c0de2-reply"),
                  RC=String("<body><p>Done</p></body>"))
    highlight = annot(Subtype=Name.Highlight, T=String(BOB), M=String("D:20240502"),
                      QuadPoints=Array([72, 640, 200, 640, 72, 600, 200, 600]))
    free = annot(Subtype=Name.FreeText, T=String(JANE), Contents=String("Margin note"),
                 DA=String("/Helv 10 Tf 0 g"))
    ink = annot(Subtype=Name.Ink, T=String("  "), InkList=Array([Array([80, 610, 120, 630])]))
    link = annot(Subtype=Name.Link, A=Dictionary(S=Name.URI, URI=String("https://example.com")))
    page1.obj.Annots = Array([note, popup, reply, highlight, link])
    # a text field (merged with its widget) and a radio group (a parent with widget kids)
    field = pdf.make_indirect(Dictionary(
        Type=Name.Annot, Subtype=Name.Widget, FT=Name.Tx, T=String("customer_name_field"),
        V=String("ACME"), Rect=Array([72, 500, 300, 520]), P=page2.obj))
    group = pdf.make_indirect(Dictionary(FT=Name.Btn, Ff=49152, T=String("delivery_choice"),
                                         Kids=Array()))
    kid = pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Widget, Parent=group,
                                       Rect=Array([72, 450, 90, 468]), P=page2.obj,
                                       AS=Name.Off))
    group.Kids.append(kid)
    page2.obj.Annots = Array([free, ink, field, kid])
    pdf.Root.AcroForm = Dictionary(Fields=Array([field, group]))
    return save_pdf(pdf, path)


def _uncompressed(path: Path) -> bytes:
    with pikepdf.open(path) as pdf:
        buffer = io.BytesIO()
        pdf.save(buffer, compress_streams=False,
                 object_stream_mode=pikepdf.ObjectStreamMode.disable)
    return buffer.getvalue()


def _annotations(path: Path) -> list[dict]:
    with pikepdf.open(path) as pdf:
        return [{key: str(value) for key, value in annot.items()
                 if key in ("/Subtype", "/T", "/M", "/CreationDate", "/NM", "/Contents", "/RC")}
                for page in pdf.pages for annot in page.obj.get("/Annots", [])]


def test_annotation_authors_and_dates_are_removed_and_field_names_kept(tmp_path, out_dir):
    src = annotated_pdf(tmp_path / "reviewed.pdf")
    assert JANE.encode() in src.read_bytes() and BOB.encode() in src.read_bytes()
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    output = Path(result.output)
    assert strictly_valid(output) == 2
    raw = _uncompressed(output)
    assert b"Plantedauthor" not in raw and b"Secondreviewer" not in raw
    assert b"D:2024050" not in raw  # no annotation dates
    assert b"customer_name_field" in raw and b"delivery_choice" in raw  # field names kept
    assert b"Please fix this sentence" in raw and b"Margin note" in raw  # comments kept
    assert b"4f1c0de2-reply" in raw  # a neutral unique name is kept
    annotations = _annotations(output)
    assert not any("/T" in a for a in annotations if a["/Subtype"] != "/Widget")
    found = {(f.kind, f.location, f.action, f.detail) for f in result.findings}
    # note, its pop-up, the reply, the highlight, the free text and the ink mark
    assert ("personal_data", "annotations", "removed",
            "author names of 6 annotations removed") in found
    assert ("personal_data", "annotation dates", "removed",
            "creation and modification dates of 2 annotations removed") in found
    assert any(f[0] == "personal_data" and f[1] == "annotation names" for f in found)
    with pikepdf.open(output) as pdf:
        assert {str(f.T) for f in pdf.Root.AcroForm.Fields} == {"customer_name_field",
                                                                 "delivery_choice"}


def test_annotation_authors_anonymised_consistently(tmp_path):
    src = annotated_pdf(tmp_path / "reviewed.pdf")
    dst, ctx = _run(src, tmp_path, policy=Policy().with_rules(reviewData="anonymise"))
    assert strictly_valid(dst) == 2
    with pikepdf.open(dst) as pdf:
        annots = list(pdf.pages[0].obj.Annots) + list(pdf.pages[1].obj.Annots)
        by_subtype = {str(a.Subtype): a for a in annots}
        note, reply = annots[0], annots[2]  # page 1: note, pop-up, reply, highlight, link
        assert str(note.T) == "Author 1" and str(note.Popup.T) == "Author 1"
        assert str(reply.T) == "Author 2" and str(reply.IRT.T) == "Author 1"
        assert str(by_subtype["/Highlight"].T) == "Author 2"
        assert str(by_subtype["/FreeText"].T) == "Author 1"
        assert "/T" not in by_subtype["/Ink"]  # a blank author is no one
        assert not any("/M" in a or "/CreationDate" in a for a in annots)
        assert str(pdf.pages[1].obj.Annots[2].T) == "customer_name_field"  # the text field
        assert str(pdf.pages[1].obj.Annots[3].Parent.T) == "delivery_choice"
    raw = _uncompressed(dst)
    assert b"Plantedauthor" not in raw and b"Secondreviewer" not in raw
    assert ("personal_data", "annotations", "converted",
            "author names of 6 annotations replaced by 2 placeholders (Author 1, Author 2...)"
            ) in _findings(ctx)


def test_a_pdf_without_annotations_reports_no_authors(corpus, out_dir):
    result = sanitize_file(corpus["clean.pdf"], out_dir)
    assert result.status == "ok"
    assert not [f for f in result.findings if f.kind == "personal_data"]


def test_the_original_document_id_does_not_survive(tmp_path):
    import pikepdf

    from sanitas.engine import sanitize_file

    source = pikepdf.new()
    source.add_blank_page()
    source.trailer.ID = pikepdf.Array([pikepdf.String(b"ORIGINAL-ID-0123"),
                                       pikepdf.String(b"ORIGINAL-ID-4567")])
    source.save(tmp_path / "in.pdf")
    (tmp_path / "out").mkdir()
    result = sanitize_file(tmp_path / "in.pdf", tmp_path / "out")
    assert result.status == "ok", result.reason
    with pikepdf.open(result.output) as out:
        assert bytes(out.trailer.ID[0]) not in (b"ORIGINAL-ID-0123", b"ORIGINAL-ID-4567")
    assert b"ORIGINAL-ID" not in Path(result.output).read_bytes()
