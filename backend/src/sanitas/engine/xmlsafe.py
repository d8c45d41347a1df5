"""The one way the engine builds an XML parser for untrusted bytes, and parses one XML part.

No entity is expanded, no DTD is loaded and nothing is fetched: `no_network` stops remote
loads, and a resolver that answers every external request with nothing stops local ones.
(libxml2 still opens the file a `<!DOCTYPE ... SYSTEM "path">` names when ids are not collected,
even with DTD loading off; on a FIFO or a device that read would hang or never end.)
`huge_tree` stays off, so libxml2's depth and text-size limits apply.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from lxml import etree

from sanitas.engine.report import Rejected, RejectionCode

if TYPE_CHECKING:
    # what resolve_string() returns; only the stubs name it (lxml keeps it internal)
    from lxml.etree._docloader import _InputDocument


class _NoExternalLoads(etree.Resolver):
    def resolve(self, system_url: str | None, public_id: str | None,
                context: object) -> _InputDocument:
        return self.resolve_string("", context)


def xml_parser(*, remove_pis: bool = True, remove_comments: bool = True,
               collect_ids: bool = False, recover: bool = False,
               target: object | None = None) -> etree.XMLParser:
    """A parser for untrusted XML. `collect_ids` is off by default: real documents repeat ids,
    and libxml2 refuses a repeated `xml:id` when it collects them. `target`: an lxml parser
    target that receives the events instead of a tree being built."""
    options: dict[str, Any] = {} if target is None else {"target": target}
    parser: etree.XMLParser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
        huge_tree=False, remove_pis=remove_pis, remove_comments=remove_comments,
        collect_ids=collect_ids, recover=recover, **options)
    parser.resolvers.add(_NoExternalLoads())
    return parser


# A DTD or an entity declaration (Office never writes one), as the first bytes of a part show.
DTD_DECLARATION = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def parse_xml(data: bytes, where: str) -> etree._Element:
    """Parse one XML part; reject DTDs (Office never writes them: a DTD means an entity attack)."""
    if DTD_DECLARATION.search(data[:65536]):
        raise Rejected(f"The document part {where} declares a DTD or XML entities, "
                       "which Office documents never use (XML entity attack).",
                       RejectionCode.UNSAFE_STRUCTURE)
    try:
        root = etree.fromstring(data, xml_parser())
    except etree.XMLSyntaxError as exc:
        raise Rejected(f"The document part {where} is not well-formed XML ({exc.msg}).",
                       RejectionCode.DAMAGED) from exc
    if root is None:
        raise Rejected(f"The document part {where} is empty.", RejectionCode.DAMAGED)
    tree = root.getroottree()
    if tree.docinfo.internalDTD is not None or tree.docinfo.doctype:
        raise Rejected(f"The document part {where} declares a DTD (XML entity attack).",
                       RejectionCode.UNSAFE_STRUCTURE)
    # nesting depth: libxml2 refuses documents deeper than 256 levels while parsing
    return root


class _NoTree:
    """A parser target that builds nothing (lxml calls no handler it lacks): the parse only
    checks the document, in a fraction of the time and memory of a tree."""

    def __init__(self) -> None:
        self.declares_dtd = False

    def doctype(self, *_declaration: object) -> None:
        self.declares_dtd = True

    def close(self) -> None:
        return None


def xml_problem(data: bytes) -> str | None:
    """What keeps `data` from being one well-formed XML document without a DTD, or None when
    nothing does, without building its tree: the same parser options and the same answer as
    a parse by `xml_parser` (libxml2 reports namespace errors as recoverable; a parse that
    builds a tree refuses them, so they count here too)."""
    target = _NoTree()
    parser = xml_parser(target=target)
    problem = None
    try:
        etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        problem = f"it is not well-formed XML ({str(exc)[:120]})"
    if target.declares_dtd:  # told before the declarations it holds fail (as entities do)
        return DECLARES_DTD
    if problem is None:
        errors = [e for e in parser.error_log if e.level >= etree.ErrorLevels.ERROR]
        if errors:
            problem = f"it is not well-formed XML ({errors[0].message[:120]})"
    return problem


DECLARES_DTD = "it declares a DTD"
