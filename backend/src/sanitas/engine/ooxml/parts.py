"""One kept XML part cleaned: document properties, macro hooks, actions, references to
relationships that were not kept, VML links, empty containers; the part's family (Word, Excel,
PowerPoint) and its review data are handed to their modules."""

from __future__ import annotations

import re

from lxml import etree

from sanitas.engine.office_package import remove_element, serialize, unwrap
from sanitas.engine.ooxml.common import (
    MC_NS,
    REL_NAMESPACES,
    Rel,
    any_ns,
    attrs_where,
    ns_of,
    safe_url,
)
from sanitas.engine.ooxml.excel import clean_sheet, clean_table, clean_vml_controls, clean_workbook
from sanitas.engine.ooxml.powerpoint import clean_slide
from sanitas.engine.ooxml.review import clean_review
from sanitas.engine.ooxml.state import PackageState, embedded_kept
from sanitas.engine.ooxml.visio import clean_visio
from sanitas.engine.ooxml.word import clean_word
from sanitas.engine.opc import W_NSS, local_name
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Rejected, RejectionCode
from sanitas.engine.xmlsafe import parse_xml, xml_parser

# Elements dropped when they reference a relationship that was not kept.
DROP_ON_MISSING_REL = {
    "control", "subDoc", "altChunk", "custData", "oleObject", "OLEObject", "oleObj",
    "externalReference", "customPr", "attachedTemplate", "dataSource", "headerSource",
    "svgBlip", "hlinkClick", "hlinkHover", "hlinkMouseOver", "pivotCache", "webExtension",
    "customXmlProps", "objectEmbed", "objectLink", "movie", "legacyDrawingHF", "picture",
    "embed", "snd", "wavAudioFile", "audioFile", "videoFile", "quickTimeFile", "media",
    "externalData",  # a chart's embedded workbook: the chart keeps its cached values
    "sldId",  # a slide that is not kept (hidden, with the policy removing hidden content)
}

# Containers that must not be left empty once their children are gone.
EMPTY_CONTAINERS = {
    "oleObjects", "controls", "externalReferences", "custDataLst", "customProperties",
    "pivotCaches", "definedNames", "webPublishItems", "extLst", "ext", "hyperlinks",
}

# Elements removed wherever they appear (macro hooks and hidden data bindings).
ALWAYS_DROP = {
    "entryMacro": "macro", "exitMacro": "macro", "FmlaMacro": "macro",
    "docVars": "hidden_data", "attachedSchema": "external_relationship",
    "saveThroughXslt": "external_relationship", "useXSLTWhenSaving": "external_relationship",
    "mailMerge": "data_connection", "dataBinding": "custom_xml",
    "webPublishItems": "external_relationship", "webPublishing": "external_relationship",
    "OLEObject": "ole_object", "fldData": "hidden_data",
}

_SAFE_ACTION = re.compile(
    r"^ppaction://(?:hlinkshowjump|hlinksldjump|noaction|customshow)", re.IGNORECASE)

_URLISH = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|\\\\|//)", re.IGNORECASE)


def clean_xml_part(state: PackageState, part: str, rels: dict[str, Rel]) -> bytes | None:
    state.part_rels = rels
    data = state.members[part]
    ct = state.kept_ct[part]
    keep_meta = state.ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP
    if keep_meta and (part.casefold() in ("docprops/core.xml", "docprops/app.xml") or
                      ct.endswith(("core-properties+xml", "extended-properties+xml"))):
        return _kept_properties(state, part, data)
    if part.casefold() == "docprops/core.xml" or ct.endswith("core-properties+xml"):
        return _neutral_core(state, part)
    if part.casefold() == "docprops/app.xml" or ct.endswith("extended-properties+xml"):
        state.ctx.add("metadata", part, detail="application properties reset", action="converted")
        return _NEUTRAL_APP
    is_vml = "vml" in ct or part.casefold().endswith(".vml")
    if is_vml:
        root = _parse_vml(state, part, data)
        if root is None:
            return None
    else:
        root = parse_xml(data, part)
    ctx = state.ctx
    if part == state.main_part and state.family == "x":
        clean_workbook(state, part, root, rels)
    _drop_always(state, part, root)
    # Attribute scans walk every attribute: skip those the bytes show cannot match. The probe
    # is the parsed tree in UTF-8, so a part stored as UTF-16 cannot hide from it.
    probe = etree.tostring(root, encoding="UTF-8")
    clean_review(state, part, root, rels, probe)  # before fields: accepted text decides them
    if any(w in probe for w in (b"macro", b"onAction", b"fmlaMacro")):
        _clean_macro_attrs(state, part, root)
    _clean_actions(state, part, root)
    if state.family == "d" or ns_of(root) in W_NSS or "wordprocessingml" in ct:
        clean_word(state, part, root)
    if state.family == "x" and ("worksheet" in ct or local_name(root) == "worksheet"):
        clean_sheet(state, part, root)
    if state.family == "x" and local_name(root) == "table":
        clean_table(state, part, root)
    if state.family == "p":
        clean_slide(state, part, root)
    if state.family == "v":
        clean_visio(state, part, root, rels)
    if state.family == "x" and is_vml and b"ClientData" in probe:
        clean_vml_controls(state, part, root)
    if any(w in probe for w in (b"src=", b"href=", b"althref=")):
        _clean_vml(state, part, root)  # VML also lives inline in Word parts
    if _uses_rel_attributes(probe):
        _clean_rel_refs(state, part, root, rels)
    _clean_empty(root)
    del ctx
    return serialize(root)


def _parse_vml(state: PackageState, part: str, data: bytes) -> etree._Element | None:
    # Excel writes VML that is not always well-formed; a recovering parse without entities is
    # safe because the result is re-serialised as well-formed XML.
    if b"<!DOCTYPE" in data[:65536].upper() or b"<!ENTITY" in data[:65536].upper():
        raise Rejected(f"The document part {part} declares a DTD (XML entity attack).",
                       RejectionCode.UNSAFE_STRUCTURE)
    parser = xml_parser(collect_ids=True, recover=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        root = None
    if root is None:
        state.ctx.add("invalid_part", part, detail="unreadable VML drawing")
        state.rejected_parts.add(part)
    return root


_NEUTRAL_APP = serialize(etree.fromstring(
    b'<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-'
    b'properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">'
    b"<Application>Sanitas</Application><DocSecurity>0</DocSecurity></Properties>"))


def _kept_properties(state: PackageState, part: str, data: bytes) -> bytes:
    """Document properties the policy keeps: re-serialised, without the hyperlink base (an
    external reference that stays under the externalReferences rule)."""
    root = parse_xml(data, part)
    for el in list(root.iter("{*}HyperlinkBase")):
        if (el.text or "").strip():
            state.ctx.add("external_relationship", part, detail="hyperlink base")
        remove_element(el)
    state.ctx.add("metadata", part, action="kept", detail="document properties kept")
    return serialize(root)


def _neutral_core(state: PackageState, part: str) -> bytes:
    state.ctx.add("metadata", part, detail="author, dates and descriptive properties removed",
                 action="removed")
    return serialize(etree.fromstring(
        b'<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/'
        b'core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        b'xmlns:dcterms="http://purl.org/dc/terms/" '
        b'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>'))


def _drop_always(state: PackageState, part: str, root: etree._Element) -> None:
    for el in list(root.iter(*any_ns(*ALWAYS_DROP))):
        name = local_name(el)
        if name == "OLEObject" and state.kept_embeddings and embedded_kept(state, el):
            continue
        state.ctx.add(ALWAYS_DROP[name], part, detail=name)
        remove_element(el)


def _clean_macro_attrs(state: PackageState, part: str, root: etree._Element) -> None:
    # DrawingML and form controls can assign a macro to a shape ("[0]!Auto_Open").
    pred = "local-name()='macro' or local-name()='onAction' or local-name()='fmlaMacro'"
    for el, attr, value in attrs_where(root, pred):
        if value and attr in el.attrib:
            lname = attr.rpartition("}")[2]
            state.ctx.add("macro", part, detail=f"{local_name(el)}@{lname}={value[:80]}")
            del el.attrib[attr]


def _clean_actions(state: PackageState, part: str, root: etree._Element) -> None:
    for el in list(root.iter(*any_ns("hlinkClick", "hlinkHover", "hlinkMouseOver"))):
        action = el.get("action") or ""
        if action and not _SAFE_ACTION.match(action):
            state.ctx.add("action", part, detail=f"{local_name(el)} action {action[:100]}")
            remove_element(el)


_REL_PREFIX = re.compile(
    rb"xmlns:([\w.-]+)\s*=\s*[\"'](?:http://schemas\.openxmlformats\.org/officeDocument/2006/"
    rb"relationships|http://purl\.oclc\.org/ooxml/officeDocument/relationships)[\"']")


def _uses_rel_attributes(data: bytes) -> bool:
    prefixes = set(_REL_PREFIX.findall(data))
    if not prefixes:
        # no prefix bound by a plain declaration: be safe unless the URI never appears
        return b"relationships" in data
    return any(re.search(rb"\s" + re.escape(p) + rb":[\w.-]+\s*=", data) for p in prefixes)


def _clean_rel_refs(state: PackageState, part: str, root: etree._Element,
                    rels: dict[str, Rel]) -> None:
    """Every reference (r:id, r:embed, r:link...) must point at a kept relationship."""
    pred = " or ".join(f"namespace-uri()='{ns}'" for ns in sorted(REL_NAMESPACES))
    for el, attr, value in attrs_where(root, pred):
        if value in rels or value == "" or attr not in el.attrib:
            continue
        if local_name(el) in DROP_ON_MISSING_REL:
            remove_element(el)
        else:
            del el.attrib[attr]


def _clean_empty(root: etree._Element) -> None:
    tags = [f"{{{MC_NS}}}Choice", f"{{{MC_NS}}}Fallback", f"{{{MC_NS}}}AlternateContent",
            *any_ns(*EMPTY_CONTAINERS)]
    changed = True
    while changed:
        changed = False
        for el in list(root.iter(*tags)):
            if el is root or len(el):
                continue
            name, ns = local_name(el), ns_of(el)
            if (ns == MC_NS and name in ("Choice", "Fallback", "AlternateContent")) or (
                    name in EMPTY_CONTAINERS and not el.attrib and not (el.text or "").strip()):
                remove_element(el)
                changed = True
        for el in list(root.iter(f"{{{MC_NS}}}AlternateContent")):
            # an AlternateContent whose Choice branches are all gone keeps only its Fallback
            if not any(
                    local_name(c) == "Choice" for c in el):
                fallback = [c for c in el if local_name(c) == "Fallback"]
                if fallback:
                    for c in fallback:
                        unwrap(c)
                    unwrap(el)
                    changed = True


def _clean_vml(state: PackageState, part: str, root: etree._Element) -> None:
    pred = "local-name()='src' or local-name()='href' or local-name()='althref'"
    for el, attr, val in attrs_where(root, pred):
        if attr not in el.attrib or not _URLISH.match(val):
            continue
        lname = attr.rpartition("}")[2]
        if lname == "href" and state.ctx.policy.keep_links and safe_url(val):
            continue
        state.ctx.add("external_relationship", part, detail=f"VML {lname} {val[:100]}")
        del el.attrib[attr]
