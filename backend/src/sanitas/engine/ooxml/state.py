"""The package being rebuilt: its parts, content types, relationships and what was kept."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from lxml import etree

from sanitas.engine.office_package import ReviewerAliases
from sanitas.engine.ooxml.common import REL_NAMESPACES, Rel
from sanitas.engine.opc import local_name
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.xmlsafe import parse_xml


@dataclass
class PackageState:
    ctx: Context
    members: dict[str, bytes]
    by_fold: dict[str, str]
    defaults: dict[str, str]
    overrides: dict[str, str]
    # part -> new bytes; None for an XML part kept by the walk and cleaned after it
    kept: dict[str, bytes | None] = field(default_factory=dict)
    kept_ct: dict[str, str] = field(default_factory=dict)
    rels_out: dict[str, list[Rel]] = field(default_factory=dict)
    reported: set[str] = field(default_factory=set)
    rejected_parts: set[str] = field(default_factory=set)
    family: str = ""
    main_part: str = ""
    removed_sheet_names: set[str] = field(default_factory=set)
    hidden_sheet_names: set[str] = field(default_factory=set)  # hidden sheets the policy removes
    kept_embeddings: set[str] = field(default_factory=set)  # embedded objects the policy keeps
    part_rels: dict[str, Rel] = field(default_factory=dict)  # the part being cleaned: its rels
    # comments, revisions, people
    review: PackageReview = field(default_factory=lambda: PackageReview())

    def declared_type(self, part: str) -> str:
        """The part's content type as [Content_Types].xml spells it (found case-blind)."""
        ct = self.overrides.get("/" + part.casefold())
        if ct is None:
            ext = posixpath.splitext(part)[1].lstrip(".").casefold()
            ct = self.defaults.get(ext, "")
        return ct.strip()

    def content_type(self, part: str) -> str:
        """The part's content type lower-cased, for comparisons."""
        return self.declared_type(part).lower()


def rels_name(part: str) -> str:
    d, b = posixpath.split(part)
    return posixpath.join(d, "_rels", b + ".rels") if part else "_rels/.rels"


def read_rels(state: PackageState, part: str) -> list[Rel]:
    name = state.by_fold.get(rels_name(part).casefold())
    if name is None:
        return []
    root = parse_xml(state.members[name], name)
    rels: list[Rel] = []
    ids: set[str] = set()
    for el in root:
        if local_name(el) != "Relationship":
            continue
        rid, rtype, target = el.get("Id"), el.get("Type") or "", el.get("Target") or ""
        if not rid or rid in ids:
            raise Rejected(f"The relationship part {name} has a missing or duplicate Id.",
                           RejectionCode.DAMAGED)
        ids.add(rid)
        external = (el.get("TargetMode") or "").lower() == "external"
        rels.append(Rel(rid, rtype, target, external))
    return rels


def embedded_kept(state: PackageState, el: etree._Element) -> bool:
    """Whether an OLE object element points at an embedding the policy kept."""
    rels = state.part_rels
    for attr, value in el.attrib.items():
        if etree.QName(attr).namespace in REL_NAMESPACES:
            rel = rels.get(value)
            if rel is not None and rel.part in state.kept_embeddings:
                return True
    return False


class PackageReview(ReviewerAliases):
    """Review-data state shared by every part of one package."""

    def __init__(self) -> None:
        super().__init__()
        self.personal_views: set[str] = set()  # guids of the personal views removed
