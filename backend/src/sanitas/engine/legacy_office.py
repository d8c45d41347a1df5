"""Legacy Office (doc/xls/ppt and their templates) and RTF: report what is inside with
oletools, then let LibreOffice (macros disabled, private profile) rewrite the document as OOXML,
which the caller sanitizes like any upload. Also the office -> PDF step of advanced mode."""

from __future__ import annotations

import contextlib
import io
import logging
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sanitas.engine import libreoffice
from sanitas.engine.office_package import OLE_MAGIC
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
}
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
    ctx.add("legacy_format", "whole document", action="converted",
            detail=f"{kind} converted to {target}")
    return formats.family_of(target).sanitizer()(converted, dst, ctx, target)


def to_ooxml(src: Path, ctx: Context, kind: str) -> Path:
    """Convert a legacy document to docx/xlsx/pptx inside ctx.workdir; return the new file."""
    kind = kind.lower()
    if kind not in TARGETS:
        raise Rejected(f"Legacy Office type {kind!r} is not supported.",
                       RejectionCode.UNSUPPORTED_TYPE)
    in_ext, _out_ext, target = TARGETS[kind]
    data = src.read_bytes()
    if kind == "rtf":
        _report_rtf(data, ctx)
    else:
        if not data.startswith(OLE_MAGIC):
            raise Rejected(f"The file is not a valid {kind.upper()} document (no OLE container).",
                           RejectionCode.DAMAGED)
        _check_encrypted(data, kind)
        report_ole_contents(data, f"{kind.upper()} document", ctx)
    ctx.progress(15)
    out = libreoffice.convert(src, ctx, target, in_ext)
    ctx.progress(50)
    return out


def convert(src: Path, ctx: Context, target_ext: str, in_ext: str) -> Path:
    """Plain LibreOffice conversion (used for xlsb -> xlsx)."""
    filters = {"xlsx": "xlsx:Calc MS Excel 2007 XML", "docx": "docx:MS Word 2007 XML",
               "pptx": "pptx:Impress MS PowerPoint 2007 XML"}
    return libreoffice.convert(src, ctx, filters.get(target_ext, target_ext), in_ext)


def to_pdf(src: Path, ctx: Context) -> Path:
    """Any office, ODF or RTF document -> PDF in ctx.workdir (advanced mode rasterizes it)."""
    # By content, never by the (untrusted) name: the extension steers LibreOffice's filter.
    ext = _sniff_ext(src)
    if ext in ("doc", "xls", "ppt", "rtf"):
        # advanced mode sends legacy files straight here: report what the pixels leave behind
        data = src.read_bytes()
        if ext == "rtf":
            _report_rtf(data, ctx)
        else:
            _check_encrypted(data, ext)
            report_ole_contents(data, f"{ext.upper()} document", ctx)
    return libreoffice.convert(src, ctx, "pdf", ext)


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


def _check_encrypted(data: bytes, kind: str) -> None:
    try:
        import msoffcrypto

        encrypted = msoffcrypto.OfficeFile(io.BytesIO(data)).is_encrypted()
    except Exception:  # noqa: BLE001 - msoffcrypto can raise anything on damaged files
        encrypted = False  # msoffcrypto cannot tell for damaged files; LibreOffice decides
    if encrypted:
        raise Rejected(f"The {kind.upper()} document is encrypted (password-protected); it "
                       "cannot be inspected, so it was not processed.", RejectionCode.ENCRYPTED)


def report_ole_contents(data: bytes, location: str, ctx: Context) -> None:
    """Findings for VBA/XLM macros and embedded OLE objects in an OLE container (the
    conversion drops them: the OOXML written by LibreOffice is sanitized afterwards)."""
    _report_macros(data, location, ctx)
    _report_ole_objects(data, location, ctx)


def _report_macros(data: bytes, location: str, ctx: Context) -> None:
    from oletools.olevba import VBA_Parser

    try:
        parser = VBA_Parser(location, data=data)
    except Exception:  # noqa: BLE001 - oletools can raise anything on hostile VBA; nothing to report
        return
    try:
        auto = set()
        try:
            if parser.detect_vba_macros() or parser.detect_xlm_macros():
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
                count += 1
                kind = "xlm_macro" if "xlm" in str(stream).lower() else "macro"
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


def _report_ole_objects(data: bytes, location: str, ctx: Context) -> None:
    try:
        ole = _ole_from_bytes(data)
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile container; nothing to report
        return
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
            if is_object and count < MAX_REPORTED:
                count += 1
                ctx.add("ole_object", f"{location}: {path.replace(chr(1), '')}", action="removed",
                        detail="embedded OLE object (not carried into the converted document)")
        if ole.exists("PowerPoint Document"):
            _report_ppt_objects(data, location, ctx)


def _report_ppt_objects(data: bytes, location: str, ctx: Context) -> None:
    # PowerPoint keeps OLE objects (and VBA) as compressed records inside its stream.
    try:
        from oletools.oleobj import find_ole_in_ppt

        for n, ole in enumerate(find_ole_in_ppt(io.BytesIO(data)), start=1):
            if n <= MAX_REPORTED:
                ctx.add("ole_object", f"{location}: PowerPoint record", action="removed",
                        detail="embedded OLE object in the presentation stream")
            with contextlib.suppress(Exception):
                ole.close()
    except Refused:
        raise  # the policy refuses embedded objects
    except Exception:  # noqa: BLE001 - olefile can raise anything on a hostile stream; the report stops there
        return


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
