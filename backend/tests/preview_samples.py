"""Samples for the preview tests (sandbox and API): a PDF whose first page shows a red square
that only a removed annotation draws, and a PNG reader of what a preview call returns."""

from __future__ import annotations

import io
import zlib

import pikepdf
from PIL import Image

RED = (255, 0, 0)


def marked_pdf(width: int = 300, height: int = 200) -> bytes:
    """A one-page PDF: white, with a /Screen annotation (active content the sanitizer
    removes) whose appearance paints the whole page red. Rendered as uploaded the page is
    red; after sanitizing it is white."""
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(width, height))
    appearance = pdf.make_stream(f"1 0 0 rg 0 0 {width} {height} re f".encode(), {
        "/Type": pikepdf.Name.XObject, "/Subtype": pikepdf.Name.Form,
        "/BBox": [0, 0, width, height]})
    annotation = pdf.make_indirect(pikepdf.Dictionary({
        "/Type": pikepdf.Name.Annot, "/Subtype": pikepdf.Name.Screen,
        "/Rect": [0, 0, width, height], "/F": 4,
        "/AP": pikepdf.Dictionary({"/N": appearance})}))
    pdf.pages[0].obj["/Annots"] = pdf.make_indirect(pikepdf.Array([annotation]))
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()


def red_share(picture: Image.Image) -> float:
    """The share of pixels that are (nearly) pure red."""
    data = picture.convert("RGB").tobytes()
    red = sum(1 for i in range(0, len(data), 3)
              if data[i] > 200 and data[i + 1] < 60 and data[i + 2] < 60)
    return red / (len(data) // 3)


def png_chunks(data: bytes) -> list[bytes]:
    """The chunk types of a PNG, in order (checks each CRC)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    kinds, pos = [], 8
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        crc = int.from_bytes(data[pos + 8 + length:pos + 12 + length], "big")
        assert zlib.crc32(kind + body) == crc, kind
        kinds.append(kind)
        pos += 12 + length
    return kinds
