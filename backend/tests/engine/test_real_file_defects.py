"""Defects found on real files (issue 22), each shown by a file made here the way the real one
was: an .xlsb whose workbook is typed by a Default, an XHTML page with an XML declaration, a
Shift-JIS ZIP whose central directory carries an extra field its local headers lack, an SVG
<switch>, a transparent disposal-to-background GIF animation, a DOCX with an empty XML part."""

from __future__ import annotations

import base64
import io
import shutil
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image, ImageDraw, ImageSequence

from sanitas.engine import sanitize_file, verify
from sanitas.engine.detect import detect
from sanitas.engine.report import Rejected, RejectionCode
from tests.engine import corpus_office as office

# ------------------------------------------------------------------------------------- xlsb

# The binary parts of a BIFF12 workbook written by pyxlsbwriter 0.1.0 (one sheet "Budget":
# "Quarterly total" 1234.5, "Second row" 42), zlib-compressed and base64-encoded.
XLSB_PARTS = {
    "xl/workbook.bin": (
        "eNplUTtLA0EQ/maNqZRcJYcgKOpZheTi5aEW4oOAhWBhEUQIFxMkIqJ5QESE8wHaaSeiphdbf4n/QEGQdPaCfruH"
        "D+LAN/vNY2dmZ08EgaTQJYpoYRvCM2t0Br3UKXiYpM7gWvqGTSCU8aigJ4bgyvJsmguYxjrq2GONOtkqKjwb2Mca"
        "fOyiSquJgomWGHdMAVgIjuzjn6oJwmW/InawgRpruuQH1BmkkUQOi2RTiLNfnlaWzKMOfTnyNHmcWR7miCRv6nqu"
        "8WdxaDok8F8cnIkZSXGkwLa0r5/4pITxtgxp0h4AHqvAmwMU1G+B1rngQnArY9rSL4oQNSyhzPZR8nkuoIxNLqaB"
        "S8GzwqtCR1nSNcqLwkR+5NuKEUU+tsrVNXi3xsf5ZD7X6HOZFZMxEybLH60nv5PBdEcZR5n4uH9/Wi6tzGp7Czci"
        "GI3wD/FgCcc+FXwBddJGPw=="
    ),
    "xl/worksheets/sheet1.bin": (
        "eNqFUbsOAUEUPWfGK7GRicKjoEKlkGglROk7xHcgQei8QkvpV5RaSqL0B+zsmrWWcJKb+5g559650yPmTO9DAg04"
        "uD+h4wUVAhgQY+aP0l/TzLYvXzH3TrrV+YyEbXLNggzIEp+YEEOiGCFEAt1lTIRRwllaeroYyg5lKFFLeoyUaVJL"
        "0ojGTW0kMX3JdV05u4KsoZfpm0T7qKUjM2tYvU3ZmjeQ5W+qyYRlzna2zYhVqPk6/fZ4/FmQzjfu9/jbbomTFApH"
        "Wek4uNSNdy9dPV91cPC83gyUvZmMCjYsoU88AK86M8k="
    ),
    "xl/styles.bin": (
        "eNqtUrtKQ0EQPffewdxCdIMIFiKCGkETHxEsrBRTqgRimcaYoAGjEKJgF//ASn8gpPbR+iem822ChYKiKHp2r5GL"
        "YojgDjs7O3vOzOzO7tm4ErEBhMMldHDd/pQkIshR9JqmJNGLVcqU8YZ7ymhtgL4WnIlYRAwPVqh3tck0Ab0C73aA"
        "ehZLWEMWKeSpNdDCia7FvmsEHGixYLehuOMihHPBqXeBSEwTnGmP58xQceCPIxIL/kOUiuDCu/7IBJX1ddCcdSm4"
        "9+ijyp9cKeBBcCMi5syfUp9pT8nnsYyn/MMDy/KxbgVVL5t52SCKxS71/UYhjHXXS3Q5F7DBZuRMY9b5AWqCZ0dX"
        "hRcHr05cW/olF4lIEZNBAgXitDXPmWYjN8mPGlScuy1GLPhQc/St8MMVMI5JvDnoE3YdVReP7lA9fML8i2XC879Q"
        "n1zUXPST7bQDBwpHKqrZnaa4LEvINBHlWOFQMcq+jQ/pdGiG"
    ),
    "xl/sharedStrings.bin": (
        "eNqbz8jBxMDAAMLCygz8QCqQoZQhkaGIoYQhFUjmMFQyKADZ+UCcCOQJSzJwARUFAyWTgYJ5DClA6SIgq5xhASMD"
        "AJlEC6o="
    ),
}

XLSB_MAIN = "application/vnd.ms-excel.sheet.binary.macroEnabled.main"
_BIN_TYPES = {"/xl/worksheets/sheet1.bin": "application/vnd.ms-excel.worksheet",
              "/xl/styles.bin": "application/vnd.ms-excel.styles",
              "/xl/sharedStrings.bin": "application/vnd.ms-excel.sharedStrings",
              "/docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml"}
_CORE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"


def real_xlsb() -> bytes:
    """What Excel writes: `<Default Extension="bin">` types the workbook (only the other
    binary parts have overrides)."""
    parts: dict[str, bytes | str] = {
        "[Content_Types].xml": office._types(
            {"bin": XLSB_MAIN, "rels": office.CT_BASE["rels"], "xml": "application/xml"},
            _BIN_TYPES),
        "_rels/.rels": office._rels([("rId1", f"{office.R}/officeDocument", "xl/workbook.bin"),
                                     ("rId2", _CORE_RELS, "docProps/core.xml")]),
        "xl/_rels/workbook.bin.rels": office._rels([
            ("rId1", f"{office.R}/worksheet", "worksheets/sheet1.bin"),
            ("rId2", f"{office.R}/styles", "styles.bin"),
            ("rId3", f"{office.R}/sharedStrings", "sharedStrings.bin")]),
        "docProps/core.xml": office.CORE,
    }
    for name, encoded in XLSB_PARTS.items():
        parts[name] = zlib.decompress(base64.b64decode(encoded))
    return office._zip(parts)


def test_xlsb_typed_by_a_default_is_detected_as_xlsb(tmp_path):
    src = tmp_path / "book.xlsb"
    src.write_bytes(real_xlsb())
    assert detect(src, "book.xlsb").kind == "xlsb"
    assert detect(src, "upload.zip").kind == "xlsb"  # the content decides, not the name


@pytest.mark.slow
def test_real_xlsb_comes_out_as_a_clean_workbook_not_a_zip(tmp_path, out_dir):
    src = tmp_path / "book.xlsb"
    src.write_bytes(real_xlsb())
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    assert Path(result.output).suffix == ".xlsx"
    assert not any(f.kind in ("archive_member", "renamed") for f in result.findings)
    assert any(f.kind == "binary_workbook" for f in result.findings)
    with zipfile.ZipFile(result.output) as zf:
        everything = b"".join(zf.read(i) for i in zf.infolist())
        workbook = etree.fromstring(zf.read("xl/workbook.xml"))
    # The binary workbook itself was read (LibreOffice's import takes this writer's sheet
    # names but not its cell records, so the cells are not compared).
    assert [s.get("name") for s in workbook.iter("{*}sheet")] == ["Budget"]
    assert b"Secret Author" not in everything


@pytest.mark.parametrize("kind", ["docx", "docm", "dotx", "xlsx", "xlsm", "xltx", "pptx",
                                  "pptm", "potx", "ppsx", "xlsb"])
def test_every_ooxml_kind_is_resolved_by_override_then_default(tmp_path, kind):
    from sanitas.engine import formats

    main_type = formats.kind(kind).main_type
    rels = office._rels([("rId1", f"{office.R}/officeDocument", "main/part.main")])
    by_default = ({"main": main_type}, {})
    by_override = ({"main": "application/xml"}, {"/main/part.main": main_type})
    for types in (by_default, by_override):
        package = office._zip({"[Content_Types].xml": office._types(*types),
                               "_rels/.rels": rels, "main/part.main": b"\x00binary"})
        path = tmp_path / f"{kind}.bin"
        path.write_bytes(package)
        assert detect(path, "upload.zip").kind == kind


def test_an_office_package_of_unknown_main_type_is_never_an_archive(tmp_path):
    # The relationships name an office document: whatever else, it is no plain archive.
    package = office._zip({
        "[Content_Types].xml": office._types({"bin": "application/octet-stream"}, {}),
        "_rels/.rels": office._rels([("rId1", f"{office.R}/officeDocument", "xl/book.bin")]),
        "xl/book.bin": b"\x83\x01 binary"})
    path = tmp_path / "odd.xlsb"
    path.write_bytes(package)
    with pytest.raises(Rejected) as caught:
        detect(path, "odd.xlsb")
    assert caught.value.code == RejectionCode.DAMAGED
    result = sanitize_file(path, tmp_path / "o")
    assert result.status == "rejected"


# ------------------------------------------------------------------------------------ XHTML

XHTML = ('<?xml version="1.0" encoding="{enc}"?>\n'
         '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
         '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
         '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="fr"><head><title>Menu</title>'
         '</head><body><p onclick="steal()">Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e</p>'
         '<script type="text/javascript">alert(1)</script></body></html>')


@pytest.mark.parametrize(("encoding", "bom"), [("UTF-8", b""), ("UTF-8", b"\xef\xbb\xbf"),
                                                ("ISO-8859-1", b""), ("windows-1252", b"")])
def test_xhtml_with_an_xml_declaration_is_sanitized(tmp_path, out_dir, encoding, bom):
    src = tmp_path / "menu.xhtml"
    src.write_bytes(bom + XHTML.format(enc=encoding).encode(encoding))
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    text = Path(result.output).read_bytes().decode("utf-8")
    assert "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e" in text  # the declared encoding was honoured
    assert "<script" not in text and "onclick" not in text and "<?xml" not in text
    assert {"javascript", "event_handler"} <= {f.kind for f in result.findings}


# -------------------------------------------------------------------------------------- ZIP

def _ntfs_extra() -> bytes:
    """The 36-byte NTFS extra field (0x000a) Windows tools put in the central directory."""
    times = struct.pack("<QQQ", 133_000_000_000_000_000, 133_000_000_000_000_001,
                        133_000_000_000_000_002)
    return struct.pack("<HHIHH", 0x000A, 32, 0, 0x0001, 24) + times


def raw_zip(members: list[tuple[bytes, bytes]], *, central_extra: bytes = b"",
            point_all_at_first: bool = False) -> bytes:
    """A ZIP written byte by byte (stored members, no UTF-8 flag): names are raw bytes, and
    the central directory's extra field is one the local headers lack."""
    out, central, offsets = bytearray(), bytearray(), []
    for name, data in members:
        offsets.append(len(out))
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0x21, zlib.crc32(data),
                           len(data), len(data), len(name), 0) + name + data
    for index, (name, data) in enumerate(members):
        offset = offsets[0] if point_all_at_first else offsets[index]
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x0014, 20, 0, 0, 0,
                               0x21, zlib.crc32(data), len(data), len(data), len(name),
                               len(central_extra), 0, 0, 0, 0x20, offset) + name + central_extra
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members),
                      len(central), len(out), 0)
    return bytes(out + central + end)


SJIS_MEMBERS = [("報告書.txt".encode("shift_jis"), "第一四半期の売上\n".encode()),
                ("議事録/会議メモ.txt".encode("shift_jis"), b"meeting notes\n")]


def test_shift_jis_zip_with_directory_only_extra_fields_is_not_a_bomb(tmp_path, out_dir):
    src = tmp_path / "reports.zip"
    src.write_bytes(raw_zip(SJIS_MEMBERS, central_extra=_ntfs_extra()))
    with zipfile.ZipFile(src) as zf:
        assert zf.testzip() is None  # a valid archive
    if shutil.which("unzip"):
        assert subprocess.run(["unzip", "-tq", str(src)], capture_output=True,
                              timeout=60, check=False).returncode == 0
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        names = zf.namelist()
        contents = sorted(zf.read(name) for name in names)
    assert contents == sorted(data for _name, data in SJIS_MEMBERS)
    # no UTF-8 flag and no declared spelling: the names are read as CP437, as the format says
    assert sorted(names) == sorted(name.decode("cp437") for name, _ in SJIS_MEMBERS)


def test_zip_names_take_their_declared_unicode_spelling(tmp_path, out_dir):
    name = "報告書.txt"
    raw = name.encode("shift_jis")
    body = b"\x01" + struct.pack("<I", zlib.crc32(raw)) + name.encode("utf-8")
    unicode_path = struct.pack("<HH", 0x7075, len(body)) + body
    src = tmp_path / "named.zip"
    src.write_bytes(raw_zip([(raw, b"quarterly figures\n")],
                            central_extra=_ntfs_extra() + unicode_path))
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        assert zf.namelist() == [name]


def test_overlapping_members_are_still_a_bomb(tmp_path, out_dir):
    # Every central directory entry points at one local header: one stream, many members.
    src = tmp_path / "overlap.zip"
    src.write_bytes(raw_zip([(b"a.txt", b"A" * 4000), (b"b.txt", b"B"), (b"c.txt", b"C")],
                            point_all_at_first=True))
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected"
    assert result.code == RejectionCode.BOMB and "overlapping" in (result.reason or "")


def test_members_whose_data_runs_into_the_next_header_are_a_bomb(tmp_path, out_dir):
    # The first member claims a compressed size that covers the second member's header.
    good = raw_zip([(b"a.txt", b"A" * 100), (b"b.txt", b"B" * 100)])
    central = good.index(b"PK\x01\x02")
    patched = bytearray(good)
    struct.pack_into("<I", patched, central + 20, 180)  # compressed size of a.txt
    src = tmp_path / "quoted.zip"
    src.write_bytes(bytes(patched))
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected"
    assert result.code == RejectionCode.BOMB and "overlapping" in (result.reason or "")


# -------------------------------------------------------------------------------------- SVG

SVG_SWITCH = b"""<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100">
  <switch>
    <foreignObject requiredExtensions="http://www.w3.org/1999/xhtml" width="200" height="50">
      <p xmlns="http://www.w3.org/1999/xhtml">HTML FALLBACK</p>
    </foreignObject>
    <g requiredExtensions="http://example.org/not-supported-anywhere">
      <rect id="unsupported" width="200" height="100" fill="red"/>
    </g>
    <g requiredFeatures="http://www.w3.org/TR/SVG11/feature#Shape" systemLanguage="fr">
      <rect id="french" width="200" height="100" fill="blue"/>
    </g>
    <rect id="fallback" width="200" height="100" fill="green"/>
  </switch>
</svg>"""


def test_svg_conditional_processing_attributes_are_kept(tmp_path, out_dir):
    src = tmp_path / "switch.svg"
    src.write_bytes(SVG_SWITCH)
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    data = Path(result.output).read_bytes()
    root = etree.fromstring(data)
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = root.findall("s:switch/s:g", ns)
    assert [g.get("requiredExtensions") for g in groups] == [
        "http://example.org/not-supported-anywhere", None]
    assert groups[1].get("requiredFeatures") == "http://www.w3.org/TR/SVG11/feature#Shape"
    assert groups[1].get("systemLanguage") == "fr"
    assert [e.get("id") for e in root.iter("{*}rect")] == ["unsupported", "french", "fallback"]
    # foreignObject goes as before, whatever extension it requires
    assert b"foreignObject" not in data and b"HTML FALLBACK" not in data
    assert "foreign_object" in {f.kind for f in result.findings}
    assert not any(f.kind == "attribute" and "required" in f.location for f in result.findings)


# -------------------------------------------------------------------------------------- GIF

SIZE = (48, 32)


def transparent_animation() -> bytes:
    """Three palette frames on a transparent background (index 0), each moving a square,
    disposed to background, with their own durations."""
    palette = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255] + [0] * (252 * 3)
    frames = []
    for i in range(3):
        frame = Image.new("P", SIZE, 0)
        frame.putpalette(palette)
        ImageDraw.Draw(frame).rectangle([4 + i * 12, 6, 13 + i * 12, 24], fill=1 + i)
        frames.append(frame)
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:], duration=[70, 120, 200],
                   loop=0, disposal=2, transparency=0, background=0)
    return buf.getvalue()


def _frames(path: Path) -> list[tuple[Image.Image, int, int]]:
    """Each frame as a viewer composes it (RGBA), its duration and its disposal."""
    with Image.open(path) as image:
        return [(frame.convert("RGBA"), frame.info.get("duration"), image.disposal_method)
                for frame in ImageSequence.Iterator(image)]


def test_gif_animation_keeps_transparency_disposal_and_timing(tmp_path, out_dir):
    src = tmp_path / "spinner.gif"
    src.write_bytes(transparent_animation())
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    before, after = _frames(src), _frames(Path(result.output))
    assert [(duration, disposal) for _f, duration, disposal in after] == [
        (70, 2), (120, 2), (200, 2)]
    for (frame_before, _d, _x), (frame_after, _d2, _x2) in zip(before, after, strict=True):
        alpha = frame_after.getchannel("A")
        assert alpha.histogram()[0] > SIZE[0] * SIZE[1] // 2  # mostly transparent, not black
        assert alpha.tobytes() == frame_before.getchannel("A").tobytes()
        assert frame_after.tobytes() == frame_before.tobytes()


# ------------------------------------------------------------------------------ empty part

def _docx_with_font_table(font_table: bytes) -> bytes:
    return office.docx(office._p("Hello fonts"),
                       doc_rels=[("rIdFont", f"{office.R}/fontTable", "fontTable.xml")],
                       parts={"word/fontTable.xml": font_table},
                       overrides={"/word/fontTable.xml": f"{office.WML}.fontTable+xml"})


def _xml_parts(path: Path) -> list[str]:
    """The names of the package's XML parts, each parsed (an empty or broken one raises)."""
    names = []
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if name.endswith((".xml", ".rels")):
                etree.fromstring(zf.read(name))
                names.append(name)
    return names


@pytest.mark.parametrize("font_table", [b"", b"  \n", b"<w:fonts xmlns:w='urn:x'><w:font>"])
def test_an_empty_or_broken_xml_part_is_dropped_with_its_relationship(tmp_path, out_dir,
                                                                      font_table):
    src = tmp_path / "letter.docx"
    src.write_bytes(_docx_with_font_table(font_table))
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    names = _xml_parts(Path(result.output))
    assert "word/fontTable.xml" not in names and "word/document.xml" in names
    with zipfile.ZipFile(result.output) as zf:
        assert b"fontTable" not in zf.read("word/_rels/document.xml.rels")
        assert b"fontTable" not in zf.read("[Content_Types].xml")
    assert any(f.kind == "invalid_part" and f.location == "word/fontTable.xml"
               for f in result.findings)


def test_a_font_table_is_cleaned_as_xml_not_copied_as_a_font(tmp_path, out_dir):
    font_table = (f'<?xml version="1.0"?><!-- hidden note --><w:fonts {office.NS_W}>'
                  '<w:font w:name="Calibri"><w:panose1 w:val="020F0502020204030204"/>'
                  '</w:font></w:fonts>').encode()
    src = tmp_path / "letter.docx"
    src.write_bytes(_docx_with_font_table(font_table))
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        kept = zf.read("word/fontTable.xml")
    assert b"Calibri" in kept and b"hidden note" not in kept  # parsed and rewritten


def test_the_verifier_refuses_a_package_with_an_empty_xml_part(tmp_path):
    path = tmp_path / "out.docx"
    path.write_bytes(_docx_with_font_table(b""))
    with pytest.raises(Rejected) as caught:
        verify.output(path, "docx")
    assert caught.value.code == RejectionCode.INVALID_OUTPUT
    path.write_bytes(_docx_with_font_table(b"<w:fonts xmlns:w='urn:x'/>"))
    verify.output(path, "docx")
