"""ICO/CUR icons (largest picture rebuilt as PNG) and the structured text kinds (JSON, Markdown):
clean files keep their content, hostile ones are cleaned or refused with their code."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from PIL import Image

from sanitas.engine import detect, sanitize_file
from sanitas.engine.report import RejectionCode
from tests.engine import corpus

# --- ICO and CUR ------------------------------------------------------------------------------


def icon_bytes(frames: list[bytes], dims: list[tuple[int, int]], kind: int = 1,
               offsets: list[int] | None = None, trailer: bytes = b"") -> bytes:
    """An ICO (kind 1) or CUR (kind 2) file holding `frames` (PNG or DIB bytes) as written."""
    head = struct.pack("<HHH", 0, kind, len(frames))
    at = 6 + 16 * len(frames)
    entries, body = b"", b""
    for index, (frame, (w, h)) in enumerate(zip(frames, dims, strict=True)):
        offset = offsets[index] if offsets else at + len(body)
        entries += struct.pack("<BBBBHHII", w % 256, h % 256, 0, 0, 1 if kind == 1 else 3,
                               32 if kind == 1 else 4, len(frame), offset)
        body += frame
    return head + entries + body + trailer


def _picture(size: tuple[int, int]) -> Image.Image:
    return corpus.picture().resize(size)


def png_frame(size: tuple[int, int], **params: object) -> bytes:
    buffer = io.BytesIO()
    _picture(size).convert("RGBA").save(buffer, "PNG", **params)
    return buffer.getvalue()


def dib_frame(size: tuple[int, int]) -> bytes:
    """A BMP-coded icon frame as Pillow writes it (XOR bitmap and AND mask)."""
    buffer = io.BytesIO()
    _picture(size).save(buffer, "ICO", sizes=[size], bitmap_format="bmp")
    data = buffer.getvalue()
    size_, offset = struct.unpack_from("<II", data, 14)
    return data[offset:offset + size_]


def _one(result, kind: str):
    return [f for f in result.findings if f.kind == kind]


def test_icon_largest_png_picture_rebuilt_as_png(tmp_path, out_dir):
    from PIL import PngImagePlugin

    small = png_frame((16, 16))
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "secret author note")
    large = png_frame((64, 48), pnginfo=info)
    src = tmp_path / "app.ico"
    src.write_bytes(icon_bytes([small, large], [(16, 16), (64, 48)], trailer=b"PK\x03\x04zz"))
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    assert result.detected_type == "ico" and result.output_type == "png"
    with Image.open(result.output) as out:
        assert out.format == "PNG" and out.size == (64, 48)
        assert "Comment" not in out.info
    data = Path(result.output).read_bytes()
    assert b"secret author note" not in data and b"PK\x03\x04" not in data
    assert _one(result, "trailing_data") and _one(result, "comment")
    assert "largest of 2" in _one(result, "image_format")[0].detail


def test_cursor_bitmap_frame_rebuilt_with_its_mask(tmp_path, out_dir):
    frame = dib_frame((32, 32))
    src = tmp_path / "pointer.cur"
    src.write_bytes(icon_bytes([frame], [(32, 32)], kind=2))
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    assert result.detected_type == "ico" and result.output_type == "png"
    with Image.open(result.output) as out:
        assert out.size == (32, 32)
        expected = _picture((32, 32)).convert("RGB")
        assert out.convert("RGB").getpixel((5, 5)) == expected.getpixel((5, 5))
    assert "hot spot" in _one(result, "image_format")[0].detail


def test_icon_entry_pointing_beyond_the_file_is_damaged(tmp_path, out_dir):
    frame = png_frame((16, 16))
    src = tmp_path / "bad.ico"
    src.write_bytes(icon_bytes([frame], [(16, 16)], offsets=[10_000_000]))
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED
    assert "outside the file" in result.reason


def test_icon_with_embedded_png_bomb_is_refused(tmp_path, out_dir):
    # A 20000 x 20000 PNG (400 megapixels over the 150 megapixel limit), zlib-packed small.
    import zlib

    def chunk(tag: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + tag + payload + struct.pack(
            ">I", zlib.crc32(tag + payload))
    side = 20_000
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(
        b"IDAT", zlib.compress(b"\x00" * (side + 1) * 64)) + chunk(b"IEND", b"")
    src = tmp_path / "bomb.ico"
    src.write_bytes(icon_bytes([bomb], [(0, 0)]))
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.BOMB


def test_icon_bitmap_declaring_a_huge_size_is_damaged(tmp_path, out_dir):
    frame = bytearray(dib_frame((16, 16)))
    struct.pack_into("<ii", frame, 4, 1_000_000, 2_000_000)
    src = tmp_path / "huge.ico"
    src.write_bytes(icon_bytes([bytes(frame)], [(16, 16)]))
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED
    assert "impossible size" in result.reason


def test_icon_directory_larger_than_the_file_is_damaged(tmp_path, out_dir):
    src = tmp_path / "short.ico"
    src.write_bytes(struct.pack("<HHH", 0, 1, 200) + b"\x00" * 40)
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED


def test_iso_media_with_a_256_byte_ftyp_is_not_an_icon():
    head = struct.pack(">I", 256) + b"ftypisom" + b"\x00" * 244
    assert detect.sniff(head + b"\x00" * 64, "clip.mp4").kind != "ico"
    assert detect.sniff(icon_bytes([png_frame((8, 8))], [(8, 8)]), "x.bin").kind == "ico"


# --- JSON -------------------------------------------------------------------------------------


def _json(tmp_path: Path, text: str | bytes, name: str = "data.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_json_reserialised_canonically(tmp_path, out_dir):
    src = _json(tmp_path, b'\xef\xbb\xbf{"b":1,"a":[true,null,"Gr\\u00fc\\u00dfe"],"x":1.5}  ')
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    assert result.detected_type == "json" and result.output_type == "json"
    data = Path(result.output).read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    assert data.decode() == ('{\n  "b": 1,\n  "a": [\n    true,\n    null,\n    "Grüße"\n  ],\n'
                             '  "x": 1.5\n}\n')


def test_json_detected_only_with_its_name_and_a_bracket(tmp_path):
    assert detect.sniff(b'{"a": 1}', "a.json").kind == "json"
    assert detect.sniff(b'{"a": 1}', "a.txt").kind == "txt"
    assert detect.sniff(b"just words", "a.json").kind == "txt"


@pytest.mark.parametrize("text,code,words", [
    ('{"a": 1, "a": 2}', RejectionCode.UNSAFE_STRUCTURE, "twice"),
    ("[" * 5000 + "]" * 5000, RejectionCode.TOO_COMPLEX, "nests deeper"),
    ("[" + "9" * 5000 + "]", RejectionCode.TOO_COMPLEX, "number longer"),
    ('{"a": NaN}', RejectionCode.DAMAGED, "not valid JSON"),
    ('{"a": 1,}', RejectionCode.DAMAGED, "not valid JSON"),
    ('{"a": "unterminated', RejectionCode.DAMAGED, "not valid JSON"),
])
def test_hostile_json_refused(tmp_path, out_dir, text, code, words):
    result = sanitize_file(_json(tmp_path, text), out_dir)
    assert result.status == "rejected" and result.code == code, result.reason
    assert words in result.reason


def test_json_depth_ignores_brackets_in_strings():
    from sanitas.engine.structured_text import json_depth

    assert json_depth('{"a": "[[[[\\"[[", "b": [1]}') == 2
    assert json_depth('"\\\\"[[') == 2
