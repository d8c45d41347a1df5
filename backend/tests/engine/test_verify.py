"""The final check (engine/verify.py): every output format's verifier accepts a good file of
its format and refuses a damaged one, and `sanitize_file` never releases an output that does
not re-open (a handler made to write junk is refused with INVALID_OUTPUT)."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pikepdf
import pytest

from sanitas.engine import formats, media, sanitize_file, verify
from sanitas.engine.report import Rejected, RejectionCode
from tests.engine import media_corpus
from tests.engine.corpus import HOSTILE_SVG, clean_pdf, picture, save_pdf, zip_bytes
from tests.engine.corpus_office import odf as odf_package

CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b")
_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
_PR = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE_DOCUMENT = ("http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
                    "officeDocument")
_SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
        b'<rect width="5" height="5"/></svg>')


def clean_epub() -> bytes:
    """The smallest EPUB: mimetype (stored, first), the container, the package document."""
    container = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
                 'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" '
                 'media-type="application/oebps-package+xml"/></rootfiles></container>')
    package = ('<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/'
               'opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/'
               'dc/elements/1.1/"><dc:identifier id="id">urn:x</dc:identifier><dc:title>T'
               '</dc:title></metadata><manifest><item id="c" href="c.xhtml" media-type='
               '"application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine>'
               '</package>')
    chapter = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
               '<head><title>c</title></head><body><p>Hello</p></body></html>')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip",
                    compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OEBPS/book.opf", package)
        zf.writestr("OEBPS/c.xhtml", chapter)
    return buffer.getvalue()


def _main_type(extension: str) -> str:
    return next(k.main_type for k in formats.KINDS.values()
                if k.extensions[0] == extension and k.main_type)


def ooxml_package(main_type: str, main: bytes = b'<w:document xmlns:w="urn:x"/>',
                  types: bytes | None = None) -> bytes:
    """The smallest OOXML package: content types, package relationships, the main part."""
    types = types if types is not None else (
        f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{_CT}">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/word/main.xml" ContentType="{main_type}"/></Types>').encode()
    rels = (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PR}">'
            f'<Relationship Id="rId1" Type="{_OFFICE_DOCUMENT}" Target="word/main.xml"/>'
            '</Relationships>')
    return zip_bytes({"[Content_Types].xml": types, "_rels/.rels": rels.encode(),
                      "word/main.xml": main})


ODF_BODY = "<office:text><text:p>Hello</text:p></office:text>"
# Valid outputs of the text formats with a reader of their own (Markdown, YAML, TOML, subtitles,
# calendars and contact cards), as their families write them.
TEXT_SAMPLES = {
    "md": "# Grüße\n\nSome *text* and a [link](https://example.org).\n",
    "yaml": "name: Grüße\nlist:\n  - 1\n  - 2.5\n",
    "toml": 'name = "Grüße"\nlist = [1, 2.5]\n',
    "srt": "1\n00:00:01,000 --> 00:00:02,500\nGrüße\n\n2\n00:00:03,000 --> 00:00:04,000\nZwei\n",
    "vtt": "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nGrüße\n",
    "ics": ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Sanitas//Test//EN\r\nBEGIN:VEVENT\r\n"
            "UID:1@example.org\r\nDTSTAMP:20240101T100000Z\r\nDTSTART:20240102T100000Z\r\n"
            "SUMMARY:Grüße\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"),
    "vcf": "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Alice Grüße\r\nN:Grüße;Alice;;;\r\nEND:VCARD\r\n",
}


def good_file(extension: str, folder: Path) -> Path:
    """A valid file of every output format the registry declares (derived from the registry
    where a family has many formats, so a format added there is covered here)."""
    spec = formats.OUTPUTS[extension]
    path = folder / f"good.{extension}"
    family = {k.family for k in formats.KINDS.values() if k.extensions[0] == extension}
    if extension == "pdf":
        return save_pdf(clean_pdf(pages=2), path, object_streams=True)
    if spec.verify == "sanitas.engine.verify:image":
        names = verify._pillow_formats(spec.media_type)
        buffer = io.BytesIO()
        picture().save(buffer, names[0])
        path.write_bytes(buffer.getvalue())
    elif extension == "svg":
        path.write_bytes(_SVG)
    elif extension in ("txt", "csv", "html"):
        path.write_bytes("Grüße, 東京\nline,2\n".encode())
    elif extension == "xml":
        path.write_bytes('<?xml version="1.0" encoding="UTF-8"?><a><b>é</b></a>'.encode())
    elif extension == "json":
        path.write_bytes('{"name": "Grüße", "list": [1, 2.5, null]}\n'.encode())
    elif extension == "zip":
        path.write_bytes(zip_bytes({"a.txt": b"hello", "dir/b.txt": b"world" * 100}))
    elif extension == "epub":
        path.write_bytes(clean_epub())
    elif family == {"ooxml"}:
        path.write_bytes(ooxml_package(_main_type(extension)))
    elif family == {"odf"}:
        path.write_bytes(odf_package(_main_type(extension), ODF_BODY))
    elif extension == "eml":
        path.write_bytes(b"From: Alice <alice@example.org>\r\nTo: bob@example.com\r\n"
                         b"Subject: Sample\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n"
                         b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         b"\r\nE-mail sample.\r\n")
    elif extension in TEXT_SAMPLES:
        path.write_bytes(TEXT_SAMPLES[extension].encode())
    elif spec.verify == "sanitas.engine.media:verify":
        return _clean_media(extension, folder)
    else:
        raise AssertionError(f"no good sample for the output format {extension}: add one")
    return path


# Media containers that play from the front: a cut copy is still a valid (shorter) file ...
STREAMED_MEDIA = frozenset({"avi", "ogg", "opus", "wav"})
# ... unless its header declares the whole length (Xing, STREAMINFO, COMM, Matroska's Duration):
# the verifier demuxes the packets and refuses a copy whose packets end before that
LENGTH_FROM_HEADER = frozenset({"aiff", "flac", "mkv", "mp3", "webm"})


def _clean_media(extension: str, folder: Path) -> Path:
    """A media output as the engine writes it: a tagged sample of the kind, sanitized."""
    name = next(n for n, kind in media_corpus.KIND_OF.items()
                if formats.kind(kind).extensions[0] == extension
                or n.endswith(f".{extension}"))
    source = media_corpus.make(folder / "media", name)
    (folder / "clean").mkdir()
    result = sanitize_file(source, folder / "clean")
    assert result.status == "ok" and result.output_type == extension, result
    assert result.output is not None
    return Path(result.output)


def _refused(path: Path, extension: str) -> Rejected:
    with pytest.raises(Rejected) as refused:
        verify.output(path, extension)
    assert refused.value.code == RejectionCode.INVALID_OUTPUT
    reason = refused.value.reason
    assert f"valid {extension.upper()} file" in reason and not CLASS_NAME.search(reason)
    return refused.value


def test_every_output_format_has_a_verifier():
    formats.check_registry()
    for spec in formats.OUTPUTS.values():
        # the verifiers live in verify.py, or beside the family's own reader (media, mail)
        assert spec.verify.startswith("sanitas.engine."), spec
        assert callable(spec.verifier())


@pytest.mark.parametrize("extension", sorted(formats.OUTPUTS))
def test_a_good_file_passes_and_a_cut_one_does_not(extension, tmp_path):
    good = good_file(extension, tmp_path)
    verify.output(good, extension)
    junk = tmp_path / f"junk.{extension}"
    junk.write_bytes(b"\x00\x01 not a file at all \xff" * 10)
    _refused(junk, extension)
    data = good.read_bytes()
    cut = tmp_path / f"cut.{extension}"
    if formats.OUTPUTS[extension].text and extension not in ("svg", "xml"):
        cut.write_bytes(data[:5] + b"\xff\xfe\x00" + data[5:])  # not UTF-8, a NUL
    else:
        cut.write_bytes(data[:len(data) * 2 // 3])
    if extension not in STREAMED_MEDIA:
        _refused(cut, extension)
        if extension not in LENGTH_FROM_HEADER:
            return
    # a cut stream still plays, shorter: the output check against the input refuses it
    container = next(c for c in media.CONTAINERS.values() if c.extension == extension)
    before, after = (media.probe(p, container.demuxer) for p in (good, cut))
    if extension in LENGTH_FROM_HEADER:
        declared, played = media._duration(after), media.packets_end(cut, container.demuxer)
        assert declared is not None and played is not None
        assert declared - played > 0.5, (declared, played)  # the header still says the whole
        assert abs((media.packets_end(good, container.demuxer) or 0) - declared) < 0.5
        return
    problems = media.check_streams(before, after, media._Plan())
    assert any(p.startswith("duration") for p in problems), problems


def test_text_refuses_a_nul_and_bad_utf8(tmp_path):
    for data in (b"fine\x00text", b"caf\xe9", b"ends inside \xe2\x82"):
        path = tmp_path / "t.txt"
        path.write_bytes(data)
        _refused(path, "txt")
    (tmp_path / "ok.csv").write_bytes("a,b\n1,ü\n".encode())
    verify.output(tmp_path / "ok.csv", "csv")


def test_svg_needs_an_svg_root_and_no_dtd(tmp_path):
    cases = {
        "html-root.svg": b'<html xmlns="http://www.w3.org/1999/xhtml"/>',
        "no-namespace.svg": b"<svg width='1' height='1'/>",
        "dtd.svg": (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY e "x">]>'
                    b'<svg xmlns="http://www.w3.org/2000/svg">&e;</svg>'),
        "hostile-but-unparsed.svg": HOSTILE_SVG,  # has a DOCTYPE with entities
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        _refused(tmp_path / name, "svg")


def test_images_flipped_header_and_bad_crc(tmp_path):
    png = good_file("png", tmp_path)
    data = bytearray(png.read_bytes())
    idat = data.index(b"IDAT")
    data[idat + 10] ^= 0xFF  # inside the compressed pixels: the chunk's CRC no longer matches
    (tmp_path / "crc.png").write_bytes(bytes(data))
    _refused(tmp_path / "crc.png", "png")
    jpg = good_file("jpg", tmp_path)
    data = bytearray(jpg.read_bytes())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = b"\x00\x00\x00\x00"  # a frame 0 x 0 pixels
    (tmp_path / "sof.jpg").write_bytes(bytes(data))
    _refused(tmp_path / "sof.jpg", "jpg")
    # a PNG is not accepted as a JPEG (the decoder is the media type's own)
    _refused(png, "jpg")


@pytest.mark.parametrize("params", [{}, {"progressive": True}, {"restart_marker_rows": 1},
                                    {"subsampling": 0, "quality": 100}])
def test_jpeg_structure_walk(params, tmp_path):
    buffer = io.BytesIO()
    picture((300, 200)).convert("RGB").save(buffer, "JPEG", **params)
    data = buffer.getvalue()
    (tmp_path / "good.jpg").write_bytes(data)
    verify.output(tmp_path / "good.jpg", "jpg")
    cases = {"trailing.jpg": data + b"PK\x03\x04 appended",  # a polyglot's tail
             "no-eoi.jpg": data[:-2], "cut-in-scan.jpg": data[:len(data) - 100],
             "cut-in-tables.jpg": data[:100] + b"\xff\xd9",  # inside a quantisation table
             "twice.jpg": data + data}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        _refused(tmp_path / name, "jpg")


def test_zip_member_crc_names_and_duplicates(tmp_path):
    good = good_file("zip", tmp_path)
    data = bytearray(good.read_bytes())
    start = data.index(b"dir/b.txt") + len(b"dir/b.txt")  # the member's compressed data
    data[start + 2] ^= 0x55
    (tmp_path / "crc.zip").write_bytes(bytes(data))
    _refused(tmp_path / "crc.zip", "zip")
    for name, members in {"traversal.zip": [("../evil.txt", b"x")],
                          "twice.zip": [("a.txt", b"1"), ("A.txt", b"2")]}.items():
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            for member, content in members:
                zf.writestr(member, content)
        (tmp_path / name).write_bytes(buffer.getvalue())
        _refused(tmp_path / name, "zip")


def test_ooxml_main_part_type_and_xml(tmp_path):
    docx_type = _main_type("docx")
    cases = {
        # a workbook's main part in a file released as a Word document
        "wrong-type.docx": ooxml_package(_main_type("xlsx")),
        "bad-main.docx": ooxml_package(docx_type, main=b"<w:document"),
        "dtd-main.docx": ooxml_package(docx_type, main=b'<!DOCTYPE x [<!ENTITY a "b">]><x/>'),
        "no-types.docx": zip_bytes({"_rels/.rels": b"<Relationships/>"}),
        "bad-types.docx": ooxml_package(docx_type, types=b"<Types>"),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        _refused(tmp_path / name, "docx")
    (tmp_path / "good.xlsx").write_bytes(ooxml_package(_main_type("xlsx")))
    verify.output(tmp_path / "good.xlsx", "xlsx")


def test_opendocument_and_epub_mimetype_first_and_stored(tmp_path):
    odt = _main_type("odt")
    good = odf_package(odt, ODF_BODY)
    (tmp_path / "good.odt").write_bytes(good)
    verify.output(tmp_path / "good.odt", "odt")
    _refused(tmp_path / "good.odt", "ods")  # the mimetype names another kind
    source = zipfile.ZipFile(io.BytesIO(good))
    variants = {"deflated.odt": "deflate", "last.odt": "last", "bad-content.odt": "content"}
    for name, change in variants.items():
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
            infos = source.infolist()
            if change == "last":
                infos = infos[1:] + infos[:1]
            for info in infos:
                content = source.read(info)
                if change == "content" and info.filename == "content.xml":
                    content = content[:-20]
                kind = zipfile.ZIP_DEFLATED if change == "deflate" else info.compress_type
                out.writestr(info.filename, content, compress_type=kind)
        (tmp_path / name).write_bytes(buffer.getvalue())
        _refused(tmp_path / name, "odt")
    epub = clean_epub()
    spec = formats.Output("epub", (b"PK\x03\x04",), "application/epub+zip",
                          verify="sanitas.engine.verify:epub")
    (tmp_path / "good.epub").write_bytes(epub)
    verify.epub(tmp_path / "good.epub", spec)
    source = zipfile.ZipFile(io.BytesIO(epub))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist()[1:] + source.infolist()[:1]:
            out.writestr(info.filename, source.read(info))
    (tmp_path / "last.epub").write_bytes(buffer.getvalue())
    with pytest.raises(verify.Invalid, match="first member"):
        verify.epub(tmp_path / "last.epub", spec)


def test_pdf_verifier_reads_strictly(tmp_path):
    good = good_file("pdf", tmp_path)
    verify.output(good, "pdf")
    data = good.read_bytes()
    offset = re.findall(rb"startxref\s+(\d+)", data)[-1]
    broken = tmp_path / "bad-xref.pdf"  # qpdf would recover it; the check allows no recovery
    broken.write_bytes(data.replace(b"startxref\n" + offset, b"startxref\n" + b"9" * len(offset)))
    with pikepdf.open(broken) as pdf:
        assert len(pdf.pages) == 2  # readable through recovery...
    _refused(broken, "pdf")  # ...but not released
    encrypted = tmp_path / "encrypted.pdf"
    clean_pdf(pages=1).save(encrypted, encryption=pikepdf.Encryption(owner="o", user=""))
    _refused(encrypted, "pdf")  # outputs are never encrypted


def test_a_pdf_checked_in_its_handler_is_not_read_twice_unless_it_changed(tmp_path,
                                                                         monkeypatch):
    from sanitas.engine import pdf

    calls = []
    real = pdf.reopen
    monkeypatch.setattr(pdf, "reopen", lambda path: calls.append(path) or real(path))
    out = tmp_path / "out"
    out.mkdir()
    source = save_pdf(clean_pdf(pages=10), tmp_path / "ten.pdf")
    result = sanitize_file(source, out)
    assert result.status == "ok", result.reason
    assert len(calls) == 1  # the handler's check_output; the final check trusted it
    written = tmp_path / "written.pdf"
    written.write_bytes(Path(result.output).read_bytes())
    pdf.check_output(written, 10)
    data = written.read_bytes()
    written.write_bytes(data[:len(data) // 2])  # changed after its check: read again, refused
    _refused(written, "pdf")
    assert len(calls) == 3


def _junk_writer(extension: str, content: bytes):
    def write(src: Path, dst: Path, ctx, kind: str) -> str:
        dst.write_bytes(content)
        return extension
    return write


@pytest.mark.parametrize("module,extension,content,sample", [
    ("image", "png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "png"),
    ("text", "txt", b"caf\xe9 \x00", "txt"),
    ("svg", "svg", b"<svg xmlns='http://www.w3.org/2000/svg'>", "svg"),
])
def test_sanitize_file_refuses_a_handler_that_writes_junk(module, extension, content, sample,
                                                          tmp_path, monkeypatch, caplog):
    import importlib

    monkeypatch.setattr(importlib.import_module(f"sanitas.engine.{module}"), "sanitize",
                        _junk_writer(extension, content))
    source = tmp_path / f"input.{sample}"
    if sample == "png":
        picture().save(source, "PNG")
    elif sample == "svg":
        source.write_bytes(_SVG)
    else:
        source.write_text("hello\n")
    out = tmp_path / "out"
    out.mkdir()
    with caplog.at_level("WARNING", logger="sanitas.engine.verify"):
        result = sanitize_file(source, out)
    assert result.status == "rejected"
    assert result.code == RejectionCode.INVALID_OUTPUT
    assert "did not pass the final check" in result.reason
    assert f"valid {extension.upper()} file" in result.reason
    assert list(out.iterdir()) == []  # nothing released, no partial file left
    assert "failed its final check" in caplog.text


def test_an_archive_member_that_does_not_reopen_is_left_out(tmp_path, monkeypatch):
    from sanitas.engine import image

    monkeypatch.setattr(image, "sanitize", _junk_writer("png", b"\x89PNG\r\n\x1a\njunk"))
    buffer = io.BytesIO()
    picture().save(buffer, "PNG")
    source = tmp_path / "bundle.zip"
    source.write_bytes(zip_bytes({"pic.png": buffer.getvalue(), "notes.txt": b"hello\n"}))
    out = tmp_path / "out"
    out.mkdir()
    result = sanitize_file(source, out)
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        assert zf.namelist() == ["notes.txt"]
    left_out = [f for f in result.findings if f.kind == "archive_member"]
    assert left_out and "final check" in left_out[0].detail


def test_every_real_output_is_verified_and_passes(corpus, out_dir, monkeypatch):
    """The engine's own outputs of the corpus are each re-opened once (archive members too)
    and all pass: the final check costs no false refusal."""
    checked: list[str] = []
    real = verify.output
    monkeypatch.setattr(verify, "output",
                        lambda path, extension: checked.append(extension) or real(path, extension))
    names = {"clean.pdf": "pdf", "hostile-objstm.pdf": "pdf", "photo.jpg": "jpg",
             "image.png": "png", "anim.gif": "gif", "image.webp": "webp", "scan.tiff": "tiff",
             "plain.bmp": "bmp", "drawing.svg": "svg", "data.csv": "csv", "page.html": "html"}
    for name, extension in names.items():
        checked.clear()
        result = sanitize_file(corpus[name], out_dir)
        assert result.status == "ok", (name, result.reason)
        assert checked == [extension], name
    checked.clear()
    result = sanitize_file(corpus["bundle.zip"], out_dir)
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        members = [n.rsplit(".", 1)[-1] for n in zf.namelist()]
    assert checked[-1] == "zip" and len(checked) > 1
    assert set(members) <= set(checked)  # every member kept was verified
