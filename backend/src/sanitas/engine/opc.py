"""Open Packaging Conventions: the facts about an OOXML package that type detection needs
and the OOXML sanitizer shares (main-part root elements, the package's office-document
relationship, relationship targets). Nothing here sanitizes, so `detect` can import it
without importing a sanitizer.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urlsplit

from lxml import etree

from sanitas.engine.report import Rejected
from sanitas.engine.xmlsafe import parse_xml

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
# Strict OOXML uses other namespace names for the same elements.
W_NSS = {W_NS, "http://purl.oclc.org/ooxml/wordprocessingml/main"}
S_NSS = {"http://schemas.openxmlformats.org/spreadsheetml/2006/main",
         "http://purl.oclc.org/ooxml/spreadsheetml/main"}
P_NSS = {P_NS, "http://purl.oclc.org/ooxml/presentationml/main"}
VISIO_NS = "http://schemas.microsoft.com/office/visio/2012/main"
# The root element of a main part -> the kind it makes the package.
_MAIN_ROOTS = {"document": (W_NSS, "docx"), "workbook": (S_NSS, "xlsx"),
               "presentation": (P_NSS, "pptx"), "VisioDocument": ({VISIO_NS}, "vsdx")}
# Visio names its main part with a relationship of its own, not `officeDocument`.
VISIO_DOCUMENT_REL = "http://schemas.microsoft.com/visio/2010/relationships/document"


def local_name(el: etree._Element) -> str:
    """An element's name without its namespace ("" for comments and processing instructions)."""
    tag = el.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def rel_type_key(rel_type: str) -> str:
    """The last segment of a relationship type, lower-cased ("officedocument", "image", ...)."""
    return rel_type.rstrip("/").rsplit("/", 1)[-1].lower()


def resolve_target(source_part: str, target: str) -> str | None:
    """Resolve a relationship target relative to its source part; None if it leaves the package."""
    try:
        parts = urlsplit(target)
    except ValueError:
        return None  # e.g. a malformed IPv6 authority
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path)
    if not path:
        return None
    if path.startswith("/"):
        joined = path.lstrip("/")
    else:
        base = posixpath.dirname(source_part)
        joined = posixpath.join(base, path)
    norm = posixpath.normpath(joined)
    if norm.startswith(("../", "/")) or norm in ("..", "."):
        return None
    return norm


def is_main_relationship(rel_type: str) -> bool:
    """Whether a package relationship names the package's main part (its office document)."""
    return rel_type_key(rel_type) == "officedocument" or rel_type.strip() == VISIO_DOCUMENT_REL


def kind_of_root(head: bytes) -> str | None:
    """"docx", "xlsx", "pptx" or "vsdx" when the first element of `head` (the first bytes of
    a main part are enough) is a Word document, an Excel workbook, a PowerPoint presentation
    or a Visio drawing."""
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True,
                                 load_dtd=False, huge_tree=False)
    try:
        parser.feed(head)
        for _event, el in parser.read_events():
            namespaces, kind = _MAIN_ROOTS.get(etree.QName(el).localname, (set(), None))
            return kind if etree.QName(el).namespace in namespaces else None
    except etree.XMLSyntaxError:
        return None
    return None


def office_document_target(rels: bytes) -> str | None:
    """The part a package's `_rels/.rels` names as its (internal) office document, or None."""
    try:
        root = parse_xml(rels, "_rels/.rels")
    except Rejected:
        return None
    for el in root:
        if local_name(el) == "Relationship" and is_main_relationship(el.get("Type") or "") \
                and (el.get("TargetMode") or "").lower() != "external":
            return resolve_target("", el.get("Target") or "")
    return None
