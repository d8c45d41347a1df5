"""Excel parts: macro sheets and defined names, formulas that reach outside the workbook,
OLE objects and controls of a sheet, connection-backed tables, form controls in VML."""

from __future__ import annotations

import re

from lxml import etree

from sanitas.engine.office_package import plural, remove_element
from sanitas.engine.ooxml.common import REL_NAMESPACES, VML_NS, Rel
from sanitas.engine.ooxml.state import PackageState, embedded_kept
from sanitas.engine.opc import local_name
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Rejected, RejectionCode

_DANGEROUS_FORMULA = re.compile(
    r"\[\s*\d+\s*\]|\||\b(?:_xlfn\.|_xlws\.)?(?:WEBSERVICE|RTD|CALL|REGISTER(?:\.ID)?|EXEC|"
    r"IMAGE|STOCKHISTORY|FILTERXML|EXECUTE|DDE|INCLUDE)\s*\(", re.IGNORECASE)

_STRING_LITERAL = re.compile(r'"(?:[^"]|"")*"')

_AUTO_NAME = re.compile(r"^(?:_xlnm\.)?auto_(?:open|close|activate|deactivate)", re.IGNORECASE)


def clean_workbook(state: PackageState, part: str, root: etree._Element,
                   rels: dict[str, Rel]) -> None:
    sheets_el = [el for el in root if local_name(el) == "sheets"]
    removed_idx: list[int] = []
    kept_count = 0
    if sheets_el:
        for i, sheet in enumerate(list(sheets_el[0])):
            rid = next((sheet.get(a) for a in sheet.attrib
                        if etree.QName(a).namespace in REL_NAMESPACES), None)
            if rid not in rels:
                state.removed_sheet_names.add(sheet.get("name") or "")
                if (sheet.get("name") or "") not in state.hidden_sheet_names:
                    state.ctx.add("xlm_macro", part, detail=f"sheet {sheet.get('name', '')!r} "
                                  "removed (macro or dialog sheet, or missing part)")
                removed_idx.append(i)
                remove_element(sheet)
            else:
                kept_count += 1
        if kept_count == 0:
            raise Rejected("The workbook has no ordinary worksheet left once its macro sheets "
                           "are removed.", RejectionCode.NO_CONTENT)
    remap = {}
    new = 0
    total = kept_count + len(removed_idx)
    for old in range(total):
        if old in removed_idx:
            continue
        remap[old] = new
        new += 1
    for el in list(root.iter()):
        name = local_name(el)
        if name == "definedName":
            _clean_defined_name(state, part, el, remap, removed_idx)
        elif name == "workbookView":
            for attr in ("activeTab", "firstSheet"):
                if (value := el.get(attr)) is not None:
                    try:
                        v = int(value)
                    except ValueError:
                        v = 0
                    el.set(attr, str(min(max(0, _nearest(remap, v)), max(0, kept_count - 1))))
        elif name == "externalReferences":
            state.ctx.add("external_link", part, detail="external workbook references")
            remove_element(el)
        elif name == "fileSharing":
            pass


def _nearest(remap: dict[int, int], v: int) -> int:
    if v in remap:
        return remap[v]
    lower = [k for k in remap if k < v]
    return remap[max(lower)] if lower else 0


def _clean_defined_name(state: PackageState, part: str, el: etree._Element, remap: dict[int, int],
                        removed_idx: list[int]) -> None:
    name = el.get("name") or ""
    formula = el.text or ""
    reason = None
    if _AUTO_NAME.match(name):
        reason = "auto-run name"
    elif (any(el.get(a) in ("1", "true") for a in ("function", "vbProcedure", "xlm"))
          or el.get("functionGroupId") is not None):
        reason = "macro function name"
    elif formula_is_dangerous(formula):
        reason = "external or DDE reference"
    elif any(_mentions_sheet(formula, s) for s in state.removed_sheet_names if s):
        reason = "points into a removed macro sheet"
    local = el.get("localSheetId")
    if reason is None and local is not None:
        try:
            idx = int(local)
        except ValueError:
            idx = -1
        if idx in removed_idx or idx not in remap:
            reason = "belongs to a removed sheet"
        else:
            el.set("localSheetId", str(remap[idx]))
    if reason:
        state.ctx.add("xlm_macro" if "macro" in reason or "auto" in reason else "external_link",
                     part, detail=f"defined name {name!r} ({reason})")
        remove_element(el)


def _mentions_sheet(formula: str, sheet: str) -> bool:
    f = formula.casefold()
    s = sheet.casefold()
    return f"'{s.replace(chr(39), chr(39) * 2)}'!" in f or re.search(
        rf"(?<![\w.]){re.escape(s)}!", f) is not None


def formula_is_dangerous(formula: str) -> bool:
    return bool(_DANGEROUS_FORMULA.search(_STRING_LITERAL.sub('""', formula)))


def clean_sheet(state: PackageState, part: str, root: etree._Element) -> None:
    dropped_shared: set[str] = set()
    formulas = list(root.iter("{*}f"))
    for f in formulas:
        if f.get("t") == "shared" and f.get("ref") and formula_is_dangerous(f.text or ""):
            dropped_shared.add(f.get("si") or "")
    for f in formulas:
        text = f.text or ""
        if formula_is_dangerous(text) or (f.get("t") == "shared" and
                                           f.get("si") in dropped_shared):
            cell = f.getparent()
            ref = cell.get("r") if cell is not None else "?"
            state.ctx.add("external_link" if "[" in text else "formula", part,
                         detail=f"cell {ref} formula {text[:100]} replaced by its value",
                         action="converted")
            remove_element(f)
    for el in list(root.iter("{*}dataValidation", "{*}cfRule")):
        if el.getparent() is not None and any(
                formula_is_dangerous(f.text or "")
                for f in el.iter("{*}formula1", "{*}formula2", "{*}formula", "{*}f")):
            state.ctx.add("external_link", part,
                          detail=f"{local_name(el)} with an external or DDE formula")
            remove_element(el)
    for el in list(root.iter("{*}oleObjects", "{*}controls", "{*}customProperties")):
        name = local_name(el)
        if name == "oleObjects":
            objects = [obj for obj in el.iter() if local_name(obj) == "oleObject"]
            kept = [obj for obj in objects
                    if state.kept_embeddings and embedded_kept(state, obj)]
            for obj in objects:
                if obj not in kept:
                    state.ctx.add("ole_object", part,
                                  detail=f"OLE object {obj.get('progId', '')}")
                    if kept:
                        remove_element(obj)
            if not kept:
                remove_element(el)  # otherwise the objects the policy keeps stay
        elif name == "controls":
            state.ctx.add("activex", part, detail="controls")
            remove_element(el)
        elif name == "customProperties":
            state.ctx.add("custom_properties", part, detail="sheet custom properties")
            remove_element(el)
        elif name == "tablePart":
            pass


def clean_table(state: PackageState, part: str, root: etree._Element) -> None:
    # Connection-backed tables become plain tables: their query and connection parts are gone.
    if root.get("tableType") in ("queryTable", "xml") or root.get("connectionId"):
        state.ctx.add("data_connection", part,
                      detail=f"table {root.get('name', '')} unlinked from its "
                     "query", action="converted")
        root.set("tableType", "worksheet")
        root.attrib.pop("connectionId", None)
        for el in root.iter():
            for attr in ("queryTableFieldId", "uniqueName"):
                if attr in el.attrib and local_name(el) == "tableColumn":
                    del el.attrib[attr]
            if local_name(el) == "xmlColumnPr":
                remove_element(el)


# Excel form controls in a legacy VML drawing (x:ClientData ObjectType): check and option
# boxes, buttons, lists, spinners, scroll bars, group boxes, labels, edit boxes.
FORM_OBJECT_TYPES = frozenset({"checkbox", "radio", "button", "drop", "list", "spin", "scroll",
                               "gbox", "label", "editbox", "dialog"})


def clean_vml_controls(state: PackageState, part: str, root: etree._Element) -> None:
    if state.ctx.decides(Rule.FORM_FIELDS) is not Action.KEEP:
        # Policy formFields remove (or refuse): the sheet's form controls go with their
        # shapes. Under keep they stay in this legacy form, which Excel reads (the newer
        # control-property parts, xl/ctrlProps, are not kept under any policy).
        controls = [shape for shape in root.iter(f"{{{VML_NS}}}*") if any(
            local_name(c) == "ClientData" and (c.get("ObjectType") or "").lower()
            in FORM_OBJECT_TYPES for c in shape)]
        if controls:
            state.ctx.add("form_control", part,
                          detail=f"{plural(len(controls), 'form control')} (check boxes, "
                          "buttons, lists...) removed")
        for shape in controls:
            remove_element(shape)
