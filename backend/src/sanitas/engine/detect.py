"""Type detection by content (magic bytes and structure), never by the file name.

Two entry points share one decision table:
- `sniff(head, original_name)` looks only at a bounded prefix (`HEAD_SIZE` bytes) in time
  linear in that prefix. It is the only look at untrusted bytes the API process takes: it
  refuses executables, scripts and unknown binary data at upload, and names a provisional
  kind for containers (ZIP, OLE) whose real kind depends on their structure.
- `detect(path, original_name)` runs inside the sandbox: the same sniff, then the container's
  structure (ZIP central directory, OLE streams, encryption) decides the final kind.

Both return a `Detected` or raise `Rejected` with a reason a person can read.
"""

from __future__ import annotations

import codecs
import csv
import posixpath
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine import formats, opc
from sanitas.engine.report import Context, Rejected, RejectionCode

if TYPE_CHECKING:
    import olefile  # imported where used: only OLE files need it

HEAD_SIZE = 64 * 1024
MAX_CONTENT_TYPES_XML = 2 * 1024 * 1024


@dataclass(frozen=True)
class Detected:
    kind: str  # e.g. "pdf", "jpeg", "docm", "csv"
    family: str  # pdf | image | svg | text | archive | ooxml | odf | legacy_office
    # True when only a prefix was seen and the container's structure will decide the kind.
    provisional: bool = False


_WHAT = {"ooxml": "The Office document", "zip": "The archive"}


class EncryptedInput(Rejected):
    """`detect` found a whole-file encryption that a password may open: `container` is "ooxml"
    (an encrypted OOXML package) or "zip" (an archive with encrypted members). Without a
    password it is simply the ENCRYPTED rejection it derives from."""

    def __init__(self, container: str) -> None:
        super().__init__(f"{_WHAT[container]} is password-protected (encrypted), so it cannot "
                         "be inspected without its password. Upload it again with the password "
                         "(the upload's password field, or --password on the command line) to "
                         "have it opened and sanitized.", RejectionCode.ENCRYPTED)
        self.container = container


# Names that announce an executable or a script: refused whatever the content looks like,
# because a viewer or a shell would treat them as code.
SCRIPT_EXTENSIONS = {
    "exe", "dll", "com", "scr", "pif", "cpl", "msi", "msp", "bat", "cmd", "ps1", "psm1", "vbs",
    "vbe", "js", "jse", "wsf", "wsh", "hta", "sh", "bash", "zsh", "py", "pyw", "pl", "rb", "php",
    "jar", "apk", "app", "elf", "so", "dylib", "lnk", "reg", "scf", "inf", "url", "desktop",
    "appimage", "deb", "rpm", "iso", "img", "vhd", "vhdx", "chm", "ocx", "sys", "drv", "gadget",
    "msc", "jnlp", "xll", "xlam", "ppam", "library-ms", "settingcontent-ms", "application",
}

EXECUTABLE_MAGIC = [
    (b"MZ", "a Windows executable"),
    (b"\x7fELF", "a Linux executable"),
    (b"\xcf\xfa\xed\xfe", "a macOS executable"),
    (b"\xce\xfa\xed\xfe", "a macOS executable"),
    (b"\xfe\xed\xfa\xce", "a macOS executable"),
    (b"\xfe\xed\xfa\xcf", "a macOS executable"),
    (b"\xca\xfe\xba\xbe", "a macOS universal binary or Java class"),
    (b"\x00asm", "a WebAssembly module"),
    (b"dex\n", "an Android executable"),
    (b"L\x00\x00\x00\x01\x14\x02\x00", "a Windows shortcut (.lnk)"),
    (b"ITSF", "a compiled HTML help file (.chm)"),
]

UNSUPPORTED_MAGIC = [
    (b"\x1f\x8b", "a gzip archive"), (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"), (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"), (b"\x28\xb5\x2f\xfd", "a zstd archive"),
    (b"MSCF", "a cabinet archive"), (b"!<arch>", "an ar/deb package"),
    (b"\xed\xab\xee\xdb", "an RPM package"), (b"%!PS", "a PostScript program"),
    (b"\xc5\xd0\xd3\xc6", "an EPS PostScript program"),
]

SCRIPT_PREFIXES = [
    (re.compile(rb"^\s*#!"), "a script (it starts with #!)"),
    (re.compile(rb"^\s*@?echo\s+off", re.IGNORECASE), "a Windows batch script"),
    (re.compile(rb"^\s*<\?php", re.IGNORECASE), "a PHP script"),
    (re.compile(rb"^\s*<(job|package)[\s>]", re.IGNORECASE), "a Windows Script File"),
    (re.compile(rb"^\s*<\?xml[^>]*>\s*<(job|package)[\s>]", re.IGNORECASE),
     "a Windows Script File"),
    (re.compile(rb"^\s*<hta:application", re.IGNORECASE), "an HTML application"),
    (re.compile(rb"^\s*\[InternetShortcut\]", re.IGNORECASE), "an Internet shortcut"),
    (re.compile(rb"^\s*\[Desktop Entry\]", re.IGNORECASE), "a desktop launcher"),
    (re.compile(rb"^\s*Windows Registry Editor", re.IGNORECASE), "a registry script"),
    (re.compile(rb"^\s*REGEDIT4", re.IGNORECASE), "a registry script"),
]


def extension_of(name: str | None) -> str:
    if not name:
        return ""
    base = re.split(r"[\\/]", name)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


def sniff(head: bytes, original_name: str | None = None, size: int | None = None) -> Detected:
    """The kind as far as a bounded prefix tells, in time linear in `head[:HEAD_SIZE]`.

    Refuses what is certainly not accepted (script names, executables, scripts, unsupported
    archives, unknown binary data). ZIP and OLE containers come back `provisional`, with the
    kind the name suggests when it fits the container (else the generic one)."""
    head = head[:HEAD_SIZE]
    name_ext = _refuse_script_name(original_name)
    size = len(head) if size is None else size
    if size == 0:
        raise Rejected("The file is empty.", RejectionCode.EMPTY)
    return _by_name(_detect_head(head, size, None), name_ext, head)


def detect(path: Path, original_name: str | None = None, ctx: Context | None = None) -> Detected:
    """Identify `path` by content. Records a finding in `ctx` when the name disagrees.
    Opens containers to read their structure: call it only inside the sandbox."""
    name_ext = _refuse_script_name(original_name)
    size = path.stat().st_size
    if size == 0:
        raise Rejected("The file is empty.", RejectionCode.EMPTY)
    with open(path, "rb") as fh:
        head = fh.read(HEAD_SIZE)
    detected = _by_name(_detect_head(head, size, path), name_ext, head)
    if ctx is not None and name_ext and name_ext not in formats.kind(detected.kind).extensions:
        ctx.add("type_mismatch", "file name", action="converted",
                detail=f"named .{name_ext} but the content is {detected.kind}; the output uses the "
                "extension of the real type")
    return detected


def _refuse_script_name(original_name: str | None) -> str:
    name_ext = extension_of(original_name)
    if name_ext in SCRIPT_EXTENSIONS:
        raise Rejected(f"Files of type .{name_ext} are executables or scripts and are not "
                       "accepted.", RejectionCode.EXECUTABLE)
    return name_ext


TEXT_KINDS_BY_NAME = {ext: kind for kind in ("markdown", "yaml", "toml")
                      for ext in formats.kind(kind).extensions}


def _by_name(detected: Detected, name_ext: str, head: bytes = b"") -> Detected:
    if detected.kind in ("txt", "csv") and name_ext == "json" and head.lstrip(
            b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
        return _found("json")  # JSON has no signature: the name, and a { or [ first
    by_name = TEXT_KINDS_BY_NAME.get(name_ext)
    if by_name is not None and detected.kind in ("txt", "csv", "html"):
        # Markdown (which may open with HTML), YAML and TOML have no signature: the name says
        # which parser checks them (each refuses what it cannot read).
        if by_name != "markdown" and detected.kind == "html":
            return detected
        return _found(by_name)
    if detected.kind in ("txt", "csv") and name_ext in ("txt", "csv", "tsv"):
        # Prose with commas looks like a table: between plain text and CSV the name decides.
        return _found("txt" if name_ext == "txt" else "csv")
    if detected.provisional:
        container = "zip" if detected.family == "archive" else "ole"
        guess = next((k for k in sorted(formats.kinds_in(container))
                      if name_ext in formats.kind(k).extensions), None)
        if guess is not None:
            return _found(guess, provisional=True)
    return detected


def _detect_head(head: bytes, size: int, path: Path | None) -> Detected:
    """The decision table. Without `path` (a sniff) containers are not opened."""
    for magic, what in EXECUTABLE_MAGIC:
        if head.startswith(magic):
            raise Rejected(f"The file is {what}; executables are not accepted.",
                           RejectionCode.EXECUTABLE)
    for pattern, what in SCRIPT_PREFIXES:
        if pattern.match(head[:4096]):
            raise Rejected(f"The file is {what}; scripts are not accepted.",
                           RejectionCode.EXECUTABLE)
    # A tar's first member's bytes start at 512: a PDF there is a member, not the file.
    if formats.matches(head, formats.kind("tar").magic):
        return _found("tar")
    # PDF readers accept the header anywhere in the first 1024 bytes.
    if b"%PDF-" in head[:1024]:
        return _found("pdf")
    for kind, signature in formats.signature_kinds():
        if formats.matches(head, signature):
            return _found(kind)
    iso_kind = _ftyp_kind(head)
    if iso_kind is not None:
        return _found(iso_kind)
    if head[:2] == b"BM" and len(head) >= 26 and _plausible_bmp(head):
        return _found("bmp")
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return _detect_ole(path) if path else _found("doc", provisional=True)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _detect_zip(path) if path else _found("zip", provisional=True)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        return _found("rtf")
    for magic, what in UNSUPPORTED_MAGIC:
        if head.startswith(magic):
            raise Rejected(f"The file is {what}, which is not a supported type.",
                           RejectionCode.UNSUPPORTED_TYPE)
    return _detect_text(head, size)


MAX_FTYP = 4096  # an `ftyp` box lists a handful of brands


def _ftyp_kind(head: bytes) -> str | None:
    """The kind the leading `ftyp` box of an ISO base media file names (HEIF/HEIC, AVIF), or
    None when `head` does not start with one. The box is size-checked and read in one pass of
    at most `MAX_FTYP` bytes (4-byte brands at fixed steps): cheap enough for the API's sniff."""
    if len(head) < 12 or head[4:8] != b"ftyp":
        return None
    size = struct.unpack_from(">I", head, 0)[0]
    if size < 16 or size > MAX_FTYP or size > len(head) or size % 4:
        raise Rejected("The file looks like an ISO media file (such as a HEIC or AVIF photo) "
                       "but its type box is damaged.", RejectionCode.DAMAGED)
    named = formats.by_brand()
    major = head[8:12]
    compatible = [head[i:i + 4] for i in range(16, size, 4)]
    for brand in (major, *compatible):
        if brand in named:
            return named[brand]
    if major in formats.GENERIC_HEIF_BRANDS or any(
            brand in formats.GENERIC_HEIF_BRANDS for brand in compatible):
        return formats.GENERIC_HEIF_KIND
    shown = major.decode("ascii") if all(32 <= b < 127 for b in major) else "unknown"
    raise Rejected(f"The file is an ISO media file of brand '{shown.strip()}' (a video, audio or "
                   "another type that is not an image), which is not a supported type.",
                   RejectionCode.UNSUPPORTED_TYPE)


def _found(kind: str, provisional: bool = False) -> Detected:
    return Detected(kind, formats.kind(kind).family, provisional)


def _plausible_bmp(head: bytes) -> bool:
    header_size = struct.unpack_from("<I", head, 14)[0]
    pixel_offset = struct.unpack_from("<I", head, 10)[0]
    return header_size in (12, 40, 52, 56, 64, 108, 124) and 14 + header_size <= pixel_offset


PUBLISHER_CLSID = "00021201-0000-0000-00C0-000000000046"


def _detect_ole(path: Path) -> Detected:
    import olefile

    try:
        ole = olefile.OleFileIO(str(path))
    except Exception as exc:
        raise Rejected("The file looks like a legacy Office document but its structure is "
                       "damaged.", RejectionCode.DAMAGED) from exc
    try:
        streams = {"/".join(entry).lower() for entry in ole.listdir(streams=True, storages=True)}
        if "encryptioninfo" in streams or "encryptedpackage" in streams:
            # An encrypted OOXML package: the password given with the upload may open it.
            raise EncryptedInput("ooxml")
        if "__properties_version1.0" in streams and any(
                s.startswith("__substg1.0_") for s in streams):
            return _found("msg")  # an Outlook message: MAPI properties, no document stream
        if "worddocument" in streams:
            fib = ole.openstream("WordDocument").read(32)
            if len(fib) >= 12 and struct.unpack_from("<H", fib, 10)[0] & 0x0100:
                raise Rejected("The Word document is password-protected (encrypted); encrypted "
                               "files are not accepted.", RejectionCode.ENCRYPTED)
            return _found("doc")
        for book in ("workbook", "book"):
            if book in streams:
                if _xls_has_filepass(ole.openstream(_find_stream(ole, book)).read(1 << 16)):
                    raise Rejected("The Excel workbook is password-protected (encrypted); "
                                   "encrypted files are not accepted.", RejectionCode.ENCRYPTED)
                return _found("xls")
        if "powerpoint document" in streams:
            if "encryptedsummary" in streams:
                raise Rejected("The PowerPoint presentation is password-protected (encrypted); "
                               "encrypted files are not accepted.", RejectionCode.ENCRYPTED)
            return _found("ppt")
        if "visiodocument" in streams:
            return _found("vsd")
        if "mn0" in streams:
            return _found("wps")  # Works 3 and 4 for Windows: the document is the MN0 stream
        root_class = str(ole.root.clsid).upper() if ole.root is not None else ""
        if "quill" in streams or root_class == PUBLISHER_CLSID:  # the storage is listed
            return _found("pub")
        raise Rejected("The file is an OLE compound file that is not a Word, Excel, "
                       "PowerPoint, Publisher, Visio or Works document (for example an "
                       "installer); it is not accepted.",
                       RejectionCode.UNSUPPORTED_TYPE)
    finally:
        ole.close()


def _find_stream(ole: olefile.OleFileIO[str], lower_name: str) -> str:
    for entry in ole.listdir(streams=True):
        if "/".join(entry).lower() == lower_name:
            return "/".join(entry)
    raise KeyError(lower_name)


def _xls_has_filepass(data: bytes) -> bool:
    """A FILEPASS record (0x002F) in the workbook globals means the workbook is encrypted."""
    offset = 0
    while offset + 4 <= len(data):
        rtype, length = struct.unpack_from("<HH", data, offset)
        if rtype == 0x002F:
            return True
        if rtype == 0x000A and offset > 0:  # EOF of the globals substream
            return False
        offset += 4 + length
    return False


def _detect_zip(path: Path) -> Detected:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise Rejected("The file looks like a ZIP archive but it is damaged.",
                       RejectionCode.DAMAGED) from exc
    with zf:
        infos = zf.infolist()
        if any(info.flag_bits & 0x1 for info in infos):
            raise EncryptedInput("zip")  # the password given with the upload may open it
        names = {info.filename: info for info in infos}
        types = names.get("[Content_Types].xml")
        claimed, main = _office_document_part(zf, infos)
        kind, types_readable = _ooxml_kind(zf, types, main, infos) if types else (None, False)
        if kind:
            return _found(kind)
        if "mimetype" in names and names["mimetype"].file_size < 200:
            mimetype = _read_bounded(zf, names["mimetype"], 200).decode("ascii", "replace")
            mimetype = mimetype.strip()
            if mimetype == formats.kind("epub").main_type:
                return _found("epub")  # DRM is judged by the EPUB sanitizer
            kind = formats.by_main_type("odf").get(mimetype)
            if kind:
                manifest = names.get("META-INF/manifest.xml")
                if manifest is not None and manifest.file_size < MAX_CONTENT_TYPES_XML and \
                        b"encryption-data" in zf.read(manifest):
                    raise Rejected("The document is password-protected (encrypted); encrypted "
                                   "files cannot be inspected and are not accepted.",
                                   RejectionCode.ENCRYPTED)
                return _found(kind)
        kind = _ooxml_by_structure(zf, main) if main is not None else None
        if kind:
            return _found(kind)  # content types missing or damaged: the sanitizer rebuilds them
        if claimed:
            # Its relationships name an office document: it is certainly an Office package,
            # never an archive whose parts would be sanitized (and renamed) one by one.
            state = "readable" if types_readable else "missing or damaged"
            raise Rejected("The file is an Office package whose main part's type cannot be "
                           f"determined (its [Content_Types].xml is {state} and the part does "
                           "not show whether it is a Word, Excel or PowerPoint document); it "
                           "cannot be repaired.", RejectionCode.DAMAGED)
        kind = _xps_kind(zf, infos)
        if kind:
            return _found(kind)
        if "classes.dex" in names or "AndroidManifest.xml" in names:
            raise Rejected("The file is an Android application (APK); executables are not "
                           "accepted.", RejectionCode.EXECUTABLE)
        if "META-INF/MANIFEST.MF" in names and any(n.endswith(".class") for n in names):
            raise Rejected("The file is a Java application (JAR); executables are not "
                           "accepted.", RejectionCode.EXECUTABLE)
        return _found("zip")


def _xps_kind(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> str | None:
    """XPS or OpenXPS: the package relationships (_rels/.rels) name a fixed document sequence
    by the relationship type of the one or the other."""
    rels = next((i for i in infos if i.filename.casefold() == "_rels/.rels"), None)
    if rels is None or rels.file_size > MAX_CONTENT_TYPES_XML:
        return None
    from defusedxml import DefusedXmlException, ElementTree

    try:
        root = ElementTree.fromstring(_read_bounded(zf, rels, MAX_CONTENT_TYPES_XML))
    except (DefusedXmlException, ElementTree.ParseError, zipfile.BadZipFile, zlib.error,
            EOFError, ValueError, NotImplementedError, RuntimeError, UnicodeError):
        return None
    kinds = formats.by_main_type("xps")
    for element in root:
        kind = kinds.get((element.get("Type") or "").strip())
        if kind:
            return kind
    return None


def _ooxml_kind(zf: zipfile.ZipFile, info: zipfile.ZipInfo, main: zipfile.ZipInfo | None,
                infos: list[zipfile.ZipInfo]) -> tuple[str | None, bool]:
    """(the kind the content types give the package, whether they could be read at all).

    Resolved the way OPC does: the main part (`main`, the relationships' office document) has
    the type of its `Override`, else the `Default` of its extension (a real .xlsb types its
    workbook.bin by `<Default Extension="bin">`). Without a main part, any part whose
    Override, or whose extension's Default, is a main document type names the kind."""
    if info.file_size > MAX_CONTENT_TYPES_XML:
        raise Rejected("The Office document's content type list is implausibly large.",
                       RejectionCode.DAMAGED)
    from defusedxml import DefusedXmlException, ElementTree

    try:
        root = ElementTree.fromstring(_read_bounded(zf, info, MAX_CONTENT_TYPES_XML))
    except DefusedXmlException as exc:
        raise Rejected("The Office document's content type list declares a DTD or XML "
                       "entities (XML entity attack).", RejectionCode.UNSAFE_STRUCTURE) from exc
    except (ElementTree.ParseError, zipfile.BadZipFile, zlib.error, EOFError, ValueError,
            NotImplementedError, RuntimeError, UnicodeError):
        return None, False  # damaged: the package's structure may still name its kind
    defaults: dict[str, str] = {}
    overrides: dict[str, str] = {}
    for element in root:
        content_type = (element.get("ContentType") or "").strip().lower()
        if element.tag.endswith("}Default") or element.tag == "Default":
            defaults.setdefault((element.get("Extension") or "").casefold(), content_type)
        elif element.tag.endswith("}Override") or element.tag == "Override":
            part = (element.get("PartName") or "").lstrip("/").casefold()
            overrides.setdefault(part, content_type)
    main_types = formats.by_main_type("ooxml")

    def type_of(name: str) -> str:
        folded = name.casefold()
        if folded in overrides:
            return overrides[folded]
        return defaults.get(posixpath.splitext(folded)[1].lstrip("."), "")

    if main is not None:
        return main_types.get(type_of(main.filename)), True
    for content_type in overrides.values():
        if content_type in main_types:
            return main_types[content_type], True
    for member in infos:
        kind = main_types.get(type_of(member.filename))
        if kind:
            return kind, True
    return None, True


def _read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """At most `limit` bytes of a member (its header's size is not trusted)."""
    with zf.open(info) as fh:
        return fh.read(limit)


def _office_document_part(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo],
                          ) -> tuple[bool, zipfile.ZipInfo | None]:
    """(whether the package's `_rels/.rels` names an office document, its main part when
    the package holds it)."""
    by_fold = {info.filename.casefold(): info for info in infos}
    rels = by_fold.get("_rels/.rels")
    if rels is None or rels.file_size > MAX_CONTENT_TYPES_XML:
        return False, None
    try:
        target = opc.office_document_target(_read_bounded(zf, rels, MAX_CONTENT_TYPES_XML))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError, zlib.error):
        return True, None
    if target is None:
        return False, None
    return True, by_fold.get(target.casefold())


def _ooxml_by_structure(zf: zipfile.ZipFile, main: zipfile.ZipInfo) -> str | None:
    """The kind the main part's root element names, for packages whose content types do
    not say it."""
    try:
        head = _read_bounded(zf, main, HEAD_SIZE)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError, zlib.error):
        return None
    return opc.kind_of_root(head) if head else None


def _decode_text_head(head: bytes) -> str | None:
    for bom, encoding in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                          (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                          (codecs.BOM_UTF16_BE, "utf-16")):
        if head.startswith(bom):
            return head.decode(encoding, "replace")
    if b"\x00" in head:
        return None
    # Control bytes other than whitespace mark binary data.
    controls = sum(1 for b in head[:8192] if b < 32 and b not in (9, 10, 12, 13, 27))
    if controls > max(2, len(head[:8192]) // 100):
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:  # a multi-byte character cut by the head boundary
            return head[: exc.start].decode("utf-8")
        return head.decode("cp1252", "replace")


HTML_ELEMENTS = frozenset({
    "html", "head", "body", "meta", "title", "script", "iframe", "div", "p", "table", "a", "img",
    "style", "link", "form", "h1", "h2", "h3", "h4", "h5", "h6"})
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-.")
_SPACE = " \t\r\n\f\v"


@dataclass(frozen=True)
class _Start:
    """What a markup document opens with: its doctype and first element (lower case)."""
    doctype: str | None  # the doctype's root name, "" for an unnamed one
    doctype_subset: bool  # the doctype has an internal subset ([...])
    element: str | None  # the first element's name, with any prefix
    element_end: str  # the character after the element name ("" at the end of the text)


def markup_start(text: str) -> _Start:
    """Skip leading whitespace, XML declarations and processing instructions, comments and a
    doctype; name the first element. One forward pass with `str.find`: linear in `text`
    (no regular expression, so no backtracking on hostile input)."""
    i, n = 0, len(text)
    doctype: str | None = None
    subset = False
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if text.startswith("<?", i):
            end = text.find("?>", i + 2)
            if end < 0:
                return _Start(doctype, subset, None, "")
            i = end + 2
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end < 0:
                return _Start(doctype, subset, None, "")
            i = end + 3
        elif text[i:i + 9].lower() == "<!doctype" and doctype is None:
            j = i + 9
            while j < n and text[j] in _SPACE:
                j += 1
            k = j
            while k < n and text[k] in _NAME_CHARS:
                k += 1
            doctype = text[j:k].lower()
            close = text.find(">", k)
            bracket = text.find("[", k)
            if 0 <= bracket < close or (close < 0 and bracket >= 0):
                subset = True
                end = text.find("]", bracket + 1)
                close = text.find(">", end + 1) if end >= 0 else -1
            if close < 0:
                return _Start(doctype, subset, None, "")
            i = close + 1
        else:
            break
    if not text.startswith("<", i):
        return _Start(doctype, subset, None, "")
    j = i + 1
    while j < n and text[j] in _NAME_CHARS:
        j += 1
    name = text[i + 1:j].lower()
    return _Start(doctype, subset, name or None, text[j] if j < n else "")


def _is_svg(start: _Start) -> bool:
    if start.element is None or start.element_end not in _SPACE + ">":
        return False
    if start.element.rpartition(":")[2] != "svg":
        return False
    return start.doctype is None or start.doctype == "svg" or start.doctype_subset


def _is_html(start: _Start) -> bool:
    if start.doctype == "html":
        return True
    return (start.element in HTML_ELEMENTS and start.element_end != ""
            and start.element_end in _SPACE + ">/")


_HTML_TAG = re.compile(r"<html[\s>]", re.IGNORECASE)


def _xml_declared(text: str) -> bool:
    return text.lstrip("\ufeff" + _SPACE)[:6] in ("<?xml ", "<?xml\t", "<?xml\n", "<?xml\r")


def _is_xml(text: str, start: _Start, complete: bool) -> bool:
    """An XML document (not SVG or HTML, decided before): an XML declaration then a root
    element, or, without one, a whole text that is one root element (it ends with the root's
    end tag, or the root is empty). Prose that merely starts with a tag stays text."""
    if start.element is None or start.element_end not in _SPACE + ">/":
        return False
    if _xml_declared(text):
        return True
    if not complete:
        return False
    end = text.rstrip(_SPACE + "\x00")
    if end[-(len(start.element) + 3):].lower() == f"</{start.element}>":
        return True
    return end.endswith("/>") and end.rfind("<") == end.lower().rfind(f"<{start.element}")


def _detect_text(head: bytes, size: int) -> Detected:
    text = _decode_text_head(head)
    if text is None and _looks_like_mail(_header_block(head)):
        return _found("eml")  # an 8-bit body (yEnc, Content-Transfer-Encoding: binary)
    if text is None:
        raise Rejected("The file type is not recognised (binary content of an unknown or "
                       "unsupported type).", RejectionCode.UNSUPPORTED_TYPE)
    if _looks_like_mail(text):
        return _found("eml")  # before HTML: a message's body may be HTML
    start = markup_start(text)
    if _is_svg(start):
        return _found("svg")
    declared = _xml_declared(text) and start.element != "html" and start.doctype != "html"
    if declared and _is_xml(text, start, complete=size <= len(head)):
        return _found("xml")  # <?xml ...?><table>: data, whatever names it uses
    if _is_html(start) or _HTML_TAG.search(text, 0, 4096):
        return _found("html")
    if _is_xml(text, start, complete=size <= len(head)):
        return _found("xml")
    if _looks_like_srt(text):
        return _found("srt")
    if _looks_like_csv(text):
        return _found("csv")
    return _found("txt")


MAIL_FIELDS = frozenset({"from", "to", "cc", "subject", "date", "mime-version", "received",
                         "message-id", "return-path", "reply-to", "delivered-to"})
_FIELD_NAME = frozenset("!\"#$%&'()*+,-./0123456789;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
                        "abcdefghijklmnopqrstuvwxyz{|}~")
MAX_MAIL_HEADER_LINES = 400


def _header_block(head: bytes) -> str:
    """The text of the head up to its first blank line ("" when it has none, or when that
    part is not text either)."""
    ends = [i for i in (head.find(b"\n\n"), head.find(b"\n\r\n")) if i >= 0]
    if not ends:
        return ""
    return _decode_text_head(head[:min(ends) + 1]) or ""


def _looks_like_mail(text: str) -> bool:
    """A saved e-mail message: the text opens with RFC 5322 header fields (a name of printable
    characters, a colon; folded lines start with white space) ending at a blank line, among
    them at least three of From, To, Cc, Subject, Date, MIME-Version, Received, Message-ID...
    with From, Received or MIME-Version. Bounded: at most MAX_MAIL_HEADER_LINES lines."""
    names: set[str] = set()
    lines = text.split("\n", MAX_MAIL_HEADER_LINES + 1)
    for index, line in enumerate(lines[:MAX_MAIL_HEADER_LINES]):
        line = line.rstrip("\r")
        if not line:
            break  # the end of the header block
        if line[0] in " \t":
            if index == 0:
                return False
            continue  # a folded line
        name, colon, _value = line.partition(":")
        if not colon or not name or any(c not in _FIELD_NAME for c in name):
            return False
        names.add(name.lower())
    else:
        if len(lines) > MAX_MAIL_HEADER_LINES:
            return False  # no end of the header block in sight
    found = names & MAIL_FIELDS
    return len(found) >= 3 and bool(found & {"from", "received", "mime-version"})


_SRT_TIMING = re.compile(r"\d{1,3}:\d{1,2}:\d{1,2}[,.]\d{1,3}[ \t]*-->[ \t]*"
                         r"\d{1,3}:\d{1,2}:\d{1,2}[,.]\d{1,3}")


def _looks_like_srt(text: str) -> bool:
    """SubRip subtitles: the first non-blank line is a cue number, the next its timing
    (00:00:01,000 --> 00:00:02,500). Looks at the first lines only."""
    lines = [line.strip() for line in text.lstrip("\ufeff").split("\n", 12)[:12]]
    while lines and not lines[0]:
        lines.pop(0)
    return (len(lines) >= 2 and lines[0].isdigit() and len(lines[0]) <= 9
            and _SRT_TIMING.match(lines[1]) is not None)


def _looks_like_csv(text: str) -> bool:
    lines = [line for line in text.splitlines()[:50] if line.strip()]
    if len(lines) < 2:
        return False  # one line of prose with a comma is not a table
    if len(lines) > 2 and not text.endswith(("\n", "\r")):
        lines = lines[:-1]  # possibly cut by the head boundary
    for delimiter in (",", ";", "\t", "|"):
        try:
            counts = [len(row) for row in csv.reader(lines[:20], delimiter=delimiter)]
        except csv.Error:
            continue
        if min(counts) >= 2 and len(set(counts)) == 1:
            return True
    return False
