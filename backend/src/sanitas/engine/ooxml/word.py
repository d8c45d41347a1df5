"""Word parts: fields (DDE, INCLUDETEXT and other live instructions), embedded objects and
controls, inline custom XML, hidden text."""

from __future__ import annotations

from typing import TypedDict

from lxml import etree

from sanitas.engine.office_package import plural, remove_element, unwrap
from sanitas.engine.ooxml.common import VML_NS, any_ns, elements, ns_of, safe_url, w_attr
from sanitas.engine.ooxml.state import PackageState, embedded_kept
from sanitas.engine.opc import W_NSS, local_name
from sanitas.engine.policy import Action, Rule

# Word field codes that only compute text locally; anything else is neutralised (its cached
# result stays, the live instruction goes): DDE/DDEAUTO, INCLUDETEXT, INCLUDEPICTURE, IMPORT,
# LINK, EMBED, DATABASE, MACROBUTTON, PRINT, ADDIN, RD, unknown names.
SAFE_FIELDS = {
    "PAGE", "NUMPAGES", "SECTIONPAGES", "SECTION", "DATE", "TIME", "CREATEDATE", "SAVEDATE",
    "PRINTDATE", "EDITTIME", "TOC", "TOA", "TC", "TA", "INDEX", "XE", "REF", "PAGEREF",
    "NOTEREF", "SEQ", "STYLEREF", "FORMTEXT", "FORMCHECKBOX", "FORMDROPDOWN", "AUTHOR", "TITLE",
    "SUBJECT", "KEYWORDS", "COMMENTS", "LASTSAVEDBY", "NUMWORDS", "NUMCHARS", "SYMBOL", "EQ",
    "ADVANCE", "LISTNUM", "AUTONUM", "AUTONUMLGL", "AUTONUMOUT", "BIDIOUTLINE", "MERGEFIELD",
    "MERGEREC", "MERGESEQ", "NEXT", "NEXTIF", "SKIPIF", "SET", "IF", "COMPARE", "QUOTE",
    "USERNAME", "USERINITIALS", "DOCPROPERTY", "DOCVARIABLE", "INFO", "=", "GOTOBUTTON",
    "BIBLIOGRAPHY", "CITATION", "FILENAME", "TEMPLATE", "HYPERLINK",
}


def clean_word(state: PackageState, part: str, root: etree._Element) -> None:
    _clean_fields(state, part, root)
    if state.ctx.decides(Rule.HIDDEN_CONTENT) is not Action.KEEP:
        drop_hidden_text(state, part, root)
    for el in list(root.iter(*any_ns("object", "customXml", "subDoc", "altChunk",
                                      "OLEObject", "control"))):
        if el is not root and el.getparent() is None:
            continue  # already removed with an ancestor
        name, ns = local_name(el), ns_of(el)
        if state.kept_embeddings and name in ("object", "OLEObject") and (
                embedded_kept(state, el) or any(embedded_kept(state, c) for c in el)):
            continue  # an embedded object the policy keeps, with its preview
        if name == "object" and ns in W_NSS:
            _replace_word_object(state, part, el)
        elif name == "customXml" and ns in W_NSS:
            state.ctx.add("custom_xml", part, detail="inline custom XML markup unwrapped",
                          action="converted")
            unwrap(el)
        elif name in ("subDoc", "altChunk") and ns in W_NSS:
            state.ctx.add("ole_object" if name == "altChunk" else "external_relationship",
                         part, detail=name)
            remove_element(el)
        elif name == "OLEObject":
            state.ctx.add("ole_object", part, detail=f"OLE object {el.get('ProgID', '')}")
            remove_element(el)
        elif name == "control" and ns in W_NSS:
            state.ctx.add("activex", part, detail="ActiveX control")
            remove_element(el)


def _replace_word_object(state: PackageState, part: str, obj: etree._Element) -> None:
    """w:object (embedded OLE or ActiveX) becomes a plain picture of its preview."""
    objects = []
    for child in list(obj):
        name = local_name(child)
        if name in ("OLEObject", "control", "objectEmbed", "objectLink", "movie"):
            objects.append(child.get("ProgID") or child.get("progId") or name)
            remove_element(child)
    names = ", ".join(k for k in objects if k)
    state.ctx.add("ole_object", part, detail="embedded object replaced by its preview image"
                  + (f": {names}" if names else ""), action="converted")
    shapes = [c for c in obj if local_name(c) in ("shape", "rect", "group") or ns_of(c) == VML_NS]
    drawings = [c for c in obj if local_name(c) == "drawing"]
    if shapes:
        obj.tag = f"{{{ns_of(obj)}}}pict"
        for attr in list(obj.attrib):
            del obj.attrib[attr]
        for c in list(obj):
            if c not in shapes:
                remove_element(c)
    elif drawings:
        unwrap(obj)
    else:
        remove_element(obj)


class _Field(TypedDict):
    """A complex field being read: its begin mark, instruction runs and separate mark."""
    begin: etree._Element
    instr: list[etree._Element]
    sep: etree._Element | None


# Fields that show a document property (title, author, dates...). When the properties are
# removed, a viewer that updates fields (LibreOffice on opening, Word on printing) would show
# them empty: they become the text they showed.
PROPERTY_FIELDS = frozenset({
    "TITLE", "AUTHOR", "SUBJECT", "KEYWORDS", "COMMENTS", "LASTSAVEDBY", "DOCPROPERTY", "INFO",
    "CREATEDATE", "SAVEDATE", "PRINTDATE", "EDITTIME", "TEMPLATE",
})


def _clean_fields(state: PackageState, part: str, root: etree._Element) -> None:
    # names of the property fields turned into their text (None: the properties are kept)
    frozen: list[str] | None = (
        None if state.ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP else [])
    for el in elements(root, W_NSS, "fldSimple"):
        instr = el.get(f"{{{ns_of(el)}}}instr") or ""
        if not _field_is_safe(state, instr):
            state.ctx.add(_field_kind(instr), part, detail=f"field {instr.strip()[:120]}")
            unwrap(el)  # the cached result runs stay
        elif frozen is not None and _field_name(instr) in PROPERTY_FIELDS:
            frozen.append(_field_name(instr))
            unwrap(el)
    stack: list[_Field] = []
    doomed: list[etree._Element] = []
    for el in elements(root, W_NSS, "fldChar", "instrText", "delInstrText"):
        if local_name(el) in ("instrText", "delInstrText"):
            if stack and stack[-1]["sep"] is None:
                stack[-1]["instr"].append(el)
            else:
                doomed.append(el)  # instruction text outside a field is hidden text
            continue
        char_type = el.get(f"{{{ns_of(el)}}}fldCharType")
        if char_type == "begin":
            stack.append(_Field(begin=el, instr=[], sep=None))
        elif char_type == "separate" and stack:
            stack[-1]["sep"] = el
        elif char_type == "end" and stack:
            fld = stack.pop()
            _finish_field(state, part, fld, el, doomed, frozen=frozen)
        else:
            doomed.append(el)
    for fld in stack:  # unterminated fields
        _finish_field(state, part, fld, None, doomed, force=True)
    if frozen:
        names = ", ".join(sorted(set(frozen)))
        state.ctx.add("metadata", part, action="converted",
                      detail=f"{plural(len(frozen), 'field')} showing document properties "
                      f"({names[:200]}) kept as the text they showed (the properties are removed)")
    for el in doomed:
        run = el.getparent()
        remove_element(el)
        if run is not None and local_name(run) == "r" and not any(
                local_name(c) != "rPr" for c in run):
            remove_element(run)


def _finish_field(state: PackageState, part: str, fld: _Field, end: etree._Element | None,
                  doomed: list[etree._Element], force: bool = False,
                  frozen: list[str] | None = None) -> None:
    instr = "".join(e.text or "" for e in fld["instr"])
    form = _field_name(instr) in FORM_FIELD_NAMES and \
        state.ctx.decides(Rule.FORM_FIELDS) is not Action.KEEP
    if not force and not form and _field_is_safe(state, instr):
        if frozen is None or _field_name(instr) not in PROPERTY_FIELDS:
            return
        frozen.append(_field_name(instr))  # its result runs stay, the field marks go
    else:
        state.ctx.add("form_field" if form else _field_kind(instr), part,
                      detail=f"field {instr.strip()[:120]}")
    doomed.append(fld["begin"])
    doomed.extend(fld["instr"])
    if fld["sep"] is not None:
        doomed.append(fld["sep"])
    if end is not None:
        doomed.append(end)


FORM_FIELD_NAMES = frozenset({"FORMTEXT", "FORMCHECKBOX", "FORMDROPDOWN"})  # legacy form fields


def _field_name(instr: str) -> str:
    s = instr.strip().lstrip("\\").strip()
    if s.startswith("="):
        return "="
    return (s.split(None, 1)[0] if s else "").upper()


def _field_kind(instr: str) -> str:
    name = _field_name(instr)
    return "dde" if name.startswith("DDE") else "field"


def _field_is_safe(state: PackageState, instr: str) -> bool:
    name = _field_name(instr)
    if name not in SAFE_FIELDS:
        return False
    if name == "HYPERLINK":
        rest = instr.strip()[len("HYPERLINK"):].strip()
        if rest.startswith("\\l"):
            return True
        url = rest.split('"')[1] if rest.count('"') >= 2 else rest.split(None, 1)[0] if rest \
            else ""
        return state.ctx.policy.keep_links and safe_url(url)
    # A safe outer field must not quote a dangerous name (nested or obfuscated instructions)
    upper = instr.upper()
    return not any(w in upper for w in ("DDE", "INCLUDE", "IMPORT", "\\\\", "HTTP:", "HTTPS:",
                                        "FILE:", "LINK ", "EMBED "))


def drop_hidden_text(state: PackageState, part: str, root: etree._Element) -> None:
    """Runs formatted as hidden (<w:vanish/>) leave the document (hiddenContent remove)."""
    runs = 0
    for vanish in list(elements(root, W_NSS, "vanish")):
        props = vanish.getparent()
        run = props.getparent() if props is not None else None
        if props is None or run is None or local_name(props) != "rPr" or local_name(run) != "r":
            continue  # a paragraph mark or a style: formatting only
        if (w_attr(vanish, "val") or "true").lower() in ("0", "false", "off"):
            continue
        runs += 1
        remove_element(run)
    if runs:
        state.ctx.add("hidden_text", part, detail=f"{plural(runs, 'hidden text run')} removed")
