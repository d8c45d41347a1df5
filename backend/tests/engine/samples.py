"""One small, clean, generated sample per kind of the format registry (`sanitas.engine.formats`).

`SAMPLES[kind](folder)` writes the sample and returns its path. Kinds that only LibreOffice
writes here (legacy Office, PowerPoint) are converted from generated OpenDocument files by one
soffice run (`office_originals`); the OOXML templates, macro-enabled and slideshow kinds are
their base document with the main part's content type changed, which is what Office itself
changes between them.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

from sanitas.engine import formats
from tests.engine import corpus, corpus_office
from tests.engine.archive_corpus import ARCHIVE_SAMPLES
from tests.engine.breadth_corpus import BREADTH_SAMPLES
from tests.engine.legacy_corpus import LEGACY_BUILT_SAMPLES
from tests.engine.render_office import convert_many
from tests.engine.visio_corpus import VISIO_SAMPLES

_W = "application/vnd.openxmlformats-officedocument.wordprocessingml"
_S = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_P = "application/vnd.openxmlformats-officedocument.presentationml"


LEGACY_FILES = Path(__file__).parent / "files" / "legacy"


def _legacy(folder: Path, name: str) -> Path:
    return _write(folder, f"sample{Path(name).suffix}", (LEGACY_FILES / name).read_bytes())


def _write(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def with_main_type(package: bytes, main_part: str, content_type: str) -> bytes:
    """The OOXML `package` with its main part declared as `content_type`."""
    source = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "[Content_Types].xml":
                text = data.decode()
                start = text.index(f'PartName="/{main_part}"')
                at = text.index('ContentType="', start) + len('ContentType="')
                end = text.index('"', at)
                data = (text[:at] + content_type + text[end:]).encode()
            target.writestr(info, data)
    return out.getvalue()


def _image(kind: str, pillow_format: str, **params) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        buffer = io.BytesIO()
        corpus.picture().save(buffer, pillow_format, **params)
        return _write(folder, f"sample.{formats.kind(kind).extensions[0]}", buffer.getvalue())
    return make


def _modern_image(kind: str, pillow_format: str, **params) -> Callable[[Path], Path]:
    """HEIC, AVIF, JPEG XL: written with the plugin the engine reads them with."""
    def make(folder: Path) -> Path:
        from sanitas.engine import image

        image.load_plugin(kind)
        return _image(kind, pillow_format, **params)(folder)
    return make


def _docx(kind: str, main_type: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        data = corpus_office.docx(corpus_office._p(f"A {kind} sample."), main_ct=main_type)
        return _write(folder, f"sample.{kind}", data)
    return make


def _xlsx(kind: str, main_type: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        sheet = ("Data", f"{corpus_office.R}/worksheet", "worksheets/sheet1.xml",
                 corpus_office._sheet(corpus_office.CLEAN_ROWS))
        return _write(folder, f"sample.{kind}", corpus_office.xlsx([sheet], main_ct=main_type))
    return make


def _odf(kind: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        body = {"odt": "<office:text><text:p>ODF sample</text:p></office:text>",
                "ods": "<office:spreadsheet><table:table table:name='S'><table:table-row>"
                       "<table:table-cell><text:p>1</text:p></table:table-cell>"
                       "</table:table-row></table:table></office:spreadsheet>",
                "odp": "<office:presentation><draw:page draw:name='p1'/></office:presentation>",
                "odg": "<office:drawing><draw:page draw:name='p1'/></office:drawing>"}
        base = {"ott": "odt", "ots": "ods", "otp": "odp", "otg": "odg"}.get(kind, kind)
        mimetype = formats.kind(kind).main_type
        return _write(folder, f"sample.{kind}", corpus_office.odf(mimetype, body[base]))
    return make


def _xlsb(folder: Path) -> Path:
    # No tool here writes real BIFF12: a package shell LibreOffice's lenient import reads as an
    # empty workbook (enough to walk the kind; the macro case is in test_office_ooxml).
    parts = {
        "[Content_Types].xml": corpus_office._types(corpus_office.CT_BASE, {
            "/xl/workbook.bin": "application/vnd.ms-excel.sheet.binary.macroEnabled.main"}),
        "_rels/.rels": corpus_office._rels([("rId1", f"{corpus_office.R}/officeDocument",
                                             "xl/workbook.bin")]),
        "xl/workbook.bin": b"\x83\x01\x00 not really BIFF12",
    }
    return _write(folder, "sample.xlsb", corpus_office._zip(parts))


def _pdf(folder: Path) -> Path:
    return corpus.save_pdf(corpus.clean_pdf(pages=1), folder / "sample.pdf")


EPUB_OPF_NS = "http://www.idpf.org/2007/opf"
XHTML = "http://www.w3.org/1999/xhtml"


def epub_bytes(files: dict[str, bytes | str], items: list[tuple[str, str, str, str]],
               spine: list[str], *, metadata: str = "", package_attrs: str = "",
               extra: dict[str, bytes | str] | None = None, mimetype_first: bool = True,
               opf_path: str = "OEBPS/content.opf", spine_attrs: str = "") -> bytes:
    """An EPUB package: `files` are the resources (paths relative to the OPF's folder),
    `items` the manifest (id, href, media type, properties), `spine` the reading order (ids),
    `extra` further members by their full name (META-INF files, strays)."""
    folder = opf_path.rpartition("/")[0]
    manifest = "".join(
        f'<item id="{i}" href="{h}" media-type="{t}"' + (f' properties="{p}"' if p else "")
        + "/>" for i, h, t, p in items)
    opf = (f'<?xml version="1.0" encoding="UTF-8"?><package xmlns="{EPUB_OPF_NS}" version="3.0" '
           f'unique-identifier="uid" {package_attrs}><metadata '
           'xmlns:dc="http://purl.org/dc/elements/1.1/">'
           '<dc:identifier id="uid">urn:uuid:0f6c2a7e-1111-4222-8333-444455556666</dc:identifier>'
           '<dc:title>A Sample Book</dc:title><dc:language>en</dc:language>'
           f'{metadata}</metadata><manifest>{manifest}</manifest><spine {spine_attrs}>'
           + "".join(f'<itemref idref="{i}"/>' for i in spine) + "</spine></package>")
    container = ('<?xml version="1.0"?><container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 f'<rootfile full-path="{opf_path}" media-type="application/oebps-package+xml"/>'
                 '</rootfiles></container>')
    members: list[tuple[str, bytes | str]] = [
        (CONTAINER, container), (opf_path, opf),
        *((f"{folder}/{name}" if folder else name, data) for name, data in files.items()),
        *(extra or {}).items()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        if mimetype_first:
            zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip",
                        compress_type=zipfile.ZIP_STORED)
        for name, data in members:
            zf.writestr(name, data.encode() if isinstance(data, str) else data)
        if not mimetype_first:
            zf.writestr("mimetype", "application/epub+zip")
    return buffer.getvalue()


CONTAINER = "META-INF/container.xml"


def xhtml(body: str, title: str = "Chapter", head: str = "") -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?><html xmlns="{XHTML}" '
            'xmlns:epub="http://www.idpf.org/2007/ops">'
            f"<head><title>{title}</title>{head}</head><body>{body}</body></html>")


def clean_epub() -> bytes:
    """A small, clean EPUB 3 book: navigation, two chapters, a stylesheet, a cover picture."""
    picture = io.BytesIO()
    corpus.picture().save(picture, "PNG")
    nav = xhtml('<nav epub:type="toc"><ol><li><a href="ch1.xhtml">One</a></li>'
                '<li><a href="ch2.xhtml">Two</a></li></ol></nav>', "Contents")
    files = {
        "nav.xhtml": nav,
        "ch1.xhtml": xhtml('<h1>Chapter One</h1><p>It was a <em>clean</em> book.</p>'
                           '<p><img src="images/cover.png" alt="cover"/></p>',
                           head='<link rel="stylesheet" type="text/css" href="style.css"/>'),
        "ch2.xhtml": xhtml('<h1>Chapter Two</h1><p>See <a href="ch1.xhtml">chapter one'
                           "</a>.</p>"),
        "style.css": "body { font-family: serif; } h1 { color: #333; }",
        "images/cover.png": picture.getvalue(),
    }
    items = [("nav", "nav.xhtml", "application/xhtml+xml", "nav"),
             ("ch1", "ch1.xhtml", "application/xhtml+xml", ""),
             ("ch2", "ch2.xhtml", "application/xhtml+xml", ""),
             ("css", "style.css", "text/css", ""),
             ("cover", "images/cover.png", "image/png", "cover-image")]
    return epub_bytes(files, items, ["ch1", "ch2"],
                      metadata='<meta property="dcterms:modified">2024-05-01T10:00:00Z</meta>')


MATHML = "http://www.w3.org/1998/Math/MathML"
FORMULA_CONTENT = (
    f'<?xml version="1.0" encoding="UTF-8"?><math xmlns="{MATHML}" display="block">'
    "<semantics><mrow><msup><mi>a</mi><mn>2</mn></msup><mo>+</mo><msup><mi>b</mi><mn>2</mn>"
    "</msup><mo>=</mo><msup><mi>c</mi><mn>2</mn></msup></mrow>"
    '<annotation encoding="StarMath 5.0">a^2 + b^2 = c^2</annotation></semantics></math>')


def odf_formula(content: str = FORMULA_CONTENT) -> bytes:
    """An OpenDocument formula as LibreOffice Math writes it: content.xml is MathML."""
    mimetype = formats.kind("odf").main_type
    settings = ('<?xml version="1.0" encoding="UTF-8"?><office:document-settings xmlns:office='
                '"urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:version="1.2">'
                "<office:settings/></office:document-settings>")
    return corpus_office.odf(mimetype, "", files={"content.xml": content,
                                                   "settings.xml": settings},
                             manifest_extra={"settings.xml": "text/xml"})


XML_SAMPLE = ('<?xml version="1.0" encoding="UTF-8"?>\n<catalog><book id="1"><title>XML sample'
              "</title><price>1.50</price></book></catalog>\n")


SAMPLES: dict[str, Callable[[Path], Path]] = {
    "pdf": _pdf,
    "jpeg": _image("jpeg", "JPEG"),
    "png": _image("png", "PNG"),
    "gif": _image("gif", "GIF"),
    "webp": _image("webp", "WEBP"),
    "tiff": _image("tiff", "TIFF"),
    "bmp": _image("bmp", "BMP"),
    "heic": _modern_image("heic", "HEIF"),
    "avif": _modern_image("avif", "AVIF"),
    "jxl": _modern_image("jxl", "JXL"),
    "jp2": _image("jp2", "JPEG2000", irreversible=False),
    "ico": _image("ico", "ICO", sizes=[(16, 16), (48, 48)]),
    "svg": lambda folder: _write(folder, "sample.svg", (
        '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20">'
        '<rect width="10" height="10" fill="red"/></svg>')),
    "txt": lambda folder: _write(folder, "sample.txt", "Plain text sample.\n"),
    "xml": lambda folder: _write(folder, "sample.xml", XML_SAMPLE),
    "eml": lambda folder: _write(folder, "sample.eml", (
        "From: Alice <alice@example.org>\r\nTo: bob@example.com\r\nSubject: Sample\r\n"
        "Date: Mon, 1 Jan 2024 10:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\nE-mail sample.\r\n")),
    "json": lambda folder: _write(folder, "sample.json", '{"name": "JSON sample", "n": [1, 2]}\n'),
    "epub": lambda folder: _write(folder, "sample.epub", clean_epub()),
    "odf": lambda folder: _write(folder, "sample.odf", odf_formula()),
    "csv": lambda folder: _write(folder, "sample.csv", "name,value\nalpha,1\nbeta,2\n"),
    "html": lambda folder: _write(folder, "sample.html",
                                  "<!doctype html><html><body><p>HTML sample</p></body></html>"),
    "zip": lambda folder: _write(folder, "sample.zip", corpus.zip_bytes(
        {"notes.txt": b"A text member.\n", "folder/table.csv": b"a,b\n1,2\n"})),
    "docx": _docx("docx", f"{_W}.document.main+xml"),
    "docm": _docx("docm", "application/vnd.ms-word.document.macroEnabled.main+xml"),
    "dotx": _docx("dotx", f"{_W}.template.main+xml"),
    "dotm": _docx("dotm", "application/vnd.ms-word.template.macroEnabledTemplate.main+xml"),
    "xlsx": _xlsx("xlsx", f"{_S}.sheet.main+xml"),
    "xlsm": _xlsx("xlsm", "application/vnd.ms-excel.sheet.macroEnabled.main+xml"),
    "xltx": _xlsx("xltx", f"{_S}.template.main+xml"),
    "xlsb": _xlsb,
    "xltm": _xlsx("xltm", "application/vnd.ms-excel.template.macroEnabled.main+xml"),
    **{kind: _odf(kind) for kind in ("odt", "ott", "ods", "ots", "odp", "otp", "odg", "otg")},
    **ARCHIVE_SAMPLES,  # tar, gzip, bzip2, xz, 7z, rar
    **BREADTH_SAMPLES,  # msg, tnef, xps, oxps, wmf, emf, markdown, yaml, toml, srt, vtt
    **VISIO_SAMPLES,  # vsdx, vsdm, vstx, vstm, vssx, vssm
    # No tool here writes these: real files from Apache POI's test data (files/legacy/).
    "wri": lambda folder: _legacy(folder, "poi-MSWriteOld.wri"),
    "pub": lambda folder: _legacy(folder, "poi-51318.pub"),
    "vsd": lambda folder: _legacy(folder, "poi-44501.vsd"),
    # Nor these, of which no real sample is at hand: built byte by byte (legacy_corpus.py).
    **LEGACY_BUILT_SAMPLES,  # word2, wpd, wps, wk1, wk3, wq1, pict, dib
}

# Kinds only LibreOffice writes here: (kind, the generated source, the --convert-to filter).
_CONVERTED = {
    "pptx": ("odp", "pptx"),
    "doc": ("odt", "doc"),
    "xls": ("ods", "xls"),
    "ppt": ("odp", "ppt"),
    "rtf": ("odt", "rtf"),
}
# PowerPoint kinds made from the converted pptx by changing the main part's content type.
_PRESENTATION_TYPES = {
    "pptm": "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
    "potx": f"{_P}.template.main+xml",
    "potm": "application/vnd.ms-powerpoint.template.macroEnabled.main+xml",
    "ppsx": f"{_P}.slideshow.main+xml",
    "ppsm": "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
}


def office_originals(folder: Path) -> dict[str, Path]:
    """Samples of the kinds LibreOffice writes, in one soffice run per target format."""
    folder.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}
    for kind, (source_kind, target) in _CONVERTED.items():
        source_dir = folder / f"src-{kind}"
        source_dir.mkdir()
        source = SAMPLES[source_kind](source_dir)
        rich = {"odt": corpus_office.clean_odt, "odp": corpus_office.clean_odp}.get(source_kind)
        if rich is not None:
            source.write_bytes(rich())
        converted = convert_many([source], target, folder / f"out-{kind}", folder / "lo")
        assert source in converted, f"LibreOffice could not write the {kind} sample"
        made[kind] = converted[source].rename(folder / f"sample.{kind}")
    pptx = made["pptx"].read_bytes()
    for kind, content_type in _PRESENTATION_TYPES.items():
        made[kind] = _write(folder, f"sample.{kind}",
                            with_main_type(pptx, "ppt/presentation.xml", content_type))
    return made


def all_samples(folder: Path) -> dict[str, Path]:
    """A sample of every kind the registry declares (office originals included)."""
    folder.mkdir(parents=True, exist_ok=True)
    made = office_originals(folder / "office")
    from tests.engine.media_corpus import media_samples

    made.update(media_samples(folder / "media"))  # audio and video, made by ffmpeg
    for kind, make in SAMPLES.items():
        kind_dir = folder / kind
        kind_dir.mkdir()
        made[kind] = make(kind_dir)
    missing = set(formats.KINDS) - set(made)
    assert not missing, f"no sample generator for {sorted(missing)}"
    return made
