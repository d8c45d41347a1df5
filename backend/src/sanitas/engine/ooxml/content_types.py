"""[Content_Types].xml: read into the package state, or rebuilt from the part names when it
is missing or damaged, and the main part's type restored from its root element."""

from __future__ import annotations

import re

from sanitas.engine import formats
from sanitas.engine.ooxml.state import PackageState
from sanitas.engine.opc import kind_of_root, local_name, office_document_target
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.xmlsafe import parse_xml

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


def load(members: dict[str, bytes], ctx: Context) -> PackageState:
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
    state = PackageState(ctx=ctx, members=members, by_fold=by_fold, defaults=defaults,
                   overrides=overrides)
    if root is not None:
        _restore_main_type(state)
    return state


_OD = "application/vnd.openxmlformats-officedocument."

_WML, _SML, _PML = _OD + "wordprocessingml.", _OD + "spreadsheetml.", _OD + "presentationml."
_VISIO = "application/vnd.ms-visio."

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
    "vsdx": [
        (r"(^|/)pages/pages\.xml$", _VISIO + "pages+xml"),
        (r"(^|/)pages/page\d*\.xml$", _VISIO + "page+xml"),
        (r"(^|/)masters/masters\.xml$", _VISIO + "masters+xml"),
        (r"(^|/)masters/master\d*\.xml$", _VISIO + "master+xml"),
        (r"(^|/)windows\.xml$", _VISIO + "windows+xml"),
        (r"(^|/)comments\.xml$", _VISIO + "comments+xml"),
        (r"(^|/)validation\.xml$", _VISIO + "validation+xml"),
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


def _restore_main_type(state: PackageState) -> None:
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
