"""The format registry: every family and kind the engine takes, declared once.

A *family* is a sanitizer (one handler module); a *kind* is one file type the family takes
(`docx`, `jpeg`, `epub`...). Each kind declares the names people give it, the signature that
identifies it by itself (when one does), its media type and the output extensions its family
may produce from it. Each output format declares the magic bytes a file of it starts with and
how it is re-opened before it is accepted.

Everything else derives from this table: `detect` (extensions, container kinds, simple
signatures), `sanitize_detected` (the handler, what advanced mode does), the sandbox parent's
output check (allowed output extensions per kind and mode, magic bytes), the sandbox child's
preload list and the upload screen's list of supported formats. Adding a format means adding
it here and giving its family the code; nothing else keeps a list.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from sanitas.engine.modes import Mode

if TYPE_CHECKING:
    from sanitas.engine.report import Context


class Advanced(StrEnum):
    """What advanced mode does with a family."""

    PIXELS = "pixels"  # basic clean, then every page rebuilt from its pixels (PDF out)
    OFFICE_PIXELS = "office_pixels"  # basic clean, LibreOffice renders a PDF, then pixels
    # Spreadsheets: basic clean, then a new workbook written from the cell values (.xlsx out;
    # sheet_values.py).
    SHEET_VALUES = "sheet_values"
    SAME = "same"  # nothing more to rebuild: the basic output is already re-encoded content


@dataclass(frozen=True)
class Family:
    name: str
    handler: str  # "module:function", called as handler(src, dst, ctx, kind) -> extension
    advanced: Advanced
    office: bool = False  # the sandbox needs the LibreOffice layout (bigger budgets, fonts)
    # An office family whose basic mode cleans the package itself, without LibreOffice: its
    # jobs fork from a warm office template instead of taking a spare with LibreOffice idle.
    basic_without_libreoffice: bool = False
    # The sandbox child imports the handler module before a job arrives. Only for the families
    # most uploads belong to: every spare pays its imports, under load with CPU the running
    # jobs need (the mail, Markdown, calendar and subtitle handlers added ~30 ms a spare);
    # the others come while a ready spare has nothing to do (`idle_modules`).
    preload: bool = True
    summary: str = ""  # what the family's sanitizer keeps and removes (README, upload info)

    def sanitizer(self) -> Callable[[Path, Path, Context, str], str]:
        module, _, function = self.handler.partition(":")
        handler: Callable[[Path, Path, Context, str], str] = getattr(
            importlib.import_module(module), function)
        return handler

    @property
    def module(self) -> str:
        return self.handler.partition(":")[0]


@dataclass(frozen=True)
class Kind:
    name: str
    family: str
    extensions: tuple[str, ...]  # names people use for it; the first is the canonical one
    outputs: tuple[str, ...]  # output extensions its family may produce in basic mode
    media_type: str
    label: str
    # A signature that identifies the kind by itself: (offset, bytes) pairs that must all match.
    magic: tuple[tuple[int, bytes], ...] = ()
    container: str | None = None  # "zip" / "ole": the kind is decided by the structure inside
    # What names the kind inside its container: the main part's content type (OOXML) or the
    # `mimetype` member (OpenDocument).
    main_type: str = ""
    # ISO base media files (HEIF, AVIF) are named by the brands of their leading `ftyp` box
    # (`detect._ftyp_kind`): the major brand, else the first compatible brand a kind claims.
    brands: tuple[bytes, ...] = ()
    advanced: Advanced | None = None  # what advanced mode does, when not the family's way


@dataclass(frozen=True)
class Output:
    extension: str
    magic: tuple[bytes, ...]  # a produced file starts with one of these; () for text
    media_type: str
    # Further (offset, bytes) pairs a produced file must match (the `ftyp` box of ISO media).
    also: tuple[tuple[int, bytes], ...] = ()
    # "module:function" that re-opens a produced file before it is accepted, called as
    # verify(path, output); it raises when the file is not valid (engine/verify.py).
    verify: str = ""

    @property
    def text(self) -> bool:
        return not self.magic

    def verifier(self) -> Callable[[Path, Output], None]:
        module, _, function = self.verify.partition(":")
        verifier: Callable[[Path, Output], None] = getattr(importlib.import_module(module),
                                                           function)
        return verifier

    def accepts(self, head: bytes) -> bool:
        """Whether a produced binary file's first bytes fit this output format."""
        return head.startswith(self.magic) and matches(head, self.also)


_PK = (b"PK\x03\x04",)
_OFFICE_MAIN = "application/vnd.openxmlformats-officedocument."
_ODF = "application/vnd.oasis.opendocument."
_W = "application/vnd.openxmlformats-officedocument.wordprocessingml."
_S = "application/vnd.openxmlformats-officedocument.spreadsheetml."
_P = "application/vnd.openxmlformats-officedocument.presentationml."
_VISIO = "application/vnd.ms-visio."

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("pdf", "sanitas.engine.pdf:sanitize", Advanced.PIXELS, preload=False,
           summary="Scripts, actions, forms' scripts, embedded files, annotations' authors and "
                   "document metadata removed; pages, text, fonts and images kept."),
    Family("image", "sanitas.engine.image:sanitize", Advanced.SAME,
           summary="Decoded and re-encoded (HEIC photos as JPEG): EXIF (GPS, camera, "
                   "orientation applied), XMP, IPTC, comments, thumbnails and trailing data "
                   "removed; pixels and a valid colour profile kept."),
    Family("svg", "sanitas.engine.svg:sanitize", Advanced.SAME,
           summary="Rebuilt from an allowlist of drawing elements: scripts, event handlers, "
                   "remote references, foreign content and editor metadata removed."),
    Family("text", "sanitas.engine.text:sanitize", Advanced.SAME,
           summary="Text re-encoded as UTF-8; HTML rebuilt without scripts, handlers, remote "
                   "loads or forms; CSV cells that start a formula neutralised."),
    Family("epub", "sanitas.engine.epub:sanitize", Advanced.SAME,
           summary="Rebuilt as an EPUB book: scripts, forms, event handlers, remote "
                   "resources, descriptive metadata, DRM and signature files and parts the "
                   "book does not list removed; chapters, styles, pictures (re-encoded) and "
                   "fonts kept. Advanced mode adds nothing: rebuilding a reflowable book from "
                   "pixels is not meaningful."),
    Family("archive", "sanitas.engine.archive:sanitize", Advanced.SAME,
           summary="Every member sanitized by its own family (nested archives too, with "
                   "limits); members that cannot be made safe are left out and reported. "
                   "7z, RAR, tar and gzip/bzip2/xz files come out as a ZIP."),
    Family("ooxml", "sanitas.engine.ooxml:sanitize", Advanced.OFFICE_PIXELS, office=True,
           preload=False, basic_without_libreoffice=True,
           summary="Macros, ActiveX, OLE objects, external links, DDE, remote templates, "
                   "comments' and revisions' authors and document properties removed; text, "
                   "tables, pictures, charts, drawings and layout kept in the same format "
                   "(macro-enabled types become their macro-free twin). Visio drawings also "
                   "lose the ShapeSheet formulas and document events that run code."),
    Family("odf", "sanitas.engine.odf:sanitize", Advanced.OFFICE_PIXELS, office=True,
           preload=False, basic_without_libreoffice=True,
           summary="Macros, scripts, embedded objects, external links and metadata removed; "
                   "the document kept in its OpenDocument type."),
    Family("legacy_office", "sanitas.engine.legacy_office:sanitize",
           Advanced.OFFICE_PIXELS, office=True, preload=False,
           summary="Converted by LibreOffice (macros never run) to the matching OOXML type, "
                   "then cleaned like it; macros and OLE objects do not survive."),
    Family("mail", "sanitas.engine.mail:sanitize", Advanced.SAME, preload=False,
           summary="Every attachment (also in attached messages) sanitized by its own family "
                   "and attached again; one that cannot be made safe replaced by a note saying "
                   "why. HTML bodies lose scripts, handlers, forms and remote loads (tracking "
                   "pixels); Received chains, client and tracking headers removed; sender, "
                   "recipients, subject, date and text kept."),
    Family("xps", "sanitas.engine.xps:sanitize", Advanced.SAME, preload=False,
           summary="Drawn as PDF by MuPDF (mutool) in the sandbox, then cleaned as a PDF: "
                   "links, document properties, print tickets, signatures and thumbnails of "
                   "the package are not carried over. Advanced mode rebuilds the pages from "
                   "pixels."),
    Family("metafile", "sanitas.engine.metafile:sanitize", Advanced.SAME, office=True,
           preload=False,
           summary="Drawn by LibreOffice and rebuilt as a PNG picture: printer escapes, "
                   "comments, EMF+ records and the description naming the program are not "
                   "kept."),
    Family("markdown", "sanitas.engine.markdown:sanitize", Advanced.SAME, preload=False,
           summary="Parsed and written back as Markdown: raw HTML other than harmless "
                   "formatting, event handlers, script links, remote pictures (tracking) and "
                   "front matter removed; text, links, tables and local pictures kept."),
    Family("vcalendar", "sanitas.engine.vcalendar:sanitize", Advanced.SAME, preload=False,
           summary="Calendar entries and contact cards read line by line and written again: "
                   "alarms that run programs or send mail, attachments, addresses the client "
                   "fetches, client extensions (X- properties) and the producing program "
                   "removed; pictures of a card cleaned; events, people and details kept."),
    Family("subtitles", "sanitas.engine.subtitles:sanitize", Advanced.SAME, preload=False,
           summary="Cues parsed and written again: timings checked, only the format's own "
                   "formatting tags kept (scripts, links and pictures in cue text removed), "
                   "WebVTT comments (NOTE) removed and STYLE blocks without remote loads."),
    # Audio and video: ffmpeg remuxes in the sandbox (engine/media.py); advanced mode
    # re-encodes the streams into the same container type.
    Family("audio", "sanitas.engine.media:sanitize", Advanced.SAME,
           summary="Remuxed without re-encoding: tags (ID3, APE, Vorbis comments, RIFF and "
                   "iTunes tags), cover pictures, chapters and encoder names removed; the "
                   "audio kept bit for bit."),
    Family("video", "sanitas.engine.media:sanitize", Advanced.SAME,
           summary="Remuxed without re-encoding: tags, GPS and device tags, data tracks "
                   "(GPS, timecode), chapters, cover pictures, attachments (fonts, files) and "
                   "subtitle track names removed; video, audio and subtitle streams kept bit "
                   "for bit."),
)}

_ZIP, _OLE = "zip", "ole"
# Windows Write: a plain document, and one that holds OLE objects.
WRITE_SIGNATURES = (b"\x31\xbe\x00\x00", b"\x32\xbe\x00\x00")
# Lotus 1-2-3 (and Quattro Pro for DOS) files open with a BOF record (type 0, length 2) whose
# value names the format: 0x0404 WKS (1-2-3 release 1A), 0x0406 WK1 (release 2), 0x5120
# Quattro Pro's WQ1. (Works for DOS spreadsheets, also named .wks, start with type 0xFF: not
# accepted.)
LOTUS_BOF = {b"\x04\x04": "wks", b"\x06\x04": "wk1", b"\x20\x51": "wq1"}
# A Macintosh PICT picture: a 512-byte header of the application's, the picture's size and
# frame, then its version opcode (version 2: 0x0011 0x02FF; version 1: 0x11 0x01).
PICT_VERSIONS = (b"\x00\x11\x02\xff", b"\x11\x01")

# The spreadsheet kinds: advanced mode rebuilds them from their values (Advanced.SHEET_VALUES).
SPREADSHEET_KINDS = frozenset(("xlsx", "xlsm", "xltx", "xltm", "xlsb", "ods", "ots", "xls",
                               "wk1", "wk3", "wq1"))

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("pdf", "pdf", ("pdf",), ("pdf",), "application/pdf", "PDF document"),
    Kind("jpeg", "image", ("jpg", "jpeg", "jpe", "jfif"), ("jpg",), "image/jpeg", "JPEG image",
         magic=((0, b"\xff\xd8\xff"),)),
    Kind("png", "image", ("png",), ("png",), "image/png", "PNG image",
         magic=((0, b"\x89PNG\r\n\x1a\n"),)),
    Kind("gif", "image", ("gif",), ("gif",), "image/gif", "GIF image",
         magic=((0, b"GIF87a"),)),
    Kind("webp", "image", ("webp",), ("webp",), "image/webp", "WebP image",
         magic=((0, b"RIFF"), (8, b"WEBP"))),
    Kind("tiff", "image", ("tiff", "tif"), ("tiff",), "image/tiff", "TIFF image",
         magic=((0, b"II*\x00"),)),
    Kind("bmp", "image", ("bmp", "dib"), ("bmp",), "image/bmp", "BMP image"),
    # A packed DIB: the bitmap's info header (40 bytes, or 108/124 for the V4/V5 headers) with
    # one plane, no BMP file header (the clipboard's form, saved as .dib).
    Kind("dib", "image", ("dib",), ("bmp",), "image/bmp", "Device-independent bitmap",
         magic=((0, b"\x28\x00\x00\x00"), (12, b"\x01\x00"))),
    # HEIC photos become JPEG (PNG with transparency): re-encoding HEVC takes x265 tens of CPU
    # seconds for one phone photo, and a JPEG opens everywhere.
    Kind("heic", "image", ("heic", "heif", "hif"), ("jpg", "png"), "image/heic",
         "HEIC/HEIF photo",
         brands=(b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs")),
    Kind("avif", "image", ("avif",), ("avif", "jpg", "png"), "image/avif", "AVIF image",
         brands=(b"avif", b"avis")),
    Kind("jxl", "image", ("jxl",), ("jxl",), "image/jxl", "JPEG XL image",
         magic=((0, b"\xff\x0a"),)),
    # JPEG 2000 (the JP2/JPX box format and the raw codestream): rebuilt as PNG when its
    # wavelet is the reversible one (lossless), as JPEG otherwise (PNG with transparency).
    Kind("jp2", "image", ("jp2", "jpx", "jpf", "jpm", "j2k", "j2c", "jpc", "jph"),
         ("png", "jpg"), "image/jp2", "JPEG 2000 image",
         magic=((0, b"\x00\x00\x00\x0cjP  \r\n\x87\n"),)),
    # Icons and cursors: the largest picture rebuilt as PNG (engine/image.py). The count's high
    # byte must be 0, which keeps an ISO media file whose `ftyp` box is 256 bytes long out.
    Kind("ico", "image", ("ico", "cur"), ("png",), "image/vnd.microsoft.icon",
         "ICO icon / CUR cursor", magic=((0, b"\x00\x00\x01\x00"), (5, b"\x00"))),
    Kind("svg", "svg", ("svg",), ("svg",), "image/svg+xml", "SVG drawing"),
    Kind("txt", "text", ("txt", "text", "log", "ini", "cfg", "conf", "rst", "tsv"), ("txt",),
         "text/plain", "plain text"),
    # Markdown, YAML and TOML have no signature: text named so (detect._by_name) is parsed and
    # written back (engine/markdown.py, engine/structured_text.py).
    Kind("markdown", "markdown", ("md", "markdown", "mkd", "mdown"), ("md",), "text/markdown",
         "Markdown document"),
    Kind("yaml", "text", ("yaml", "yml"), ("yaml",), "application/yaml", "YAML document"),
    Kind("toml", "text", ("toml",), ("toml",), "application/toml", "TOML document"),
    # Subtitles: WebVTT by its WEBVTT line, SubRip by its first cue (detect._looks_like_srt).
    Kind("srt", "subtitles", ("srt",), ("srt",), "application/x-subrip", "SubRip subtitles"),
    Kind("vtt", "subtitles", ("vtt",), ("vtt",), "text/vtt", "WebVTT subtitles",
         magic=((0, b"WEBVTT"),)),
    # JSON has no signature: text whose first character is { or [ and that is named .json
    # (detect._by_name) is parsed, bounded, and written back canonically
    # (engine/structured_text.py).
    Kind("json", "text", ("json",), ("json",), "application/json", "JSON document"),
    Kind("xml", "text", ("xml",), ("xml",), "application/xml", "XML document"),
    Kind("csv", "text", ("csv", "tsv", "txt"), ("csv",), "text/csv", "CSV table"),
    Kind("html", "text", ("html", "htm", "xhtml"), ("html",), "text/html", "HTML page"),
    Kind("zip", "archive", ("zip",), ("zip",), "application/zip", "ZIP archive", container=_ZIP),
    # Other archives come out as a ZIP of their cleaned members (engine/archives_other.py); a
    # gzip, bzip2 or xz stream holds a tar or one file, decided in the sandbox.
    Kind("tar", "archive", ("tar",), ("zip",), "application/x-tar", "tar archive",
         magic=((257, b"ustar"),)),
    Kind("gzip", "archive", ("gz", "tgz"), ("zip",), "application/gzip", "gzip file",
         magic=((0, b"\x1f\x8b\x08"),)),
    Kind("bzip2", "archive", ("bz2", "tbz", "tbz2"), ("zip",), "application/x-bzip2",
         "bzip2 file", magic=((0, b"BZh"), (4, b"1AY&SY"))),
    Kind("xz", "archive", ("xz", "txz"), ("zip",), "application/x-xz", "xz file",
         magic=((0, b"\xfd7zXZ\x00"),)),
    Kind("7z", "archive", ("7z",), ("zip",), "application/x-7z-compressed", "7-Zip archive",
         magic=((0, b"7z\xbc\xaf\x27\x1c"),)),
    Kind("rar", "archive", ("rar",), ("zip",), "application/vnd.rar", "RAR archive",
         magic=((0, b"Rar!\x1a\x07\x00"),)),
    Kind("epub", "epub", ("epub",), ("epub",), "application/epub+zip", "EPUB book",
         container=_ZIP, main_type="application/epub+zip"),
    Kind("docx", "ooxml", ("docx",), ("docx",),
         _OFFICE_MAIN + "wordprocessingml.document", "Word document", container=_ZIP,
         main_type=_W + "document.main+xml"),
    Kind("docm", "ooxml", ("docm",), ("docx",), "application/vnd.ms-word.document.macroEnabled.12",
         "Word macro-enabled document", container=_ZIP,
         main_type="application/vnd.ms-word.document.macroenabled.main+xml"),
    Kind("dotx", "ooxml", ("dotx",), ("dotx",),
         _OFFICE_MAIN + "wordprocessingml.template", "Word template", container=_ZIP,
         main_type=_W + "template.main+xml"),
    Kind("dotm", "ooxml", ("dotm",), ("dotx",), "application/vnd.ms-word.template.macroEnabled.12",
         "Word macro-enabled template", container=_ZIP,
         main_type="application/vnd.ms-word.template.macroenabledtemplate.main+xml"),
    Kind("xlsx", "ooxml", ("xlsx",), ("xlsx",),
         _OFFICE_MAIN + "spreadsheetml.sheet", "Excel workbook", container=_ZIP,
         main_type=_S + "sheet.main+xml"),
    Kind("xlsm", "ooxml", ("xlsm",), ("xlsx",), "application/vnd.ms-excel.sheet.macroEnabled.12",
         "Excel macro-enabled workbook", container=_ZIP,
         main_type="application/vnd.ms-excel.sheet.macroenabled.main+xml"),
    Kind("xltx", "ooxml", ("xltx",), ("xltx",),
         _OFFICE_MAIN + "spreadsheetml.template", "Excel template", container=_ZIP,
         main_type=_S + "template.main+xml"),
    Kind("xltm", "ooxml", ("xltm",), ("xltx",),
         "application/vnd.ms-excel.template.macroEnabled.12", "Excel macro-enabled template",
         container=_ZIP,
         main_type="application/vnd.ms-excel.template.macroenabled.main+xml"),
    Kind("xlsb", "ooxml", ("xlsb",), ("xlsx",),
         "application/vnd.ms-excel.sheet.binary.macroEnabled.12", "Excel binary workbook",
         container=_ZIP,
         main_type="application/vnd.ms-excel.sheet.binary.macroenabled.main"),
    Kind("pptx", "ooxml", ("pptx",), ("pptx",),
         _OFFICE_MAIN + "presentationml.presentation", "PowerPoint presentation",
         container=_ZIP,
         main_type=_P + "presentation.main+xml"),
    Kind("pptm", "ooxml", ("pptm",), ("pptx",),
         "application/vnd.ms-powerpoint.presentation.macroEnabled.12",
         "PowerPoint macro-enabled presentation", container=_ZIP,
         main_type="application/vnd.ms-powerpoint.presentation.macroenabled.main+xml"),
    Kind("potx", "ooxml", ("potx",), ("potx",),
         _OFFICE_MAIN + "presentationml.template", "PowerPoint template", container=_ZIP,
         main_type=_P + "template.main+xml"),
    Kind("potm", "ooxml", ("potm",), ("potx",),
         "application/vnd.ms-powerpoint.template.macroEnabled.12",
         "PowerPoint macro-enabled template", container=_ZIP,
         main_type="application/vnd.ms-powerpoint.template.macroenabled.main+xml"),
    Kind("ppsx", "ooxml", ("ppsx",), ("ppsx",),
         _OFFICE_MAIN + "presentationml.slideshow", "PowerPoint slideshow", container=_ZIP,
         main_type=_P + "slideshow.main+xml"),
    Kind("ppsm", "ooxml", ("ppsm",), ("ppsx",),
         "application/vnd.ms-powerpoint.slideshow.macroEnabled.12",
         "PowerPoint macro-enabled slideshow", container=_ZIP,
         main_type="application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml"),
    # Visio drawings, templates and stencils: OPC packages like the others, whose main part
    # is named by Visio's own `document` relationship (opc.VISIO_DOCUMENT_REL).
    Kind("vsdx", "ooxml", ("vsdx",), ("vsdx",), "application/vnd.ms-visio.drawing",
         "Visio drawing", container=_ZIP, main_type=_VISIO + "drawing.main+xml"),
    Kind("vsdm", "ooxml", ("vsdm",), ("vsdx",), "application/vnd.ms-visio.drawing.macroEnabled.12",
         "Visio macro-enabled drawing", container=_ZIP,
         main_type=_VISIO + "drawing.macroenabled.main+xml"),
    Kind("vstx", "ooxml", ("vstx",), ("vstx",), "application/vnd.ms-visio.template",
         "Visio template", container=_ZIP, main_type=_VISIO + "template.main+xml"),
    Kind("vstm", "ooxml", ("vstm",), ("vstx",),
         "application/vnd.ms-visio.template.macroEnabled.12", "Visio macro-enabled template",
         container=_ZIP, main_type=_VISIO + "template.macroenabled.main+xml"),
    Kind("vssx", "ooxml", ("vssx",), ("vssx",), "application/vnd.ms-visio.stencil",
         "Visio stencil", container=_ZIP, main_type=_VISIO + "stencil.main+xml"),
    Kind("vssm", "ooxml", ("vssm",), ("vssx",),
         "application/vnd.ms-visio.stencil.macroEnabled.12", "Visio macro-enabled stencil",
         container=_ZIP, main_type=_VISIO + "stencil.macroenabled.main+xml"),
    Kind("odt", "odf", ("odt",), ("odt",), _ODF + "text", "OpenDocument text", container=_ZIP,
         main_type=_ODF + "text"),
    Kind("ott", "odf", ("ott",), ("ott",), _ODF + "text-template",
         "OpenDocument text template", container=_ZIP, main_type=_ODF + "text-template"),
    Kind("ods", "odf", ("ods",), ("ods",), _ODF + "spreadsheet", "OpenDocument spreadsheet",
         container=_ZIP, main_type=_ODF + "spreadsheet"),
    Kind("ots", "odf", ("ots",), ("ots",), _ODF + "spreadsheet-template",
         "OpenDocument spreadsheet template", container=_ZIP,
         main_type=_ODF + "spreadsheet-template"),
    Kind("odp", "odf", ("odp",), ("odp",), _ODF + "presentation", "OpenDocument presentation",
         container=_ZIP, main_type=_ODF + "presentation"),
    Kind("otp", "odf", ("otp",), ("otp",), _ODF + "presentation-template",
         "OpenDocument presentation template", container=_ZIP,
         main_type=_ODF + "presentation-template"),
    Kind("odg", "odf", ("odg",), ("odg",), _ODF + "graphics", "OpenDocument drawing",
         container=_ZIP, main_type=_ODF + "graphics"),
    Kind("otg", "odf", ("otg",), ("otg",), _ODF + "graphics-template",
         "OpenDocument drawing template", container=_ZIP, main_type=_ODF + "graphics-template"),
    # The formula template's usual extension, .otf, is the OpenType font's: not declared.
    # LibreOffice cannot load a formula document headless here (Math is not installed), so a
    # formula gets the basic clean in advanced mode too: MathML is markup, rebuilt as such.
    Kind("odf", "odf", ("odf",), ("odf",), _ODF + "formula", "OpenDocument formula",
         container=_ZIP, main_type=_ODF + "formula", advanced=Advanced.SAME),
    Kind("doc", "legacy_office", ("doc", "dot"), ("docx",), "application/msword",
         "Word 97-2003 document", container=_OLE),
    Kind("xls", "legacy_office", ("xls", "xlt"), ("xlsx",), "application/vnd.ms-excel",
         "Excel 97-2003 workbook", container=_OLE),
    Kind("ppt", "legacy_office", ("ppt", "pot", "pps"), ("pptx",),
         "application/vnd.ms-powerpoint", "PowerPoint 97-2003 presentation", container=_OLE),
    Kind("rtf", "legacy_office", ("rtf", "doc"), ("docx",), "application/rtf",
         "Rich Text document"),
    Kind("wri", "legacy_office", ("wri",), ("docx",), "application/x-mswrite",
         "Windows Write document", magic=((0, WRITE_SIGNATURES[0]), (4, b"\x00\xab"))),
    Kind("pub", "legacy_office", ("pub",), ("pdf",), "application/x-mspublisher",
         "Microsoft Publisher document", container=_OLE),
    Kind("vsd", "legacy_office", ("vsd", "vss", "vst"), ("pdf",), "application/vnd.visio",
         "Visio 2000-2003 drawing", container=_OLE),
    # Before OLE: Word for Windows 2.0 wrote its FIB at the start of the file (wIdent 0xA5DB,
    # nFib 45). Word 6.0 and 95 files are OLE files of the `doc` kind.
    Kind("word2", "legacy_office", ("doc",), ("docx",), "application/msword",
         "Word for Windows 2.0 document", magic=((0, b"\xdb\xa5\x2d\x00"),)),
    # WordPerfect 5.x-6.x/WordPerfect Office: "\xffWPC", then the document's offset, the
    # product (1: WordPerfect) and the file type (10: a document), checked in legacy_office.
    Kind("wpd", "legacy_office", ("wpd", "wp", "wp5", "wp6", "wpt"), ("docx",),
         "application/vnd.wordperfect", "WordPerfect document", magic=((0, b"\xffWPC"),)),
    # Microsoft Works 2-4 word processor files: a 256-byte header (version, then 0xFE) before
    # the text, alone (Works for DOS) or as the MN0 stream of an OLE file (Works 3 and 4 for
    # Windows, found by detect._detect_ole).
    Kind("wps", "legacy_office", ("wps",), ("docx",), "application/vnd.ms-works",
         "Microsoft Works document", magic=((0, b"\x01\xfe"),)),
    Kind("wk1", "legacy_office", ("wk1", "wks"), ("xlsx",), "application/vnd.lotus-1-2-3",
         "Lotus 1-2-3 worksheet", magic=((0, b"\x00\x00\x02\x00\x06\x04"),)),
    # Lotus 1-2-3 release 3 and later (WK3, WK4, 123): a 26-byte BOF record naming the
    # version (0x1000-0x1005), then records as WK1's; read by libwps.
    Kind("wk3", "legacy_office", ("wk3", "wk4", "123"), ("xlsx",), "application/vnd.lotus-1-2-3",
         "Lotus 1-2-3 release 3 or later worksheet", magic=((0, b"\x00\x00\x1a\x00"),)),
    Kind("wq1", "legacy_office", ("wq1",), ("xlsx",), "application/x-quattro-pro",
         "Quattro Pro for DOS spreadsheet", magic=((0, b"\x00\x00\x02\x00\x20\x51"),)),
    # PICT's version opcode sits past the 512-byte header: checked after every signature at
    # the start of a file (EXTRA_MAGIC), so it never outranks one.
    Kind("pict", "legacy_office", ("pct", "pict"), ("pdf",), "image/x-pict",
         "Macintosh PICT picture"),
    # E-mail has no signature: a leading block of RFC 5322 header fields naming a message
    # (detect._looks_like_mail) makes one.
    Kind("eml", "mail", ("eml",), ("eml",), "message/rfc822", "E-mail message"),
    # iCalendar and vCard by their first line (engine/vcalendar.py).
    Kind("ics", "vcalendar", ("ics", "ical", "icalendar", "ifb"), ("ics",), "text/calendar",
         "iCalendar calendar or invitation", magic=((0, b"BEGIN:VCALENDAR"),)),
    Kind("vcf", "vcalendar", ("vcf", "vcard"), ("vcf",), "text/vcard", "vCard contact card",
         magic=((0, b"BEGIN:VCARD"),)),
    # Outlook's formats become .eml (engine/outlook.py): a .msg by the MAPI property streams
    # of its OLE file, TNEF (winmail.dat) by its signature.
    Kind("msg", "mail", ("msg",), ("eml",), "application/vnd.ms-outlook", "Outlook message",
         container=_OLE),
    Kind("tnef", "mail", ("dat", "tnef"), ("eml",), "application/ms-tnef",
         "TNEF attachment (winmail.dat)", magic=((0, b"\x78\x9f\x3e\x22"),)),
    # XPS and OpenXPS: ZIP packages named by the fixed-representation relationship of their
    # _rels/.rels (detect._detect_zip); drawn as PDF (engine/xps.py).
    Kind("xps", "xps", ("xps",), ("pdf",), "application/vnd.ms-xpsdocument", "XPS document",
         container=_ZIP,
         main_type="http://schemas.microsoft.com/xps/2005/06/fixedrepresentation"),
    Kind("oxps", "xps", ("oxps",), ("pdf",), "application/oxps", "OpenXPS document",
         container=_ZIP,
         main_type="http://schemas.openxps.org/oxps/v1.0/fixedrepresentation"),
    # Windows metafiles, drawn as PNG (engine/metafile.py): a placeable WMF by its key, a
    # plain one by its header (more in EXTRA_MAGIC), an EMF by its header record's signature.
    Kind("wmf", "metafile", ("wmf",), ("png",), "image/wmf", "Windows metafile (WMF)",
         magic=((0, b"\xd7\xcd\xc6\x9a"),)),
    Kind("emf", "metafile", ("emf",), ("png",), "image/emf", "Enhanced metafile (EMF)",
         magic=((0, b"\x01\x00\x00\x00"), (40, b" EMF"))),
    # Audio. MP3: an ID3v2 tag or an MPEG audio frame sync (more in EXTRA_MAGIC); Ogg: the
    # codec's identification header in the first page names Vorbis or Opus.
    Kind("mp3", "audio", ("mp3",), ("mp3",), "audio/mpeg", "MP3 audio",
         magic=((0, b"ID3"),)),
    Kind("flac", "audio", ("flac",), ("flac",), "audio/flac", "FLAC audio",
         magic=((0, b"fLaC"),)),
    Kind("ogg", "audio", ("ogg", "oga"), ("ogg",), "audio/ogg", "Ogg Vorbis audio",
         magic=((0, b"OggS"), (28, b"\x01vorbis"))),
    Kind("opus", "audio", ("opus",), ("opus",), "audio/ogg; codecs=opus", "Opus audio",
         magic=((0, b"OggS"), (28, b"OpusHead"))),
    Kind("wav", "audio", ("wav", "wave"), ("wav",), "audio/wav", "WAV audio",
         magic=((0, b"RIFF"), (8, b"WAVE"))),
    Kind("aiff", "audio", ("aiff", "aif", "aifc"), ("aiff",), "audio/aiff", "AIFF audio",
         magic=((0, b"FORM"), (8, b"AIFF"))),
    Kind("m4a", "audio", ("m4a", "m4b"), ("m4a",), "audio/mp4", "M4A/AAC audio",
         brands=(b"M4A ", b"M4B ")),
    # Video. MP4 by its ftyp brands (a HEIF brand earlier in the box still makes a photo);
    # QuickTime also by a leading moov/mdat/wide/free atom (older files have no ftyp).
    Kind("mp4", "video", ("mp4", "m4v"), ("mp4",), "video/mp4", "MP4 video",
         brands=(b"isom", b"iso2", b"iso4", b"iso5", b"iso6", b"mp41", b"mp42", b"avc1",
                 b"M4V ", b"dash")),
    Kind("mov", "video", ("mov", "qt"), ("mov",), "video/quicktime", "QuickTime video",
         brands=(b"qt  ",)),
    # Matroska and WebM share the EBML signature; the EBML header's DocType, read in the
    # sandbox, says which one the output is (engine/media.py).
    Kind("mkv", "video", ("mkv", "mka", "mk3d", "webm"), ("mkv", "webm"), "video/x-matroska",
         "Matroska/WebM video", magic=((0, b"\x1a\x45\xdf\xa3"),)),
    Kind("avi", "video", ("avi",), ("avi",), "video/x-msvideo", "AVI video",
         magic=((0, b"RIFF"), (8, b"AVI "))),
)}

# Second signatures of kinds whose magic has two spellings.
EXTRA_MAGIC: dict[str, tuple[tuple[tuple[int, bytes], ...], ...]] = {
    "gif": (((0, b"GIF89a"),),),
    "tiff": (((0, b"MM\x00*"),),),
    "jxl": (((0, b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a"),),),  # the ISO-box container
    "jp2": (((0, b"\xff\x4f\xff\x51"),),),  # a raw codestream: SOC then SIZ
    "wri": (((0, WRITE_SIGNATURES[1]), (4, b"\x00\xab")),),  # Write 3.1 with OLE objects
    "wk1": (((0, b"\x00\x00\x02\x00\x04\x04"),),),  # WKS: 1-2-3 release 1A
    # MPEG-1/2 layer III frame syncs (no ID3 tag first); ADTS AAC (0xFFF1/0xFFF9) is not MP3.
    "mp3": (((0, b"\xff\xfb"),), ((0, b"\xff\xfa"),), ((0, b"\xff\xf3"),),
            ((0, b"\xff\xf2"),), ((0, b"\xff\xe3"),)),
    "aiff": (((0, b"FORM"), (8, b"AIFC")),),
    "mov": (((4, b"moov"),), ((4, b"mdat"),), ((4, b"wide"),), ((4, b"free"),)),
    "rar": (((0, b"Rar!\x1a\x07\x01\x00"),),),  # RAR5
    "ico": (((0, b"\x00\x00\x02\x00"), (5, b"\x00")),),  # CUR
    "vtt": (((0, b"\xef\xbb\xbfWEBVTT"),),),  # with a UTF-8 byte-order mark
    "ics": (((0, b"\xef\xbb\xbfBEGIN:VCALENDAR"),),),
    "vcf": (((0, b"\xef\xbb\xbfBEGIN:VCARD"),),),
    # A WMF without the placeable header: memory or disk type, 9-word header, version 3 or 1.
    "wmf": (((0, b"\x01\x00\x09\x00\x00\x03"),), ((0, b"\x02\x00\x09\x00\x00\x03"),),
            ((0, b"\x01\x00\x09\x00\x00\x01"),)),
    "pict": tuple(((522, version),) for version in PICT_VERSIONS),
    "dib": (((0, b"\x6c\x00\x00\x00"), (12, b"\x01\x00")),  # BITMAPV4HEADER
            ((0, b"\x7c\x00\x00\x00"), (12, b"\x01\x00"))),  # BITMAPV5HEADER
}

# `ftyp` brands that only say "some HEIF file" (the codec is named by another brand, if any):
# alone, they name this kind.
GENERIC_HEIF_BRANDS = (b"mif1", b"msf1")
GENERIC_HEIF_KIND = "heic"
# An ISO media file as produced starts with a 32-bit box size (under 16 MB), then `ftyp`.
_ISO_SIZE, _FTYP = (b"\x00\x00\x00",), ((4, b"ftyp"),)

_V = "sanitas.engine.verify:"  # the verifiers that re-open every output (engine/verify.py)
_IMAGE = _V + "image"
_MEDIA = "sanitas.engine.media:verify"  # ffprobe in the sandbox (engine/media.py)
OUTPUTS: dict[str, Output] = {o.extension: o for o in (
    Output("pdf", (b"%PDF-",), "application/pdf", verify=_V + "pdf"),
    Output("jpg", (b"\xff\xd8\xff",), "image/jpeg", verify=_IMAGE),
    Output("png", (b"\x89PNG\r\n\x1a\n",), "image/png", verify=_IMAGE),
    Output("gif", (b"GIF87a", b"GIF89a"), "image/gif", verify=_IMAGE),
    Output("webp", (b"RIFF",), "image/webp", verify=_IMAGE),
    Output("tiff", (b"II*\x00", b"MM\x00*"), "image/tiff", verify=_IMAGE),
    Output("bmp", (b"BM",), "image/bmp", verify=_IMAGE),
    Output("avif", _ISO_SIZE, "image/avif", also=_FTYP, verify=_IMAGE),
    Output("jxl", (b"\xff\x0a", b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a"), "image/jxl",
           verify=_IMAGE),
    Output("svg", (), "image/svg+xml", verify=_V + "svg"),
    Output("txt", (), "text/plain", verify=_V + "text"),
    Output("csv", (), "text/csv", verify=_V + "text"),
    Output("html", (), "text/html", verify=_V + "text"),
    Output("xml", (), "application/xml", verify=_V + "xml"),
    Output("json", (), "application/json", verify=_V + "json"),
    Output("md", (), "text/markdown", verify="sanitas.engine.markdown:verify"),
    Output("yaml", (), "application/yaml", verify="sanitas.engine.structured_text:verify_yaml"),
    Output("toml", (), "application/toml", verify="sanitas.engine.structured_text:verify_toml"),
    Output("srt", (), "application/x-subrip", verify="sanitas.engine.subtitles:verify"),
    Output("vtt", (), "text/vtt", verify="sanitas.engine.subtitles:verify"),
    Output("ics", (), "text/calendar", verify="sanitas.engine.vcalendar:verify"),
    Output("vcf", (), "text/vcard", verify="sanitas.engine.vcalendar:verify"),
    Output("eml", (), "message/rfc822", verify="sanitas.engine.mail:verify"),
    Output("zip", (b"PK\x03\x04", b"PK\x05\x06"), "application/zip",
           verify=_V + "zip_archive"),
    Output("epub", _PK, "application/epub+zip", verify=_V + "epub"),
    *(Output(k.extensions[0], _PK, k.media_type, verify=_V + k.family) for k in KINDS.values()
      if k.family in ("ooxml", "odf") and k.outputs == (k.extensions[0],)),
    # Audio and video: re-probed by ffprobe in engine/media.py (streams, durations, tags) as
    # they are made; the verifier re-opens them once more with their own demuxer.
    Output("mp3", (b"\xff\xfb", b"\xff\xfa", b"\xff\xf3", b"\xff\xf2", b"\xff\xe3",
                   b"ID3"), "audio/mpeg", verify=_MEDIA),
    Output("flac", (b"fLaC",), "audio/flac", verify=_MEDIA),
    Output("ogg", (b"OggS",), "audio/ogg", verify=_MEDIA),
    Output("opus", (b"OggS",), "audio/ogg; codecs=opus", verify=_MEDIA),
    Output("wav", (b"RIFF",), "audio/wav", also=((8, b"WAVE"),), verify=_MEDIA),
    Output("aiff", (b"FORM",), "audio/aiff", verify=_MEDIA),
    Output("m4a", _ISO_SIZE, "audio/mp4", also=_FTYP, verify=_MEDIA),
    Output("mp4", _ISO_SIZE, "video/mp4", also=_FTYP, verify=_MEDIA),
    Output("mov", _ISO_SIZE, "video/quicktime", also=_FTYP, verify=_MEDIA),
    Output("mkv", (b"\x1a\x45\xdf\xa3",), "video/x-matroska", verify=_MEDIA),
    Output("webm", (b"\x1a\x45\xdf\xa3",), "video/webm", verify=_MEDIA),
    Output("avi", (b"RIFF",), "video/x-msvideo", also=((8, b"AVI "),), verify=_MEDIA),
)}


def kind(name: str) -> Kind:
    return KINDS[name]


def family_of(kind_name: str) -> Family:
    return FAMILIES[KINDS[kind_name].family]


def advanced_of(kind_name: str) -> Advanced:
    """What advanced mode does with `kind_name`: the kind's own way, else its family's."""
    found = KINDS[kind_name]
    if found.advanced:
        return found.advanced
    return Advanced.SHEET_VALUES if kind_name in SPREADSHEET_KINDS \
        else FAMILIES[found.family].advanced


def allowed_outputs(kind_name: str | None, mode: Mode) -> frozenset[str]:
    """The output extensions a job on `kind_name` may produce in `mode`: its family's basic
    outputs, plus PDF where advanced mode rebuilds from pixels. An archive may only produce a
    ZIP; an unknown kind nothing."""
    found = KINDS.get(kind_name or "")
    if found is None:
        return frozenset()
    outputs = set(found.outputs)
    advanced = advanced_of(found.name)
    if mode == Mode.ADVANCED and advanced == Advanced.SHEET_VALUES:
        outputs = {"xlsx"}  # a new workbook of the values (sheet_values)
    elif mode == Mode.ADVANCED and advanced != Advanced.SAME:
        outputs = {"pdf"}
    return frozenset(outputs)


def output_extensions() -> frozenset[str]:
    """Every extension any job may produce."""
    return frozenset(OUTPUTS)


def kinds_in(container: str) -> frozenset[str]:
    """The kinds whose structure inside a `container` ("zip", "ole") decides them."""
    return frozenset(k.name for k in KINDS.values() if k.container == container)


# The lookups below are derived once: the tables are fixed, and detection (every upload's sniff
# in the API process, every job in the sandbox) asks them each time.
@cache
def signature_kinds() -> tuple[tuple[str, tuple[tuple[int, bytes], ...]], ...]:
    """(kind, signature) for every kind a leading signature identifies by itself."""
    found = [(k.name, k.magic) for k in KINDS.values() if k.magic]
    found += [(name, sig) for name, sigs in EXTRA_MAGIC.items() for sig in sigs]
    return tuple(found)


def matches(head: bytes, signature: tuple[tuple[int, bytes], ...]) -> bool:
    return all(head[offset:offset + len(part)] == part for offset, part in signature)


@cache
def by_brand() -> Mapping[bytes, str]:
    """The kind each specific ISO media (`ftyp`) brand names."""
    return MappingProxyType({brand: k.name for k in KINDS.values() for brand in k.brands})


@cache
def by_main_type(family: str) -> Mapping[str, str]:
    """The kind each main-part content type (OOXML) or mimetype (OpenDocument) names."""
    return MappingProxyType({k.main_type: k.name for k in KINDS.values()
                             if k.family == family and k.main_type})


def supported_extensions() -> list[str]:
    """The file name extensions the upload screen lists as accepted."""
    return sorted({ext for k in KINDS.values() for ext in k.extensions})


def preload_modules(office: bool) -> tuple[str, ...]:
    """Handler modules a sandbox child imports while it waits for a job."""
    return tuple(sorted({f.module for f in FAMILIES.values()
                         if (f.office if office else f.preload)}))


def idle_modules() -> tuple[str, ...]:
    """What a sandbox child imports only while it waits with no job to do, a module at a time:
    the handlers `preload_modules` leaves out (PDF: its libraries are the heaviest import) and
    the pixel rebuild. Office handlers are not among them: office files go to office children,
    which preload them."""
    return (*sorted({f.module for f in FAMILIES.values() if not f.preload and not f.office}),
            "sanitas.engine.raster")


def office_family(kind_name: str) -> bool:
    found = KINDS.get(kind_name)
    return found is not None and FAMILIES[found.family].office


def libreoffice_expected(kind_name: str, mode: Mode) -> bool:
    """Whether a job on `kind_name` (an office family's) will most likely run LibreOffice:
    always for the families that convert, in advanced mode for those it renders. A guess from
    the upload's sniff that only decides which warm sandbox takes the job."""
    found = KINDS.get(kind_name)
    if found is None:
        return True
    family = FAMILIES[found.family]
    if not family.basic_without_libreoffice:
        return family.office
    advanced = advanced_of(found.name)
    if mode != Mode.ADVANCED or advanced == Advanced.SAME:
        return False
    if advanced == Advanced.SHEET_VALUES:
        return found.outputs[0] != "xlsx"  # an OpenDocument sheet becomes .xlsx by LibreOffice
    return True


def check_registry() -> None:
    """Raise AssertionError when the table contradicts itself (run by the tests)."""
    for k in KINDS.values():
        assert k.family in FAMILIES, k
        assert k.outputs and all(o in OUTPUTS for o in k.outputs), k
        assert k.extensions, k
        assert not (k.magic and k.brands), k
    assert KINDS[GENERIC_HEIF_KIND].brands
    for f in FAMILIES.values():
        assert callable(f.sanitizer()), f
    for o in OUTPUTS.values():  # every output is re-opened before it is accepted
        assert o.verify, f"output {o.extension} has no verifier (Output.verify)"
        assert callable(o.verifier()), o
