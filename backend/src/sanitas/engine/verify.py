"""The final check: every output is re-opened as a file of its format before it is accepted.

A sanitizer rebuilds a file; a bug in it, or in a writer it uses, or an input that leads a
writer astray, could still leave something a reader cannot open. So before an output is moved
into place it is read back by a parser that did not write it, and refused when it does not
open cleanly (`RejectionCode.INVALID_OUTPUT`): never an invalid file out.

The format registry names each output format's verifier (`formats.Output.verify`, a
"module:function" called as `verifier(path, output)`); a verifier raises (anything) when the
file is not a valid file of its format. `output` runs it and turns a failure into the refusal.

- pdf: qpdf opens it with no recovery and resolves every object without a warning, and PDFium
  (independent of qpdf) opens it without rebuilding its cross-reference table and agrees on
  the page count (`pdf.reopen`). The PDF sanitizers already read their output back that way,
  with the page count they wrote, inside the handler (`pdf.check_output`): a file that passed
  there unchanged is not read a second time.
- raster images: Pillow, restricted to the decoders of the output's media type and with the
  engine's decompression-bomb limits, opens and `verify()`s the file, then decodes its first
  frame on a fresh open; a JPEG's decode is replaced by a walk of its whole structure, SOI to
  EOI (`_jpeg_structure`: a decode would cost up to the job's own time and see no more).
- svg: lxml parses it (no DTD, no entities, no network) and its root is an SVG `svg`.
- txt, csv, html: strict UTF-8 with no NUL character; xml: the same, and lxml parses it (no
  DTD).
- zip: the central directory opens, every member decompresses with a good CRC, no member name
  is unsafe or repeated, no member is encrypted.
- OOXML (docx, xlsx, pptx, vsdx and their templates, slideshow and stencil): the ZIP checks, then
  `[Content_Types].xml`, the package relationships and the main part parse, and the main
  part's content type is the one the registry declares for the kind; every other XML part
  (typed XML by its override or its extension's default) and relationship part parses too.
- OpenDocument: the ZIP checks, the first member is `mimetype`, stored, naming the kind the
  registry declares; `content.xml` parses.
- epub: the ZIP checks, the first member is `mimetype`, stored, `application/epub+zip`; the
  container and the package document it names parse.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import posixpath
import warnings
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine.opc import VISIO_DOCUMENT_REL
from sanitas.engine.report import Rejected, RejectionCode

if TYPE_CHECKING:
    from lxml import etree

    from sanitas.engine.formats import Output

log = logging.getLogger(__name__)

MESSAGE = ("The sanitized file did not pass the final check (it could not be re-opened as a "
           "valid {label} file); it was not released.")
CHUNK = 1024 * 1024


class Invalid(Exception):
    """The file is not a valid file of its format; the message says what is wrong."""


def output(path: Path, extension: str) -> None:
    """Re-open `path` as a file of the output format `extension` (a key of `formats.OUTPUTS`);
    `Rejected` (INVALID_OUTPUT) when it does not open cleanly. The failure is logged."""
    from sanitas.engine import formats

    spec = formats.OUTPUTS.get(extension)
    label = extension.upper() or "output"
    try:
        if spec is None:
            raise Invalid(f"no output format {extension!r} is declared")
        spec.verifier()(Path(path), spec)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a reader meets, the file is refused
        log.warning("the sanitized %s output failed its final check: %s: %.300s", label,
                    type(exc).__name__, exc)
        raise Rejected(MESSAGE.format(label=label), RejectionCode.INVALID_OUTPUT) from None


# --- PDF -------------------------------------------------------------------------------------

def pdf(path: Path, spec: Output) -> None:
    from sanitas.engine import pdf as pdf_family

    pdf_family.verify_output(path)


# --- raster images ---------------------------------------------------------------------------

# Pillow's decoders for an output's media type (`Image.MIME` read backwards, for the types a
# plugin names differently or a JPEG that Pillow calls MPO).
_PILLOW_FORMATS = {
    "image/jpeg": ("JPEG", "MPO"), "image/png": ("PNG",), "image/gif": ("GIF",),
    "image/webp": ("WEBP",), "image/tiff": ("TIFF",), "image/bmp": ("BMP",),
    "image/heic": ("HEIF",), "image/heif": ("HEIF",), "image/avif": ("AVIF", "HEIF"),
    "image/jxl": ("JXL",),
}


def _pillow_formats(media_type: str) -> list[str]:
    from PIL import Image

    known = _PILLOW_FORMATS.get(media_type)
    if known is None:
        Image.init()
        known = tuple(name for name, mime in Image.MIME.items() if mime == media_type)
    Image.preinit()  # JPEG, PNG, GIF, BMP: without loading every plugin
    available = [name for name in known if name in Image.OPEN]
    if not available:
        _load_plugin(media_type)
        Image.init()
        available = [name for name in known if name in Image.OPEN]
    if not available:
        raise Invalid(f"no decoder for {media_type} is installed")
    return available


def _load_plugin(media_type: str) -> None:
    """The plugins the image family loads on demand (HEIF, JPEG XL); it already has when it
    wrote the file in this process."""
    from sanitas.engine import formats
    from sanitas.engine import image as image_family

    load = getattr(image_family, "load_plugin", None)
    for found in formats.KINDS.values():
        if found.family == "image" and found.media_type == media_type and load is not None:
            with contextlib.suppress(Rejected):  # no decoder: `_pillow_formats` says so
                load(found.name)


def image(path: Path, spec: Output) -> None:
    from PIL import Image, ImageFile

    from sanitas.engine import image as image_family  # the bomb limits (and its plugins)

    names = _pillow_formats(spec.media_type)
    if ImageFile.LOAD_TRUNCATED_IMAGES:
        raise Invalid("Pillow is set to accept truncated images")
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with Image.open(path, formats=names) as picture:
            width, height = picture.size
            if not (width > 0 and height > 0 and width * height <= image_family.MAX_PIXELS):
                raise Invalid(f"impossible size {width}x{height}")
            picture.verify()
            jpeg = picture.format in ("JPEG", "MPO")
        if jpeg:
            _jpeg_structure(path)
            return
        with Image.open(path, formats=names) as picture:
            picture.load()  # the first frame, decoded in full


def _jpeg_structure(path: Path) -> None:
    """Walk a JPEG from SOI to EOI: every marker segment within the file, every scan's
    entropy-coded data read to the marker that ends it, EOI the last bytes. A JPEG the engine
    wrote was encoded by libjpeg from pixels; what can still go wrong is the file (cut short,
    something else written), which this sees. Decoding it again would add little (libjpeg
    only warns about bad entropy-coded data, and wrote the tables itself) and would cost 30-100%
    of the job's time for a large photo (12 MP: ~25% of a bare decode + encode at 1/8 scale,
    ~70% in full; the walk ~4%)."""
    import mmap

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        if data[:2] != b"\xff\xd8":
            raise Invalid("no start-of-image marker")
        at = 2
        scans = 0
        while True:
            if at + 2 > size or data[at] != 0xFF:
                raise Invalid(f"no marker at byte {at}")
            while at + 2 <= size and data[at + 1] == 0xFF:  # fill bytes before a marker
                at += 1
            if at + 2 > size:
                raise Invalid("cut short before a marker")
            marker = data[at + 1]
            if marker == 0xD9:  # EOI
                if at + 2 != size:
                    raise Invalid(f"{size - at - 2} bytes after the end-of-image marker")
                if not scans:
                    raise Invalid("no image data")
                return
            if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # no length: TEM, a stray restart
                at += 2
                continue
            if at + 4 > size:
                raise Invalid("cut short in a marker")
            length = int.from_bytes(data[at + 2:at + 4], "big")
            if length < 2 or at + 2 + length > size:
                raise Invalid(f"segment {marker:#x} at byte {at} runs past the end")
            at += 2 + length
            if marker != 0xDA:  # SOS: the entropy-coded data follows
                continue
            scans += 1
            while True:
                found = data.find(b"\xff", at)
                if found < 0 or found + 1 >= size:
                    raise Invalid("cut short in the image data")
                following = data[found + 1]
                if following == 0x00 or 0xD0 <= following <= 0xD7:  # stuffed byte, restart
                    at = found + 2
                    continue
                at = found
                break


# --- text ------------------------------------------------------------------------------------

def text(path: Path, spec: Output) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            if b"\x00" in chunk:
                raise Invalid("a NUL character in a text file")
            decoder.decode(chunk)
    decoder.decode(b"", final=True)


# --- XML -------------------------------------------------------------------------------------

def _parse(data: bytes, where: str) -> etree._Element:
    from lxml import etree

    from sanitas.engine.xmlsafe import xml_parser

    parser = xml_parser(remove_pis=False, remove_comments=False)
    root = etree.fromstring(data, parser)
    if root is None:
        raise Invalid(f"{where} is empty")
    info = root.getroottree().docinfo
    if info.internalDTD is not None or info.doctype:
        raise Invalid(f"{where} declares a DTD")
    return root


def _local(element: etree._Element) -> str:
    tag = element.tag if isinstance(element.tag, str) else ""
    return tag.rsplit("}", 1)[-1]


def xml(path: Path, spec: Output) -> None:
    text(path, spec)
    _parse(path.read_bytes(), "the document")


def json(path: Path, spec: Output) -> None:
    from sanitas.engine.report import Rejected
    from sanitas.engine.structured_text import parse_json

    text(path, spec)
    data = path.read_bytes()
    if data.startswith(codecs.BOM_UTF8):
        raise Invalid("a byte order mark before the JSON")
    try:
        parse_json(data.decode("utf-8"))
    except Rejected as exc:
        raise Invalid(str(exc)) from None


def svg(path: Path, spec: Output) -> None:
    root = _parse(path.read_bytes(), "the drawing")
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        raise Invalid(f"the root element is {root.tag!r:.100}, not an SVG svg")


# --- ZIP and the packages built on it --------------------------------------------------------

def _open_zip(path: Path) -> zipfile.ZipFile:
    """The archive, once its members all decompress with good CRCs and are safely named."""
    from sanitas.engine.archive import unsafe_name_reason

    zf = zipfile.ZipFile(path)
    try:
        seen: set[str] = set()
        for info in zf.infolist():
            if info.flag_bits & 0x1:
                raise Invalid(f"member {info.filename!r:.100} is encrypted")
            reason = unsafe_name_reason(info)
            if reason:
                raise Invalid(f"member {info.filename!r:.100}: {reason}")
            key = posixpath.normpath(info.filename).lower()
            if key in seen and not info.is_dir():
                raise Invalid(f"member {info.filename!r:.100} is there twice")
            seen.add(key)
        bad = zf.testzip()
        if bad is not None:
            raise Invalid(f"member {bad!r:.100} is corrupt")
    except BaseException:
        zf.close()
        raise
    return zf


def zip_archive(path: Path, spec: Output) -> None:
    _open_zip(path).close()


def _main_type(extension: str) -> str:
    """What the registry says names the kind written as `extension` (main part content type
    or `mimetype`)."""
    from sanitas.engine import formats

    for found in formats.KINDS.values():
        if found.extensions[0] == extension and found.main_type:
            return found.main_type
    raise Invalid(f"the registry declares no main type for {extension}")


_CONTENT_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_PACKAGE_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def ooxml(path: Path, spec: Output) -> None:
    expected = _main_type(spec.extension)
    with _open_zip(path) as zf:
        types = _parse(zf.read("[Content_Types].xml"), "[Content_Types].xml")
        if types.tag != _CONTENT_TYPES + "Types":
            raise Invalid("[Content_Types].xml is not a content types list")
        rels = _parse(zf.read("_rels/.rels"), "_rels/.rels")
        targets = [r.get("Target", "") for r in rels.iter(_PACKAGE_RELS + "Relationship")
                   if (r.get("Type", "").endswith("/officeDocument")
                       or r.get("Type", "") == VISIO_DOCUMENT_REL)
                   and r.get("TargetMode", "Internal") == "Internal"]
        if len(targets) != 1:
            raise Invalid(f"{len(targets)} main document relationships")
        part = posixpath.normpath(targets[0].lstrip("/"))
        content_type = None
        for override in types.iter(_CONTENT_TYPES + "Override"):
            if override.get("PartName", "").lstrip("/").lower() == part.lower():
                content_type = override.get("ContentType", "")
        if content_type is None:
            extension = part.rsplit(".", 1)[-1].lower() if "." in part else ""
            for default in types.iter(_CONTENT_TYPES + "Default"):
                if default.get("Extension", "").lower() == extension:
                    content_type = default.get("ContentType", "")
        if (content_type or "").lower() != expected.lower():
            raise Invalid(f"the main part {part!r:.100} is {content_type!r:.120}, "
                          f"not {expected}")
        _parse(zf.read(part), part)
        _xml_parts_parse(zf, types, skip={"[content_types].xml", "_rels/.rels", part.lower()})


def _xml_parts_parse(zf: zipfile.ZipFile, types: etree._Element, skip: set[str]) -> None:
    """Every XML part of a package parses (an empty or broken one would make Office repair or
    refuse the document): the parts whose content type, by override or by the default of
    their extension, is XML, and every relationship part."""
    from sanitas.engine.xmlsafe import xml_problem

    overrides = {o.get("PartName", "").lstrip("/").lower(): o.get("ContentType", "").lower()
                 for o in types.iter(_CONTENT_TYPES + "Override")}
    defaults = {d.get("Extension", "").lower(): d.get("ContentType", "").lower()
                for d in types.iter(_CONTENT_TYPES + "Default")}
    for info in zf.infolist():
        name = info.filename.lower()
        if info.is_dir() or name in skip:
            continue
        extension = name.rsplit(".", 1)[-1] if "." in posixpath.basename(name) else ""
        content_type = overrides.get(name, defaults.get(extension, ""))
        if content_type.endswith("xml") or extension == "rels":
            problem = xml_problem(zf.read(info))  # no tree: a part's whole parse is not needed
            if problem is not None:
                raise Invalid(f"{info.filename[:100]}: {problem}")


def _stored_mimetype(zf: zipfile.ZipFile, expected: str) -> None:
    infos = zf.infolist()
    if not infos or infos[0].filename != "mimetype":
        raise Invalid("the first member is not mimetype")
    if infos[0].compress_type != zipfile.ZIP_STORED:
        raise Invalid("mimetype is compressed")
    found = zf.read(infos[0])
    if found != expected.encode("ascii"):
        raise Invalid(f"mimetype is {found[:120]!r}, not {expected}")


def odf(path: Path, spec: Output) -> None:
    with _open_zip(path) as zf:
        expected = _main_type(spec.extension)
        _stored_mimetype(zf, expected)
        root = _parse(zf.read("content.xml"), "content.xml")
        # A formula document's content is MathML: its content.xml is a MathML math element.
        formula = expected.endswith(".formula") and root.tag == f"{{{_MATHML}}}math"
        if _local(root) != "document-content" and not formula:
            raise Invalid(f"content.xml's root is {root.tag!r:.100}")


_MATHML = "http://www.w3.org/1998/Math/MathML"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"


def epub(path: Path, spec: Output) -> None:
    with _open_zip(path) as zf:
        _stored_mimetype(zf, "application/epub+zip")
        container = _parse(zf.read("META-INF/container.xml"), "META-INF/container.xml")
        rootfiles = [r.get("full-path", "") for r in container.iter(_CONTAINER + "rootfile")]
        if not rootfiles or not rootfiles[0]:
            raise Invalid("the container names no package document")
        package = _parse(zf.read(rootfiles[0]), rootfiles[0])
        if _local(package) != "package":
            raise Invalid(f"the package document's root is {package.tag!r:.100}")
