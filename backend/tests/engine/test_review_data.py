"""Review data and personal traces in office documents: comments, tracked changes, reviewer
lists, rsids. By default comments go and tracked changes are accepted; with the policy
review_data="anonymise" both stay with "Author N" names. Checked by parsing every output part
with lxml, a raw byte scan of every member for the planted names, and (slow) LibreOffice
rendering the outputs to PDF."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from sanitas.engine import odf, ooxml
from sanitas.engine.ooxml.review import NEUTRAL_DATE
from sanitas.engine.report import Context, Finding, Policy
from tests.engine import corpus_office as corpus

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"
REVIEW_CTS = ("comments", "people", "person", "threadedcomments", "revision", "usernames",
              "authors")


def _run(data: bytes, suffix: str, tmp_path: Path, mode: str = "remove"):
    src = tmp_path / f"in-{mode}.{suffix}"
    src.write_bytes(data)
    ctx = Context(policy=Policy().with_rules(reviewData=mode))
    out = tmp_path / f"out-{mode}.{suffix}"
    module = odf if suffix.startswith("od") else ooxml
    assert module.sanitize(src, out, ctx, suffix) == suffix
    return _members(out), ctx


def _members(path_or_bytes) -> dict[str, bytes]:
    import io

    src = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    with zipfile.ZipFile(src) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _leaks(members: dict[str, bytes]) -> list[tuple[str, str]]:
    return [(secret, name) for name, data in members.items()
            for secret in corpus.REVIEW_SECRETS if secret.encode() in data]


def _parse_all(members: dict[str, bytes]) -> dict[str, etree._Element]:
    """Every XML member parses (the output is well-formed throughout)."""
    return {n: etree.fromstring(d) for n, d in members.items()
            if n.endswith((".xml", ".rels", ".vml"))}


def _found(ctx: Context, kind: str, action: str | None = None) -> list[Finding]:
    return [f for f in ctx.findings if f.kind == kind and (action is None or f.action == action)]


def _paragraphs(root) -> list[str]:
    """Visible text per Word paragraph (w:t only: deleted text is w:delText)."""
    return ["".join(t.text or "" for t in p.iter(f"{W}t")) for p in root.iter(f"{W}p")]


def _local_names(root) -> set[str]:
    return {etree.QName(el).localname for el in root.iter() if isinstance(el.tag, str)}


# ------------------------------------------------------------------------------------- Word

@pytest.fixture(scope="module")
def docx_out(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review-docx")
    source = corpus.reviewed_docx()
    return {"source": source, "remove": _run(source, "docx", tmp),
            "anonymise": _run(source, "docx", tmp, "anonymise")}


def test_docx_input_really_carries_the_review_data(docx_out):
    leaks = {s for s, _ in _leaks(_members(docx_out["source"]))}
    assert leaks == set(corpus.REVIEW_SECRETS) - {"Dave Sharer", "carol.mover@example.org"}


def test_docx_comments_and_reviewers_are_removed_with_their_references(docx_out):
    members, ctx = docx_out["remove"]
    assert not _leaks(members)
    names = {n.lower() for n in members}
    for part in ("comments", "commentsextended", "commentsids", "commentsextensible",
                 "people"):
        assert f"word/{part}.xml" not in names
    trees = _parse_all(members)
    ct = members["[Content_Types].xml"].decode().lower()
    rels = members["word/_rels/document.xml.rels"].decode().lower()
    for word in ("comments", "people"):
        assert word not in ct and word not in rels
    doc = trees["word/document.xml"]
    assert not _local_names(doc) & {"commentRangeStart", "commentRangeEnd", "commentReference",
                                    "permStart", "permEnd"}
    assert "commented words and more" in "".join(_paragraphs(doc))
    assert "PERMITTED-NOVEMBER" in _paragraphs(doc)
    comments = {f.location: f for f in _found(ctx, "comments")}
    assert comments["word/comments.xml"].detail == "2 comments by 2 authors removed"
    assert {"word/commentsExtended.xml", "word/commentsIds.xml",
            "word/commentsExtensible.xml"} <= set(comments)
    people = [f for f in _found(ctx, "personal_data") if f.location == "word/people.xml"]
    assert people and people[0].detail.startswith("list of 2 reviewers")
    assert not _found(ctx, "orphan_part") and not _found(ctx, "unknown_part")


def test_docx_tracked_changes_are_accepted_everywhere(docx_out):
    members, ctx = docx_out["remove"]
    trees = _parse_all(members)
    revision_marks = {"ins", "del", "moveFrom", "moveTo", "delText", "moveFromRangeStart",
                      "moveFromRangeEnd", "moveToRangeStart", "moveToRangeEnd", "rPrChange",
                      "pPrChange", "tblPrChange", "trackRevisions", "rsids"}
    for name in ("word/document.xml", "word/header1.xml", "word/footnotes.xml",
                 "word/settings.xml"):
        assert not _local_names(trees[name]) & revision_marks, name
        assert not trees[name].xpath("//@*[starts-with(local-name(), 'rsid') or "
                                     "local-name()='author' or local-name()='date']"), name
    doc = trees["word/document.xml"]
    paras = _paragraphs(doc)
    text = "\n".join(paras)
    for kept in ("Kept sentence. INSERTED-ALPHA", "BOLD-NOW-KILO", "NEW-PARAGRAPH-LIMA",
                 "ROW-KEPT-MIKE", "INSERTED-ROW-ECHO"):
        assert kept in text
    for gone in ("DELETED-BRAVO", "DELETED-ROW-DELTA", "DELETED-TABLE-FOXTROT"):
        assert gone not in members["word/document.xml"].decode()
    assert "JOINED-FIRST JOINED-SECOND" in paras  # the deleted paragraph mark joined them
    assert text.count("MOVED-CHARLIE") == 1 and "MOVED-CHARLIE" in paras  # moved, not doubled
    assert len(doc.findall(f".//{W}tbl")) == 1  # the table whose only row was deleted is gone
    assert len(doc.findall(f".//{W}tbl/{W}tr")) == 2
    bold = [r for r in doc.iter(f"{W}r") if "BOLD-NOW-KILO" in "".join(r.itertext())]
    assert bold[0].find(f"{W}rPr/{W}b") is not None  # the current formatting stays
    header = "".join(_paragraphs(trees["word/header1.xml"]))
    assert "INSERTED-HEADER-HOTEL" in header and "DELETED-HEADER-INDIA" not in header
    notes = members["word/footnotes.xml"].decode()
    assert "FOOTNOTE-KEPT" in notes and "DELETED-FOOTNOTE-GOLF" not in notes
    changes = {f.location: f for f in _found(ctx, "tracked_changes")}
    assert changes["word/document.xml"].action == "converted"
    assert changes["word/document.xml"].detail == (
        "4 insertions accepted, 5 deletions applied, 3 formatting changes accepted "
        "(by 3 reviewers)")
    assert changes["word/header1.xml"].detail.startswith("1 insertion accepted, 1 deletion")
    assert changes["word/footnotes.xml"].detail.startswith("1 deletion applied")
    assert changes["word/settings.xml"].detail == "change tracking switched off"
    rsid = {f.location for f in _found(ctx, "personal_data")
            if f.detail == "rsid session identifiers removed"}
    assert {"word/document.xml", "word/settings.xml", "word/header1.xml"} <= rsid


def test_docx_anonymise_keeps_comments_and_changes_under_aliases(docx_out):
    members, ctx = docx_out["anonymise"]
    assert not _leaks(members)
    trees = _parse_all(members)
    for part in ("comments", "commentsExtended", "commentsIds", "commentsExtensible",
                 "people"):
        assert f"word/{part}.xml" in members
    doc = trees["word/document.xml"]
    # the revisions are still there, unaccepted
    assert {"ins", "del", "moveFrom", "moveTo", "rPrChange"} <= _local_names(doc)
    assert "DELETED-BRAVO" in "".join(t.text for t in doc.iter(f"{W}delText"))
    assert doc.find(f".//{W}commentReference") is not None
    # one alias per person, the same in every part
    ins_author = {el.get(f"{W}author") for el in doc.iter(f"{W}ins")
                  if "INSERTED-ALPHA" in "".join(el.itertext())}
    comments = trees["word/comments.xml"]
    by_text = {"".join(c.itertext()): (c.get(f"{W}author"), c.get(f"{W}initials"))
               for c in comments.iter(f"{W}comment")}
    alice = by_text["COMMENT-JULIET"]
    bob = next(v for k, v in by_text.items() if "COMMENT-OSCAR" in k)
    assert ins_author == {alice[0]}
    assert re.fullmatch(r"Author \d", alice[0]) and alice[1] == "A" + alice[0][-1]
    assert bob[0] != alice[0] and bob[1] == "A" + bob[0][-1]
    assert f"Reply to {alice[0]}: COMMENT-OSCAR" in by_text  # the name in the text too
    del_authors = {el.get(f"{W}author") for el in doc.iter(f"{W}del")}
    assert bob[0] in del_authors
    authors = {v for t in trees.values() for v in t.xpath("//@*[local-name()='author']")}
    assert authors <= {f"Author {i}" for i in range(1, 4)}
    people = trees["word/people.xml"]
    assert sorted(p.get(p.keys()[0]) for p in people) == sorted([alice[0], bob[0]])
    assert not any(etree.QName(e).localname == "presenceInfo" for e in people.iter())
    for tree in trees.values():
        assert not tree.xpath("//@*[local-name()='date' or local-name()='dateUtc']")
    # tracking stays on (the reviewers chose it); rsids go in both modes
    assert "trackRevisions" in _local_names(trees["word/settings.xml"])
    assert "rsids" not in _local_names(trees["word/settings.xml"])
    kept = {f.location: f.detail for f in ctx.findings if f.action == "kept"}
    assert kept["word/comments.xml"] == "2 comments kept, authors anonymised"
    assert kept["word/document.xml"] == "12 tracked changes kept, authors anonymised"
    assert not _found(ctx, "comments", "removed")


def test_docx_nested_table_and_note_emptied_by_deletions_stay_valid(tmp_path):
    row = corpus._row("GONE-ROW", '<w:del w:id="1" w:author="Alice Reviewer"/>')
    inner = corpus._tbl(row)
    body = (f'<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="3000"/></w:tblGrid><w:tr><w:tc>'
            f'{inner}</w:tc></w:tr></w:tbl><w:p><w:r><w:t>after</w:t></w:r></w:p>'
            '<w:p><w:del w:id="2" w:author="Bob Editor"><w:r><w:fldChar w:fldCharType="begin"/>'
            '</w:r><w:r><w:delInstrText> DDEAUTO cmd "/c calc" </w:delInstrText></w:r><w:r>'
            '<w:fldChar w:fldCharType="separate"/></w:r><w:r><w:delText>dde-result</w:delText>'
            '</w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:del></w:p>')
    members, ctx = _run(corpus.docx(body), "docx", tmp_path)
    doc = _parse_all(members)["word/document.xml"]
    cells = list(doc.iter(f"{W}tc"))
    assert len(cells) == 1 and cells[0].find(f"{W}p") is not None  # Word needs a paragraph
    assert cells[0].find(f"{W}tbl") is None
    assert b"GONE-ROW" not in members["word/document.xml"]
    assert b"DDEAUTO" not in members["word/document.xml"]
    # the deleted DDE field went with the deletion, before field checks ran
    assert not _found(ctx, "dde") and not _found(ctx, "field")


# ------------------------------------------------------------------------------------ Excel

def test_xlsx_comments_threads_and_shared_workbook_history_are_removed(tmp_path):
    source = corpus.reviewed_xlsx()
    assert {s for s, _ in _leaks(_members(source))} >= {"Alice Reviewer", "Dave Sharer",
                                                         "carol.mover@example.org"}
    members, ctx = _run(source, "xlsx", tmp_path)
    assert not _leaks(members)
    trees = _parse_all(members)
    assert set(members) == {"[Content_Types].xml", "_rels/.rels", "xl/_rels/workbook.xml.rels",
                            "xl/workbook.xml", "docProps/core.xml", "docProps/app.xml",
                            "xl/worksheets/sheet1.xml", "xl/styles.xml"}
    ct = members["[Content_Types].xml"].decode().lower()
    assert not any(w in ct for w in REVIEW_CTS) and "vml" not in ct
    for data in members.values():
        assert b"XL-OLD-VALUE-TANGO" not in data and b"XL-NOTE-ROMEO" not in data
    sheet = trees["xl/worksheets/sheet1.xml"]
    assert not _local_names(sheet) & {"legacyDrawing", "customSheetViews"}
    assert "Item 3" in members["xl/worksheets/sheet1.xml"].decode()  # current values stay
    wb = trees["xl/workbook.xml"]
    assert "customWorkbookViews" not in _local_names(wb)
    assert all(el.get("userName") is None for el in wb.iter("{*}fileSharing"))
    found = {(f.kind, f.location): f.detail for f in ctx.findings}
    assert found[("comments", "xl/comments1.xml")] == "2 comments by 2 authors removed"
    assert found[("comments", "xl/threadedComments/threadedComment1.xml")] == (
        "1 threaded comment by 1 author removed")
    assert ("comments", "xl/drawings/vmlDrawing1.vml") in found
    assert found[("tracked_changes", "xl/revisions/revisionHeaders.xml")].startswith(
        "shared-workbook change history removed (1 saved revision by 1 user)")
    assert ("personal_data", "xl/persons/person.xml") in found
    assert ("personal_data", "xl/revisions/userNames.xml") in found
    assert not _found(ctx, "orphan_part")  # the revision log went with its headers


def test_xlsx_drawing_with_a_button_keeps_it_and_loses_the_comment_boxes(tmp_path):
    members, ctx = _run(corpus.reviewed_xlsx(with_button=True), "xlsx", tmp_path)
    trees = _parse_all(members)
    vml = members["xl/drawings/vmlDrawing1.vml"].decode()
    assert "BUTTON-QUEBEC" in vml and "VML-NOTE-PAPA" not in vml and "Note" not in vml
    assert "legacyDrawing" in _local_names(trees["xl/worksheets/sheet1.xml"])
    assert [f.detail for f in _found(ctx, "comments")
            if f.location == "xl/drawings/vmlDrawing1.vml"] == ["1 comment box removed"]


def test_xlsx_anonymise_keeps_comments_and_history_under_aliases(tmp_path):
    members, ctx = _run(corpus.reviewed_xlsx(), "xlsx", tmp_path, "anonymise")
    assert not _leaks(members)
    trees = _parse_all(members)
    for part in ("xl/comments1.xml", "xl/threadedComments/threadedComment1.xml",
                 "xl/persons/person.xml", "xl/revisions/revisionHeaders.xml",
                 "xl/revisions/revisionLog1.xml", "xl/revisions/userNames.xml",
                 "xl/drawings/vmlDrawing1.vml"):
        assert part in members
    wb = trees["xl/workbook.xml"]
    sharer = next(wb.iter("{*}fileSharing")).get("userName")
    assert re.fullmatch(r"Author \d", sharer)
    assert next(wb.iter("{*}customWorkbookView")).get("name") == f"{sharer} - Personal View"
    assert next(trees["xl/revisions/revisionHeaders.xml"].iter("{*}header")).get(
        "userName") == sharer
    assert next(trees["xl/revisions/userNames.xml"].iter("{*}userInfo")).get("name") == sharer
    persons = {p.get("id"): p for p in trees["xl/persons/person.xml"].iter("{*}person")}
    assert all(p.get("userId") is None and p.get("providerId") is None
               for p in persons.values())
    bob = persons["{P2}"].get("displayName")
    thread = trees["xl/threadedComments/threadedComment1.xml"]
    assert next(thread.iter("{*}text")).text == f"@{bob} XL-THREAD-SIERRA"
    assert "mentions" not in _local_names(thread)
    assert next(thread.iter("{*}threadedComment")).get("dT").startswith("1970-01-01")
    comments = trees["xl/comments1.xml"]
    authors = [a.text for a in comments.iter("{*}author")]
    assert re.fullmatch(r"Author \d", authors[0])
    assert authors[1].startswith("tc=")  # the link to the threaded comment stays
    assert "".join(comments.itertext()).count(f"{authors[0]}:") == 1  # "Name:" prefix too
    assert {f.location for f in _found(ctx, "comments", "kept")} == {
        "xl/comments1.xml", "xl/threadedComments/threadedComment1.xml"}


# ------------------------------------------------------------------------------- PowerPoint

def test_pptx_classic_and_modern_comments_are_removed(tmp_path):
    source = corpus.reviewed_pptx(corpus.minimal_pptx())
    members, ctx = _run(source, "pptx", tmp_path)
    assert not _leaks(members)
    assert set(members) == {"[Content_Types].xml", "_rels/.rels", "ppt/presentation.xml",
                            "ppt/_rels/presentation.xml.rels", "ppt/slides/slide1.xml"}
    trees = _parse_all(members)
    assert not any(w in members["[Content_Types].xml"].decode().lower() for w in REVIEW_CTS)
    slide = trees["ppt/slides/slide1.xml"]
    assert not _local_names(slide) & {"commentRel", "extLst"}  # the emptied list too
    assert "SLIDE-TEXT-UNIFORM" in "".join(slide.itertext())
    found = {(f.kind, f.location): f.detail for f in ctx.findings}
    assert found[("comments", "ppt/comments/comment1.xml")] == "1 comment by 1 author removed"
    assert found[("comments", "ppt/comments/modernComment_100_1A2B3C4D.xml")] == (
        "2 comments by 1 author removed")
    assert ("personal_data", "ppt/commentAuthors.xml") in found
    assert ("personal_data", "ppt/authors.xml") in found


def test_pptx_anonymise_keeps_comments_under_aliases(tmp_path):
    source = corpus.reviewed_pptx(corpus.minimal_pptx())
    members, ctx = _run(source, "pptx", tmp_path, "anonymise")
    assert not _leaks(members)
    trees = _parse_all(members)
    legacy_author = next(trees["ppt/commentAuthors.xml"].iter("{*}cmAuthor"))
    alice = legacy_author.get("name")
    assert re.fullmatch(r"Author \d", alice) and legacy_author.get("initials") == "A" + alice[-1]
    modern_author = next(trees["ppt/authors.xml"].iter("{*}author"))
    assert modern_author.get("name") != alice and modern_author.get("userId") == \
        modern_author.get("name")
    cm = next(trees["ppt/comments/comment1.xml"].iter("{*}cm"))
    assert cm.get("dt") is None and "".join(cm.itertext()).endswith(f"for {alice}")
    modern = trees["ppt/comments/modernComment_100_1A2B3C4D.xml"]
    assert {c.get("created") for c in modern.iter("{*}cm", "{*}reply")} == {
        NEUTRAL_DATE}
    assert "commentRel" in _local_names(trees["ppt/slides/slide1.xml"])
    assert len(_found(ctx, "comments", "kept")) == 2


# ------------------------------------------------------------------------------------- ODF

def test_odt_changes_accepted_comments_and_rsids_removed(tmp_path):
    source = corpus.reviewed_odt()
    members, ctx = _run(source, "odt", tmp_path)
    assert not _leaks(members)
    content = _parse_all(members)["content.xml"]
    assert not _local_names(content) & {"tracked-changes", "changed-region", "change",
                                        "change-start", "change-end", "annotation",
                                        "annotation-end", "creator", "creator-initials"}
    paras = ["".join(p.itertext()) for p in content.iter(f"{TEXT}p")]
    assert "ODT kept start ODT-INSERTED-ZULU middle end." in paras
    assert "Annotated words here." in paras and "FORMATTED-BERYL" in paras
    raw = members["content.xml"].decode()
    assert "ODT-DELETED-YANKEE" not in raw and "ODT-COMMENT-AMBER" not in raw
    assert "rsid" not in raw
    found = {(f.kind, f.action): f.detail for f in ctx.findings}
    assert found[("tracked_changes", "converted")] == (
        "1 insertion accepted, 1 deletion applied, 1 formatting change accepted "
        "(by 3 reviewers)")
    assert found[("comments", "removed")] == "1 comment by 1 author removed"
    assert found[("personal_data", "removed")] == "rsid session identifiers removed"


def test_ods_and_odp_comments_and_cell_history_removed(tmp_path):
    ods, ods_ctx = _run(corpus.reviewed_ods(), "ods", tmp_path)
    odp, odp_ctx = _run(corpus.reviewed_odp(), "odp", tmp_path)
    for members in (ods, odp):
        assert not _leaks(members)
        assert not _local_names(_parse_all(members)["content.xml"]) & {
            "tracked-changes", "annotation", "creator"}
    assert b"ODS-OLD-CORAL" not in ods["content.xml"] and b"ODS-NOTE-DUNE" not in ods[
        "content.xml"]
    assert b"ODS-CELL-EMBER" in ods["content.xml"]
    assert b"ODP-COMMENT-GLADE" not in odp["content.xml"]
    assert b"ODP-SLIDE-FERN" in odp["content.xml"]
    assert [f.detail for f in _found(ods_ctx, "tracked_changes")] == [
        "1 cell edit accepted (by 1 reviewer)"]
    assert [f.detail for f in _found(odp_ctx, "comments")] == ["1 comment by 1 author removed"]


def test_odf_anonymise_keeps_changes_and_comments_under_aliases(tmp_path):
    members, ctx = _run(corpus.reviewed_odt(), "odt", tmp_path, "anonymise")
    assert not _leaks(members)
    content = _parse_all(members)["content.xml"]
    changes = {etree.QName(r[0]).localname: r[0].find(f".//{DC}creator").text
               for r in content.iter(f"{TEXT}changed-region")}
    note = next(content.iter("{*}annotation"))
    alice = note.find(f"{DC}creator").text
    assert changes["insertion"] == alice and re.fullmatch(r"Author \d", alice)
    assert len(set(changes.values())) == 3
    assert note.find("{*}creator-initials").text == "A" + alice[-1]
    assert note.find(f"{DC}date") is None
    assert "".join(note.itertext()).endswith(f"for {changes['deletion']}")
    assert {d.text for d in content.iter(f"{DC}date")} == {odf.NEUTRAL_DATE}
    assert "ODT-DELETED-YANKEE" in members["content.xml"].decode()  # unaccepted, still there
    assert {f.kind for f in ctx.findings if f.action == "kept"} == {"tracked_changes",
                                                                    "comments"}


# -------------------------------------------------------------------------- policy plumbing

def test_the_policy_reaches_the_engine_through_the_real_sandbox(tmp_path):
    from sanitas.config import Settings
    from sanitas.sandbox import run_sanitizer

    src = tmp_path / "review.docx"
    src.write_bytes(corpus.reviewed_docx())
    settings = Settings(data_dir=tmp_path / "data", sandbox="bwrap", executor_workers=1,
                        secret_key="test-secret-key-that-is-long-enough-0123456789")
    results = {mode: run_sanitizer(src, tmp_path / mode, settings=settings, prewarm=False,
                                   policy=Policy().with_rules(reviewData=mode))
               for mode in ("remove", "anonymise")}
    for mode, result in results.items():
        assert result.status == "ok", result.reason
        members = _members(Path(result.output))
        assert not _leaks(members)
        assert ("word/comments.xml" in members) == (mode == "anonymise")
    assert any(f.kind == "comments" and f.action == "kept"
               for f in results["anonymise"].findings)


# ------------------------------------------------------------------------ LibreOffice (slow)

@pytest.mark.slow
def test_outputs_render_in_libreoffice_with_accepted_text_only(tmp_path):
    from tests.engine.fidelity import pdf_text
    from tests.engine.render_office import convert_many

    src = tmp_path / "src"
    src.mkdir()
    (src / "deck.odp").write_bytes(corpus.clean_odp())
    (src / "letter.docx").write_bytes(corpus.reviewed_docx())
    # LibreOffice-written inputs: a real pptx to add comments to, and an odt as LibreOffice
    # writes tracked changes and comments (from the reviewed docx)
    made = convert_many([src / "deck.odp"], "pptx", src / "pptx", tmp_path / "lo")
    made.update(convert_many([src / "letter.docx"], "odt", src / "odt", tmp_path / "lo"))
    inputs = {
        "rev-docx.docx": corpus.reviewed_docx(), "rev-xlsx.xlsx": corpus.reviewed_xlsx(),
        "rev-pptx.pptx": corpus.reviewed_pptx(made[src / "deck.odp"].read_bytes()),
        "rev-odt.odt": corpus.reviewed_odt(),
        "lo-odt.odt": made[src / "letter.docx"].read_bytes(),
    }
    outputs, originals = {}, {}
    for name, data in inputs.items():
        stem, suffix = name.rsplit(".", 1)
        originals[name] = src / f"orig-{stem}.{suffix}"
        originals[name].write_bytes(data)
        assert _leaks(_members(data)), name
        work = tmp_path / stem
        work.mkdir()
        members, _ctx = _run(data, suffix, work)
        assert not _leaks(members), name
        outputs[name] = (work / f"out-remove.{suffix}").rename(work / f"clean-{stem}.{suffix}")
    pdfs = convert_many([*outputs.values(), *originals.values()], "pdf", tmp_path / "pdf",
                        tmp_path / "lo")
    assert set(pdfs) == {*outputs.values(), *originals.values()}, "LibreOffice refused a file"
    text = {name: pdf_text(pdfs[path]) for name, path in outputs.items()}
    before = {name: pdf_text(pdfs[path]) for name, path in originals.items()}
    for name in ("rev-docx.docx", "lo-odt.odt"):
        for kept in ("INSERTED-ALPHA", "JOINED-FIRST JOINED-SECOND", "MOVED-CHARLIE",
                     "BOLD-NOW-KILO", "INSERTED-HEADER-HOTEL"):
            assert kept in text[name], (name, kept)
        assert text[name].count("MOVED-CHARLIE") == 1, name
        for gone in ("DELETED-BRAVO", "DELETED-HEADER-INDIA", "COMMENT-JULIET"):
            assert gone not in text[name], (name, gone)
    # LibreOffice shows tracked deletions in the originals: the check above can fail
    assert "DELETED-BRAVO" in before["rev-docx.docx"]
    assert "DELETED-ROW-DELTA" not in text["rev-docx.docx"]
    assert "ODT-INSERTED-ZULU" in text["rev-odt.odt"]
    assert "ODT-DELETED-YANKEE" not in text["rev-odt.odt"]
    assert "ODT-DELETED-YANKEE" in before["rev-odt.odt"]
    assert "Item 3" in text["rev-xlsx.xlsx"] and "XL-NOTE-ROMEO" not in text["rev-xlsx.xlsx"]
    assert text["rev-pptx.pptx"].strip()
