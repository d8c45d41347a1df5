"""Windows metafiles (WMF, EMF): drawn by LibreOffice inside the sandbox and rebuilt as PNG.

A metafile is a list of GDI drawing records; some records are no drawing at all: printer
escapes (WMF `META_ESCAPE`, the carrier of embedded PostScript and of the SETABORTPROC exploit),
comments (EMF `EMR_COMMENT`, which also carry EMF+ drawing), a description string naming the
program and the document. The output is only the drawing's pixels, so none of these survive.

Before anything draws it, the record structure is walked here (`check_wmf`, `check_emf`): the
header, every record's size (inside the file, at least the minimum), at most `MAX_RECORDS`
records, the end-of-file record; a damaged structure is `damaged`. WMF printer escapes are
removed from the copy LibreOffice draws, and reported.

The picture's aspect ratio comes from the header (a placeable WMF's bounding box, an EMF's
frame); the longest side is drawn at `TARGET_SIDE` pixels (shorter sides at least 1). The
metafile goes into a one-page LibreOffice drawing (flat ODG) whose page is the picture, that
page is exported as PNG, and the PNG is decoded and written again by Pillow (no text chunks).
"""

from __future__ import annotations

import base64
import io
import struct
from pathlib import Path

from sanitas.engine.report import Context, Rejected, RejectionCode

MAX_METAFILE_BYTES = 64 * 1024 * 1024
MAX_RECORDS = 2_000_000
TARGET_SIDE = 1600
MAX_ASPECT = 50  # a picture 50 times longer than wide is drawn no thinner than that
PLACEABLE_KEY = b"\xd7\xcd\xc6\x9a"
META_ESCAPE = 0x0626
META_EOF = 0x0000
EMR_HEADER, EMR_EOF, EMR_COMMENT = 1, 14, 70


def _damaged(what: str) -> Rejected:
    return Rejected(f"The metafile's structure is damaged ({what}).", RejectionCode.DAMAGED)


def check_wmf(data: bytes) -> tuple[bytes, float, int]:
    """(the metafile with its printer escapes removed, its aspect ratio width/height, the
    number of escapes removed)."""
    start, aspect = 0, 1.0
    if data.startswith(PLACEABLE_KEY):
        if len(data) < 22:
            raise _damaged("the placeable header is cut short")
        left, top, right, bottom, inch = struct.unpack_from("<hhhhH", data, 6)
        width, height = abs(right - left), abs(bottom - top)
        if not width or not height or not inch:
            raise _damaged("the placeable header declares an empty picture")
        aspect, start = width / height, 22
    if len(data) < start + 18:
        raise _damaged("the header is cut short")
    kind, header_words, version = struct.unpack_from("<HHH", data, start)
    if kind not in (1, 2) or header_words != 9 or version not in (0x0100, 0x0300):
        raise _damaged("not a Windows metafile header")
    out = bytearray(data[:start + 18])
    offset, records, escapes = start + 18, 0, 0
    window: tuple[int, int] | None = None
    while True:
        if offset + 6 > len(data):
            raise _damaged("it ends before its end-of-file record")
        size_words, function = struct.unpack_from("<IH", data, offset)
        size = size_words * 2
        if size < 6 or offset + size > len(data):
            raise _damaged("a record's size runs past the end of the file")
        records += 1
        if records > MAX_RECORDS:
            raise Rejected(f"The metafile has more than {MAX_RECORDS} records.",
                           RejectionCode.TOO_COMPLEX)
        if function == META_ESCAPE:
            escapes += 1
        else:
            if function == 0x020C and size >= 10:  # META_SETWINDOWEXT: y, x
                y, x = struct.unpack_from("<hh", data, offset + 6)
                window = (abs(x), abs(y))
            out += data[offset:offset + size]
        offset += size
        if function == META_EOF:
            break
    if not data.startswith(PLACEABLE_KEY) and window and window[0] and window[1]:
        aspect = window[0] / window[1]
    # The header's size and largest-record fields are left as they were: escapes only shrink.
    struct.pack_into("<I", out, start + 6, (len(out) - start) // 2)
    return bytes(out), aspect, escapes


def check_emf(data: bytes) -> float:
    """The picture's aspect ratio (width/height), after the record structure is checked."""
    if len(data) < 88:
        raise _damaged("the header is cut short")
    kind, header_size = struct.unpack_from("<II", data, 0)
    if kind != EMR_HEADER or data[40:44] != b" EMF" or header_size < 88:
        raise _damaged("not an enhanced metafile header")
    left, top, right, bottom = struct.unpack_from("<iiii", data, 24)  # rclFrame, 0.01 mm
    width, height = abs(right - left), abs(bottom - top)
    if not width or not height:
        left, top, right, bottom = struct.unpack_from("<iiii", data, 8)  # rclBounds, pixels
        width, height = abs(right - left) + 1, abs(bottom - top) + 1
    offset, records = 0, 0
    while True:
        if offset + 8 > len(data):
            raise _damaged("it ends before its end-of-file record")
        kind, size = struct.unpack_from("<II", data, offset)
        if size < 8 or size % 4 or offset + size > len(data):
            raise _damaged("a record's size runs past the end of the file")
        records += 1
        if records > MAX_RECORDS:
            raise Rejected(f"The metafile has more than {MAX_RECORDS} records.",
                           RejectionCode.TOO_COMPLEX)
        offset += size
        if kind == EMR_EOF:
            break
    return float(width / height)


def _pixels(aspect: float) -> tuple[int, int]:
    aspect = min(max(aspect, 1 / MAX_ASPECT), MAX_ASPECT)
    if aspect >= 1:
        return TARGET_SIDE, max(1, round(TARGET_SIDE / aspect))
    return max(1, round(TARGET_SIDE * aspect)), TARGET_SIDE


_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
       'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
       'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
       'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
       'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"')


def drawing(metafile: bytes, width_cm: float, height_cm: float) -> str:
    """A flat ODG document whose one page is the metafile, edge to edge."""
    w, h = f"{width_cm:.4f}cm", f"{height_cm:.4f}cm"
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document {_NS} office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.graphics"><office:styles/>'
        '<office:automatic-styles><style:page-layout style:name="PM1">'
        '<style:page-layout-properties fo:margin-top="0cm" fo:margin-bottom="0cm" '
        f'fo:margin-left="0cm" fo:margin-right="0cm" fo:page-width="{w}" fo:page-height="{h}"/>'
        '</style:page-layout><style:style style:name="dp1" style:family="drawing-page">'
        '<style:drawing-page-properties draw:fill="none"/></style:style>'
        '<style:style style:name="gr1" style:family="graphic"><style:graphic-properties '
        'draw:stroke="none" draw:fill="none"/></style:style></office:automatic-styles>'
        '<office:master-styles><style:master-page style:name="Default" '
        'style:page-layout-name="PM1" draw:style-name="dp1"/></office:master-styles>'
        '<office:body><office:drawing><draw:page draw:name="p1" '
        'draw:master-page-name="Default"><draw:frame draw:style-name="gr1" svg:x="0cm" '
        f'svg:y="0cm" svg:width="{w}" svg:height="{h}"><draw:image><office:binary-data>'
        f'{base64.b64encode(metafile).decode("ascii")}</office:binary-data></draw:image>'
        '</draw:frame></draw:page></office:drawing></office:body></office:document>\n')


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    """The metafile family's handler: WMF or EMF in, a PNG of its drawing out."""
    from PIL import Image

    from sanitas.engine import libreoffice

    if src.stat().st_size > MAX_METAFILE_BYTES:
        raise Rejected(f"The metafile is larger than {MAX_METAFILE_BYTES // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    data = src.read_bytes()
    if kind == "wmf":
        data, aspect, escapes = check_wmf(data)
        if escapes:
            ctx.add("structure", "printer escape records", action="removed",
                    detail=f"{escapes} META_ESCAPE record(s) (embedded printer data) not drawn")
    else:
        aspect = check_emf(data)
    width, height = _pixels(aspect)
    assert ctx.workdir is not None
    page = ctx.workdir / "metafile.fodg"
    page.write_text(drawing(data, width / 40, height / 40), encoding="utf-8")  # 40 px per cm
    options = (f'{{"PixelWidth":{{"type":"long","value":"{width}"}},'
               f'"PixelHeight":{{"type":"long","value":"{height}"}}}}')
    drawn = libreoffice.convert(page, ctx, f"png:draw_png_Export:{options}", "fodg")
    page.unlink(missing_ok=True)
    with Image.open(drawn) as opened:
        if opened.format != "PNG" or opened.size != (width, height):
            raise Rejected("The metafile could not be drawn (LibreOffice made no picture of "
                           "the expected size).", RejectionCode.DAMAGED)
        picture = opened.convert("RGBA")
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", optimize=True)
    dst.write_bytes(buffer.getvalue())
    ctx.add("image_format", "whole file", action="converted",
            detail=f"{kind.upper()} metafile drawn as a {width}x{height} PNG; records that draw "
            "nothing (comments, escapes, the description) are not kept")
    return "png"
