"""Type detection by content (magic bytes and structure), never by the file name.

`detect(path, original_name)` returns a `Detected` or raises `Rejected` for executables, scripts,
encrypted documents and archives, and anything it does not recognise.
"""

from __future__ import annotations

import codecs
import csv
import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from sanitas.engine.report import Context, Rejected

HEAD_SIZE = 64 * 1024
MAX_CONTENT_TYPES_XML = 2 * 1024 * 1024


@dataclass(frozen=True)
class Detected:
    kind: str  # e.g. "pdf", "jpeg", "docm", "csv"
    family: str  # pdf | image | svg | text | archive | ooxml | odf | legacy_office


# Extensions a person may legitimately use for each kind (the first is the canonical one).
KIND_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",), "jpeg": ("jpg", "jpeg", "jpe", "jfif"), "png": ("png",), "gif": ("gif",),
    "webp": ("webp",), "tiff": ("tiff", "tif"), "bmp": ("bmp", "dib"), "svg": ("svg",),
    "txt": ("txt", "text", "log", "md", "markdown", "ini", "cfg", "conf", "json", "xml", "yaml",
            "yml", "rst", "tsv"),
    "csv": ("csv", "tsv", "txt"), "html": ("html", "htm", "xhtml"), "zip": ("zip",),
    "docx": ("docx", "dotx"), "docm": ("docm", "dotm"), "xlsx": ("xlsx", "xltx"),
    "xlsm": ("xlsm", "xltm"), "xlsb": ("xlsb",), "pptx": ("pptx", "potx", "ppsx"),
    "pptm": ("pptm", "potm", "ppsm"), "odt": ("odt", "ott"), "ods": ("ods", "ots"),
    "odp": ("odp", "otp"), "odg": ("odg", "otg"), "doc": ("doc", "dot"), "xls": ("xls", "xlt"),
    "ppt": ("ppt", "pot", "pps"), "rtf": ("rtf", "doc"),
}

FAMILY_OF_KIND = {
    "pdf": "pdf", "jpeg": "image", "png": "image", "gif": "image", "webp": "image",
    "tiff": "image", "bmp": "image", "svg": "svg", "txt": "text", "csv": "text", "html": "text",
    "zip": "archive", "docx": "ooxml", "docm": "ooxml", "xlsx": "ooxml", "xlsm": "ooxml",
    "xlsb": "ooxml", "pptx": "ooxml", "pptm": "ooxml", "odt": "odf", "ods": "odf",
    "odp": "odf", "odg": "odf", "doc": "legacy_office", "xls": "legacy_office",
    "ppt": "legacy_office", "rtf": "legacy_office",
}

# Names that announce an executable or a script: refused whatever the content looks like,
# because a viewer or a shell would treat them as code.
SCRIPT_EXTENSIONS = {
    "exe", "dll", "com", "scr", "pif", "cpl", "msi", "msp", "bat", "cmd", "ps1", "psm1", "vbs",
    "vbe", "js", "jse", "wsf", "wsh", "hta", "sh", "bash", "zsh", "py", "pyw", "pl", "rb", "php",
    "jar", "apk", "app", "elf", "so", "dylib", "lnk", "reg", "scf", "inf", "url", "desktop",
    "appimage", "deb", "rpm", "iso", "img", "vhd", "vhdx", "chm", "ocx", "sys", "drv", "gadget",
    "msc", "jnlp", "xll", "xlam", "ppam", "library-ms", "settingcontent-ms", "application",
}

OOXML_MAIN_TYPES = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": "docx",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": "docx",
    "application/vnd.ms-word.document.macroenabled.main+xml": "docm",
    "application/vnd.ms-word.template.macroenabledtemplate.main+xml": "docm",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": "xlsx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": "xlsx",
    "application/vnd.ms-excel.sheet.macroenabled.main+xml": "xlsm",
    "application/vnd.ms-excel.template.macroenabled.main+xml": "xlsm",
    "application/vnd.ms-excel.sheet.binary.macroenabled.main": "xlsb",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml": "pptx",
    "application/vnd.ms-powerpoint.presentation.macroenabled.main+xml": "pptm",
    "application/vnd.ms-powerpoint.template.macroenabled.main+xml": "pptm",
    "application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml": "pptm",
}

ODF_MIMETYPES = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.text-template": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.spreadsheet-template": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    "application/vnd.oasis.opendocument.presentation-template": "odp",
    "application/vnd.oasis.opendocument.graphics": "odg",
    "application/vnd.oasis.opendocument.graphics-template": "odg",
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


def detect(path: Path, original_name: str | None = None, ctx: Context | None = None) -> Detected:
    """Identify `path` by content. Records a finding in `ctx` when the name disagrees."""
    name_ext = extension_of(original_name)
    if name_ext in SCRIPT_EXTENSIONS:
        raise Rejected(f"Files of type .{name_ext} are executables or scripts and are not "
                       "accepted.")
    size = path.stat().st_size
    if size == 0:
        raise Rejected("The file is empty.")
    with open(path, "rb") as fh:
        head = fh.read(HEAD_SIZE)
    detected = _detect_head(path, head, size)
    if detected.kind in ("txt", "csv") and name_ext in ("txt", "csv", "tsv"):
        # Prose with commas looks like a table: between plain text and CSV the name decides.
        detected = Detected("txt" if name_ext == "txt" else "csv", "text")
    if ctx is not None and name_ext and name_ext not in KIND_EXTENSIONS[detected.kind]:
        ctx.add("type_mismatch", "file name", "converted",
                f"named .{name_ext} but the content is {detected.kind}; the output uses the "
                "extension of the real type")
    return detected


def _detect_head(path: Path, head: bytes, size: int) -> Detected:
    for magic, what in EXECUTABLE_MAGIC:
        if head.startswith(magic):
            raise Rejected(f"The file is {what}; executables are not accepted.")
    for pattern, what in SCRIPT_PREFIXES:
        if pattern.match(head[:4096]):
            raise Rejected(f"The file is {what}; scripts are not accepted.")
    # PDF readers accept the header anywhere in the first 1024 bytes.
    if b"%PDF-" in head[:1024]:
        return Detected("pdf", "pdf")
    if head.startswith(b"\xff\xd8\xff"):
        return Detected("jpeg", "image")
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return Detected("png", "image")
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return Detected("gif", "image")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Detected("webp", "image")
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return Detected("tiff", "image")
    if head[:2] == b"BM" and len(head) >= 26 and _plausible_bmp(head):
        return Detected("bmp", "image")
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return _detect_ole(path)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _detect_zip(path)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        return Detected("rtf", "legacy_office")
    for magic, what in UNSUPPORTED_MAGIC:
        if head.startswith(magic):
            raise Rejected(f"The file is {what}, which is not a supported type.")
    return _detect_text(head, size)


def _plausible_bmp(head: bytes) -> bool:
    header_size = struct.unpack_from("<I", head, 14)[0]
    pixel_offset = struct.unpack_from("<I", head, 10)[0]
    return header_size in (12, 40, 52, 56, 64, 108, 124) and 14 + header_size <= pixel_offset


def _detect_ole(path: Path) -> Detected:
    import olefile

    try:
        ole = olefile.OleFileIO(str(path))
    except Exception as exc:
        raise Rejected("The file looks like a legacy Office document but its structure is "
                       "damaged.") from exc
    try:
        streams = {"/".join(entry).lower() for entry in ole.listdir(streams=True, storages=True)}
        if "encryptioninfo" in streams or "encryptedpackage" in streams:
            raise Rejected("The document is password-protected (encrypted); encrypted files "
                           "cannot be inspected and are not accepted.")
        if "worddocument" in streams:
            fib = ole.openstream("WordDocument").read(32)
            if len(fib) >= 12 and struct.unpack_from("<H", fib, 10)[0] & 0x0100:
                raise Rejected("The Word document is password-protected (encrypted); encrypted "
                               "files are not accepted.")
            return Detected("doc", "legacy_office")
        for book in ("workbook", "book"):
            if book in streams:
                if _xls_has_filepass(ole.openstream(_find_stream(ole, book)).read(1 << 16)):
                    raise Rejected("The Excel workbook is password-protected (encrypted); "
                                   "encrypted files are not accepted.")
                return Detected("xls", "legacy_office")
        if "powerpoint document" in streams:
            if "encryptedsummary" in streams:
                raise Rejected("The PowerPoint presentation is password-protected (encrypted); "
                               "encrypted files are not accepted.")
            return Detected("ppt", "legacy_office")
        raise Rejected("The file is an OLE compound file that is not a Word, Excel or "
                       "PowerPoint document (for example an installer); it is not accepted.")
    finally:
        ole.close()


def _find_stream(ole, lower_name: str) -> str:
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
        raise Rejected("The file looks like a ZIP archive but it is damaged.") from exc
    with zf:
        infos = zf.infolist()
        if any(info.flag_bits & 0x1 for info in infos):
            raise Rejected("The archive is password-protected (encrypted); encrypted archives "
                           "cannot be inspected and are not accepted.")
        names = {info.filename: info for info in infos}
        if "[Content_Types].xml" in names:
            kind = _ooxml_kind(zf, names["[Content_Types].xml"])
            if kind:
                return Detected(kind, "ooxml")
        if "mimetype" in names and names["mimetype"].file_size < 200:
            mimetype = zf.read("mimetype").decode("ascii", "replace").strip()
            kind = ODF_MIMETYPES.get(mimetype)
            if kind:
                manifest = names.get("META-INF/manifest.xml")
                if manifest is not None and manifest.file_size < MAX_CONTENT_TYPES_XML and \
                        b"encryption-data" in zf.read(manifest):
                    raise Rejected("The document is password-protected (encrypted); encrypted "
                                   "files cannot be inspected and are not accepted.")
                return Detected(kind, "odf")
        if "classes.dex" in names or "AndroidManifest.xml" in names:
            raise Rejected("The file is an Android application (APK); executables are not "
                           "accepted.")
        if "META-INF/MANIFEST.MF" in names and any(n.endswith(".class") for n in names):
            raise Rejected("The file is a Java application (JAR); executables are not "
                           "accepted.")
        return Detected("zip", "archive")


def _ooxml_kind(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    if info.file_size > MAX_CONTENT_TYPES_XML:
        raise Rejected("The Office document's content type list is implausibly large.")
    from defusedxml import ElementTree

    try:
        root = ElementTree.fromstring(zf.read(info))
    except Exception as exc:
        raise Rejected("The Office document's content type list is damaged.") from exc
    for element in root:
        if element.tag.endswith("Override"):
            kind = OOXML_MAIN_TYPES.get((element.get("ContentType") or "").strip().lower())
            if kind:
                return kind
    return None


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


HTML_START = re.compile(r"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|meta|title|script|"
                        r"iframe|div|p|table|a|img|style|link|form|h[1-6])[\s>/]",
                        re.IGNORECASE | re.DOTALL)
SVG_START = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*(<!DOCTYPE\s+svg[^>]*>\s*|"
                       r"<!DOCTYPE[^>]*\[.*?\]\s*>\s*)?(<!--.*?-->\s*)*<(\w+:)?svg[\s>]",
                       re.IGNORECASE | re.DOTALL)


def _detect_text(head: bytes, size: int) -> Detected:
    text = _decode_text_head(head)
    if text is None:
        raise Rejected("The file type is not recognised (binary content of an unknown or "
                       "unsupported type).")
    if SVG_START.match(text):
        return Detected("svg", "svg")
    if HTML_START.match(text) or re.search(r"<html[\s>]", text[:4096], re.IGNORECASE):
        return Detected("html", "text")
    if _looks_like_csv(text):
        return Detected("csv", "text")
    return Detected("txt", "text")


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
