"""OOXML (docx/docm/dotx/dotm, xlsx/xlsm/xltx/xltm, pptx/pptm/ppsx/ppsm/potx/potm) sanitizer.

The package is rebuilt from its relationship graph: starting at _rels/.rels, only parts reached
through relationship types on an allowlist survive, so anything hidden in an unreferenced or
unknown part is gone by construction. Each kept XML part is re-parsed without entities and
cleaned (fields, objects, controls, macro hooks, external references); raster images are
re-encoded; [Content_Types].xml and every .rels part are written anew from what was kept, so
nothing dangles and the result opens without a repair prompt.
"""

from __future__ import annotations

import contextlib
import copy
import posixpath
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict
from urllib.parse import urlsplit

from lxml import etree

from . import formats
from .kinds import rule_of
from .office_package import (
    clean_picture,
    image_format,
    read_package,
    remove_element,
    serialize,
    unwrap,
    write_package,
)
from .opc import (
    P_NSS,
    W_NSS,
    kind_of_root,
    local_name,
    office_document_target,
    rel_type_key,
    resolve_target,
)
from .policy import Action as Decision
from .policy import Rule
from .report import Context, Rejected, RejectionCode
from .xmlsafe import parse_xml, xml_parser

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


def _iter(root: etree._Element, namespaces: set[str], *names: str) -> list[etree._Element]:
    """Elements with one of `names` in any of `namespaces`, in document order."""
    return list(root.iter(*[f"{{{ns}}}{n}" for ns in namespaces for n in names]))
VML_NS = "urn:schemas-microsoft-com:vml"

# Main document content type -> (output extension, macro-free content type), from the registry.
MAIN_TYPES: dict[str, tuple[str, str]] = {
    kind.main_type: (kind.outputs[0], formats.kind(kind.outputs[0]).main_type)
    for kind in formats.KINDS.values()
    if kind.family == "ooxml" and kind.name != "xlsb"  # binary workbooks are converted first
}
ADDIN_TYPES = {
    "application/vnd.ms-excel.addin.macroenabled.main+xml",
    "application/vnd.ms-powerpoint.addin.macroenabled.main+xml",
}
XLSB_MAIN = formats.kind("xlsb").main_type

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

SAFE_LINK_SCHEMES = {"http", "https", "mailto"}

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

_DANGEROUS_FORMULA = re.compile(
    r"\[\s*\d+\s*\]|\||\b(?:_xlfn\.|_xlws\.)?(?:WEBSERVICE|RTD|CALL|REGISTER(?:\.ID)?|EXEC|"
    r"IMAGE|STOCKHISTORY|FILTERXML|EXECUTE|DDE|INCLUDE)\s*\(", re.IGNORECASE)
_STRING_LITERAL = re.compile(r'"(?:[^"]|"")*"')
_AUTO_NAME = re.compile(r"^(?:_xlnm\.)?auto_(?:open|close|activate|deactivate)", re.IGNORECASE)
_SAFE_ACTION = re.compile(
    r"^ppaction://(?:hlinkshowjump|hlinksldjump|noaction|customshow)", re.IGNORECASE)
_URLISH = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|\\\\|//)", re.IGNORECASE)


def _ns(el: etree._Element) -> str:
    tag = el.tag
    return tag[1:tag.index("}")] if isinstance(tag, str) and tag[:1] == "{" else ""


def _any_ns(*names: str) -> list[str]:
    # lxml filters "{*}name" in C: far faster than testing every element in Python
    return [f"{{*}}{n}" for n in names]


def _attrs(root: etree._Element, predicate: str) -> list[tuple[etree._Element, str, str]]:
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


@dataclass
class _State:
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
    review: _Review = field(default_factory=lambda: _Review())  # comments, revisions, people

    def content_type(self, part: str) -> str:
        ct = self.overrides.get("/" + part.casefold())
        if ct is None:
            ext = posixpath.splitext(part)[1].lstrip(".").casefold()
            ct = self.defaults.get(ext, "")
        return ct.strip().lower()


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    """Rebuild an OOXML package at dst without active or hidden content; return its extension."""
    del kind  # the package's own main content type decides, not the claimed kind
    members, _order = read_package(src, "Office document")
    ctx.progress(10)
    state = _load(members, ctx)
    root_rels = _read_rels(state, "")
    main = [r for r in root_rels if rel_type_key(r.type) == "officedocument" and not r.external]
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
    _report_orphans(state)
    _write(state, dst)
    ctx.progress(100)
    return out_ext


def _sanitize_xlsb(src: Path, dst: Path, ctx: Context) -> str:
    # Binary workbooks cannot be cleaned record by record here: report their macros, then let
    # LibreOffice (no macros run) rewrite them as xlsx, and clean that like any xlsx.
    from . import legacy_office

    members, _ = read_package(src, "Excel binary workbook")
    for name, data in members.items():
        if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
            legacy_office.report_ole_contents(data, name, ctx)
    converted = legacy_office.convert(src, ctx, "xlsx", "xlsb")
    ctx.add("binary_workbook", "workbook", action="converted", detail="xlsb rewritten as xlsx")
    return sanitize(converted, dst, ctx, "xlsx")


def _load(members: dict[str, bytes], ctx: Context) -> _State:
    by_fold = {name.casefold(): name for name in members}
    ct_name = by_fold.get("[content_types].xml")
    root = None
    if ct_name is not None:
        try:
            root = parse_xml(members[ct_name], "[Content_Types].xml")
        except Rejected as exc:
            if exc.code != RejectionCode.DAMAGED:
                raise  # a DTD or entities: an attack, not damage
    defaults: dict[str, str] = {}
    overrides: dict[str, str] = {}
    if root is None:
        # Missing or unreadable: rebuilt when the main part shows what the package is.
        main, kind = _main_by_structure(members, by_fold)
        if main is None or kind is None:
            what = "no" if ct_name is None else "a damaged"
            raise Rejected(f"The Office package has {what} [Content_Types].xml and its main "
                           "part does not show whether it is a Word, Excel or PowerPoint "
                           "document, so it cannot be repaired.", RejectionCode.DAMAGED)
        defaults, overrides = _rebuilt_content_types(members, main, kind)
        ctx.add("structure", "[Content_Types].xml", action="converted",
                detail="content types rebuilt from the part names")
    else:
        for el in root:
            if local_name(el) == "Default":
                defaults[(el.get("Extension") or "").casefold()] = el.get("ContentType") or ""
            elif local_name(el) == "Override":
                overrides[(el.get("PartName") or "").casefold()] = el.get("ContentType") or ""
    state = _State(ctx=ctx, members=members, by_fold=by_fold, defaults=defaults,
                   overrides=overrides)
    if root is not None:
        _restore_main_type(state)
    return state


# --------------------------------------------- packages whose content types are missing or damaged

_OD = "application/vnd.openxmlformats-officedocument."
_WML, _SML, _PML = _OD + "wordprocessingml.", _OD + "spreadsheetml.", _OD + "presentationml."
# Standard defaults by extension (what Office writes); parts with other extensions stay
# untyped and are dropped like any unknown binary part.
_DEFAULT_TYPES = {
    "rels": "application/vnd.openxmlformats-package.relationships+xml", "xml": "application/xml",
    "png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "gif": "image/gif",
    "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "emf": "image/x-emf",
    "wmf": "image/x-wmf", "webp": "image/webp", "svg": "image/svg+xml",
    "vml": _OD + "vmlDrawing", "odttf": _OD + "obfuscatedFont",
    "wav": "audio/wav", "mp3": "audio/mpeg", "m4a": "audio/mp4", "mp4": "video/mp4",
}
# Well-known part names (any folder; matched case-insensitively) -> content type.
_COMMON_PARTS = [
    (r"(^|/)theme/theme\d*\.xml$", _OD + "theme+xml"),
    (r"(^|/)theme/themeOverride\d*\.xml$", _OD + "themeOverride+xml"),
    (r"(^|/)charts/chart\d*\.xml$", _OD + "drawingml.chart+xml"),
    (r"(^|/)charts/style\d*\.xml$", "application/vnd.ms-office.chartstyle+xml"),
    (r"(^|/)charts/colors\d*\.xml$", "application/vnd.ms-office.chartcolorstyle+xml"),
    (r"(^|/)diagrams/data\d*\.xml$", _OD + "drawingml.diagramData+xml"),
    (r"(^|/)diagrams/layout\d*\.xml$", _OD + "drawingml.diagramLayout+xml"),
    (r"(^|/)diagrams/quickStyle\d*\.xml$", _OD + "drawingml.diagramStyle+xml"),
    (r"(^|/)diagrams/colors\d*\.xml$", _OD + "drawingml.diagramColors+xml"),
    (r"(^|/)diagrams/drawing\d*\.xml$", "application/vnd.ms-office.drawingml.diagramDrawing+xml"),
    (r"^docProps/core\.xml$", "application/vnd.openxmlformats-package.core-properties+xml"),
    (r"^docProps/app\.xml$", _OD + "extended-properties+xml"),
    (r"^docProps/custom\.xml$", _OD + "custom-properties+xml"),
    (r"(^|/)vbaProject\.bin$", "application/vnd.ms-office.vbaProject"),
]
_KIND_PARTS = {
    "docx": [
        (r"(^|/)styles\.xml$", _WML + "styles+xml"),
        (r"(^|/)stylesWithEffects\.xml$", "application/vnd.ms-word.stylesWithEffects+xml"),
        (r"(^|/)settings\.xml$", _WML + "settings+xml"),
        (r"(^|/)webSettings\.xml$", _WML + "webSettings+xml"),
        (r"(^|/)fontTable\.xml$", _WML + "fontTable+xml"),
        (r"(^|/)numbering\.xml$", _WML + "numbering+xml"),
        (r"(^|/)footnotes\.xml$", _WML + "footnotes+xml"),
        (r"(^|/)endnotes\.xml$", _WML + "endnotes+xml"),
        (r"(^|/)comments\.xml$", _WML + "comments+xml"),
        (r"(^|/)commentsExtended\.xml$", _WML + "commentsExtended+xml"),
        (r"(^|/)commentsIds\.xml$", _WML + "commentsIds+xml"),
        (r"(^|/)people\.xml$", _WML + "people+xml"),
        (r"(^|/)header\d*\.xml$", _WML + "header+xml"),
        (r"(^|/)footer\d*\.xml$", _WML + "footer+xml"),
        (r"(^|/)glossary/document\.xml$", _WML + "document.glossary+xml"),
    ],
    "xlsx": [
        (r"(^|/)worksheets/sheet\d*\.xml$", _SML + "worksheet+xml"),
        (r"(^|/)chartsheets/sheet\d*\.xml$", _SML + "chartsheet+xml"),
        (r"(^|/)styles\.xml$", _SML + "styles+xml"),
        (r"(^|/)sharedStrings\.xml$", _SML + "sharedStrings+xml"),
        (r"(^|/)calcChain\.xml$", _SML + "calcChain+xml"),
        (r"(^|/)tables/table\d*\.xml$", _SML + "table+xml"),
        (r"(^|/)pivotTables/pivotTable\d*\.xml$", _SML + "pivotTable+xml"),
        (r"(^|/)pivotCache/pivotCacheDefinition\d*\.xml$", _SML + "pivotCacheDefinition+xml"),
        (r"(^|/)pivotCache/pivotCacheRecords\d*\.xml$", _SML + "pivotCacheRecords+xml"),
        (r"(^|/)comments\d*\.xml$", _SML + "comments+xml"),
        (r"(^|/)metadata\.xml$", _SML + "sheetMetadata+xml"),
        (r"(^|/)drawings/drawing\d*\.xml$", _OD + "drawing+xml"),
        (r"(^|/)persons/person\d*\.xml$", "application/vnd.ms-excel.person+xml"),
        (r"(^|/)threadedComments/threadedComment\d*\.xml$",
         "application/vnd.ms-excel.threadedcomments+xml"),
    ],
    "pptx": [
        (r"(^|/)slides/slide\d*\.xml$", _PML + "slide+xml"),
        (r"(^|/)slideLayouts/slideLayout\d*\.xml$", _PML + "slideLayout+xml"),
        (r"(^|/)slideMasters/slideMaster\d*\.xml$", _PML + "slideMaster+xml"),
        (r"(^|/)notesSlides/notesSlide\d*\.xml$", _PML + "notesSlide+xml"),
        (r"(^|/)notesMasters/notesMaster\d*\.xml$", _PML + "notesMaster+xml"),
        (r"(^|/)handoutMasters/handoutMaster\d*\.xml$", _PML + "handoutMaster+xml"),
        (r"(^|/)presProps\.xml$", _PML + "presProps+xml"),
        (r"(^|/)viewProps\.xml$", _PML + "viewProps+xml"),
        (r"(^|/)tableStyles\.xml$", _PML + "tableStyles+xml"),
        (r"(^|/)commentAuthors\.xml$", _PML + "commentAuthors+xml"),
        (r"(^|/)comments/comment\d*\.xml$", _PML + "comments+xml"),
        (r"(^|/)tags/tag\d*\.xml$", _PML + "tags+xml"),
    ],
}
_PART_PATTERNS = {kind: [(re.compile(p, re.IGNORECASE), ct) for p, ct in parts + _COMMON_PARTS]
                  for kind, parts in _KIND_PARTS.items()}


def _main_by_structure(members: dict[str, bytes], by_fold: dict[str, str],
                       ) -> tuple[str | None, str | None]:
    """(main part, the kind its root element names) from the relationships alone."""
    rels = by_fold.get("_rels/.rels")
    target = office_document_target(members[rels]) if rels else None
    main = by_fold.get(target.casefold()) if target else None
    return main, kind_of_root(members[main][:65536]) if main else None


def _rebuilt_content_types(members: dict[str, bytes], main: str, kind: str,
                           ) -> tuple[dict[str, str], dict[str, str]]:
    """Defaults and overrides for a package without usable content types: the standard
    defaults, the main part's type from its root element, known part names' types."""
    overrides = {"/" + main.casefold(): formats.kind(kind).main_type}
    for name in members:
        if name == main:
            continue
        for pattern, content_type in _PART_PATTERNS[kind]:
            if pattern.search(name):
                overrides["/" + name.casefold()] = content_type
                break
    return dict(_DEFAULT_TYPES), overrides


def _restore_main_type(state: _State) -> None:
    """Content types that do not type the main part (damaged): typed from its root element."""
    main, kind = _main_by_structure(state.members, state.by_fold)
    if main is None or kind is None:
        return
    current = state.content_type(main)
    if current in MAIN_TYPES or current == XLSB_MAIN or current in ADDIN_TYPES:
        return
    state.overrides["/" + main.casefold()] = formats.kind(kind).main_type
    state.ctx.add("structure", "[Content_Types].xml", action="converted",
                  detail="the main part's content type restored from its root element")


def _rels_name(part: str) -> str:
    d, b = posixpath.split(part)
    return posixpath.join(d, "_rels", b + ".rels") if part else "_rels/.rels"


def _read_rels(state: _State, part: str) -> list[Rel]:
    name = state.by_fold.get(_rels_name(part).casefold())
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


def _walk(state: _State, root_rels: list[Rel]) -> None:
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
                    queue.append((rel.part, _read_rels(state, rel.part)))
        state.rels_out[source] = kept_rels
    if state.ctx.decides(Rule.HIDDEN_CONTENT) is not Decision.KEEP:
        _drop_hidden_parts(state)
    _drop_unreadable_parts(state)
    # Clean the XML parts only now: a part may drop a relationship whose target fails checks.
    for part in list(state.kept):
        if state.kept[part] is None:
            rels = [r for r in state.rels_out.get(part, []) if r.external or r.part in state.kept]
            state.rels_out[part] = rels
            state.kept[part] = _clean_xml_part(state, part, {r.id: r for r in rels})
    # Parts whose XML turned out unusable are dropped with their incoming relationships.
    for part in state.rejected_parts:
        state.kept.pop(part, None)
    for source, rels in state.rels_out.items():
        state.rels_out[source] = [r for r in rels if r.external or r.part in state.kept]


def _drop_unreadable_parts(state: _State) -> None:
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
        if _DTD_DECLARATION.search(data[:65536]):
            continue
        problem = "it is empty" if not data.strip() else None
        if problem is None:
            try:  # the tree is dropped at once: one part's tree in memory at a time
                etree.fromstring(data, xml_parser())
            except etree.XMLSyntaxError as exc:
                problem = f"it is not well-formed XML ({str(exc)[:120]})"
        if problem is not None:
            state.ctx.add("invalid_part", part, detail=f"removed with its relationships: "
                          f"{problem}")
            state.reported.add("part|" + part)
            state.rejected_parts.add(part)
            del state.kept[part]
    for source, rels in state.rels_out.items():
        state.rels_out[source] = [r for r in rels if r.external or r.part in state.kept]


_DTD_DECLARATION = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


_HIDDEN_SHEET = re.compile(rb"""state\s*=\s*["'](?:hidden|veryHidden)["']""")
_HIDDEN_SLIDE = re.compile(rb"""<(?:\w+:)?sld\b[^>]*\sshow\s*=\s*["'](?:0|false)["']""")


def _drop_hidden_parts(state: _State) -> None:
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


def _keep_rel(state: _State, source: str, rel: Rel) -> bool:
    key = rel_type_key(rel.type)
    where = source or "package"
    if rel.external:
        if key == "hyperlink" and state.ctx.policy.keep_links and _safe_url(rel.target):
            return True
        kind = REMOVE_KINDS.get(key, "external_relationship")
        if key == "hyperlink":
            kind = "hyperlink"
        elif _safe_url(rel.target) and not rel.target.lower().startswith("mailto:") and \
                rule_of(kind) is Rule.EXTERNAL_REFERENCES and \
                state.ctx.decides(Rule.EXTERNAL_REFERENCES) is Decision.KEEP:
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
    if real is not None and _drop_review_part(state, key, real):
        return False  # comments, reviewers, revision history (policy review_data)
    if real is not None and key in ("package", "oleobject") and \
            state.ctx.decides(Rule.EMBEDDED_FILES) in (Decision.KEEP, Decision.SANITIZE):
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


def _keep_embedding(state: _State, part: str, key: str) -> bool:
    """An object embedded in a document under the embeddedFiles policy "keep" or "sanitize":
    an embedded Word/Excel/PowerPoint package is cleaned by the engine under the same policy
    and the archive limits (`archive.nested_context`) and kept as its macro-free type; an OLE
    object, which may wrap any file (a program, a macro document), is removed."""
    from . import archive, decrypt, sanitize_detected
    from .report import Refused

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
        inner = archive.nested_context(ctx, len(data))
        opened, detected = decrypt.detect_opening(source, posixpath.basename(part), inner)
        extension = sanitize_detected(opened, output, detected, inner)
    except Refused:
        raise
    except Rejected as exc:
        ctx.add("ole_object", part, detail=f"embedded package removed: {exc.reason}")
        state.reported.add("part|" + part)
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


def _embedded_kept(state: _State, el: etree._Element) -> bool:
    """Whether an OLE object element points at an embedding the policy kept."""
    rels = state.part_rels
    for attr, value in el.attrib.items():
        if etree.QName(attr).namespace in REL_NAMESPACES:
            rel = rels.get(value)
            if rel is not None and rel.part in state.kept_embeddings:
                return True
    return False


def _keep_binary(state: _State, part: str, ct: str, data: bytes, key: str) -> bool:
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


def _external_pivot(state: _State, part: str, key: str) -> bool:
    if key == "pivotcachedefinition":
        return bool(_EXTERNAL_CACHE.search(state.members[part][:1_000_000]))
    for rel in _read_rels(state, part):
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


def _safe_url(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in SAFE_LINK_SCHEMES and (parts.scheme.lower() == "mailto"
                                                          or bool(parts.netloc))


# ---------------------------------------------------------------------------------- XML parts

def _clean_xml_part(state: _State, part: str, rels: dict[str, Rel]) -> bytes | None:
    state.part_rels = rels
    data = state.members[part]
    ct = state.kept_ct[part]
    keep_meta = state.ctx.decides(Rule.DOCUMENT_METADATA) is Decision.KEEP
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
        _clean_workbook(state, part, root, rels)
    _drop_always(state, part, root)
    # Attribute scans walk every attribute: skip those the bytes show cannot match. The probe
    # is the parsed tree in UTF-8, so a part stored as UTF-16 cannot hide from it.
    probe = etree.tostring(root, encoding="UTF-8")
    _clean_review(state, part, root, rels, probe)  # before fields: accepted text decides them
    if any(w in probe for w in (b"macro", b"onAction", b"fmlaMacro")):
        _clean_macro_attrs(state, part, root)
    _clean_actions(state, part, root)
    if state.family == "d" or _ns(root) in W_NSS or "wordprocessingml" in ct:
        _clean_word(state, part, root)
    if state.family == "x" and ("worksheet" in ct or local_name(root) == "worksheet"):
        _clean_sheet(state, part, root)
    if state.family == "x" and local_name(root) == "table":
        _clean_table(state, part, root)
    if state.family == "p":
        _clean_slide(state, part, root)
    if state.family == "x" and is_vml and b"ClientData" in probe:
        _clean_vml_controls(state, part, root)
    if any(w in probe for w in (b"src=", b"href=", b"althref=")):
        _clean_vml(state, part, root)  # VML also lives inline in Word parts
    if _uses_rel_attributes(probe):
        _clean_rel_refs(state, part, root, rels)
    _clean_empty(root)
    del ctx
    return serialize(root)


def _parse_vml(state: _State, part: str, data: bytes) -> etree._Element | None:
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


def _kept_properties(state: _State, part: str, data: bytes) -> bytes:
    """Document properties the policy keeps: re-serialised, without the hyperlink base (an
    external reference that stays under the externalReferences rule)."""
    root = parse_xml(data, part)
    for el in list(root.iter("{*}HyperlinkBase")):
        if (el.text or "").strip():
            state.ctx.add("external_relationship", part, detail="hyperlink base")
        remove_element(el)
    state.ctx.add("metadata", part, action="kept", detail="document properties kept")
    return serialize(root)


def _neutral_core(state: _State, part: str) -> bytes:
    state.ctx.add("metadata", part, detail="author, dates and descriptive properties removed",
                 action="removed")
    return serialize(etree.fromstring(
        b'<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/'
        b'core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        b'xmlns:dcterms="http://purl.org/dc/terms/" '
        b'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>'))


def _drop_always(state: _State, part: str, root: etree._Element) -> None:
    for el in list(root.iter(*_any_ns(*ALWAYS_DROP))):
        name = local_name(el)
        if name == "OLEObject" and state.kept_embeddings and _embedded_kept(state, el):
            continue
        state.ctx.add(ALWAYS_DROP[name], part, detail=name)
        remove_element(el)


def _clean_macro_attrs(state: _State, part: str, root: etree._Element) -> None:
    # DrawingML and form controls can assign a macro to a shape ("[0]!Auto_Open").
    pred = "local-name()='macro' or local-name()='onAction' or local-name()='fmlaMacro'"
    for el, attr, value in _attrs(root, pred):
        if value and attr in el.attrib:
            lname = attr.rpartition("}")[2]
            state.ctx.add("macro", part, detail=f"{local_name(el)}@{lname}={value[:80]}")
            del el.attrib[attr]


def _clean_actions(state: _State, part: str, root: etree._Element) -> None:
    for el in list(root.iter(*_any_ns("hlinkClick", "hlinkHover", "hlinkMouseOver"))):
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


def _clean_rel_refs(state: _State, part: str, root: etree._Element, rels: dict[str, Rel]) -> None:
    """Every reference (r:id, r:embed, r:link...) must point at a kept relationship."""
    pred = " or ".join(f"namespace-uri()='{ns}'" for ns in sorted(REL_NAMESPACES))
    for el, attr, value in _attrs(root, pred):
        if value in rels or value == "" or attr not in el.attrib:
            continue
        if local_name(el) in DROP_ON_MISSING_REL:
            remove_element(el)
        else:
            del el.attrib[attr]


def _clean_empty(root: etree._Element) -> None:
    tags = [f"{{{MC_NS}}}Choice", f"{{{MC_NS}}}Fallback", f"{{{MC_NS}}}AlternateContent",
            *_any_ns(*EMPTY_CONTAINERS)]
    changed = True
    while changed:
        changed = False
        for el in list(root.iter(*tags)):
            if el is root or len(el):
                continue
            name, ns = local_name(el), _ns(el)
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


# ------------------------------------------------------------------------------------- Word

def _clean_word(state: _State, part: str, root: etree._Element) -> None:
    _clean_fields(state, part, root)
    if state.ctx.decides(Rule.HIDDEN_CONTENT) is not Decision.KEEP:
        _drop_hidden_text(state, part, root)
    for el in list(root.iter(*_any_ns("object", "customXml", "subDoc", "altChunk",
                                      "OLEObject", "control"))):
        if el is not root and el.getparent() is None:
            continue  # already removed with an ancestor
        name, ns = local_name(el), _ns(el)
        if state.kept_embeddings and name in ("object", "OLEObject") and (
                _embedded_kept(state, el) or any(_embedded_kept(state, c) for c in el)):
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


def _replace_word_object(state: _State, part: str, obj: etree._Element) -> None:
    """w:object (embedded OLE or ActiveX) becomes a plain picture of its preview."""
    kinds = []
    for child in list(obj):
        name = local_name(child)
        if name in ("OLEObject", "control", "objectEmbed", "objectLink", "movie"):
            kinds.append(child.get("ProgID") or child.get("progId") or name)
            remove_element(child)
    state.ctx.add("ole_object", part, detail="embedded object replaced by its preview image: "
                 + ", ".join(k for k in kinds if k), action="converted")
    shapes = [c for c in obj if local_name(c) in ("shape", "rect", "group") or _ns(c) == VML_NS]
    drawings = [c for c in obj if local_name(c) == "drawing"]
    if shapes:
        obj.tag = f"{{{_ns(obj)}}}pict"
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


def _clean_fields(state: _State, part: str, root: etree._Element) -> None:
    for el in _iter(root, W_NSS, "fldSimple"):
        instr = el.get(f"{{{_ns(el)}}}instr") or ""
        if not _field_is_safe(state, instr):
            state.ctx.add(_field_kind(instr), part, detail=f"field {instr.strip()[:120]}")
            unwrap(el)  # the cached result runs stay
    stack: list[_Field] = []
    doomed: list[etree._Element] = []
    for el in _iter(root, W_NSS, "fldChar", "instrText", "delInstrText"):
        if local_name(el) in ("instrText", "delInstrText"):
            if stack and stack[-1]["sep"] is None:
                stack[-1]["instr"].append(el)
            else:
                doomed.append(el)  # instruction text outside a field is hidden text
            continue
        kind = el.get(f"{{{_ns(el)}}}fldCharType")
        if kind == "begin":
            stack.append(_Field(begin=el, instr=[], sep=None))
        elif kind == "separate" and stack:
            stack[-1]["sep"] = el
        elif kind == "end" and stack:
            fld = stack.pop()
            _finish_field(state, part, fld, el, doomed)
        else:
            doomed.append(el)
    for fld in stack:  # unterminated fields
        _finish_field(state, part, fld, None, doomed, force=True)
    for el in doomed:
        run = el.getparent()
        remove_element(el)
        if run is not None and local_name(run) == "r" and not any(
                local_name(c) != "rPr" for c in run):
            remove_element(run)


def _finish_field(state: _State, part: str, fld: _Field, end: etree._Element | None,
                  doomed: list[etree._Element], force: bool = False) -> None:
    instr = "".join(e.text or "" for e in fld["instr"])
    form = _field_name(instr) in FORM_FIELD_NAMES and \
        state.ctx.decides(Rule.FORM_FIELDS) is not Decision.KEEP
    if not force and not form and _field_is_safe(state, instr):
        return
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


def _field_is_safe(state: _State, instr: str) -> bool:
    name = _field_name(instr)
    if name not in SAFE_FIELDS:
        return False
    if name == "HYPERLINK":
        rest = instr.strip()[len("HYPERLINK"):].strip()
        if rest.startswith("\\l"):
            return True
        url = rest.split('"')[1] if rest.count('"') >= 2 else rest.split(None, 1)[0] if rest \
            else ""
        return state.ctx.policy.keep_links and _safe_url(url)
    # A safe outer field must not quote a dangerous name (nested or obfuscated instructions)
    upper = instr.upper()
    return not any(w in upper for w in ("DDE", "INCLUDE", "IMPORT", "\\\\", "HTTP:", "HTTPS:",
                                        "FILE:", "LINK ", "EMBED "))


# ------------------------------------------------------------------------------------ Excel

def _drop_hidden_text(state: _State, part: str, root: etree._Element) -> None:
    """Runs formatted as hidden (<w:vanish/>) leave the document (hiddenContent remove)."""
    runs = 0
    for vanish in list(_iter(root, W_NSS, "vanish")):
        props = vanish.getparent()
        run = props.getparent() if props is not None else None
        if props is None or run is None or local_name(props) != "rPr" or local_name(run) != "r":
            continue  # a paragraph mark or a style: formatting only
        if (_w_attr(vanish, "val") or "true").lower() in ("0", "false", "off"):
            continue
        runs += 1
        remove_element(run)
    if runs:
        state.ctx.add("hidden_text", part, detail=f"{_plural(runs, 'hidden text run')} removed")


def _clean_workbook(state: _State, part: str, root: etree._Element, rels: dict[str, Rel]) -> None:
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


def _clean_defined_name(state: _State, part: str, el: etree._Element, remap: dict[int, int],
                        removed_idx: list[int]) -> None:
    name = el.get("name") or ""
    formula = el.text or ""
    reason = None
    if _AUTO_NAME.match(name):
        reason = "auto-run name"
    elif (any(el.get(a) in ("1", "true") for a in ("function", "vbProcedure", "xlm"))
          or el.get("functionGroupId") is not None):
        reason = "macro function name"
    elif _formula_is_dangerous(formula):
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


def _formula_is_dangerous(formula: str) -> bool:
    return bool(_DANGEROUS_FORMULA.search(_STRING_LITERAL.sub('""', formula)))


def _clean_sheet(state: _State, part: str, root: etree._Element) -> None:
    dropped_shared: set[str] = set()
    formulas = list(root.iter("{*}f"))
    for f in formulas:
        if f.get("t") == "shared" and f.get("ref") and _formula_is_dangerous(f.text or ""):
            dropped_shared.add(f.get("si") or "")
    for f in formulas:
        text = f.text or ""
        if _formula_is_dangerous(text) or (f.get("t") == "shared" and
                                           f.get("si") in dropped_shared):
            cell = f.getparent()
            ref = cell.get("r") if cell is not None else "?"
            state.ctx.add("external_link" if "[" in text else "formula", part,
                         detail=f"cell {ref} formula {text[:100]} replaced by its value",
                         action="converted")
            remove_element(f)
    for el in list(root.iter("{*}dataValidation", "{*}cfRule")):
        if el.getparent() is not None and any(
                _formula_is_dangerous(f.text or "")
                for f in el.iter("{*}formula1", "{*}formula2", "{*}formula", "{*}f")):
            state.ctx.add("external_link", part,
                          detail=f"{local_name(el)} with an external or DDE formula")
            remove_element(el)
    for el in list(root.iter("{*}oleObjects", "{*}controls", "{*}customProperties")):
        name = local_name(el)
        if name == "oleObjects":
            objects = [obj for obj in el.iter() if local_name(obj) == "oleObject"]
            kept = [obj for obj in objects
                    if state.kept_embeddings and _embedded_kept(state, obj)]
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


def _clean_table(state: _State, part: str, root: etree._Element) -> None:
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


# ------------------------------------------------------------------------------- PowerPoint

def _clean_slide(state: _State, part: str, root: etree._Element) -> None:
    for gf in _iter(root, P_NSS, "graphicFrame"):
        data = next(iter(_iter(gf, A_NSS, "graphicData")), None)
        if data is None or not (data.get("uri") or "").endswith("/ole"):
            continue
        ole = next(iter(_iter(gf, P_NSS, "oleObj")), None)
        if ole is not None and state.kept_embeddings and _embedded_kept(state, ole):
            continue  # an embedded object the policy keeps
        prog = ole.get("progId", "") if ole is not None else ""
        pic = next(iter(_iter(gf, P_NSS, "pic")), None)
        if pic is None:
            state.ctx.add("ole_object", part,
                          detail=f"OLE object {prog} removed (no preview image)")
            remove_element(gf)
            continue
        state.ctx.add("ole_object", part, detail=f"OLE object {prog} replaced by its preview image",
                     action="converted")
        new = copy.deepcopy(pic)
        _adopt_frame(gf, new)
        gf.addprevious(new)
        remove_element(gf)
    for controls in _iter(root, P_NSS, "controls"):
        tree = next(iter(_iter(root, P_NSS, "spTree")), None)
        for ctl in _iter(controls, P_NSS, "control"):
            state.ctx.add("activex", part, detail=f"ActiveX control {ctl.get('name', '')}")
            pic = next(iter(_iter(ctl, P_NSS, "pic")), None)
            if pic is not None and tree is not None:
                new = copy.deepcopy(pic)
                cnv = next(iter(_iter(new, P_NSS, "cNvPr")), None)
                if cnv is not None:
                    cnv.set("id", str(_max_shape_id(root) + 1))
                tree.append(new)
        remove_element(controls)
    # Animation commands can invoke OLE verbs or macros; the static slide stays the same.
    for timing in _iter(root, P_NSS, "timing"):
        if any(local_name(e) == "cmd" for e in timing.iter()):
            state.ctx.add("action", part, detail="animation commands (OLE verb or macro call)")
            remove_element(timing)


def _max_shape_id(root: etree._Element) -> int:
    ids = [int(i) for e in _iter(root, P_NSS, "cNvPr") if (i := e.get("id") or "").isdigit()]
    return max(ids, default=1)


def _adopt_frame(gf: etree._Element, pic: etree._Element) -> None:
    """Give the preview picture the frame's id, name and position."""
    src = next(iter(_iter(gf, P_NSS, "cNvPr")), None)
    dst = next(iter(_iter(pic, P_NSS, "cNvPr")), None)
    if src is not None and dst is not None:
        dst.set("id", src.get("id", "1"))
        dst.set("name", src.get("name", "Picture"))
    xfrm = next((c for c in gf if local_name(c) == "xfrm"), None)
    sppr = next((c for c in pic if local_name(c) == "spPr"), None)
    if xfrm is None or sppr is None:
        return
    for old in [c for c in sppr if local_name(c) == "xfrm"]:
        sppr.remove(old)
    a_ns = _ns(xfrm[0]) if len(xfrm) else A_NS
    new = etree.Element(f"{{{a_ns}}}xfrm")
    for k, v in xfrm.attrib.items():
        new.set(k, v)
    for c in xfrm:
        new.append(etree.Element(f"{{{a_ns}}}{local_name(c)}", dict(c.attrib)))
    sppr.insert(0, new)


# ------------------------------------------------------------------------------------ VML

# Excel form controls in a legacy VML drawing (x:ClientData ObjectType): check and option
# boxes, buttons, lists, spinners, scroll bars, group boxes, labels, edit boxes.
FORM_OBJECT_TYPES = frozenset({"checkbox", "radio", "button", "drop", "list", "spin", "scroll",
                               "gbox", "label", "editbox", "dialog"})


def _clean_vml_controls(state: _State, part: str, root: etree._Element) -> None:
    if state.ctx.decides(Rule.FORM_FIELDS) is not Decision.KEEP:
        # Policy formFields remove (or refuse): the sheet's form controls go with their
        # shapes. Under keep they stay in this legacy form, which Excel reads (the newer
        # control-property parts, xl/ctrlProps, are not kept under any policy).
        controls = [shape for shape in root.iter(f"{{{VML_NS}}}*") if any(
            local_name(c) == "ClientData" and (c.get("ObjectType") or "").lower()
            in FORM_OBJECT_TYPES for c in shape)]
        if controls:
            state.ctx.add("form_control", part,
                          detail=f"{_plural(len(controls), 'form control')} (check boxes, "
                          "buttons, lists...) removed")
        for shape in controls:
            remove_element(shape)


def _clean_vml(state: _State, part: str, root: etree._Element) -> None:
    pred = "local-name()='src' or local-name()='href' or local-name()='althref'"
    for el, attr, val in _attrs(root, pred):
        if attr not in el.attrib or not _URLISH.match(val):
            continue
        lname = attr.rpartition("}")[2]
        if lname == "href" and state.ctx.policy.keep_links and _safe_url(val):
            continue
        state.ctx.add("external_relationship", part, detail=f"VML {lname} {val[:100]}")
        del el.attrib[attr]


# ----------------------------------------------------------------------------------- output

def _report_orphans(state: _State) -> None:
    for name in state.members:
        low = name.casefold()
        if name in state.kept or low.endswith(".rels") or low == "[content_types].xml":
            continue
        if "part|" + name in state.reported:
            continue
        kind = "macro" if "vba" in low else "orphan_part"
        state.ctx.add(kind, name, detail="part not reachable from the document")


_CANONICAL_EXT = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg",
                  "gif": "image/gif", "bmp": "image/bmp", "tif": "image/tiff",
                  "tiff": "image/tiff", "emf": "image/x-emf", "wmf": "image/x-wmf",
                  "webp": "image/webp"}


def _write(state: _State, dst: Path) -> None:
    defaults = {"rels": "application/vnd.openxmlformats-package.relationships+xml",
                "xml": "application/xml"}
    overrides: dict[str, str] = {}
    for part in state.kept:
        ct = state.kept_ct[part]
        ext = posixpath.splitext(part)[1].lstrip(".").lower()
        if part == state.main_part:
            ct = state.overrides["/" + part.casefold()]
        elif part.casefold() == "docprops/core.xml":
            ct = "application/vnd.openxmlformats-package.core-properties+xml"
        elif part.casefold() == "docprops/app.xml":
            ct = "application/vnd.openxmlformats-officedocument.extended-properties+xml"
        if ext in _CANONICAL_EXT and _CANONICAL_EXT[ext] == ct:
            defaults[ext] = ct
        if defaults.get(ext) != ct:
            overrides["/" + part] = ct
    ct_root = etree.Element(f"{{{CT_NS}}}Types", nsmap={None: CT_NS})
    for ext, ct in defaults.items():
        etree.SubElement(ct_root, f"{{{CT_NS}}}Default", Extension=ext, ContentType=ct)
    for name, ct in overrides.items():
        etree.SubElement(ct_root, f"{{{CT_NS}}}Override", PartName=name, ContentType=ct)
    out: list[tuple[str, bytes]] = [("[Content_Types].xml", serialize(ct_root))]
    for source, rels in state.rels_out.items():
        if source and source not in state.kept:
            continue
        if not rels:
            continue
        rroot = etree.Element(f"{{{PKG_REL_NS}}}Relationships", nsmap={None: PKG_REL_NS})
        for r in rels:
            attrs = {"Id": r.id, "Type": r.type}
            if r.external:
                attrs["Target"] = r.target
                attrs["TargetMode"] = "External"
            else:
                assert r.part is not None  # kept internal relationships have their part
                attrs["Target"] = _relative(source, r.part)
            etree.SubElement(rroot, f"{{{PKG_REL_NS}}}Relationship", attrs)
        out.append((_rels_name(source), serialize(rroot)))
    for part, data in state.kept.items():
        assert data is not None  # _walk cleaned every XML part or dropped it
        out.append((part, data))
    write_package(dst, out)


def _relative(source: str, target: str) -> str:
    if not source:
        return target
    from urllib.parse import quote

    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return quote(rel, safe="/._-~")


# ----------------------------------------------------------------------------- review data
# Comments, tracked changes and the people behind them. By default (policy review_data
# "remove") the comments go and every tracked change is accepted, as Word's "Accept All" does;
# with "anonymise" both stay and each reviewer becomes "Author 1", "Author 2"... consistently
# across the whole package, with the dates dropped.

# Relationship types (key) of parts that hold comments, reviewers or revision history.
REVIEW_RELS = {
    "comments", "commentsextended", "commentsids", "commentsextensible", "threadedcomment",
    "people", "person", "commentauthors", "authors", "usernames", "revisionheaders",
    "revisionlog",
}
# Word revision records of formatting changes: accepting them keeps the current formatting.
W_PROP_CHANGES = ("rPrChange", "pPrChange", "sectPrChange", "tblPrChange", "trPrChange",
                  "tcPrChange", "tblGridChange", "tblPrExChange", "numberingChange")
W_RANGE_MARKS = ("moveFromRangeStart", "moveFromRangeEnd", "moveToRangeStart", "moveToRangeEnd",
                 "customXmlInsRangeStart", "customXmlInsRangeEnd", "customXmlDelRangeStart",
                 "customXmlDelRangeEnd", "customXmlMoveFromRangeStart",
                 "customXmlMoveFromRangeEnd", "customXmlMoveToRangeStart",
                 "customXmlMoveToRangeEnd")
W_COMMENT_MARKS = ("commentRangeStart", "commentRangeEnd", "commentReference")
# Elements that must hold at least one paragraph.
W_BLOCK_HOLDERS = ("tc", "footnote", "endnote", "comment", "hdr", "ftr", "txbxContent",
                   "docPartBody")
# Body-level markers that travel with a paragraph merged into the next one.
W_PARA_NEIGHBOURS = ("bookmarkStart", "bookmarkEnd", "permStart", "permEnd", "proofErr",
                     "commentRangeStart", "commentRangeEnd")
NEUTRAL_DATE = "1970-01-01T00:00:00Z"
PERSONAL_VIEW = " - Personal View"
_NOTE_SHAPE = re.compile(rb"ObjectType\s*=\s*[\"']?\s*(\w+)", re.IGNORECASE)


class ReviewerAliases:
    """Reviewer name -> "Author N", consistent across one document (OOXML and ODF alike)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def alias(self, name: str) -> str:
        key = name.strip()
        if not key:
            return name
        if key not in self.aliases:
            self.aliases[key] = f"Author {len(self.aliases) + 1}"
        return self.aliases[key]

    def initials(self, name: str) -> str:
        return "A" + self.alias(name).rsplit(" ", 1)[-1] if name.strip() else name

    def scrub_text(self, root: etree._Element) -> None:
        """Replace every known reviewer name in the text of a comment part by its alias (Excel
        opens each note with "Name:")."""
        names = sorted((n for n in self.aliases if len(n) > 1), key=len, reverse=True)
        if not names:
            return
        pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")
        for el in root.iter():
            for attr in ("text", "tail"):
                value = getattr(el, attr)
                if value and pattern.search(value):
                    setattr(el, attr, pattern.sub(lambda m: self.aliases[m.group(0)], value))


class _Review(ReviewerAliases):
    """Review-data state shared by every part of one package."""

    def __init__(self) -> None:
        super().__init__()
        self.personal_views: set[str] = set()  # guids of the personal views removed


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _drop_review_part(state: _State, key: str, part: str) -> bool:
    """With the default policy, a comment, reviewer or revision-history part is not kept:
    record what it held and report it (and what only it references) as handled."""
    decision = state.ctx.decides(Rule.REVIEW_DATA)
    if decision is Decision.KEEP and key in REVIEW_RELS:
        state.ctx.add("comments" if key not in ("people", "person", "commentauthors", "authors",
                                                "usernames") else "personal_data",
                      part, action="kept", detail=f"{key} part kept as it is")
    if decision in (Decision.ANONYMISE, Decision.KEEP):
        return False
    if key == "vmldrawing":
        # Excel draws legacy comment boxes in a VML part of their own: drop it when it holds
        # nothing else (buttons and other shapes keep theirs; note shapes go when it is cleaned)
        kinds = {m.lower() for m in _NOTE_SHAPE.findall(state.members[part][:16_000_000])}
        if state.family != "x" or kinds != {b"note"}:
            return False
        state.ctx.add("comments", part, detail="comment boxes removed")
    elif key not in REVIEW_RELS:
        return False
    else:
        kind, detail = _review_part_summary(state, key, part)
        state.ctx.add(kind, part, detail=detail)
    # Its relationships may be unreadable: nothing of it is kept anyway.
    with contextlib.suppress(Rejected):
        _mark_reported(state, part, set())
    return True


def _mark_reported(state: _State, part: str, seen: set[str]) -> None:
    """A removed part and the parts only it leads to are not "orphans" in the report."""
    if part in seen or len(seen) > 1000:
        return
    seen.add(part)
    state.reported.add("part|" + part)
    for rel in _read_rels(state, part):
        target = None if rel.external else resolve_target(part, rel.target)
        real = state.by_fold.get(target.casefold()) if target else None
        if real:
            _mark_reported(state, real, seen)


def _review_part_summary(state: _State, key: str, part: str) -> tuple[str, str]:
    try:
        root = parse_xml(state.members[part], part)
    except Rejected:
        root = None
    if root is None:
        return ("personal_data" if key in ("people", "person", "commentauthors", "authors",
                                           "usernames") else "comments",
                f"{key} part removed")
    name = local_name(root)
    if key == "comments":
        if name == "comments" and _ns(root) in W_NSS:  # Word
            items = _iter(root, W_NSS, "comment")
            authors = {_w_attr(c, "author") for c in items} - {""}
        elif name == "comments":  # Excel
            items = list(root.iter("{*}comment"))
            authors = {(a.text or "").strip() for a in root.iter("{*}author")} - {""}
        else:  # PowerPoint, classic and modern
            items = list(root.iter("{*}cm", "{*}reply"))
            authors = {a for c in items if (a := c.get("authorId")) is not None}
        return "comments", (f"{_plural(len(items), 'comment')} by "
                            f"{_plural(len(authors), 'author')} removed")
    if key == "threadedcomment":
        items = list(root.iter("{*}threadedComment"))
        authors = {a for c in items if (a := c.get("personId")) is not None}
        return "comments", (f"{_plural(len(items), 'threaded comment')} by "
                            f"{_plural(len(authors), 'author')} removed")
    if key in ("commentsextended", "commentsids", "commentsextensible"):
        return "comments", "comment threads, identifiers and dates removed"
    if key == "revisionheaders":
        heads = list(root.iter("{*}header"))
        users = {h.get("userName") for h in heads} - {None}
        return "tracked_changes", (
            f"shared-workbook change history removed ({_plural(len(heads), 'saved revision')} "
            f"by {_plural(len(users), 'user')}); the cells keep their current values")
    if key == "revisionlog":
        return "tracked_changes", "shared-workbook change log removed"
    tag = {"people": "person", "person": "person", "commentauthors": "cmAuthor",
           "authors": "author", "usernames": "userInfo"}[key]
    n = len(list(root.iter("{*}" + tag)))
    return "personal_data", (f"list of {_plural(n, 'reviewer')} (names and accounts) removed"
                             if n else "empty reviewer list removed")


def revision_summary(ins: int, dels: int, fmt: int, authors: int, other: str = "",
                     n_other: int = 0) -> str:
    """"3 insertions accepted, 1 deletion applied (by 2 reviewers)" (OOXML and ODF)."""
    parts = [f"{_plural(ins, 'insertion')} accepted" if ins else "",
             f"{_plural(dels, 'deletion')} applied" if dels else "",
             f"{_plural(fmt, 'formatting change')} accepted" if fmt else "",
             f"{_plural(n_other, other)} accepted" if n_other else ""]
    detail = ", ".join(p for p in parts if p)
    return detail + (f" (by {_plural(authors, 'reviewer')})" if authors else "")


def _w_attr(el: etree._Element, name: str) -> str:
    """A Word attribute (w:author...) whatever the namespace prefix or variant."""
    for attr, value in el.attrib.items():
        if attr.rpartition("}")[2] == name:
            return value
    return ""


def _attached(el: etree._Element, root: etree._Element) -> bool:
    return el is root or any(a is root for a in el.iterancestors())


def _clean_review(state: _State, part: str, root: etree._Element, rels: dict[str, Rel],
                  probe: bytes) -> None:
    anonymise = state.ctx.policy.review_data == "anonymise"
    review = state.review
    if state.ctx.decides(Rule.REVIEW_DATA) is Decision.KEEP:
        return  # comments, tracked changes and their authors stay as they are
    if _ns(root) in W_NSS:
        _review_word(state, part, root, anonymise, review, probe)
    elif state.family == "d":
        if anonymise:
            _anonymise_word_people(state, part, root, review)
    elif state.family == "x":
        _review_excel(state, part, root, rels, anonymise, review)
    elif state.family == "p":
        _review_slides(state, part, root, rels, anonymise, review)


# ---- Word

def _review_word(state: _State, part: str, root: etree._Element, anonymise: bool, review: _Review,
                 probe: bytes) -> None:
    ctx = state.ctx
    if b"rsid" in probe:
        removed = 0
        for el in _iter(root, W_NSS, "rsids"):
            remove_element(el)
            removed += 1
        for value in root.xpath("//@*[starts-with(local-name(), 'rsid')]"):
            el = value.getparent()
            if etree.QName(value.attrname).namespace in W_NSS and value.attrname in el.attrib:
                del el.attrib[value.attrname]
                removed += 1
        if removed:
            ctx.add("personal_data", part, detail="rsid session identifiers removed",
                    rule=Rule.DOCUMENT_METADATA)
    # Editing-permission ranges naming a user account (not review data: gone in both modes).
    named = {p.get(f"{{{_ns(p)}}}id") for p in _iter(root, W_NSS, "permStart")
             if _w_attr(p, "ed")}
    if named:
        for el in _iter(root, W_NSS, "permStart", "permEnd"):
            if el.get(f"{{{_ns(el)}}}id") in named:
                remove_element(el)
        ctx.add("personal_data", part,
                detail=f"{_plural(len(named), 'editing permission')} naming a user removed")
    if anonymise:
        _anonymise_word(state, part, root, review)
        return
    if local_name(root) == "settings":
        for el in _iter(root, W_NSS, "trackRevisions"):
            if _w_attr(el, "val") not in ("0", "false", "off"):
                ctx.add("tracked_changes", part, detail="change tracking switched off")
            remove_element(el)
    ins, dels, fmt, authors = _accept_word_revisions(root)
    if ins or dels or fmt:
        ctx.add("tracked_changes", part, action="converted",
                detail=revision_summary(ins, dels, fmt, len(authors)))
    marks = 0
    for el in _iter(root, W_NSS, *W_COMMENT_MARKS):
        if _attached(el, root):
            marks += 1
            _remove_from_run(el)
    if marks:
        ctx.add("comments", part, detail="comment anchors removed")
    # Whatever still carries a reviewer's name or a date (unknown revision elements).
    stray = root.xpath("//@*[namespace-uri() != '' and (local-name()='author' or "
                       "local-name()='initials' or local-name()='date' or "
                       "local-name()='dateUtc')]")
    for value in stray:
        el = value.getparent()
        if value.attrname in el.attrib:
            del el.attrib[value.attrname]
    if stray:
        ctx.add("personal_data", part, detail="reviewer names and dates removed")


def _remove_from_run(el: etree._Element) -> None:
    run = el.getparent()
    remove_element(el)
    if run is not None and local_name(run) == "r" and not any(local_name(c) != "rPr" for c in run):
        remove_element(run)


def _accept_word_revisions(root: etree._Element) -> tuple[int, int, int, set[str]]:
    """Accept every tracked change in one Word part, in place. Returns (insertions, deletions,
    formatting changes, reviewers)."""
    ins = dels = fmt = 0
    authors: set[str] = set()

    def note(el: etree._Element) -> None:
        author = _w_attr(el, "author")
        if author:
            authors.add(author)

    for el in _iter(root, W_NSS, *W_PROP_CHANGES):
        if _attached(el, root):
            note(el)
            fmt += 1
            parent = el.getparent()
            remove_element(el)
            _drop_if_empty(parent)
    merge = []  # paragraphs whose mark was deleted, in document order
    # Markers inside property elements: inserted/deleted paragraph marks, rows and cells.
    for el in _iter(root, W_NSS, "ins", "del", "moveFrom", "moveTo", "cellIns", "cellDel",
                    "cellMerge"):
        if not _attached(el, root):
            continue
        parent = el.getparent()
        if parent is None:  # the part's root itself: not a revision mark inside properties
            continue
        name, pname = local_name(el), local_name(parent)
        if not pname.endswith("Pr"):
            continue  # a content container, handled below
        note(el)
        if name in ("del", "moveFrom"):
            dels += 1
            owner = parent.getparent()
            if pname == "trPr" and owner is not None and local_name(owner) == "tr":
                remove_element(owner)
                continue
            if pname == "rPr" and owner is not None and local_name(owner) == "pPr":
                para = owner.getparent()
                if para is not None and local_name(para) == "p":
                    merge.append(para)
        elif name == "cellDel":
            dels += 1
            cell = parent.getparent()
            if cell is not None and local_name(cell) == "tc":
                remove_element(cell)
                continue
        elif name == "cellMerge":
            fmt += 1
        else:
            ins += 1
        remove_element(el)
        _drop_if_empty(parent)
    for el in _iter(root, W_NSS, "del", "moveFrom"):
        if _attached(el, root):
            note(el)
            dels += 1
            remove_element(el)
    for el in _iter(root, W_NSS, "ins", "moveTo"):
        if _attached(el, root):
            note(el)
            ins += 1
            unwrap(el)
    for el in _iter(root, W_NSS, *W_RANGE_MARKS, "delText", "delInstrText"):
        if _attached(el, root):
            _remove_from_run(el)
    for para in reversed(merge):  # backwards: each run of text moves once
        if _attached(para, root):
            _merge_into_next(para)
    if dels:
        _repair_blocks(root)
    return ins, dels, fmt, authors


def _drop_if_empty(props: etree._Element | None) -> None:
    """A property element (w:rPr of a paragraph mark, w:trPr...) emptied by accepting goes,
    and so does its parent property element when that is left empty in turn."""
    while props is not None and local_name(props).endswith("Pr") and not len(props) \
            and not props.attrib and local_name(props) not in ("tblPr", "sectPr"):  # required
        parent = props.getparent()
        remove_element(props)
        props = parent


def _merge_into_next(para: etree._Element) -> None:
    """A deleted paragraph mark joins the paragraph to the next one, which keeps its own
    paragraph properties."""
    travellers = []
    nxt = para.getnext()
    while nxt is not None and local_name(nxt) in W_PARA_NEIGHBOURS:
        travellers.append(nxt)
        nxt = nxt.getnext()
    if nxt is None or local_name(nxt) != "p" or _ns(nxt) != _ns(para):
        return  # the last paragraph before a table or a section end stays a paragraph
    moving = [c for c in para if local_name(c) != "pPr"] + travellers
    anchor = next((c for c in nxt if local_name(c) != "pPr"), None)
    for child in moving:
        if anchor is None:
            nxt.append(child)
        else:
            anchor.addprevious(child)
    remove_element(para)


def _repair_blocks(root: etree._Element) -> None:
    """Tables left without rows go; cells, notes and headers left without a paragraph get an
    empty one (Word refuses them otherwise)."""
    for tbl in _iter(root, W_NSS, "tbl"):
        if _attached(tbl, root) and not tbl.xpath(".//*[local-name()='tr']"):
            remove_element(tbl)
    for holder in _iter(root, W_NSS, *W_BLOCK_HOLDERS):
        if not _attached(holder, root):
            continue
        blocks = [c for c in holder if local_name(c) in ("p", "tbl", "sdt", "customXml")]
        if not blocks or (local_name(holder) == "tc" and local_name(blocks[-1]) == "tbl"):
            etree.SubElement(holder, f"{{{_ns(holder)}}}p")


def _anonymise_word(state: _State, part: str, root: etree._Element, review: _Review) -> None:
    ctx = state.ctx
    changes = 0
    tracked = (*W_PROP_CHANGES, "ins", "del", "moveFrom", "moveTo", "cellIns", "cellDel",
               "cellMerge")
    for el in root.xpath("//*[@*[local-name()='author' or local-name()='initials' or "
                         "local-name()='date' or local-name()='dateUtc']]"):
        author = _w_attr(el, "author")
        for attr in list(el.attrib):
            lname = attr.rpartition("}")[2]
            if lname == "author":
                el.set(attr, review.alias(author))
            elif lname == "initials":
                el.set(attr, review.initials(author or el.get(attr)))
            elif lname in ("date", "dateUtc"):
                del el.attrib[attr]
        if local_name(el) in tracked:
            changes += 1
    if local_name(root) == "comments":
        review.scrub_text(root)
        n = len(_iter(root, W_NSS, "comment"))
        ctx.add("comments", part, action="kept",
                detail=f"{_plural(n, 'comment')} kept, authors anonymised")
    elif changes:
        ctx.add("tracked_changes", part, action="kept",
                detail=f"{_plural(changes, 'tracked change')} kept, authors anonymised")


def _anonymise_word_people(state: _State, part: str, root: etree._Element, review: _Review) -> None:
    """people.xml and commentsExtensible: reviewer names, accounts and dates."""
    if local_name(root) == "people":
        for person in root.iter("{*}person"):
            for attr in list(person.attrib):
                if attr.rpartition("}")[2] == "author":
                    person.set(attr, review.alias(person.attrib[attr]))
            for info in list(person):
                if local_name(info) == "presenceInfo":  # the sign-in account (an e-mail address)
                    remove_element(info)
        state.ctx.add("personal_data", part, action="kept", detail="reviewer list anonymised")
    if "/office/word/" in _ns(root):  # commentsExtensible: when each comment was written
        for value in root.xpath("//@*[local-name()='dateUtc' or local-name()='date']"):
            el = value.getparent()
            if value.attrname in el.attrib:
                del el.attrib[value.attrname]


# ---- Excel

def _review_excel(state: _State, part: str, root: etree._Element, rels: dict[str, Rel],
                  anonymise: bool, review: _Review) -> None:
    ctx = state.ctx
    name = local_name(root)
    if name == "workbook":
        for el in root.iter("{*}fileSharing"):
            user = el.get("userName")
            if user:
                if anonymise:
                    el.set("userName", review.alias(user))
                else:
                    del el.attrib["userName"]
                ctx.add("personal_data", part, action="kept" if anonymise else "removed",
                        detail="file-sharing user name " + ("anonymised" if anonymise
                                                            else "removed"))
        for view in root.iter("{*}customWorkbookView"):
            label = view.get("name") or ""
            if view.get("personalView") not in ("1", "true") and PERSONAL_VIEW not in label:
                continue
            if anonymise:
                who = label.split(PERSONAL_VIEW)[0]
                view.set("name", review.alias(who) + PERSONAL_VIEW)
                continue
            review.personal_views.add((view.get("guid") or "").upper())
            ctx.add("personal_data", part, detail=f"personal view {label[:80]!r} removed")
            container = view.getparent()
            remove_element(view)
            if container is not None and not len(container):
                remove_element(container)
    elif name == "worksheet":
        for view in list(root.iter("{*}customSheetView")):
            if (view.get("guid") or "").upper() in review.personal_views:
                container = view.getparent()
                remove_element(view)
                if container is not None and not len(container):
                    remove_element(container)
        for el in list(root.iter("{*}legacyDrawing")):
            rid = next((v for a, v in el.attrib.items()
                        if etree.QName(a).namespace in REL_NAMESPACES), None)
            if rid not in rels:
                remove_element(el)  # its comment drawing is gone
    elif name == "xml" or _ns(root) == VML_NS:
        if not anonymise:
            notes = [s for s in root.iter(f"{{{VML_NS}}}shape")
                     if any((c.get("ObjectType") or "").lower() == "note"
                            for c in s if local_name(c) == "ClientData")]
            for shape in notes:
                remove_element(shape)
            if notes:
                ctx.add("comments", part, detail=f"{_plural(len(notes), 'comment box')} removed")
    elif anonymise:
        _anonymise_excel_part(state, part, root, review)


def _anonymise_excel_part(state: _State, part: str, root: etree._Element, review: _Review) -> None:
    ctx = state.ctx
    name = local_name(root)
    if name == "comments":
        for author in root.iter("{*}author"):
            if not (author.text or "").startswith("tc="):  # a threaded comment's id, no name
                author.text = review.alias(author.text or "")
        review.scrub_text(root)
        n = len(list(root.iter("{*}comment")))
        ctx.add("comments", part, action="kept",
                detail=f"{_plural(n, 'comment')} kept, authors anonymised")
    elif name == "personList":
        for person in root.iter("{*}person"):
            person.set("displayName", review.alias(person.get("displayName") or ""))
            for attr in ("userId", "providerId"):
                person.attrib.pop(attr, None)
        ctx.add("personal_data", part, action="kept", detail="reviewer list anonymised")
    elif name == "ThreadedComments":
        for el in list(root.iter("{*}threadedComment", "{*}mentions")):
            if local_name(el) == "mentions":
                remove_element(el)  # their offsets point into the names replaced below
            elif el.get("dT"):
                el.set("dT", NEUTRAL_DATE)
        review.scrub_text(root)
        n = len(list(root.iter("{*}threadedComment")))
        ctx.add("comments", part, action="kept",
                detail=f"{_plural(n, 'threaded comment')} kept, authors anonymised")
    elif name in ("headers", "users"):
        for el in root.iter("{*}header", "{*}userInfo"):
            attr = "userName" if local_name(el) == "header" else "name"
            if (person_name := el.get(attr)) is not None:
                el.set(attr, review.alias(person_name))
            if el.get("dateTime") is not None:
                el.set("dateTime", NEUTRAL_DATE)
        kind = "tracked_changes" if name == "headers" else "personal_data"
        ctx.add(kind, part, action="kept",
                detail=("change history kept, users anonymised" if name == "headers"
                        else "user list anonymised"))


# ---- PowerPoint

def _review_slides(state: _State, part: str, root: etree._Element, rels: dict[str, Rel],
                   anonymise: bool, review: _Review) -> None:
    ctx = state.ctx
    name = local_name(root)
    if name in ("sld", "sldLayout", "sldMaster", "notes") and not anonymise:
        for el in list(root.iter("{*}commentRel")):  # modern comments, in the slide's extLst
            ext = el.getparent()
            remove_element(el)
            if ext is not None and local_name(ext) == "ext" and not len(ext):
                remove_element(ext)
        return
    if not anonymise:
        return
    if name == "cmAuthorLst":
        for author in root.iter("{*}cmAuthor"):
            who = author.get("name") or ""
            author.set("name", review.alias(who))
            author.set("initials", review.initials(who))
        ctx.add("personal_data", part, action="kept", detail="comment authors anonymised")
    elif name == "authorLst":
        for author in root.iter("{*}author"):
            who = author.get("name") or ""
            author.set("name", review.alias(who))
            author.set("initials", review.initials(who))
            author.set("userId", review.alias(who))
            author.set("providerId", "None")
        ctx.add("personal_data", part, action="kept", detail="comment authors anonymised")
    elif name == "cmLst":
        for cm in root.iter("{*}cm", "{*}reply"):
            cm.attrib.pop("dt", None)
            if cm.get("created") is not None:
                cm.set("created", NEUTRAL_DATE)
        review.scrub_text(root)
        n = len(list(root.iter("{*}cm", "{*}reply")))
        ctx.add("comments", part, action="kept",
                detail=f"{_plural(n, 'comment')} kept, authors anonymised")
