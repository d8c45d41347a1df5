"""Legacy Office (doc/xls/ppt and their templates) and RTF: report what is inside with
oletools, then let LibreOffice (macros disabled, private profile) rewrite the document as OOXML,
which the caller sanitizes like any upload. Also the office -> PDF step of advanced mode."""

from __future__ import annotations

import contextlib
import io
import logging
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sanitas.engine import libreoffice
from sanitas.engine.office_package import OLE_MAGIC, serialize
from sanitas.engine.report import Context, Refused, Rejected, RejectionCode

if TYPE_CHECKING:
    import olefile  # imported where used, like oletools

# detected kind -> (input extension for LibreOffice, target extension, export filter)
TARGETS = {
    "doc": ("doc", "docx", "docx:MS Word 2007 XML"),
    "dot": ("dot", "docx", "docx:MS Word 2007 XML"),
    "rtf": ("rtf", "docx", "docx:MS Word 2007 XML"),
    "xls": ("xls", "xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "xlt": ("xlt", "xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "ppt": ("ppt", "pptx", "pptx:Impress MS PowerPoint 2007 XML"),
    "pps": ("pps", "pptx", "pptx:Impress MS PowerPoint 2007 XML"),
    "pot": ("pot", "pptx", "pptx:Impress MS PowerPoint 2007 XML"),
    # Older formats LibreOffice imports but cannot write: a text document becomes .docx, a
    # page layout (Publisher) or a drawing (Visio 2000-2003) a PDF, which the PDF family
    # then cleans.
    "wri": ("wri", "docx", "docx:MS Word 2007 XML"),
    "pub": ("pub", "pdf", "pdf:draw_pdf_Export"),
    "vsd": ("vsd", "pdf", "pdf:draw_pdf_Export"),
    "word2": ("doc", "docx", "docx:MS Word 2007 XML"),
    "wpd": ("wpd", "docx", "docx:MS Word 2007 XML"),
    "wps": ("wps", "docx", "docx:MS Word 2007 XML"),
    "wk1": ("wk1", "xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "wk3": ("wk3", "xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "wq1": ("wq1", "xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "pict": ("pct", "pdf", "pdf:draw_pdf_Export"),  # a picture: drawn on a PDF page
}
# reported by their format's name
NEWER_KINDS = frozenset({"wri", "pub", "vsd", "word2", "wpd", "wps", "wk1", "wk3", "wq1",
                         "pict"})
# The Word versions before Word 97 that still wrote OLE .doc files, by the nFib of their FIB.
WORD_VERSIONS = {101: "word6", 102: "word6", 103: "word6", 104: "word95", 105: "word95"}
WORD_LABELS = {"word6": "Word 6.0", "word95": "Word 95"}
MAX_REPORTED = 50  # findings per category: a hostile file must not flood the report

# oletools log loudly on malformed input; their verdicts are what we use.
for _name in ("olevba", "oleobj", "rtfobj", "olefile", "oletools"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    """Convert a legacy document to its OOXML twin and clean that like any OOXML file (by its
    family's sanitizer, found in the registry: the OOXML sanitizer converts .xlsb with this
    module's helpers, so importing it here would make the two modules need each other)."""
    from sanitas.engine import formats

    converted = to_ooxml(src, ctx, kind)
    target = formats.kind(kind).outputs[0]
    version = version_label(src.read_bytes(), kind)
    if version:
        detail = f"converted from {version} to {target}"
    elif kind in NEWER_KINDS:
        detail = f"converted from {formats.kind(kind).label} to {target}"
    else:
        detail = f"{kind} converted to {target}"
    ctx.add("legacy_format", "whole document", action="converted", detail=detail)
    return formats.family_of(target).sanitizer()(converted, dst, ctx, target)


def to_ooxml(src: Path, ctx: Context, kind: str) -> Path:
    """Convert a legacy document to its target (docx/xlsx/pptx, or a PDF for a page layout
    or a drawing) inside ctx.workdir; return the new file."""
    kind = kind.lower()
    if kind not in TARGETS:
        raise Rejected(f"Legacy Office type {kind!r} is not supported.",
                       RejectionCode.UNSUPPORTED_TYPE)
    in_ext, out_ext, target = TARGETS[kind]
    data = src.read_bytes()
    objects = _inspect(data, ctx, kind)
    ctx.progress(15)
    if kind in ("xls", "xlt") and objects:
        out = _workbook_objects_as_pictures(src, ctx, in_ext, target)
    else:
        out = libreoffice.convert(src, ctx, target, in_ext,
                                  infilter=import_filter(data, kind))
    if out_ext == "pdf":
        _drop_converter_marks(out)
    ctx.progress(50)
    return out


def _inspect(data: bytes, ctx: Context, kind: str) -> int:
    """Check a legacy document before LibreOffice reads it and report what the conversion
    leaves behind (macros, embedded objects, fields); returns the embedded objects found."""
    if kind == "rtf":
        _report_rtf(data, ctx)
        return 0
    if kind == "wri":
        _check_write(data)
        return 0
    if kind in _HEADER_CHECKS:
        _HEADER_CHECKS[kind](data)
        # Works 3-4 for Windows: an OLE file, whose embedded objects are reported as any
        return report_ole_contents(data, "WPS document", ctx) if data.startswith(OLE_MAGIC) \
            else 0
    if not data.startswith(OLE_MAGIC):
        raise Rejected(f"The file is not a valid {kind.upper()} document (no OLE container).",
                       RejectionCode.DAMAGED)
    _check_encrypted(data, kind)
    return report_ole_contents(data, f"{kind.upper()} document", ctx)


# What LibreOffice itself writes into every PDF it exports: the page to open on and its own
# name and the time of the export. Not the user's content, so not reported as removed.
_CONVERTER_INFO = frozenset({"/Creator", "/Producer", "/CreationDate", "/ModDate"})


def _drop_converter_marks(path: Path) -> None:
    """Remove from a PDF LibreOffice has just exported the entries it adds on its own (an
    /OpenAction that only names the first page's view, an /Info naming the program and the
    export time), so the report speaks of what came from the user's file. Anything else
    stays for the PDF sanitizer to judge (an author or title carried from the original)."""
    import pikepdf

    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        changed = False
        action = pdf.Root.get("/OpenAction")
        if isinstance(action, pikepdf.Array) and len(action) and \
                all(not isinstance(item, pikepdf.Dictionary) or item.get("/Type") == "/Page"
                    for item in action):
            del pdf.Root["/OpenAction"]
            changed = True
        info = pdf.trailer.get("/Info")
        if isinstance(info, pikepdf.Dictionary) and set(info.keys()) <= _CONVERTER_INFO:
            del pdf.trailer["/Info"]
            changed = True
        if changed:
            pdf.save(path)


# ODF names used to turn a workbook's embedded objects into pictures
_DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_TABLE_NAME = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}name"
_MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
_ODF_CHART = "application/vnd.oasis.opendocument.chart"


def _workbook_objects_as_pictures(src: Path, ctx: Context, in_ext: str, target: str) -> Path:
    """A workbook with embedded objects (an MS Graph or Excel chart, a document): LibreOffice's
    .xlsx export leaves every embedded object out, picture included, so the sheet would lose
    what it showed (and the pages it printed on). The workbook goes through ODF first, where
    each object other than a native chart becomes the picture LibreOffice shows for it (its
    preview), reported by name; the object itself is not carried over. Charts that are
    LibreOffice charts are exported as .xlsx charts (data, not code) and stay as they are."""
    ods = libreoffice.convert(src, ctx, "ods", in_ext)
    pictures = ods.with_name("pictures.ods")
    _objects_to_pictures(ods, pictures, ctx)
    return libreoffice.convert(pictures, ctx, target, "ods")


def _objects_to_pictures(ods: Path, dst: Path, ctx: Context) -> None:
    from sanitas.engine.office_package import read_package, remove_element, write_package
    from sanitas.engine.xmlsafe import parse_xml

    members, order = read_package(ods, "converted spreadsheet")
    if "content.xml" not in members or "META-INF/manifest.xml" not in members:
        raise Rejected("LibreOffice could not convert the workbook's embedded objects.",
                       RejectionCode.DAMAGED)
    manifest = parse_xml(members["META-INF/manifest.xml"], "META-INF/manifest.xml")
    types = {(e.get(f"{{{_MANIFEST}}}full-path") or "").rstrip("/"):
             e.get(f"{{{_MANIFEST}}}media-type") or "" for e in manifest}
    content = parse_xml(members["content.xml"], "content.xml")
    gone: set[str] = set()
    for obj in list(content.iter(f"{{{_DRAW}}}object", f"{{{_DRAW}}}object-ole")):
        href = (obj.get(_XLINK_HREF) or "").removeprefix("./").rstrip("/")
        if obj.tag == f"{{{_DRAW}}}object" and types.get(href) == _ODF_CHART:
            continue  # a chart LibreOffice writes as an .xlsx chart
        frame = obj.getparent()
        if frame is None:
            continue
        name = frame.get(f"{{{_DRAW}}}name") or "unnamed"
        sheet = next((t.get(_TABLE_NAME) for t in obj.iterancestors(
            "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}table")), None)
        where = (f"sheet {sheet!r}: " if sheet else "") + f"object {name[:80]!r}"
        if obj.tag == f"{{{_DRAW}}}object-ole":
            what = _stored_type(members.get(href, b"")) or "embedded OLE object"
        else:
            what = "embedded " + types.get(href, "").rpartition(".")[2] + " object"
        preview = next((c for c in frame if c.tag == f"{{{_DRAW}}}image" and
                        (c.get(_XLINK_HREF) or "").removeprefix("./") in members), None)
        if href:
            gone.add(href)
        if preview is not None:
            remove_element(obj)
            ctx.add("ole_object", where, action="converted",
                    detail=f"{what} replaced by its preview picture")
        else:
            remove_element(frame)
            ctx.add("ole_object", where, detail=f"{what} removed (it has no preview picture)")
    for entry in list(manifest):
        if _object_member(entry.get(f"{{{_MANIFEST}}}full-path") or "", gone):
            manifest.remove(entry)
    members["content.xml"] = serialize(content)
    members["META-INF/manifest.xml"] = serialize(manifest)
    write_package(dst, [(n, members[n]) for n in order if not _object_member(n, gone)],
                  stored_first="mimetype")


def _object_member(name: str, objects: set[str]) -> bool:
    name = name.rstrip("/")
    return any(name == o or name.startswith(o + "/") for o in objects)


def _stored_type(data: bytes) -> str:
    """The declared type of an OLE object stored as its own compound file."""
    if not data.startswith(OLE_MAGIC):
        return ""
    try:
        with _ole_from_bytes(data) as ole:
            return _stored_object_type(ole, [])
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; no type known
        return ""


def convert(src: Path, ctx: Context, target_ext: str, in_ext: str) -> Path:
    """Plain LibreOffice conversion (used for xlsb -> xlsx)."""
    filters = {"xlsx": "xlsx:Calc MS Excel 2007 XML", "docx": "docx:MS Word 2007 XML",
               "pptx": "pptx:Impress MS PowerPoint 2007 XML"}
    return libreoffice.convert(src, ctx, filters.get(target_ext, target_ext), in_ext)


def to_pdf(src: Path, ctx: Context, kind: str | None = None) -> Path:
    """Any office, ODF or RTF document -> PDF in ctx.workdir (advanced mode rasterizes it).
    `kind` is the detected kind when the caller has one; otherwise the file is sniffed."""
    # By content, never by the (untrusted) name: the kind steers LibreOffice's filter.
    kind = kind if kind in TARGETS else _sniff_ext(src)
    infilter = None
    if kind in TARGETS:
        # advanced mode sends legacy files straight here: report what the pixels leave behind
        data = src.read_bytes()
        _inspect(data, ctx, kind)
        infilter = import_filter(data, kind)
    out = libreoffice.convert(src, ctx, "pdf", TARGETS[kind][0] if kind in TARGETS else kind,
                              infilter=infilter)
    _drop_converter_marks(out)
    return out


def _sniff_ext(src: Path) -> str:
    with open(src, "rb") as fh:
        head = fh.read(8)
    if head.startswith(OLE_MAGIC):
        import olefile

        try:
            with olefile.OleFileIO(str(src)) as ole:
                names = {"/".join(e).lower() for e in ole.listdir()}
        except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; no streams known
            names = set()
        if "workbook" in names or "book" in names:
            return "xls"
        if "powerpoint document" in names:
            return "ppt"
        return "doc"
    if head.startswith(b"{\\rt"):
        return "rtf"
    if head.startswith(b"PK"):
        import zipfile

        try:
            with zipfile.ZipFile(src) as zf:
                names = set(zf.namelist())
                if "mimetype" in names:
                    mt = zf.read("mimetype")[:100].decode("ascii", "replace")
                    for key, ext in (("text", "odt"), ("spreadsheet", "ods"),
                                     ("presentation", "odp"), ("graphics", "odg")):
                        if key in mt:
                            return ext
                for prefix, ext in (("word/", "docx"), ("xl/", "xlsx"), ("ppt/", "pptx")):
                    if any(n.startswith(prefix) for n in names):
                        return ext
        except (zipfile.BadZipFile, OSError):
            pass
    return "bin"


def _check_write(data: bytes) -> None:
    """A Windows Write file: its 128-byte header (the signature, then the text's end at
    offset 14 and the page count at 96) inside the file."""
    from sanitas.engine.formats import WRITE_SIGNATURES

    if len(data) < 128 or data[:4] not in WRITE_SIGNATURES:
        raise Rejected("The file is not a valid Windows Write document.", RejectionCode.DAMAGED)
    text_end = struct.unpack_from("<I", data, 14)[0]
    pages = struct.unpack_from("<H", data, 96)[0]
    if text_end < 128 or text_end > len(data) or pages * 128 > len(data):
        raise Rejected("The Windows Write document is damaged (its header points outside "
                       "the file).", RejectionCode.DAMAGED)


def word_version(data: bytes) -> str | None:
    """"word6" or "word95" for an OLE .doc written by Word 6.0 or Word 95 (the nFib at offset
    2 of its WordDocument stream), None for Word 97 and later (or when it cannot be read:
    LibreOffice's Word 97 filter then decides)."""
    if not data.startswith(OLE_MAGIC):
        return None
    try:
        with _ole_from_bytes(data) as ole:
            if not ole.exists("WordDocument"):
                return None
            fib = ole.openstream("WordDocument").read(4)
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container
        return None
    return WORD_VERSIONS.get(struct.unpack_from("<H", fib, 2)[0]) if len(fib) == 4 else None


def version_label(data: bytes, kind: str) -> str | None:
    """The version a file's header names, in the report's words ("Word 95 document",
    "WordPerfect 6 or later document", "Lotus 1-2-3 release 2 worksheet (WK1)"), or None."""
    from sanitas.engine.formats import LOTUS_BOF

    if kind in ("doc", "dot"):
        version = WORD_LABELS.get(word_version(data) or "")
        return f"{version} document" if version else None
    if kind == "wpd" and len(data) > 10:
        return {0: "WordPerfect 5 document", 2: "WordPerfect 6 or later document"}.get(data[10])
    if kind == "wk1":
        return {"wk1": "Lotus 1-2-3 release 2 worksheet (WK1)",
                "wks": "Lotus 1-2-3 release 1A worksheet (WKS)"}.get(LOTUS_BOF.get(data[4:6], ""))
    return None


def import_filter(data: bytes, kind: str) -> str | None:
    """The LibreOffice import filter for `data` of `kind` when the kind's input extension
    alone does not name it: the Word version of an older .doc."""
    if kind in ("doc", "dot"):
        version = word_version(data)
        return libreoffice.WORD_FILTERS[version] if version else None
    if kind == "word2":
        return libreoffice.WORD_FILTERS["word2"]
    return None


def _check_word2(data: bytes) -> None:
    """A Word for Windows 2.0 file: its FIB's text range (fcMin..fcMac at 0x18) inside the
    file, and not encrypted (fEncrypted, bit 8 of the flags at 0x0A)."""
    if len(data) < 0x40:
        raise Rejected("The Word 2.0 document is damaged (shorter than its header).",
                       RejectionCode.DAMAGED)
    flags, = struct.unpack_from("<H", data, 0x0A)
    if flags & 0x0100:
        raise Rejected("The Word 2.0 document is password-protected (encrypted); it cannot be "
                       "inspected, so it was not processed.", RejectionCode.ENCRYPTED)
    fc_min, fc_mac = struct.unpack_from("<II", data, 0x18)
    if not 0x20 <= fc_min <= fc_mac <= len(data):
        raise Rejected("The Word 2.0 document is damaged (its header points outside the "
                       "file).", RejectionCode.DAMAGED)


def _check_wordperfect(data: bytes) -> None:
    """A WordPerfect file's 16-byte prefix: product 1 (WordPerfect) and file type 10 (a
    document: graphics, macros and keyboard files share the signature), the offset of the
    document inside the file, and no password (its encryption key at 12)."""
    if len(data) < 16:
        raise Rejected("The WordPerfect document is damaged (shorter than its header).",
                       RejectionCode.DAMAGED)
    start, = struct.unpack_from("<I", data, 4)
    product, file_type = data[8], data[9]
    key, = struct.unpack_from("<H", data, 12)
    if product != 1 or file_type != 10:
        raise Rejected("The file is a WordPerfect file that is not a text document (a "
                       "graphic, a macro or a settings file); it is not accepted.",
                       RejectionCode.UNSUPPORTED_TYPE)
    if key:
        raise Rejected("The WordPerfect document is password-protected (encrypted); it cannot "
                       "be inspected, so it was not processed.", RejectionCode.ENCRYPTED)
    if not 16 <= start <= len(data):
        raise Rejected("The WordPerfect document is damaged (its header points outside the "
                       "file).", RejectionCode.DAMAGED)


_LOTUS_PASSWORD = 0x004B  # a sealed (password-protected) WK1/WKS/WQ1 worksheet
_LOTUS3_PASSWORD = 0x0002  # the same in release 3 and later
_LOTUS3_VERSIONS = range(0x1000, 0x1006)  # WK3 ... 1-2-3 97/Millennium
_LOTUS_EOF = 0x0001


def _check_lotus(data: bytes) -> None:
    """A Lotus 1-2-3 or Quattro Pro for DOS worksheet: a BOF record naming the format (a
    2-byte one for WK1, WKS and WQ1; a 26-byte one whose first word is the version for
    release 3 and later), then records (type, length) that each end inside the file, up to
    EOF; a password record means the worksheet is sealed. One pass over the records: time
    linear in the file's size."""
    from sanitas.engine.formats import LOTUS_BOF

    later = data[:4] == b"\x00\x00\x1a\x00"
    if later:
        if len(data) < 30 or struct.unpack_from("<H", data, 4)[0] not in _LOTUS3_VERSIONS:
            raise Rejected("The worksheet is damaged (its Lotus BOF record names no version "
                           "of 1-2-3).", RejectionCode.DAMAGED)
    elif len(data) < 6 or data[:4] != b"\x00\x00\x02\x00" or data[4:6] not in LOTUS_BOF:
        raise Rejected("The worksheet is damaged (it does not start with a Lotus BOF record).",
                       RejectionCode.DAMAGED)
    password = _LOTUS3_PASSWORD if later else _LOTUS_PASSWORD
    offset = 30 if later else 6
    while offset + 4 <= len(data):
        rtype, length = struct.unpack_from("<HH", data, offset)
        if offset + 4 + length > len(data):
            raise Rejected("The worksheet is damaged (a record runs past the end of the "
                           "file).", RejectionCode.DAMAGED)
        if rtype == password:
            raise Rejected("The worksheet is password-protected (sealed); it cannot be "
                           "inspected, so it was not processed.", RejectionCode.ENCRYPTED)
        if rtype == _LOTUS_EOF:
            return
        offset += 4 + length
    raise Rejected("The worksheet is damaged (it ends without its EOF record).",
                   RejectionCode.DAMAGED)


def _check_pict(data: bytes) -> None:
    """A PICT picture: after the 512-byte header, its size, a frame with a positive width and
    height, and a version opcode LibreOffice knows."""
    from sanitas.engine.formats import PICT_VERSIONS

    if len(data) < 528 or not any(data[522:522 + len(v)] == v for v in PICT_VERSIONS):
        raise Rejected("The PICT picture is damaged (no version opcode after its header).",
                       RejectionCode.DAMAGED)
    top, left, bottom, right = struct.unpack_from(">hhhh", data, 514)
    if not (top < bottom and left < right):
        raise Rejected("The PICT picture is damaged (its frame has no area).",
                       RejectionCode.DAMAGED)


_WORKS_VERSIONS = (1, 4, 6)  # the first header byte: Works for DOS, Works 3 and 4 for Windows


def _check_works(data: bytes) -> None:
    """A Works 2-4 document (alone, or the MN0 stream of an OLE file): its 256-byte header,
    then the text, whose end (the last of the four text limits at 0x1A) lies inside the file
    and inside the length the header gives at 0x2A."""
    if data.startswith(OLE_MAGIC):
        try:
            with _ole_from_bytes(data) as ole:
                data = ole.openstream("MN0").read()
        except Exception as exc:  # olefile can raise anything on a hostile container
            raise Rejected("The Works document is damaged (its MN0 stream cannot be read).",
                           RejectionCode.DAMAGED) from exc
    if len(data) < 0x100 or data[1] != 0xFE or data[0] not in _WORKS_VERSIONS:
        raise Rejected("The Works document is damaged (shorter than its header, or not a "
                       "Works 2-4 header).", RejectionCode.DAMAGED)
    *_, text_end = struct.unpack_from("<4i", data, 0x1A)
    size, = struct.unpack_from("<I", data, 0x2A)
    if not 0x100 <= text_end <= min(size, len(data)):
        raise Rejected("The Works document is damaged (its header points outside the file).",
                       RejectionCode.DAMAGED)


_HEADER_CHECKS = {"word2": _check_word2, "wpd": _check_wordperfect, "wps": _check_works,
                  "wk1": _check_lotus, "wk3": _check_lotus, "wq1": _check_lotus,
                  "pict": _check_pict}


def _check_encrypted(data: bytes, kind: str) -> None:
    try:
        import msoffcrypto

        encrypted = msoffcrypto.OfficeFile(io.BytesIO(data)).is_encrypted()
    except Exception:  # noqa: BLE001 - msoffcrypto can raise anything on damaged files
        encrypted = False  # msoffcrypto cannot tell for damaged files; LibreOffice decides
    if encrypted:
        raise Rejected(f"The {kind.upper()} document is encrypted (password-protected); it "
                       "cannot be inspected, so it was not processed.", RejectionCode.ENCRYPTED)


def report_ole_contents(data: bytes, location: str, ctx: Context) -> int:
    """Findings for VBA/XLM macros and embedded OLE objects in an OLE container (the
    conversion drops them: the OOXML written by LibreOffice is sanitized afterwards).
    Returns the number of embedded objects found in the container's storages."""
    _report_macros(data, location, ctx)
    return _report_ole_objects(data, location, ctx)


def _report_macros(data: bytes, location: str, ctx: Context) -> None:
    from oletools.olevba import VBA_Parser

    try:
        parser = VBA_Parser(location, data=data)
    except Exception:  # noqa: BLE001 - oletools can raise anything on hostile VBA; nothing to report
        return
    try:
        auto = set()
        xlm = True  # until oletools answers, what it extracts is reported
        with contextlib.suppress(Exception):  # a hostile workbook: keep reporting
            xlm = bool(parser.detect_xlm_macros())
        try:
            if parser.detect_vba_macros() or xlm:
                for kw_type, keyword, _desc in parser.analyze_macros() or []:
                    if kw_type == "AutoExec":
                        auto.add(keyword)
        except Exception:  # noqa: BLE001, S110 - auto-run keywords only enrich the report; hostile VBA skips them
            pass
        count = 0
        try:
            for _f, stream, vba_name, _code in parser.extract_all_macros():
                if count >= MAX_REPORTED:
                    break
                kind = "xlm_macro" if "xlm" in str(stream).lower() else "macro"
                if kind == "xlm_macro" and not xlm:
                    # oletools lists every workbook's sheet records (BOUNDSHEET lines) as
                    # "xlm_macro.txt" even when it found no macro sheet: not a macro
                    continue
                count += 1
                ctx.add(kind, f"{location}: {stream}", action="removed",
                        detail=f"module {vba_name}" + (f"; auto-run: {', '.join(sorted(auto))}"
                                                if auto else ""))
        except Refused:
            raise  # the policy refuses macros
        except Exception:  # noqa: BLE001 - oletools can raise anything on a hostile VBA project
            count = 0  # unreadable project: fall back to the storage check below
        if count == 0 and _has_vba_storage(data):
            ctx.add("macro", location, action="removed", detail="VBA project storage present")
    finally:
        parser.close()


def _ole_from_bytes(data: bytes) -> olefile.OleFileIO[str]:
    """An OLE container read from memory. Its entry names are str (olefile decodes them with
    its default path encoding); the stubs take the type of names from that of the argument."""
    import olefile

    return cast("olefile.OleFileIO[str]", olefile.OleFileIO(data))


def _has_vba_storage(data: bytes) -> bool:
    try:
        with _ole_from_bytes(data) as ole:
            return any(e and e[-1].upper() in ("VBA", "_VBA_PROJECT_CUR", "MACROS")
                       for e in ole.listdir(streams=False, storages=True))
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; no VBA storage found
        return False


def _report_ole_objects(data: bytes, location: str, ctx: Context) -> int:
    try:
        ole = _ole_from_bytes(data)
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; nothing to report
        return 0
    with ole:
        count = 0
        for entry in ole.listdir(streams=True, storages=True):
            path = "/".join(entry)
            top = entry[0]
            leaf = entry[-1]
            is_object = (
                (top == "ObjectPool" and len(entry) == 2)  # Word embedded objects
                or (top.startswith("MBD") and len(entry) == 1)  # Excel embedded objects
                or (len(entry) == 1 and leaf in ("\x01Ole10Native", "Package")))
            if not is_object:
                continue
            count += 1
            if count <= MAX_REPORTED:
                _report_object(ctx, f"{location}: {path.replace(chr(1), '')}",
                               _stored_object_type(ole, entry))
        if ole.exists("PowerPoint Document"):
            _report_ppt_objects(data, location, ctx)
    return count


def _report_object(ctx: Context, location: str, what: str, *, damaged: bool = False) -> None:
    """One embedded object of a legacy document, named by its declared type. A LibreOffice
    chart is read back as a chart and written as an OOXML chart (data, not code); any other
    object is not carried over (the OOXML sanitizer keeps at most its preview picture)."""
    if ".ChartDocument" in what:
        ctx.add("ole_object", location, action="converted",
                detail=f"embedded {what} object: LibreOffice reads it as a chart, written as "
                "chart data (no OLE object is carried over)")
    elif damaged:
        ctx.add("ole_object", location, detail="embedded OLE object whose data is damaged (it "
                "cannot be read; not carried into the converted document)")
    else:
        ctx.add("ole_object", location, detail=f"embedded OLE object{' ' + what if what else ''}"
                " (not carried into the converted document)")


def _stored_object_type(ole: olefile.OleFileIO[str], entry: list[str]) -> str:
    """The type an embedded object's storage declares in its CompObj stream, e.g.
    "MSGraph.Chart.8 (Microsoft Graph Chart)"; "" when it declares none."""
    import olefile

    stream = [*entry, "\x01CompObj"]
    try:
        if ole.get_type(stream) != olefile.STGTY_STREAM:
            return ""
        with ole.openstream(stream) as fh:
            return compobj_type(fh.read(4096))
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; no type known
        return ""


_PRINTABLE = re.compile(r"[^\x20-\x7e]")


def compobj_type(data: bytes) -> str:
    """ProgID and user type of an OLE CompObj stream (MS-OLEDS 2.3.8): a 28-byte header,
    then the user type, the clipboard format and the ProgID (length-prefixed ANSI strings;
    the clipboard format may be a 4-byte marker and an id). Tolerant and bounded: any field
    that does not fit ends the parse."""

    def lpstr(pos: int) -> tuple[str, int]:
        if pos + 4 > len(data):
            raise ValueError
        n = int.from_bytes(data[pos:pos + 4], "little")
        if n > 256 or pos + 4 + n > len(data):
            raise ValueError
        text = data[pos + 4:pos + 4 + n].split(b"\0", 1)[0].decode("latin-1")
        return _PRINTABLE.sub("", text)[:80], pos + 4 + n

    user = prog = ""
    try:
        user, pos = lpstr(28)
        marker = int.from_bytes(data[pos:pos + 4], "little") if pos + 4 <= len(data) else 0
        if marker in (0xFFFFFFFF, 0xFFFFFFFE):
            pos += 8
        else:
            _fmt, pos = lpstr(pos)
        prog, _ = lpstr(pos)
    except ValueError:
        pass
    if prog and user:
        return f"{prog} ({user})"
    return prog or user


def _report_ppt_objects(data: bytes, location: str, ctx: Context) -> None:
    """PowerPoint keeps embedded objects (and its VBA project) as storages inside records of
    its "PowerPoint Document" stream (ExOleObjStg, usually zlib-compressed): each object is
    reported with the type its storage declares, a damaged one as damaged."""
    try:
        with _ole_from_bytes(data) as ole, ole.openstream("PowerPoint Document") as fh:
            stream = fh.read(MAX_PPT_STREAM)
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; nothing to report
        return
    for n, (storage, damaged) in enumerate(_ppt_object_storages(stream), start=1):
        if n > MAX_REPORTED:
            break
        if not damaged and _is_vba_storage(storage):
            continue  # the VBA project: reported with the macros
        _report_object(ctx, f"{location}: PowerPoint object {n}",
                       "" if damaged else _stored_type(storage), damaged=damaged)


MAX_PPT_STREAM = 512 * 1024 * 1024  # the container's own limit applies before this
MAX_PPT_OBJECT = 64 * 1024 * 1024  # one embedded object, decompressed
_EX_OLE_OBJ_STG = 0x1011


def _ppt_object_storages(stream: bytes) -> list[tuple[bytes, bool]]:
    """(storage bytes, damaged) of each ExOleObjStg record, walking the record tree (containers
    have version 0xF) with bounded depth, record count and decompressed size."""
    import zlib

    found: list[tuple[bytes, bool]] = []
    todo = [(0, len(stream), 0)]
    records = 0
    while todo and records < 1_000_000:
        off, end, depth = todo.pop()
        while off + 8 <= end and records < 1_000_000:
            records += 1
            ver_inst, rec_type, length = struct.unpack_from("<HHI", stream, off)
            body_end = min(off + 8 + length, end)
            if ver_inst & 0xF == 0xF and depth < 16:
                todo.append((off + 8, body_end, depth + 1))
            elif rec_type == _EX_OLE_OBJ_STG:
                body = stream[off + 8:body_end]
                if ver_inst >> 4 == 1:  # compressed: a 4-byte size, then zlib data
                    try:
                        inflater = zlib.decompressobj()
                        storage = inflater.decompress(body[4:], MAX_PPT_OBJECT)
                        damaged = not storage.startswith(OLE_MAGIC)
                    except zlib.error:
                        storage, damaged = b"", True
                else:
                    storage, damaged = body, not body.startswith(OLE_MAGIC)
                found.append((storage, damaged))
            off = off + 8 + length
    return found


def _is_vba_storage(storage: bytes) -> bool:
    try:
        with _ole_from_bytes(storage) as ole:
            return any(e and e[0].upper() == "VBA" for e in ole.listdir(storages=True))
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; not a VBA project
        return False


def _report_rtf(data: bytes, ctx: Context) -> None:
    from oletools.rtfobj import RtfObjParser

    try:
        parser = RtfObjParser(data)
        parser.parse()
    except Exception:  # noqa: BLE001 - oletools can raise anything on hostile RTF; no objects listed
        return
    for i, obj in enumerate(parser.objects[:MAX_REPORTED]):
        cls = getattr(obj, "class_name", b"") or b""
        if isinstance(cls, bytes):
            cls = cls.decode("latin-1", "replace")
        detail = f"embedded object {cls}".strip()
        if getattr(obj, "is_package", False):
            detail += f" (package {getattr(obj, 'filename', '') or ''})"
        ctx.add("ole_object", f"RTF object {i + 1}", action="removed", detail=detail)
    low = data[:5_000_000].lower()
    for word in (b"ddeauto", b"\\fldinst{ dde", b"includepicture", b"includetext"):
        if word in low:
            ctx.add("field", "RTF", action="converted",
                    detail=f"{word.decode().strip(chr(92))} field (neutralised after conversion)")
