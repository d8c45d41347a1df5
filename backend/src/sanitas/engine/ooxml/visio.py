"""Visio parts (drawings, templates and stencils): the ShapeSheet formulas that run code
(CALLTHIS, RUNADDON, RUNMACRO...) lose their formula and keep their last value, the document's
event list (add-ons run when the drawing opens) goes, hyperlinks follow the hyperlinks policy,
and an embedded object or a page whose part was not kept leaves with its reference."""

from __future__ import annotations

import re

from lxml import etree

from sanitas.engine.office_package import remove_element
from sanitas.engine.ooxml.common import REL_NAMESPACES, Rel, safe_url
from sanitas.engine.ooxml.state import PackageState
from sanitas.engine.opc import local_name

# ShapeSheet functions that run code or open something: VBA (CALLTHIS, RUNMACRO), add-ons
# (RUNADDON, RUNADDONWARGS), commands (DOCMD), files and programs (OPENFILE, PLAYSOUND), and
# the functions that write such a formula into another cell when an event fires (SETF,
# SETATREF). They are matched anywhere in a formula, string literals included.
_ACTIVE_FORMULA = re.compile(
    r"\b(?:CALLTHIS|RUNADDON|RUNADDONWARGS|RUNMACRO|DOCMD|OPENFILE|PLAYSOUND|SETF|SETATREF|"
    r"SETATREFEXPR|SETATREFEVAL|QUEUEMARKEREVENT|HYPERLINK|EVALF)\s*\(", re.IGNORECASE)


def clean_visio(state: PackageState, part: str, root: etree._Element,
                rels: dict[str, Rel]) -> None:
    ctx = state.ctx
    for events in list(root.iter("{*}EventList")):
        items = [e for e in events if local_name(e) == "EventItem"]
        if items:
            ctx.add("macro", part, detail=f"{len(items)} document event(s) that start an "
                    "add-on or a macro")
        remove_element(events)
    for cell in root.iter("{*}Cell"):
        formula = cell.get("F") or ""
        if formula and _ACTIVE_FORMULA.search(formula):
            ctx.add("macro", part, detail=f"cell {cell.get('N', '')} formula {formula[:100]} "
                    "replaced by its value", action="converted")
            del cell.attrib["F"]
    for section in list(root.iter("{*}Section")):
        if section.get("N") == "Hyperlink":
            _clean_hyperlinks(state, part, section)
    # References to parts that were not kept: an embedded object (its shape stays, without
    # the object), a page or master whose part is gone (the whole entry goes).
    for rel_el in list(root.iter("{*}Rel")):
        rid = next((v for a, v in rel_el.attrib.items()
                    if etree.QName(a).namespace in REL_NAMESPACES), None)
        if rid is None or rid in rels:
            continue
        holder = rel_el.getparent()
        if holder is not None and local_name(holder) in ("ForeignData", "Page", "Master",
                                                         "Solution"):
            remove_element(holder)
        else:
            remove_element(rel_el)


def _clean_hyperlinks(state: PackageState, part: str, section: etree._Element) -> None:
    for row in list(section):
        address = next((c.get("V") or "" for c in row
                        if local_name(c) == "Cell" and c.get("N") == "Address"), "")
        if not address.strip():
            continue  # a link inside the drawing (a page or a shape): kept
        if state.ctx.policy.keep_links and safe_url(address):
            continue
        state.ctx.add("hyperlink", part, detail=f"hyperlink {address[:200]}")
        remove_element(row)
    if not len(section):
        remove_element(section)
