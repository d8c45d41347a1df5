"""Older formats built byte by byte for the tests (issue 29): nothing here writes Word 2.0,
6.0 or 95, WordPerfect, Lotus 1-2-3, Quattro Pro or PICT files, and no real samples are at
hand. Each builder writes the smallest file LibreOffice's importer for the format reads: the
header the format's reader checks, then its text or cells in the format's own encoding.

- Word 2.0: the FIB at the start of the file (wIdent 0xA5DB, nFib 45), then the text.
- Word 6.0 / 95: an OLE compound file whose WordDocument stream starts with a Word 6 FIB
  (wIdent 0xA5DC, nFib 101 or 104) over one non-complex run of 8-bit text.
- WordPerfect 5.x: the 16-byte "\\xffWPC" prefix (product 1, file type 10), then text with
  hard returns (0x0A); 6.x: the prefix, an empty index header, text with 0x80 for a space
  and 0xCC for a hard return.
- Works 2-4: a 256-byte header (version 1, 4 or 6, then 0xFE; the text limits at 0x1A,
  the length at 0x2A, the page at 0x64), then the text; Works 3 and 4 for Windows put it in
  an OLE MN0 stream.
- Lotus 1-2-3 WK1/WKS and Quattro Pro WQ1: BOF, RANGE, LABEL and NUMBER records, EOF;
  release 3 and later: the 26-byte BOF, label records (row, sheet, column), EOF.
- A packed DIB: Pillow's BMP without its file header (a BITMAPINFOHEADER or V5 header).
- PICT version 2: a 512-byte header, the picture's size and frame, the version and header
  opcodes, a clip region and a filled red rectangle.
"""

from __future__ import annotations

import struct
from pathlib import Path

from tests.engine.cfb_office import write_cfb

WORD6, WORD95 = 101, 104
FC_MIN_OLE = 0x400  # where a Word 6 file's text starts in its WordDocument stream
FC_MIN_WORD2 = 0x180


def word6_doc(text: str, nfib: int = WORD6, *, encrypted: bool = False,
              streams: dict[str, bytes] | None = None) -> bytes:
    """A Word 6.0 (nFib 101) or Word 95 (nFib 104) document holding one paragraph."""
    body = text.encode("cp1252") + b"\r"
    fib = bytearray(FC_MIN_OLE)
    product = 0x6027 if nfib < WORD95 else 0x8029  # what Word 6.0 and Word 95 wrote
    struct.pack_into("<HHHHH", fib, 0, 0xA5DC, nfib, product, 0x0409, 0)
    struct.pack_into("<H", fib, 0x0A, 0x0100 if encrypted else 0)
    struct.pack_into("<H", fib, 0x0C, nfib)  # nFibBack
    struct.pack_into("<II", fib, 0x18, FC_MIN_OLE, FC_MIN_OLE + len(body))  # fcMin, fcMac
    struct.pack_into("<I", fib, 0x20, FC_MIN_OLE + len(body))  # cbMac
    struct.pack_into("<I", fib, 0x34, len(body))  # ccpText
    return write_cfb({"WordDocument": bytes(fib) + body, **(streams or {})})


def word2_doc(text: str, *, encrypted: bool = False, fc_mac: int | None = None) -> bytes:
    """A Word for Windows 2.0 document holding one paragraph."""
    body = text.encode("cp1252") + b"\r"
    fib = bytearray(FC_MIN_WORD2)
    struct.pack_into("<HHHHH", fib, 0, 0xA5DB, 45, 0x0019, 0x0409, 0)
    struct.pack_into("<H", fib, 0x0A, 0x0100 if encrypted else 0)
    end = FC_MIN_WORD2 + len(body) if fc_mac is None else fc_mac
    struct.pack_into("<III", fib, 0x18, FC_MIN_WORD2, end, FC_MIN_WORD2 + len(body))
    struct.pack_into("<I", fib, 0x34, len(body))
    return bytes(fib) + body


def wordperfect(lines: list[str], *, file_type: int = 10, key: int = 0,
                start: int | None = None, version: int = 5) -> bytes:
    """A WordPerfect 5.x or 6.x document: the prefix, then each line ended by a hard return."""
    if version == 5:
        index, text = b"", b"".join(line.encode("cp437") + b"\x0a" for line in lines)
    else:  # an index header listing no packets; a space is 0x80, a hard return 0xCC
        index = b"\x02\x00" + struct.pack("<H", 0) + bytes(10)
        text = b"".join(line.encode("ascii").replace(b" ", b"\x80") + b"\xcc" for line in lines)
    offset = 16 + len(index) if start is None else start
    prefix = b"\xffWPC" + struct.pack("<I", offset)
    prefix += bytes([1, file_type, 0 if version == 5 else 2, 0 if version == 5 else 1])
    prefix += struct.pack("<HH", key, 0)
    return prefix + index + text


def works(text: str, *, version: int = 1, ole: bool = False,
          text_end: int | None = None) -> bytes:
    """A Works document (version 1: Works for DOS; 4 and 6: Works 3 and 4 for Windows, in an
    OLE file's MN0 stream when `ole`) holding one paragraph."""
    body = text.encode("cp1252") + b"\r\n"
    header = bytearray(0x100)
    header[0], header[1] = version, 0xFE
    end = 0x100 + len(body) if text_end is None else text_end
    struct.pack_into("<4i", header, 0x1A, 0x100, 0x100, 0x100, end)  # header/footer empty
    struct.pack_into("<I", header, 0x2A, 0x100 + len(body))
    # the page at 0x64: margins (top, bottom, left, right), length and width in twips (US
    # letter, one-inch margins), then first page 1 and a zoom of 100 %
    struct.pack_into("<6H8H", header, 0x64, 1440, 1440, 1440, 1440, 15840, 12240,
                     1, 0, 0, 720, 720, 0, 100, 0)
    data = bytes(header) + body
    return write_cfb({"MN0": data}) if ole else data


def _record(rtype: int, data: bytes) -> bytes:
    return struct.pack("<HH", rtype, len(data)) + data


def lotus(cells: list[tuple[int, int, str | float]], *, bof: bytes = b"\x06\x04",
          password: bool = False, eof: bool = True) -> bytes:
    """A Lotus 1-2-3 worksheet (BOF 0x0406: WK1; 0x0404: WKS; 0x5120: Quattro Pro WQ1) of
    (column, row, label or number) cells."""
    cols = max(c for c, _, _ in cells)
    rows = max(r for _, r, _ in cells)
    out = b"\x00\x00\x02\x00" + bof + _record(0x0006, struct.pack("<HHHH", 0, 0, cols, rows))
    if password:
        out += _record(0x004B, b"\x12\x34\x56\x78")
    for col, row, value in cells:
        if isinstance(value, str):
            out += _record(0x000F, struct.pack("<BHH", 0xFF, col, row)
                           + b"'" + value.encode("cp437") + b"\x00")
        else:
            out += _record(0x000E, struct.pack("<BHHd", 0xFF, col, row, value))
    return out + (_record(0x0001, b"") if eof else b"")


def lotus3(labels: list[str], *, version: int = 0x1000, password: bool = False,
           eof: bool = True) -> bytes:
    """A Lotus 1-2-3 release 3 or later worksheet (version 0x1000: WK3, 0x1002: WK4, 0x1005:
    1-2-3 97): the 26-byte BOF, then one label per row of the first sheet (libwps reads the
    file only when four records come before EOF, as real files have)."""
    out = _record(0x0000, struct.pack("<H", version) + bytes(24))
    if password:
        out += _record(0x0002, bytes(16))
    for row, text in enumerate(labels):
        out += _record(0x0016, struct.pack("<HBB", row, 0, 0) + b"'" + text.encode("cp437")
                       + b"\x00")
    return out + (_record(0x0001, b"") if eof else b"")


def pict(width: int = 200, height: int = 100, *,
         rect: tuple[int, int, int, int] = (10, 10, 60, 120)) -> bytes:
    """A PICT 2 picture of `width` x `height` points with one red rectangle
    (top, left, bottom, right)."""
    frame = struct.pack(">hhhh", 0, 0, height, width)
    ops = struct.pack(">HH", 0x0011, 0x02FF)  # version 2
    ops += struct.pack(">HhH", 0x0C00, -2, 0) + struct.pack(">ii", 72 << 16, 72 << 16)
    ops += frame + b"\x00" * 4  # the extended header: resolution, source rectangle
    ops += struct.pack(">H", 0x001E)  # DefHilite
    ops += struct.pack(">HH", 0x0001, 10) + frame  # the clip region: the whole frame
    ops += struct.pack(">HHHH", 0x001A, 0xFFFF, 0, 0)  # RGBFgCol: red
    ops += struct.pack(">H", 0x0031) + struct.pack(">hhhh", *rect)  # paintRect
    ops += struct.pack(">H", 0x00FF)  # OpEndPic
    picture = struct.pack(">H", (10 + len(ops)) & 0xFFFF) + frame + ops
    return bytes(512) + picture


def dib(width: int = 20, height: int = 10, *, mode: str = "RGB", v5: bool = False,
        claimed: tuple[int, int] | None = None) -> bytes:
    """A packed device-independent bitmap (a BMP file without its 14-byte file header), as
    Pillow writes the bitmap: optionally with a BITMAPV5HEADER or with a claimed size other
    than the pixels it holds."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    image = Image.new(mode, (width, height), 200 if mode in ("L", "P") else (200, 0, 0))
    image.save(buffer, "BMP")
    packed = bytearray(buffer.getvalue()[14:])
    if claimed:
        struct.pack_into("<ii", packed, 4, *claimed)
    if v5:  # the V5 header: the 40 bytes, masks, colour space, gamma, intent, no profile
        extra = struct.pack("<4I", 0x00FF0000, 0x0000FF00, 0x000000FF, 0)
        extra += b"BGRs" + bytes(36) + bytes(12) + struct.pack("<4I", 4, 0, 0, 0)
        packed = bytearray(struct.pack("<I", 124)) + packed[4:40] + extra + packed[40:]
    return bytes(packed)


MARKER = "Sanitas legacy marker 29"


def _write(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


# One clean sample per kind, for the registry walk (tests/engine/samples.py): word2, wpd, wps,
# wk1, wk3, wq1, pict, dib.
LEGACY_BUILT_SAMPLES = {
    "word2": lambda folder: _write(folder, "sample.doc", word2_doc(MARKER)),
    "wpd": lambda folder: _write(folder, "sample.wpd", wordperfect([MARKER])),
    "wps": lambda folder: _write(folder, "sample.wps", works(MARKER)),
    "wk1": lambda folder: _write(folder, "sample.wk1", lotus([(0, 0, MARKER), (1, 0, 29.0)])),
    "wk3": lambda folder: _write(folder, "sample.wk3",
                                 lotus3([MARKER, "two", "three", "four"])),
    "wq1": lambda folder: _write(folder, "sample.wq1",
                                 lotus([(0, 0, MARKER), (1, 0, 29.0)], bof=b"\x20\x51")),
    "pict": lambda folder: _write(folder, "sample.pct", pict()),
    "dib": lambda folder: _write(folder, "sample.dib", dib()),
}
