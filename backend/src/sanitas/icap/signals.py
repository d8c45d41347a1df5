"""Every sign of what a body is, beside the engine's sniff of its first bytes: the declared
Content-Type, the names it goes by (Content-Disposition, the URL path) and magic bytes found
where the engine's sniff does not look (after leading junk, a ZIP's end record at the end).

A body whose first bytes the engine cannot read passes unchanged (per
SANITAS_ICAP_UNSUPPORTED_ACTION) only when none of these signals points to a type the engine
handles, an archive, markup or an executable; and a body the engine found clean passes as it
came only when every signal fits the type the engine found (docs/icap.md, "What passes
unchanged").

Everything here is a bounded look at bytes already in memory (the first `HEAD` bytes and the
last `TAIL` bytes): `bytes.find` and fixed-offset reads, no parsing, no regular expression."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from sanitas.engine import formats
from sanitas.engine.detect import SCRIPT_EXTENSIONS, UNSUPPORTED_MAGIC, extension_of
from sanitas.icap.httpmsg import HttpHead, name_from_url

Category = Literal["engine", "archive", "markup", "executable"]

# A ZIP's end of central directory record (22 bytes) ends the file, after a comment of at
# most 65535 bytes: unzip and Python's zipfile look for it in this many last bytes.
TAIL = 0xFFFF + 22
MARKUP_WINDOW = 4096  # markup is looked for in this many first bytes (browsers sniff 1445)
MAX_MZ = 4096  # "MZ" candidates checked for a PE header; more count as an executable

_ZIP_LOCAL, _ZIP_END, _ZIP64_END = b"PK\x03\x04", b"PK\x05\x06", b"PK\x06\x06"
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Archives whose tools find them anywhere in a file (self-extracting archives put them after
# a program): (signature, what).
_ARCHIVES_ANYWHERE = ((b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
                      (b"Rar!\x1a\x07", "a RAR archive"),
                      (b"MSCF\x00\x00\x00\x00", "a cabinet archive"))
_MACHO = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf",
          b"\xca\xfe\xba\xbe")
# Markup that a browser or a viewer runs, looked for (lower case) in ASCII and UTF-16.
_MARKUP = (b"<script", b"<html", b"<svg", b"<iframe", b"<object", b"<embed", b"<body",
           b"<!doctype html", b"<hta:", b"<meta http-equiv", b"<img", b"<frameset", b"<form",
           b"<base", b"<link", b"<style", b"<math", b"<xsl:", b"<?xml-stylesheet",
           b":script", b"javascript:", b"vbscript:", b"www.w3.org/1999/xhtml",
           b"www.w3.org/2000/svg")
_MARKUP_ANY = tuple(variant for needle in _MARKUP for variant in (
    needle, needle.decode().encode("utf-16-le"), needle.decode().encode("utf-16-be")))

# Declared media types (lower case, no parameters).
_NO_SIGNAL_TYPES = frozenset({
    "", "application/octet-stream", "binary/octet-stream", "application/x-download",
    "application/force-download", "application/download", "application/unknown",
    "application/binary"})
_MARKUP_TYPES: dict[str, tuple[str, ...]] = {
    "text/html": ("html",), "application/xhtml+xml": ("html",), "image/svg+xml": ("svg",),
    "text/xml": ("xml",), "application/xml": ("xml",), "text/xsl": ("xml",),
    "application/xslt+xml": ("xml",), "application/mathml+xml": ("xml",),
    "message/rfc822": (), "multipart/related": (), "application/x-mimearchive": (),
    "text/x-component": (), "application/pdf+html": ()}
_EXECUTABLE_TYPES = frozenset({
    "text/javascript", "application/javascript", "application/x-javascript",
    "application/ecmascript", "application/x-ecmascript", "text/ecmascript", "text/jscript",
    "text/vbscript", "text/x-vbscript", "application/x-vbscript", "application/hta",
    "application/x-msdownload", "application/x-msdos-program", "application/x-dosexec",
    "application/x-executable", "application/x-elf", "application/x-mach-binary",
    "application/x-sharedlib", "application/vnd.microsoft.portable-executable",
    "application/x-ms-installer", "application/x-msi", "application/x-ms-shortcut",
    "application/x-sh", "application/x-csh", "application/x-shellscript", "text/x-sh",
    "text/x-shellscript", "application/x-bat", "application/bat", "text/x-python",
    "application/x-python", "text/x-perl", "application/x-perl", "application/x-php",
    "text/x-php", "application/java-archive", "application/x-java-archive",
    "application/x-java-jnlp-file", "application/vnd.android.package-archive",
    "application/x-apple-diskimage", "application/wasm", "application/x-shockwave-flash",
    "application/x-ms-application", "application/x-silverlight-app",
    "application/vnd.ms-cab-compressed", "application/x-powershell"})
_ARCHIVE_TYPES = frozenset({
    "application/zip", "application/x-zip", "application/x-zip-compressed",
    "application/zip-compressed", "multipart/x-zip", "application/x-7z-compressed",
    "application/x-rar-compressed", "application/vnd.rar", "application/x-rar",
    "application/gzip", "application/x-gzip", "application/x-tar", "application/x-gtar",
    "application/x-bzip", "application/x-bzip2", "application/x-xz", "application/zstd",
    "application/x-compress", "application/x-compressed", "application/x-lzh-compressed",
    "application/x-lzip", "application/x-lzma", "application/x-arj", "application/x-ace",
    "application/x-cpio", "application/x-iso9660-image", "application/x-archive"})
_ZIP_TYPES = frozenset({"application/zip", "application/x-zip", "application/x-zip-compressed",
                        "application/zip-compressed", "multipart/x-zip"})
_TYPE_ALIASES = {"image/jpg": "jpeg", "image/pjpeg": "jpeg", "image/x-png": "png",
                 "application/x-pdf": "pdf", "image/x-ms-bmp": "bmp", "image/x-bmp": "bmp",
                 "image/heif": "heic", "image/x-tiff": "tiff", "text/x-csv": "csv",
                 "application/csv": "csv", "text/rtf": "rtf", "application/x-rtf": "rtf"}

# Names (extensions, lower case).
_MARKUP_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "html": ("html",), "htm": ("html",), "xhtml": ("html",), "xht": ("html",),
    "shtml": ("html",), "svg": ("svg",), "svgz": (), "xml": ("xml",), "xsl": ("xml",),
    "xslt": ("xml",), "mht": (), "mhtml": (), "htc": (), "mjs": (), "swf": (), "wasm": ()}
_ARCHIVE_EXTENSIONS = frozenset({
    "zip", "7z", "rar", "gz", "tgz", "tar", "bz2", "tbz", "tbz2", "xz", "txz", "zst", "lz",
    "lzma", "z", "cab", "arj", "lzh", "lha", "ace", "cpio", "dmg", "wim", "xar", "zipx"})
# In a URL the last path segment may name the program that wrote the response
# (/download.php?id=3), not the body: these are not read as the body's name there.
_SERVER_SIDE = frozenset({"php", "php3", "php4", "php5", "phtml", "asp", "aspx", "ashx",
                          "jsp", "jspx", "cgi", "pl", "py", "rb", "cfm", "do", "action"})


@dataclass(frozen=True)
class Signal:
    category: Category
    source: str  # "the Content-Type text/html", 'the name "evil.html"', "the bytes"
    what: str  # "markup", "a ZIP archive", "a Windows executable", ...
    kinds: frozenset[str] = frozenset()  # engine kinds that fit it (explain it)

    def describe(self) -> str:
        return f"{self.source} says {self.what}"


@dataclass(frozen=True)
class Clues:
    """What the HTTP heads say about a body."""

    media_type: str  # the declared Content-Type, lower case, without parameters
    names: tuple[tuple[str, str], ...] = ()  # (where, name)


@cache
def _zip_kinds() -> frozenset[str]:
    return formats.kinds_in("zip")


@cache
def _kinds_by_media_type() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for kind in formats.KINDS.values():
        found.setdefault(kind.media_type.lower(), set()).add(kind.name)
    for alias, kind_name in _TYPE_ALIASES.items():
        found.setdefault(alias, set()).add(kind_name)
    return {k: frozenset(v) for k, v in found.items()}


@cache
def _kinds_by_extension() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for kind in formats.KINDS.values():
        for ext in kind.extensions:
            found.setdefault(ext, set()).add(kind.name)
    return {k: frozenset(v) for k, v in found.items()}


def media_type_of(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()[:200]


def clues_of(message: HttpHead, http_request: HttpHead | None, *, as_request: bool) -> Clues:
    """The declared type and the names of the body of `message` (the encapsulated response,
    or the request for REQMOD): Content-Disposition's filename* and filename, and the last
    segment of the request URL's path (unless it names a server-side program; in a PUT it
    always names the body)."""
    names: list[tuple[str, str]] = []
    for name in message.filenames():
        names.append(("the Content-Disposition filename", name))
    if http_request is not None:
        from_url = name_from_url(http_request.target)
        put = as_request and http_request.method == "PUT"
        if from_url and (put or extension_of(from_url) not in _SERVER_SIDE):
            names.append(("the URL path", from_url))
    return Clues(media_type_of(message.get("content-type")), tuple(names))


def part_clues(content_type: str | None, filename: str | None) -> Clues:
    """A form part's: its own Content-Type and filename."""
    return Clues(media_type_of(content_type),
                 (("the form part's filename", filename),) if filename else ())


def by_media_type(media_type: str) -> Signal | None:
    if media_type in _NO_SIGNAL_TYPES:
        return None
    source = f"the Content-Type {media_type}"
    if media_type in _EXECUTABLE_TYPES:
        return Signal("executable", source, "an executable or a script")
    if media_type in _MARKUP_TYPES:
        return Signal("markup", source, "markup", frozenset(_MARKUP_TYPES[media_type]))
    if media_type in _ARCHIVE_TYPES:
        kinds = _zip_kinds() if media_type in _ZIP_TYPES else frozenset()
        return Signal("archive", source, "an archive", kinds)
    known = _kinds_by_media_type().get(media_type)
    if known:
        return Signal("engine", source, f"a type the engine handles ({', '.join(sorted(known))})",
                      known)
    if media_type.endswith("+xml"):
        return Signal("markup", source, "markup", frozenset({"xml"}))
    if media_type.endswith("+zip"):
        return Signal("archive", source, "an archive", _zip_kinds())
    if media_type.startswith("text/") or media_type == "application/json" or \
            media_type.endswith("+json"):
        return Signal("engine", source, "text", frozenset({"txt", "csv"}))
    return None  # video, audio, fonts, other types the engine does not handle


def by_name(where: str, name: str) -> Signal | None:
    ext = extension_of(name)
    if not ext:
        return None
    shown = name if len(name) <= 80 else name[:80] + "..."
    source = f'{where} "{shown}"'
    if ext in SCRIPT_EXTENSIONS or ext in ("mjs", "swf", "wasm"):
        return Signal("executable", source, "an executable or a script")
    if ext in _MARKUP_EXTENSIONS:
        return Signal("markup", source, "markup", frozenset(_MARKUP_EXTENSIONS[ext]))
    if ext in _ARCHIVE_EXTENSIONS:
        return Signal("archive", source, "an archive",
                      _zip_kinds() if ext in ("zip", "zipx") else frozenset())
    known = _kinds_by_extension().get(ext)
    if known:
        return Signal("engine", source, f"a type the engine handles (.{ext})", known)
    return None


def by_bytes(head: bytes, tail: bytes | None) -> list[Signal]:
    """Magic bytes past the start (the sniff reads the start) and at the end: executables,
    archives and markup after leading junk, a ZIP's end record among the last `TAIL`
    bytes (`tail`, None while the end has not arrived)."""
    found: list[Signal] = []
    source = "the bytes"
    executable = _executable_inside(head)
    if executable:
        found.append(Signal("executable", source, executable))
    if head.find(b"\n#!/") >= 0:
        found.append(Signal("executable", source, "a script (a #! line)"))
    for magic, what in UNSUPPORTED_MAGIC:
        if head.startswith(magic):  # the sniff named it: an archive, or PostScript (a program)
            category: Category = "executable" if "PostScript" in what else "archive"
            found.append(Signal(category, source, what))
    if head.find(_ZIP_LOCAL, 1) >= 0 or (tail is not None and (
            tail.find(_ZIP_END) >= 0 or tail.find(_ZIP64_END) >= 0)):
        found.append(Signal("archive", source, "a ZIP archive", _zip_kinds()))
    if head.find(_OLE, 1) >= 0:
        found.append(Signal("archive", source, "an OLE compound file (Office 97-2003, MSI)",
                            formats.kinds_in("ole")))
    for magic, what in _ARCHIVES_ANYWHERE:
        if head.find(magic) >= 0:
            found.append(Signal("archive", source, what))
    if len(head) > 262 and head[257:262] == b"ustar":
        found.append(Signal("archive", source, "a tar archive"))
    window = head[:MARKUP_WINDOW].lower()
    if any(window.find(needle) >= 0 for needle in _MARKUP_ANY):
        found.append(Signal("markup", source, "markup (HTML, SVG or XML tags)",
                            frozenset({"html", "svg", "xml"})))
    return found


def _executable_inside(head: bytes) -> str | None:
    """A program's header anywhere in `head` past its first byte (the sniff reads the start):
    a Windows PE (MZ whose e_lfanew points at "PE\\0\\0"), ELF, Mach-O."""
    at, checked = head.find(b"MZ", 1), 0
    while at >= 0:
        checked += 1
        if checked > MAX_MZ:
            return "many Windows executable headers (MZ)"
        if at + 0x40 <= len(head):
            pe = at + struct.unpack_from("<I", head, at + 0x3C)[0]
            if head[pe:pe + 4] == b"PE\x00\x00":
                return "a Windows executable"
        at = head.find(b"MZ", at + 1)
    at = head.find(b"\x7fELF", 1)
    while at >= 0:
        if head[at + 4:at + 5] in (b"\x01", b"\x02") and head[at + 5:at + 6] in (
                b"\x01", b"\x02") and head[at + 6:at + 7] == b"\x01":
            return "a Linux executable"
        at = head.find(b"\x7fELF", at + 1)
    for magic in _MACHO:
        if head.find(magic, 1) >= 0:
            return "a macOS executable"
    return None


def gather(clues: Clues, head: bytes, tail: bytes | None) -> list[Signal]:
    """Every signal of the heads and the bytes."""
    found: list[Signal] = []
    declared = by_media_type(clues.media_type)
    if declared is not None:
        found.append(declared)
    for where, name in clues.names:
        named = by_name(where, name)
        if named is not None:
            found.append(named)
    return found + by_bytes(head, tail)


def unexplained(found: list[Signal], kind: str | None) -> list[Signal]:
    """The signals the engine's kind `kind` does not account for: an executable never, markup
    only by the markup kinds it names (text/html by html: a plain text with a script tag
    somewhere is not the HTML it is served as), an archive only by the container kinds."""
    return [s for s in found if kind is None or kind not in s.kinds]


def read_tail(path: Path, size: int) -> bytes:
    """The last `TAIL` bytes of the file at `path` (`size` bytes long)."""
    with open(path, "rb") as fh:
        fh.seek(max(0, size - TAIL))
        return fh.read(TAIL)


def describe(found: list[Signal]) -> str:
    shown = "; ".join(s.describe() for s in found[:3])
    return shown + ("; ..." if len(found) > 3 else "")

