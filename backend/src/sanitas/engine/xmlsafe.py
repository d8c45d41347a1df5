"""The one way the engine builds an XML parser for untrusted bytes.

No entity is expanded, no DTD is loaded and nothing is fetched: `no_network` stops remote
loads, and a resolver that answers every external request with nothing stops local ones.
(libxml2 still opens the file a `<!DOCTYPE ... SYSTEM "path">` names when ids are not collected,
even with DTD loading off; on a FIFO or a device that read would hang or never end.)
`huge_tree` stays off, so libxml2's depth and text-size limits apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lxml import etree

if TYPE_CHECKING:
    # what resolve_string() returns; only the stubs name it (lxml keeps it internal)
    from lxml.etree._docloader import _InputDocument


class _NoExternalLoads(etree.Resolver):
    def resolve(self, system_url: str | None, public_id: str | None,
                context: object) -> _InputDocument:
        return self.resolve_string("", context)


def xml_parser(*, remove_pis: bool = True, remove_comments: bool = True,
               collect_ids: bool = False, recover: bool = False) -> etree.XMLParser:
    """A parser for untrusted XML. `collect_ids` is off by default: real documents repeat ids,
    and libxml2 refuses a repeated `xml:id` when it collects them."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             dtd_validation=False, huge_tree=False, remove_pis=remove_pis,
                             remove_comments=remove_comments, collect_ids=collect_ids,
                             recover=recover)
    parser.resolvers.add(_NoExternalLoads())
    return parser
