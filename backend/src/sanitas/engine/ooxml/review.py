"""Review data (policy reviewData): comments, reviewers and revision history. By default the
comments go and every tracked change is accepted, as Word's "Accept All" does; with
"anonymise" both stay and each reviewer becomes "Author 1", "Author 2"... consistently across
the whole package, with the dates dropped. Word's tracked changes are in `word_revisions`."""

from __future__ import annotations

import contextlib
import re

from lxml import etree

from sanitas.engine.office_package import plural, remove_element
from sanitas.engine.ooxml.common import REL_NAMESPACES, VML_NS, Rel, elements, ns_of, w_attr
from sanitas.engine.ooxml.state import PackageReview, PackageState, read_rels
from sanitas.engine.ooxml.word_revisions import anonymise_word_people, review_word
from sanitas.engine.opc import W_NSS, local_name, resolve_target
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Rejected
from sanitas.engine.xmlsafe import parse_xml

# Comments, tracked changes and the people behind them. By default (policy review_data
# "remove") the comments go and every tracked change is accepted, as Word's "Accept All" does;
# with "anonymise" both stay and each reviewer becomes "Author 1", "Author 2"... consistently
# across the whole package, with the dates dropped.

# Relationship types (key) of parts that hold comments, reviewers or revision history.
REVIEW_RELS = {
    "comments", "commentsextended", "commentsids", "commentsextensible", "threadedcomment",
    "people", "person", "commentauthors", "authors", "usernames", "revisionheaders",
    "revisionlog",
}

NEUTRAL_DATE = "1970-01-01T00:00:00Z"

PERSONAL_VIEW = " - Personal View"

_NOTE_SHAPE = re.compile(rb"ObjectType\s*=\s*[\"']?\s*(\w+)", re.IGNORECASE)


def drop_review_part(state: PackageState, key: str, part: str) -> bool:
    """With the default policy, a comment, reviewer or revision-history part is not kept:
    record what it held and report it (and what only it references) as handled."""
    decision = state.ctx.decides(Rule.REVIEW_DATA)
    if decision is Action.KEEP and key in REVIEW_RELS:
        state.ctx.add("comments" if key not in ("people", "person", "commentauthors", "authors",
                                                "usernames") else "personal_data",
                      part, action="kept", detail=f"{key} part kept as it is")
    if decision in (Action.ANONYMISE, Action.KEEP):
        return False
    if key == "vmldrawing":
        # Excel draws legacy comment boxes in a VML part of their own: drop it when it holds
        # nothing else (buttons and other shapes keep theirs; note shapes go when it is cleaned)
        shape_types = {m.lower() for m in _NOTE_SHAPE.findall(state.members[part][:16_000_000])}
        if state.family != "x" or shape_types != {b"note"}:
            return False
        state.ctx.add("comments", part, detail="comment boxes removed")
    elif key not in REVIEW_RELS:
        return False
    else:
        kind, detail = _review_part_summary(state, key, part)
        state.ctx.add(kind, part, detail=detail)
    # Its relationships may be unreadable: nothing of it is kept anyway.
    with contextlib.suppress(Rejected):
        _mark_reported(state, part, set())
    return True


def _mark_reported(state: PackageState, part: str, seen: set[str]) -> None:
    """A removed part and the parts only it leads to are not "orphans" in the report."""
    if part in seen or len(seen) > 1000:
        return
    seen.add(part)
    state.reported.add("part|" + part)
    for rel in read_rels(state, part):
        target = None if rel.external else resolve_target(part, rel.target)
        real = state.by_fold.get(target.casefold()) if target else None
        if real:
            _mark_reported(state, real, seen)


def _review_part_summary(state: PackageState, key: str, part: str) -> tuple[str, str]:
    try:
        root = parse_xml(state.members[part], part)
    except Rejected:
        root = None
    if root is None:
        return ("personal_data" if key in ("people", "person", "commentauthors", "authors",
                                           "usernames") else "comments",
                f"{key} part removed")
    name = local_name(root)
    if key == "comments":
        if name == "comments" and ns_of(root) in W_NSS:  # Word
            items = elements(root, W_NSS, "comment")
            authors = {w_attr(c, "author") for c in items} - {""}
        elif name == "comments":  # Excel
            items = list(root.iter("{*}comment"))
            authors = {(a.text or "").strip() for a in root.iter("{*}author")} - {""}
        elif name == "Comments":  # Visio
            items = list(root.iter("{*}CommentEntry"))
            authors = {a.get("Name") or "" for a in root.iter("{*}AuthorEntry")} - {""}
        else:  # PowerPoint, classic and modern
            items = list(root.iter("{*}cm", "{*}reply"))
            authors = {a for c in items if (a := c.get("authorId")) is not None}
        return "comments", (f"{plural(len(items), 'comment')} by "
                            f"{plural(len(authors), 'author')} removed")
    if key == "threadedcomment":
        items = list(root.iter("{*}threadedComment"))
        authors = {a for c in items if (a := c.get("personId")) is not None}
        return "comments", (f"{plural(len(items), 'threaded comment')} by "
                            f"{plural(len(authors), 'author')} removed")
    if key in ("commentsextended", "commentsids", "commentsextensible"):
        return "comments", "comment threads, identifiers and dates removed"
    if key == "revisionheaders":
        heads = list(root.iter("{*}header"))
        users = {h.get("userName") for h in heads} - {None}
        return "tracked_changes", (
            f"shared-workbook change history removed ({plural(len(heads), 'saved revision')} "
            f"by {plural(len(users), 'user')}); the cells keep their current values")
    if key == "revisionlog":
        return "tracked_changes", "shared-workbook change log removed"
    tag = {"people": "person", "person": "person", "commentauthors": "cmAuthor",
           "authors": "author", "usernames": "userInfo"}[key]
    n = len(list(root.iter("{*}" + tag)))
    return "personal_data", (f"list of {plural(n, 'reviewer')} (names and accounts) removed"
                             if n else "empty reviewer list removed")


def clean_review(state: PackageState, part: str, root: etree._Element, rels: dict[str, Rel],
                  probe: bytes) -> None:
    anonymise = state.ctx.policy.review_data == "anonymise"
    review = state.review
    if state.ctx.decides(Rule.REVIEW_DATA) is Action.KEEP:
        return  # comments, tracked changes and their authors stay as they are
    if ns_of(root) in W_NSS:
        review_word(state, part, root, anonymise, review, probe)
    elif state.family == "d":
        if anonymise:
            anonymise_word_people(state, part, root, review)
    elif state.family == "x":
        _review_excel(state, part, root, rels, anonymise, review)
    elif state.family == "p":
        _review_slides(state, part, root, rels, anonymise, review)
    elif state.family == "v":
        _review_visio(state, part, root, anonymise, review)


def _review_excel(state: PackageState, part: str, root: etree._Element, rels: dict[str, Rel],
                  anonymise: bool, review: PackageReview) -> None:
    ctx = state.ctx
    name = local_name(root)
    if name == "workbook":
        for el in root.iter("{*}fileSharing"):
            user = el.get("userName")
            if user:
                if anonymise:
                    el.set("userName", review.alias(user))
                else:
                    del el.attrib["userName"]
                ctx.add("personal_data", part, action="kept" if anonymise else "removed",
                        detail="file-sharing user name " + ("anonymised" if anonymise
                                                            else "removed"))
        for view in root.iter("{*}customWorkbookView"):
            label = view.get("name") or ""
            if view.get("personalView") not in ("1", "true") and PERSONAL_VIEW not in label:
                continue
            if anonymise:
                who = label.split(PERSONAL_VIEW)[0]
                view.set("name", review.alias(who) + PERSONAL_VIEW)
                continue
            review.personal_views.add((view.get("guid") or "").upper())
            ctx.add("personal_data", part, detail=f"personal view {label[:80]!r} removed")
            container = view.getparent()
            remove_element(view)
            if container is not None and not len(container):
                remove_element(container)
    elif name == "worksheet":
        for view in list(root.iter("{*}customSheetView")):
            if (view.get("guid") or "").upper() in review.personal_views:
                container = view.getparent()
                remove_element(view)
                if container is not None and not len(container):
                    remove_element(container)
        for el in list(root.iter("{*}legacyDrawing")):
            rid = next((v for a, v in el.attrib.items()
                        if etree.QName(a).namespace in REL_NAMESPACES), None)
            if rid not in rels:
                remove_element(el)  # its comment drawing is gone
    elif name == "xml" or ns_of(root) == VML_NS:
        if not anonymise:
            notes = [s for s in root.iter(f"{{{VML_NS}}}shape")
                     if any((c.get("ObjectType") or "").lower() == "note"
                            for c in s if local_name(c) == "ClientData")]
            for shape in notes:
                remove_element(shape)
            if notes:
                ctx.add("comments", part, detail=f"{plural(len(notes), 'comment box')} removed")
    elif anonymise:
        _anonymise_excel_part(state, part, root, review)


def _anonymise_excel_part(state: PackageState, part: str, root: etree._Element,
                          review: PackageReview) -> None:
    ctx = state.ctx
    name = local_name(root)
    if name == "comments":
        for author in root.iter("{*}author"):
            if not (author.text or "").startswith("tc="):  # a threaded comment's id, no name
                author.text = review.alias(author.text or "")
        review.scrub_text(root)
        n = len(list(root.iter("{*}comment")))
        ctx.add("comments", part, action="kept",
                detail=f"{plural(n, 'comment')} kept, authors anonymised")
    elif name == "personList":
        for person in root.iter("{*}person"):
            person.set("displayName", review.alias(person.get("displayName") or ""))
            for attr in ("userId", "providerId"):
                person.attrib.pop(attr, None)
        ctx.add("personal_data", part, action="kept", detail="reviewer list anonymised")
    elif name == "ThreadedComments":
        for el in list(root.iter("{*}threadedComment", "{*}mentions")):
            if local_name(el) == "mentions":
                remove_element(el)  # their offsets point into the names replaced below
            elif el.get("dT"):
                el.set("dT", NEUTRAL_DATE)
        review.scrub_text(root)
        n = len(list(root.iter("{*}threadedComment")))
        ctx.add("comments", part, action="kept",
                detail=f"{plural(n, 'threaded comment')} kept, authors anonymised")
    elif name in ("headers", "users"):
        for el in root.iter("{*}header", "{*}userInfo"):
            attr = "userName" if local_name(el) == "header" else "name"
            if (person_name := el.get(attr)) is not None:
                el.set(attr, review.alias(person_name))
            if el.get("dateTime") is not None:
                el.set("dateTime", NEUTRAL_DATE)
        kind = "tracked_changes" if name == "headers" else "personal_data"
        ctx.add(kind, part, action="kept",
                detail=("change history kept, users anonymised" if name == "headers"
                        else "user list anonymised"))


def _review_slides(state: PackageState, part: str, root: etree._Element, rels: dict[str, Rel],
                   anonymise: bool, review: PackageReview) -> None:
    ctx = state.ctx
    name = local_name(root)
    if name in ("sld", "sldLayout", "sldMaster", "notes") and not anonymise:
        for el in list(root.iter("{*}commentRel")):  # modern comments, in the slide's extLst
            ext = el.getparent()
            remove_element(el)
            if ext is not None and local_name(ext) == "ext" and not len(ext):
                remove_element(ext)
        return
    if not anonymise:
        return
    if name == "cmAuthorLst":
        for author in root.iter("{*}cmAuthor"):
            who = author.get("name") or ""
            author.set("name", review.alias(who))
            author.set("initials", review.initials(who))
        ctx.add("personal_data", part, action="kept", detail="comment authors anonymised")
    elif name == "authorLst":
        for author in root.iter("{*}author"):
            who = author.get("name") or ""
            author.set("name", review.alias(who))
            author.set("initials", review.initials(who))
            author.set("userId", review.alias(who))
            author.set("providerId", "None")
        ctx.add("personal_data", part, action="kept", detail="comment authors anonymised")
    elif name == "cmLst":
        for cm in root.iter("{*}cm", "{*}reply"):
            cm.attrib.pop("dt", None)
            if cm.get("created") is not None:
                cm.set("created", NEUTRAL_DATE)
        review.scrub_text(root)
        n = len(list(root.iter("{*}cm", "{*}reply")))
        ctx.add("comments", part, action="kept",
                detail=f"{plural(n, 'comment')} kept, authors anonymised")


# ---- Visio

def _review_visio(state: PackageState, part: str, root: etree._Element, anonymise: bool,
                  review: PackageReview) -> None:
    """The comments part (kept only when anonymised: otherwise its relationship is not), and
    the reviewers and annotations older drawings keep in the ShapeSheet."""
    ctx = state.ctx
    if local_name(root) == "Comments":
        for author in root.iter("{*}AuthorEntry"):
            who = author.get("Name") or ""
            author.set("Name", review.alias(who))
            author.set("Initials", review.initials(who))
            author.attrib.pop("ResolutionID", None)  # the reviewer's account
        for entry in root.iter("{*}CommentEntry"):
            if entry.get("Date") is not None:
                entry.set("Date", NEUTRAL_DATE)
        review.scrub_text(root)
        n = len(list(root.iter("{*}CommentEntry")))
        ctx.add("comments", part, action="kept",
                detail=f"{plural(n, 'comment')} kept, authors anonymised")
        return
    for section in list(root.iter("{*}Section")):
        name = section.get("N")
        if name not in ("Reviewer", "Annotation"):
            continue
        if not anonymise:
            rows = len([r for r in section if local_name(r) == "Row"])
            ctx.add("personal_data" if name == "Reviewer" else "comments", part,
                    detail=f"{plural(rows, 'reviewer' if name == 'Reviewer' else 'annotation')}"
                    " removed")
            remove_element(section)
        elif name == "Reviewer":
            for row in section:
                cells = {c.get("N"): c for c in row if local_name(c) == "Cell"}
                who = cells["Name"].get("V") or "" if "Name" in cells else ""
                for cell_name, value in (("Name", review.alias(who)),
                                         ("Initials", review.initials(who))):
                    if cell_name in cells:
                        cells[cell_name].set("V", value)
                        cells[cell_name].attrib.pop("F", None)
            ctx.add("personal_data", part, action="kept", detail="reviewers anonymised")
        else:
            for cell in section.iter("{*}Cell"):
                if cell.get("N") == "Date":
                    remove_element(cell)
