"""An eval-style scan for active content in a sanitizer's output, independent of the engine:
oletools' olevba for VBA, pikepdf for PDF action names, magic bytes for executables, olefile
for OLE packages, and the relationship/manifest parts of office packages for references that
load a document able to run code. Containers are opened and scanned recursively: ZIP members
(OOXML, OpenDocument, EPUB and archives alike), the streams of OLE compound files and every
embedded file of a PDF. `active_content(data, name)` lists what it found ([] when clean).
"""

from __future__ import annotations

import io
import re
import zipfile

import olefile
import pikepdf
from oletools.olevba import VBA_Parser

EXECUTABLE_MAGIC = {
    b"MZ": "Windows executable (MZ)", b"\x7fELF": "ELF executable",
    b"\xfe\xed\xfa\xce": "Mach-O executable", b"\xfe\xed\xfa\xcf": "Mach-O executable",
    b"\xce\xfa\xed\xfe": "Mach-O executable", b"\xcf\xfa\xed\xfe": "Mach-O executable",
    b"\xca\xfe\xba\xbe": "Mach-O universal binary", b"#!": "script (#!)",
}
DOS_STUB = b"This program cannot be run in DOS mode"
# PDF actions that run, send or open something; /GoToR only when it is not a web address.
PDF_ACTIONS = {"/JavaScript", "/ECMAScript", "/Launch", "/SubmitForm", "/ImportData", "/GoToE",
               "/RichMediaExecute", "/Rendition", "/Movie", "/Sound", "/GoTo3DView"}
PDF_KEYS = {"/JS", "/AA", "/RichMediaContent", "/XFA"}
# OOXML relationships that load a document able to run code.
ACTIVE_RELATIONSHIPS = {"attachedtemplate", "oleobject", "frame", "subdocument", "vbaproject",
                        "wordvbadata", "activexcontrolbinary", "xlmacrosheet"}
ODF_ACTIVE = re.compile(rb"<(?:\w+:)?(?:script|event-listener|applet|plugin|object-ole|"
                        rb"floating-frame)\b")
ODF_REMOTE_OBJECT = re.compile(rb"<(?:\w+:)?object\b[^>]*href=\"(?:https?|ftp|file):", re.I)
WEB = re.compile(r"^https?://", re.IGNORECASE)
# HTML, XHTML and SVG: scripts, event handlers, javascript: addresses, frames and plugins.
MARKUP_NAMES = (".html", ".htm", ".xhtml", ".svg")
MARKUP_ACTIVE = re.compile(rb"<(?:\w+:)?(?:script|iframe|frame|object|embed|applet)\b|"
                           rb"\son[a-z]+\s*=|javascript:|vbscript:", re.IGNORECASE)
MAX_DEPTH = 8


def active_content(data: bytes, name: str = "output", depth: int = 0) -> list[str]:
    """What in `data` (and every file inside it) can run, fetch a document that can, or is a
    program: one line per finding, naming where."""
    if depth > MAX_DEPTH:
        return [f"{name}: nested too deeply to scan"]
    found: list[str] = []
    for magic, what in EXECUTABLE_MAGIC.items():
        if data.startswith(magic):
            found.append(f"{name}: {what}")
    if DOS_STUB in data:
        found.append(f"{name}: Windows program stub")
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        found += _zip(data, name, depth)
    elif data.startswith(b"\xd0\xcf\x11\xe0"):
        found += _ole(data, name, depth)
    elif b"%PDF-" in data[:1024]:
        found += _pdf(data, name, depth)
    if name.lower().endswith(MARKUP_NAMES):
        found += [f"{name}: {m.group(0).decode('utf-8', 'replace').strip()!r}"
                  for m in MARKUP_ACTIVE.finditer(data)]
    return found


def _vba(data: bytes, name: str) -> list[str]:
    try:
        parser = VBA_Parser(name, data=data)
    except Exception:  # noqa: BLE001 - olevba refuses what is not an office file
        return []
    try:
        return [f"{name}: VBA macros (olevba)"] if parser.detect_vba_macros() else []
    finally:
        parser.close()


def _zip(data: bytes, name: str, depth: int) -> list[str]:
    found = _vba(data, name)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return [*found, f"{name}: unreadable ZIP"]
    with archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            member = archive.read(info)
            where = f"{name}/{info.filename}"
            lower = info.filename.lower()
            if lower.startswith(("basic/", "scripts/")) or "/basic/" in lower:
                found.append(f"{where}: OpenDocument macro library")
            if lower.endswith(".rels"):
                found += _relationships(member, where)
            if lower.endswith("content.xml") or lower.endswith("styles.xml"):
                found += [f"{where}: OpenDocument {m.group(0).decode()!r}"
                          for m in ODF_ACTIVE.finditer(member)]
                found += [f"{where}: object linked from outside"
                          for _ in ODF_REMOTE_OBJECT.finditer(member)]
            found += active_content(member, where, depth + 1)
    return found


def _relationships(data: bytes, where: str) -> list[str]:
    found = []
    for match in re.finditer(rb"<(?:\w+:)?Relationship\b[^>]*>", data):
        tag = match.group(0).decode("utf-8", "replace")
        kind = re.search(r'Type="([^"]*)"', tag)
        key = kind.group(1).rstrip("/").rsplit("/", 1)[-1].lower() if kind else ""
        if key in ACTIVE_RELATIONSHIPS:
            found.append(f"{where}: relationship {key} ({tag[:160]})")
    return found


def _ole(data: bytes, name: str, depth: int) -> list[str]:
    found = _vba(data, name)
    try:
        ole = olefile.OleFileIO(data)
    except OSError:
        return [*found, f"{name}: unreadable OLE file"]
    with ole:
        for entry in ole.listdir(streams=True, storages=False):
            stream = "/".join(entry)
            if entry[-1].lower() == "\x01ole10native":
                found.append(f"{name}/{stream}: OLE package (wraps a file that runs on a click)")
            found += active_content(ole.openstream(entry).read(), f"{name}/{stream}", depth + 1)
    return found


def _pdf(data: bytes, name: str, depth: int) -> list[str]:
    found: list[str] = []
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PdfError:
        return [f"{name}: unreadable PDF"]
    with pdf:
        embedded: list[pikepdf.Stream] = []
        stack: list[tuple[pikepdf.Object, str]] = [(obj, f"object {obj.objgen[0]}")
                                                   for obj in pdf.objects]
        stack.append((pdf.trailer, "trailer"))
        seen = 0
        while stack and seen < 500_000:
            obj, where = stack.pop()
            seen += 1
            if isinstance(obj, pikepdf.Stream) and str(obj.get("/Type", "")) == "/EmbeddedFile":
                embedded.append(obj)
            if isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
                found += _pdf_dictionary(obj, f"{name} {where}")
                for key in obj.keys():  # noqa: SIM118 - a pikepdf Dictionary
                    value = obj.get(key)
                    if key == "/EF" and isinstance(value, pikepdf.Dictionary):
                        embedded += [v for k in value.keys()  # noqa: SIM118
                                     if isinstance(v := value.get(k), pikepdf.Stream)]
                    if isinstance(value, (pikepdf.Dictionary, pikepdf.Array)) and \
                            not value.is_indirect:
                        stack.append((value, f"{where} {key}"))
            elif isinstance(obj, pikepdf.Array):
                stack += [(item, where) for item in obj
                          if isinstance(item, (pikepdf.Dictionary, pikepdf.Array))
                          and not item.is_indirect]
        done: set[tuple[int, int]] = set()
        for stream in embedded:
            if stream.objgen in done:
                continue
            done.add(stream.objgen)
            found += active_content(bytes(stream.read_bytes()),
                                    f"{name} embedded file {stream.objgen[0]}", depth + 1)
    return found


def _pdf_dictionary(obj: pikepdf.Object, where: str) -> list[str]:
    found = [f"{where}: {key}" for key in PDF_KEYS if key in obj]
    action = str(obj.get("/S", ""))
    if action in PDF_ACTIONS:
        found.append(f"{where}: {action} action")
    if action == "/GoToR":
        target = obj.get("/F")
        if isinstance(target, pikepdf.Dictionary):
            target = target.get("/F", target.get("/UF"))
        if not WEB.match(str(target or "")):
            found.append(f"{where}: /GoToR to {str(target)[:80]!r}")
    if action == "/URI" and not re.match(r"^(https?|mailto):", str(obj.get("/URI", "")), re.I):
        found.append(f"{where}: /URI to {str(obj.get('/URI', ''))[:80]!r}")
    opened = obj.get("/OpenAction")
    if isinstance(opened, pikepdf.Dictionary) and str(opened.get("/S", "")) != "/GoTo":
        found.append(f"{where}: /OpenAction {opened.get('/S')}")
    if "/JavaScript" in obj and not action:
        found.append(f"{where}: /JavaScript name tree")
    if str(obj.get("/Subtype", "")) in ("/RichMedia", "/Screen", "/Movie", "/3D"):
        found.append(f"{where}: {obj.get('/Subtype')} annotation")
    return found
