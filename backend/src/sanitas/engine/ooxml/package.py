"""The package walk: from _rels/.rels, only parts reached through relationship types on an
allowlist survive; embedded packages, pictures and media are cleaned on the way; hidden sheets
and slides and unreadable parts leave before the XML parts are cleaned."""

from __future__ import annotations

import posixpath
import re
from collections import deque
from pathlib import Path

from lxml import etree

from sanitas.engine.kinds import rule_of
from sanitas.engine.office_package import clean_picture, image_format, read_package
from sanitas.engine.ooxml.common import REL_NAMESPACES, Rel, safe_url
from sanitas.engine.ooxml.content_types import ADDIN_TYPES, MAIN_TYPES, XLSB_MAIN, load
from sanitas.engine.ooxml.output import report_orphans, write
from sanitas.engine.ooxml.parts import clean_xml_part
from sanitas.engine.ooxml.review import drop_review_part
from sanitas.engine.ooxml.state import PackageState, read_rels
from sanitas.engine.opc import is_main_relationship, rel_type_key, resolve_target
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.verdict import ENCRYPTED_CODES
from sanitas.engine.xmlsafe import DECLARES_DTD, DTD_DECLARATION, parse_xml, xml_problem

# Relationship types (last segment of the type URI, lower case) that may be kept.
KEEP_TYPES = {
    "officedocument", "core-properties", "extended-properties", "styles", "styleswitheffects",
    "settings", "websettings", "fonttable", "numbering", "footnotes", "endnotes", "comments",
    "commentsextended", "commentsids", "commentsextensible", "people", "header", "footer",
    "theme", "themeoverride", "image", "hyperlink", "glossarydocument", "font", "diagramdata",
    "diagramlayout", "diagramquickstyle", "diagramcolors", "diagramdrawing", "chart",
    "chartusershapes", "chartstyle", "chartcolorstyle", "worksheet", "chartsheet",
    "sharedstrings", "calcchain", "table", "pivottable", "pivotcachedefinition",
    "pivotcacherecords", "drawing", "vmldrawing", "threadedcomment", "person", "slicer",
    "slicercache", "timeline", "timelinecache", "namedsheetview", "sheetmetadata", "slide",
    "slidelayout", "slidemaster", "notesslide", "notesmaster", "handoutmaster", "presprops",
    "viewprops", "tablestyles", "tags", "commentauthors", "authors", "audio", "video", "media",
    "revisionheaders", "revisionlog", "usernames",
    # Visio: its main part (`document`, not `officeDocument`), pages, masters, windows and
    # validation rules.
    "document", "pages", "page", "masters", "master", "windows", "validation",
}

# Relationship types removed on purpose, with the finding kind reported.
REMOVE_KINDS = {
    "vbaproject": "macro", "vbaprojectsignature": "macro", "vbaprojectsignatureagile": "macro",
    "vbaprojectsignaturev3": "macro", "wordvbadata": "macro", "keymapcustomizations": "macro",
    "attachedtoolbars": "macro", "extensibility": "macro",  # customUI ribbon callbacks
    "xlmacrosheet": "xlm_macro", "xlintlmacrosheet": "xlm_macro", "dialogsheet": "xlm_macro",
    "activexcontrol": "activex", "activexcontrolbinary": "activex", "control": "activex",
    "ctrlprop": "form_control",
    "oleobject": "ole_object", "package": "ole_object", "afchunk": "ole_object",
    "externallink": "external_link", "externallinkpath": "external_link",
    "connections": "data_connection", "querytable": "data_connection",
    "volatiledependencies": "data_connection", "xmlmaps": "data_connection",
    "tablesinglecells": "data_connection",
    "customxml": "custom_xml", "customxmlprops": "custom_xml",
    "custom-properties": "custom_properties", "customproperty": "custom_properties",
    "customdata": "custom_xml",
    "printersettings": "printer_settings",
    "attachedtemplate": "remote_template",
    "webextension": "add_in", "webextensions": "add_in", "taskpanes": "add_in",
    "origin": "signature", "signature": "signature",
    "thumbnail": "metadata",
    "subdocument": "external_relationship", "frame": "external_relationship",
    "mailmergesource": "data_connection", "mailmergeheadersource": "data_connection",
    "recipientdata": "data_connection", "model3d": "embedded_object",
    # Visio: data recordsets (refreshed from the data connections), add-ons' solution XML and
    # extension data.
    "recordsets": "data_connection", "solutions": "custom_xml", "solution": "custom_xml",
    "extensions": "custom_xml",
}

# External relationships the externalReferences policy "keep" keeps (at a web address): the
# ones that only load something to display (linked pictures and media). Every other one loads
# a document that can run code and goes under every policy: a remote template (attachedTemplate,
# whose macros run), a frame or a subdocument (a whole document loaded in), an OLE link (an
# external oleObject: a moniker that opens any file, CVE-2017-0199), external workbook links
# and data sources; DDE and fields that fetch or run things go with them.
PASSIVE_EXTERNAL_TYPES = frozenset({"image", "audio", "video", "media"})

# Content types never kept, whatever relationship points at them.
DENY_CT = ("vba", "macro", "activex", "oleobject", "externallink", "connections", "querytable",
           "custom-properties", "customxml", "printersettings", "keymapcustomizations",
           "attachedtoolbars", "controlproperties", "dialogsheet")

FONT_CT = ("font", "obfuscatedfont")


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    """Rebuild an OOXML package at dst without active or hidden content; return its extension."""
    del kind  # the package's own main content type decides, not the claimed kind
    members, _order = read_package(src, "Office document")
    ctx.progress(10)
    state = load(members, ctx)
    root_rels = read_rels(state, "")
    main = [r for r in root_rels if is_main_relationship(r.type) and not r.external]
    if len(main) != 1:
        raise Rejected("The Office package has no single main document part.",
                       RejectionCode.DAMAGED)
    main_part = resolve_target("", main[0].target)
    if main_part is None or main_part.casefold() not in state.by_fold:
        raise Rejected("The Office package's main document part is missing.", RejectionCode.DAMAGED)
    main_part = state.by_fold[main_part.casefold()]
    main_ct = state.content_type(main_part)
    if main_ct == XLSB_MAIN:
        return _sanitize_xlsb(src, dst, ctx)
    if main_ct in ADDIN_TYPES:
        raise Rejected("The file is an Office add-in, which is program code, not a document.",
                       RejectionCode.EXECUTABLE)
    if main_ct not in MAIN_TYPES:
        raise Rejected(f"The Office package's main part has an unsupported type ({main_ct[:80]}).",
                       RejectionCode.UNSUPPORTED_TYPE)
    out_ext, clean_ct = MAIN_TYPES[main_ct]
    if clean_ct != main_ct:
        ctx.add("macro_enabled_type", main_part, action="converted",
                detail=f"relabelled as {out_ext} (macro-free)")
    state.family = out_ext[0]  # d(ocx)/x(lsx)/p(ptx)
    state.main_part = main_part
    state.overrides["/" + main_part.casefold()] = clean_ct
    _walk(state, root_rels)
    ctx.progress(80)
    report_orphans(state)
    write(state, dst)
    ctx.progress(100)
    return out_ext


def _sanitize_xlsb(src: Path, dst: Path, ctx: Context) -> str:
    # Binary workbooks cannot be cleaned record by record here: report their macros, then let
    # LibreOffice (no macros run) rewrite them as xlsx, and clean that like any xlsx.
    from sanitas.engine import legacy_office

    members, _ = read_package(src, "Excel binary workbook")
    for name, data in members.items():
        if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
            legacy_office.report_ole_contents(data, name, ctx)
    converted = legacy_office.convert(src, ctx, "xlsx", "xlsb")
    ctx.add("binary_workbook", "workbook", action="converted", detail="xlsb rewritten as xlsx")
    return sanitize(converted, dst, ctx, "xlsx")


def _walk(state: PackageState, root_rels: list[Rel]) -> None:
    queue: deque[tuple[str, list[Rel]]] = deque([("", root_rels)])
    done: set[str] = {""}
    while queue:
        source, rels = queue.popleft()
        kept_rels: list[Rel] = []
        for rel in rels:
            if _keep_rel(state, source, rel):
                kept_rels.append(rel)
                # a kept internal relationship always has its part resolved (_keep_rel)
                if not rel.external and rel.part is not None and rel.part not in done:
                    done.add(rel.part)
                    queue.append((rel.part, read_rels(state, rel.part)))
        state.rels_out[source] = kept_rels
    if state.ctx.decides(Rule.HIDDEN_CONTENT) is not Action.KEEP:
        _drop_hidden_parts(state)
    _drop_unreadable_parts(state)
    # Clean the XML parts only now: a part may drop a relationship whose target fails checks.
    for part in list(state.kept):
        if state.kept[part] is None:
            rels = [r for r in state.rels_out.get(part, []) if r.external or r.part in state.kept]
            state.rels_out[part] = rels
            state.kept[part] = clean_xml_part(state, part, {r.id: r for r in rels})
    # Parts whose XML turned out unusable are dropped with their incoming relationships.
    for part in state.rejected_parts:
        state.kept.pop(part, None)
    for source, rels in state.rels_out.items():
        state.rels_out[source] = [r for r in rels if r.external or r.part in state.kept]


def _drop_unreadable_parts(state: PackageState) -> None:
    """An XML part (other than the main one) that is empty or not well-formed leaves the
    package with its relationships before any part is cleaned, so no part keeps a reference
    to it; it is reported. Every XML part of the output then parses. (A part declaring a DTD
    is left to `parse_xml`, which refuses it as an attack.)"""
    for part, pending in list(state.kept.items()):
        ct = state.kept_ct.get(part, "")
        if pending is not None or part == state.main_part or "vml" in ct or \
                part.casefold().endswith(".vml"):
            continue  # binary parts are kept as they are; VML is parsed leniently
        data = state.members[part]
        if DTD_DECLARATION.search(data[:65536]):
            continue
        problem = "it is empty" if not data.strip() else xml_problem(data)
        if problem == DECLARES_DTD:
            continue
        if problem is not None:
            state.ctx.add("invalid_part", part, detail=f"removed with its relationships: "
                          f"{problem}")
            state.reported.add("part|" + part)
            state.rejected_parts.add(part)
            del state.kept[part]
    for source, rels in state.rels_out.items():
        state.rels_out[source] = [r for r in rels if r.external or r.part in state.kept]


_HIDDEN_SHEET = re.compile(rb"""state\s*=\s*["'](?:hidden|veryHidden)["']""")

_HIDDEN_SLIDE = re.compile(rb"""<(?:\w+:)?sld\b[^>]*\sshow\s*=\s*["'](?:0|false)["']""")


def _drop_hidden_parts(state: PackageState) -> None:
    """Hidden sheets and slides (policy hiddenContent remove/refuse) leave the package: their
    parts go now, and the workbook's <sheet> / the presentation's <sldId> entries go when the
    main part is cleaned (their relationship is no longer kept)."""
    main = state.main_part
    if state.family == "x" and _HIDDEN_SHEET.search(state.members[main]):
        root = parse_xml(state.members[main], main)
        by_id = {r.id: r for r in state.rels_out.get(main, [])}
        for sheet in root.iter("{*}sheet"):
            if sheet.get("state") not in ("hidden", "veryHidden"):
                continue
            rid = next((sheet.get(a) for a in sheet.attrib
                        if etree.QName(a).namespace in REL_NAMESPACES), None)
            rel = by_id.get(rid or "")
            state.ctx.add("hidden_sheet", main, detail=f"sheet {sheet.get('name', '')!r} "
                          f"({sheet.get('state')}) removed")
            state.hidden_sheet_names.add(sheet.get("name") or "")
            if rel is not None and rel.part is not None:
                state.kept.pop(rel.part, None)
    if state.family == "p":
        for part in list(state.kept):
            if "slide+xml" in state.content_type(part) and \
                    _HIDDEN_SLIDE.search(state.members[part][:65536]):
                state.ctx.add("hidden_slide", part, detail="slide hidden from the show removed")
                state.kept.pop(part, None)


def _keep_rel(state: PackageState, source: str, rel: Rel) -> bool:
    key = rel_type_key(rel.type)
    where = source or "package"
    if rel.external:
        if key == "hyperlink" and state.ctx.policy.keep_links and safe_url(rel.target):
            return True
        kind = REMOVE_KINDS.get(key, "external_relationship")
        if key == "hyperlink":
            kind = "hyperlink"
        elif safe_url(rel.target) and not rel.target.lower().startswith("mailto:") and \
                rule_of(kind) is Rule.EXTERNAL_REFERENCES and \
                state.ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP:
            if key in PASSIVE_EXTERNAL_TYPES:
                state.ctx.add(kind, f"{where} {rel.id}", action="kept",
                              detail=f"external {key}: {rel.target[:200]}")
                return True  # a web address the policy keeps (file paths and shares never are)
            state.ctx.add(kind, f"{where} {rel.id}", detail=f"external {key}: "
                          f"{rel.target[:200]} (loads a document that may run code: removed "
                          "under every policy)")
            return False
        state.ctx.add(kind, f"{where} {rel.id}", detail=f"external {key}: {rel.target[:200]}")
        return False
    part = resolve_target(source, rel.target)
    real = state.by_fold.get(part.casefold()) if part else None
    if real is not None and drop_review_part(state, key, real):
        return False  # comments, reviewers, revision history (policy review_data)
    if real is not None and key in ("package", "oleobject") and \
            state.ctx.decides(Rule.EMBEDDED_FILES) in (Action.KEEP, Action.SANITIZE):
        rel.part = real
        return real in state.kept or _keep_embedding(state, real, key)
    if key in REMOVE_KINDS or key not in KEEP_TYPES:
        kind = REMOVE_KINDS.get(key, "unknown_part")
        state.ctx.add(kind, real or rel.target[:200], detail=f"relationship {key}")
        if real:
            state.reported.add("part|" + real)
        return False
    if real is None or key == "hyperlink":
        return False  # dangling or internal hyperlink target: drop the reference silently
    rel.part = real
    if real in state.kept:
        return True
    ct = state.content_type(real)
    if any(d in ct for d in DENY_CT) and not ct.startswith("image/"):
        state.ctx.add("hidden_part", real, detail=f"content type {ct[:100]}")
        state.reported.add("part|" + real)
        return False
    data = state.members[real]
    if key in ("image", "media", "audio", "video") or ct.startswith(("image/", "audio/",
                                                                       "video/")):
        return _keep_binary(state, real, ct, data, key)
    if any(f in ct for f in FONT_CT) and not ct.endswith("xml"):  # not fontTable+xml
        state.kept[real], state.kept_ct[real] = data, ct
        return True
    if key in ("pivotcachedefinition", "pivottable") and _external_pivot(state, real, key):
        # fed by a data connection (now removed): the cells keep the last values shown
        state.ctx.add("data_connection", real, detail=f"{key} fed by an external data connection")
        state.reported.add("part|" + real)
        return False
    if key in ("worksheet", "chartsheet") and _root_name(data) in ("macrosheet", "dialogsheet"):
        # an Excel 4 macro sheet wearing a worksheet's relationship and content type
        state.ctx.add("xlm_macro", real, detail="macro sheet disguised as a worksheet")
        state.reported.add("part|" + real)
        return False
    if ct.endswith("xml") or "vmldrawing" in ct or key == "vmldrawing":
        state.kept[real] = None  # cleaned after the walk
        state.kept_ct[real] = ct or "application/xml"
        return True
    state.ctx.add("binary_part", real, detail=f"content type {ct[:100] or 'unknown'}")
    state.reported.add("part|" + real)
    return False


_PACKAGE_CT = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}


def _keep_embedding(state: PackageState, part: str, key: str) -> bool:
    """An object embedded in a document under the embeddedFiles policy "keep" or "sanitize":
    an embedded Word/Excel/PowerPoint package is cleaned by the engine under the same policy
    and the archive limits (`nested.nested_context`) and kept as its macro-free type; an OLE
    object, which may wrap any file (a program, a macro document), is removed."""
    from sanitas.engine import decrypt, nested, sanitize_detected
    from sanitas.engine.report import Refused

    data = state.members[part]
    ctx = state.ctx
    if key != "package" or ctx.workdir is None:
        ctx.add("ole_object", part, detail="OLE object removed (it may wrap any file, which "
                "cannot be cleaned inside it)")
        state.reported.add("part|" + part)
        return False
    work = ctx.workdir / f"embedded-{len(state.kept_embeddings)}-{ctx.depth}"
    work.mkdir(exist_ok=True)
    source, output = work / "in", work / "out"
    source.write_bytes(data)
    try:
        inner = nested.nested_context(ctx, len(data))
        opened, detected = decrypt.detect_opening(source, posixpath.basename(part), inner)
        extension = sanitize_detected(opened, output, detected, inner)
    except Refused:
        raise
    except Rejected as exc:
        state.reported.add("part|" + part)
        if exc.code.value in ENCRYPTED_CODES:  # not inspected: held back or passed
            if not ctx.policy.passes_encrypted:
                ctx.add("encrypted_content", part, action="removed",
                        detail=f"embedded document held back: {exc.reason}")
                return False
            ctx.add("encrypted_content", part, action="kept",
                    detail=f"embedded document delivered unchanged and not inspected: "
                           f"{exc.reason}")
            state.kept[part] = data
            state.kept_ct[part] = state.content_type(part) or "application/octet-stream"
            state.kept_embeddings.add(part)
            return True
        ctx.add("ole_object", part, detail=f"embedded package removed: {exc.reason}")
        return False
    if extension not in _PACKAGE_CT:
        ctx.add("ole_object", part, detail=f"embedded package removed (it is {extension})")
        state.reported.add("part|" + part)
        return False
    for finding in inner.closed_findings():
        ctx.record(finding.kind, f"{part}: {finding.location}", action=finding.action,
                   detail=finding.detail)
    ctx.add("ole_object", part, action="converted",
            detail=f"embedded package sanitized as {extension}")
    state.kept[part], state.kept_ct[part] = output.read_bytes(), _PACKAGE_CT[extension]
    state.kept_embeddings.add(part)
    return True


def _keep_binary(state: PackageState, part: str, ct: str, data: bytes, key: str) -> bool:
    if key in ("media", "audio", "video") or ct.startswith(("audio/", "video/")):
        state.kept[part], state.kept_ct[part] = data, ct or "application/octet-stream"
        return True
    fmt = image_format(data)
    if fmt is None:
        state.ctx.add("invalid_image", part, detail=f"not a recognised image ({ct[:60]})")
        state.reported.add("part|" + part)
        return False
    cleaned = clean_picture(data, fmt, state.ctx, part)
    if cleaned is None:
        state.ctx.add("invalid_image", part, detail="image could not be decoded")
        state.reported.add("part|" + part)
        return False
    mime = {"jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "bmp": "image/bmp",
            "tiff": "image/tiff", "emf": "image/x-emf", "wmf": "image/x-wmf",
            "webp": "image/webp"}[fmt]
    state.kept[part], state.kept_ct[part] = cleaned, mime
    return True


_EXTERNAL_CACHE = re.compile(rb"<(?:\w+:)?cacheSource\b[^>]*(?:connectionId|type=\"external\")")


def _external_pivot(state: PackageState, part: str, key: str) -> bool:
    if key == "pivotcachedefinition":
        return bool(_EXTERNAL_CACHE.search(state.members[part][:1_000_000]))
    for rel in read_rels(state, part):
        if rel_type_key(rel.type) == "pivotcachedefinition" and not rel.external:
            target = resolve_target(part, rel.target)
            real = state.by_fold.get(target.casefold()) if target else None
            if real and _EXTERNAL_CACHE.search(state.members[real][:1_000_000]):
                return True
    return False


_ROOT_TAG = re.compile(rb"<(?![?!])(?:[\w.-]+:)?([\w.-]+)")


def _root_name(data: bytes) -> str:
    head = data[:4096]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        head = data[:8192].decode("utf-16", "ignore").encode()
    m = _ROOT_TAG.search(re.sub(rb"<!--.*?-->", b"", head, flags=re.DOTALL))
    return m.group(1).decode("ascii", "replace").lower() if m else ""
