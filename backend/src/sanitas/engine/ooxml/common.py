"""Namespaces and small XML helpers shared by the modules of the OOXML sanitizer."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from lxml import etree

PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"

CT_NS = "http://schemas.openxmlformats.org/package/2006/content-types"

REL_NAMESPACES = {
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "http://purl.oclc.org/ooxml/officeDocument/relationships",
}

MC_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006"

A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"

# Strict OOXML uses other namespace names for the same elements.
A_NSS = {A_NS, "http://purl.oclc.org/ooxml/drawingml/main"}


def elements(root: etree._Element, namespaces: set[str], *names: str) -> list[etree._Element]:
    """Elements with one of `names` in any of `namespaces`, in document order."""
    return list(root.iter(*[f"{{{ns}}}{n}" for ns in namespaces for n in names]))


VML_NS = "urn:schemas-microsoft-com:vml"

SAFE_LINK_SCHEMES = {"http", "https", "mailto"}


def ns_of(el: etree._Element) -> str:
    tag = el.tag
    return tag[1:tag.index("}")] if isinstance(tag, str) and tag[:1] == "{" else ""


def any_ns(*names: str) -> list[str]:
    # lxml filters "{*}name" in C: far faster than testing every element in Python
    return [f"{{*}}{n}" for n in names]


def attrs_where(root: etree._Element, predicate: str) -> list[tuple[etree._Element, str, str]]:
    """(element, attribute name, value) for attributes matching an XPath predicate."""
    out: list[tuple[etree._Element, str, str]] = []
    for value in root.xpath(f"//@*[{predicate}]"):
        out.append((value.getparent(), value.attrname, str(value)))
    return out


@dataclass
class Rel:
    id: str
    type: str
    target: str
    external: bool
    part: str | None = None  # resolved internal part


def safe_url(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in SAFE_LINK_SCHEMES and (parts.scheme.lower() == "mailto"
                                                          or bool(parts.netloc))


def w_attr(el: etree._Element, name: str) -> str:
    """A Word attribute (w:author...) whatever the namespace prefix or variant."""
    for attr, value in el.attrib.items():
        if attr.rpartition("}")[2] == name:
            return value
    return ""


def attached(el: etree._Element, root: etree._Element) -> bool:
    return el is root or any(a is root for a in el.iterancestors())
