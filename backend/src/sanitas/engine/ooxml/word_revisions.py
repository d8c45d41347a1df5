"""Word's review data: tracked changes accepted in place (or kept with their reviewers
anonymised), comment anchors, rsid session identifiers, editing permissions naming a user."""

from __future__ import annotations

from lxml import etree

from sanitas.engine.office_package import plural, remove_element, revision_summary, unwrap
from sanitas.engine.ooxml.common import attached, elements, ns_of, w_attr
from sanitas.engine.ooxml.state import PackageReview, PackageState
from sanitas.engine.opc import W_NSS, local_name
from sanitas.engine.policy import Rule

# Word revision records of formatting changes: accepting them keeps the current formatting.
W_PROP_CHANGES = ("rPrChange", "pPrChange", "sectPrChange", "tblPrChange", "trPrChange",
                  "tcPrChange", "tblGridChange", "tblPrExChange", "numberingChange")

W_RANGE_MARKS = ("moveFromRangeStart", "moveFromRangeEnd", "moveToRangeStart", "moveToRangeEnd",
                 "customXmlInsRangeStart", "customXmlInsRangeEnd", "customXmlDelRangeStart",
                 "customXmlDelRangeEnd", "customXmlMoveFromRangeStart",
                 "customXmlMoveFromRangeEnd", "customXmlMoveToRangeStart",
                 "customXmlMoveToRangeEnd")

W_COMMENT_MARKS = ("commentRangeStart", "commentRangeEnd", "commentReference")

# Elements that must hold at least one paragraph.
W_BLOCK_HOLDERS = ("tc", "footnote", "endnote", "comment", "hdr", "ftr", "txbxContent",
                   "docPartBody")

# Body-level markers that travel with a paragraph merged into the next one.
W_PARA_NEIGHBOURS = ("bookmarkStart", "bookmarkEnd", "permStart", "permEnd", "proofErr",
                     "commentRangeStart", "commentRangeEnd")


def review_word(state: PackageState, part: str, root: etree._Element, anonymise: bool,
                review: PackageReview, probe: bytes) -> None:
    ctx = state.ctx
    if b"rsid" in probe:
        removed = 0
        for el in elements(root, W_NSS, "rsids"):
            remove_element(el)
            removed += 1
        for value in root.xpath("//@*[starts-with(local-name(), 'rsid')]"):
            el = value.getparent()
            if etree.QName(value.attrname).namespace in W_NSS and value.attrname in el.attrib:
                del el.attrib[value.attrname]
                removed += 1
        if removed:
            ctx.add("personal_data", part, detail="rsid session identifiers removed",
                    rule=Rule.DOCUMENT_METADATA)
    # Editing-permission ranges naming a user account (not review data: gone in both modes).
    named = {p.get(f"{{{ns_of(p)}}}id") for p in elements(root, W_NSS, "permStart")
             if w_attr(p, "ed")}
    if named:
        for el in elements(root, W_NSS, "permStart", "permEnd"):
            if el.get(f"{{{ns_of(el)}}}id") in named:
                remove_element(el)
        ctx.add("personal_data", part,
                detail=f"{plural(len(named), 'editing permission')} naming a user removed")
    if anonymise:
        _anonymise_word(state, part, root, review)
        return
    if local_name(root) == "settings":
        for el in elements(root, W_NSS, "trackRevisions"):
            if w_attr(el, "val") not in ("0", "false", "off"):
                ctx.add("tracked_changes", part, detail="change tracking switched off")
            remove_element(el)
    ins, dels, fmt, authors = _accept_word_revisions(root)
    if ins or dels or fmt:
        ctx.add("tracked_changes", part, action="converted",
                detail=revision_summary(ins, dels, fmt, len(authors)))
    marks = 0
    for el in elements(root, W_NSS, *W_COMMENT_MARKS):
        if attached(el, root):
            marks += 1
            _remove_from_run(el)
    if marks:
        ctx.add("comments", part, detail="comment anchors removed")
    # Whatever still carries a reviewer's name or a date (unknown revision elements).
    stray = root.xpath("//@*[namespace-uri() != '' and (local-name()='author' or "
                       "local-name()='initials' or local-name()='date' or "
                       "local-name()='dateUtc')]")
    for value in stray:
        el = value.getparent()
        if value.attrname in el.attrib:
            del el.attrib[value.attrname]
    if stray:
        ctx.add("personal_data", part, detail="reviewer names and dates removed")


def _remove_from_run(el: etree._Element) -> None:
    run = el.getparent()
    remove_element(el)
    if run is not None and local_name(run) == "r" and not any(local_name(c) != "rPr" for c in run):
        remove_element(run)


def _accept_word_revisions(root: etree._Element) -> tuple[int, int, int, set[str]]:
    """Accept every tracked change in one Word part, in place. Returns (insertions, deletions,
    formatting changes, reviewers)."""
    ins = dels = fmt = 0
    authors: set[str] = set()

    def note(el: etree._Element) -> None:
        author = w_attr(el, "author")
        if author:
            authors.add(author)

    for el in elements(root, W_NSS, *W_PROP_CHANGES):
        if attached(el, root):
            note(el)
            fmt += 1
            parent = el.getparent()
            remove_element(el)
            _drop_if_empty(parent)
    merge = []  # paragraphs whose mark was deleted, in document order
    # Markers inside property elements: inserted/deleted paragraph marks, rows and cells.
    for el in elements(root, W_NSS, "ins", "del", "moveFrom", "moveTo", "cellIns", "cellDel",
                    "cellMerge"):
        if not attached(el, root):
            continue
        parent = el.getparent()
        if parent is None:  # the part's root itself: not a revision mark inside properties
            continue
        name, pname = local_name(el), local_name(parent)
        if not pname.endswith("Pr"):
            continue  # a content container, handled below
        note(el)
        if name in ("del", "moveFrom"):
            dels += 1
            owner = parent.getparent()
            if pname == "trPr" and owner is not None and local_name(owner) == "tr":
                remove_element(owner)
                continue
            if pname == "rPr" and owner is not None and local_name(owner) == "pPr":
                para = owner.getparent()
                if para is not None and local_name(para) == "p":
                    merge.append(para)
        elif name == "cellDel":
            dels += 1
            cell = parent.getparent()
            if cell is not None and local_name(cell) == "tc":
                remove_element(cell)
                continue
        elif name == "cellMerge":
            fmt += 1
        else:
            ins += 1
        remove_element(el)
        _drop_if_empty(parent)
    for el in elements(root, W_NSS, "del", "moveFrom"):
        if attached(el, root):
            note(el)
            dels += 1
            remove_element(el)
    for el in elements(root, W_NSS, "ins", "moveTo"):
        if attached(el, root):
            note(el)
            ins += 1
            unwrap(el)
    for el in elements(root, W_NSS, *W_RANGE_MARKS, "delText", "delInstrText"):
        if attached(el, root):
            _remove_from_run(el)
    for para in reversed(merge):  # backwards: each run of text moves once
        if attached(para, root):
            _merge_into_next(para)
    if dels:
        _repair_blocks(root)
    return ins, dels, fmt, authors


def _drop_if_empty(props: etree._Element | None) -> None:
    """A property element (w:rPr of a paragraph mark, w:trPr...) emptied by accepting goes,
    and so does its parent property element when that is left empty in turn."""
    while props is not None and local_name(props).endswith("Pr") and not len(props) \
            and not props.attrib and local_name(props) not in ("tblPr", "sectPr"):  # required
        parent = props.getparent()
        remove_element(props)
        props = parent


def _merge_into_next(para: etree._Element) -> None:
    """A deleted paragraph mark joins the paragraph to the next one, which keeps its own
    paragraph properties."""
    travellers = []
    nxt = para.getnext()
    while nxt is not None and local_name(nxt) in W_PARA_NEIGHBOURS:
        travellers.append(nxt)
        nxt = nxt.getnext()
    if nxt is None or local_name(nxt) != "p" or ns_of(nxt) != ns_of(para):
        return  # the last paragraph before a table or a section end stays a paragraph
    moving = [c for c in para if local_name(c) != "pPr"] + travellers
    anchor = next((c for c in nxt if local_name(c) != "pPr"), None)
    for child in moving:
        if anchor is None:
            nxt.append(child)
        else:
            anchor.addprevious(child)
    remove_element(para)


def _repair_blocks(root: etree._Element) -> None:
    """Tables left without rows go; cells, notes and headers left without a paragraph get an
    empty one (Word refuses them otherwise)."""
    for tbl in elements(root, W_NSS, "tbl"):
        if attached(tbl, root) and not tbl.xpath(".//*[local-name()='tr']"):
            remove_element(tbl)
    for holder in elements(root, W_NSS, *W_BLOCK_HOLDERS):
        if not attached(holder, root):
            continue
        blocks = [c for c in holder if local_name(c) in ("p", "tbl", "sdt", "customXml")]
        if not blocks or (local_name(holder) == "tc" and local_name(blocks[-1]) == "tbl"):
            etree.SubElement(holder, f"{{{ns_of(holder)}}}p")


def _anonymise_word(state: PackageState, part: str, root: etree._Element,
                    review: PackageReview) -> None:
    ctx = state.ctx
    changes = 0
    tracked = (*W_PROP_CHANGES, "ins", "del", "moveFrom", "moveTo", "cellIns", "cellDel",
               "cellMerge")
    for el in root.xpath("//*[@*[local-name()='author' or local-name()='initials' or "
                         "local-name()='date' or local-name()='dateUtc']]"):
        author = w_attr(el, "author")
        for attr in list(el.attrib):
            lname = attr.rpartition("}")[2]
            if lname == "author":
                el.set(attr, review.alias(author))
            elif lname == "initials":
                el.set(attr, review.initials(author or el.get(attr)))
            elif lname in ("date", "dateUtc"):
                del el.attrib[attr]
        if local_name(el) in tracked:
            changes += 1
    if local_name(root) == "comments":
        review.scrub_text(root)
        n = len(elements(root, W_NSS, "comment"))
        ctx.add("comments", part, action="kept",
                detail=f"{plural(n, 'comment')} kept, authors anonymised")
    elif changes:
        ctx.add("tracked_changes", part, action="kept",
                detail=f"{plural(changes, 'tracked change')} kept, authors anonymised")


def anonymise_word_people(state: PackageState, part: str, root: etree._Element,
                          review: PackageReview) -> None:
    """people.xml and commentsExtensible: reviewer names, accounts and dates."""
    if local_name(root) == "people":
        for person in root.iter("{*}person"):
            for attr in list(person.attrib):
                if attr.rpartition("}")[2] == "author":
                    person.set(attr, review.alias(person.attrib[attr]))
            for info in list(person):
                if local_name(info) == "presenceInfo":  # the sign-in account (an e-mail address)
                    remove_element(info)
        state.ctx.add("personal_data", part, action="kept", detail="reviewer list anonymised")
    if "/office/word/" in ns_of(root):  # commentsExtensible: when each comment was written
        for value in root.xpath("//@*[local-name()='dateUtc' or local-name()='date']"):
            el = value.getparent()
            if value.attrname in el.attrib:
                del el.attrib[value.attrname]
