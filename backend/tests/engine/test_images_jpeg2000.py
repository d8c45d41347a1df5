"""JPEG 2000 (engine/image.py `_sanitize_jpeg2000`): the JP2 box format and the raw codestream,
written by Pillow's OpenJPEG encoder; lossless stays lossless (PNG), lossy becomes JPEG."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from sanitas.engine import sanitize_file
from sanitas.engine.detect import detect
from sanitas.engine.policy import Policy
from tests.engine import corpus


def _jp2(image: Image.Image | None = None, **params) -> bytes:
    buffer = io.BytesIO()
    (image or corpus.picture()).save(buffer, "JPEG2000", **params)
    return buffer.getvalue()


def _clean(tmp_path: Path, data: bytes, name: str = "picture.jp2", **kwargs):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return sanitize_file(src, out, original_name=name, workdir=tmp_path, **kwargs)


def _box(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(body), kind) + body


@pytest.mark.parametrize("name,params", [
    ("lossless.jp2", {"irreversible": False}),
    ("lossless.j2k", {"irreversible": False, "no_jp2": True}),
])
def test_lossless_jpeg2000_becomes_a_png_with_every_pixel(tmp_path, name, params):
    picture = corpus.picture().convert("RGB")
    data = _jp2(picture, **params)
    (tmp_path / "x.bin").write_bytes(data)
    assert detect(tmp_path / "x.bin", "x.bin").kind == "jp2"  # by content, not by name
    result = _clean(tmp_path, data, name)
    assert result.status == "ok", result.reason
    assert result.detected_type == "jp2" and result.output_type == "png"
    with Image.open(result.output) as out:
        assert out.format == "PNG" and out.size == picture.size
        assert ImageChops.difference(out.convert("RGB"), picture).getbbox() is None
    assert any(f.kind == "image_format" and "lossless" in f.detail for f in result.findings)


def test_lossy_jpeg2000_becomes_a_jpeg_and_transparency_a_png(tmp_path):
    lossy = _jp2(corpus.picture().convert("RGB"), irreversible=True,
                 quality_mode="rates", quality_layers=[20])
    result = _clean(tmp_path, lossy)
    assert result.status == "ok", result.reason
    assert result.output_type == "jpg"
    assert Image.open(result.output).format == "JPEG"
    (tmp_path / "alpha").mkdir()
    alpha = _jp2(corpus.picture().convert("RGBA"), irreversible=True)
    result = _clean(tmp_path / "alpha", alpha)
    assert result.status == "ok" and result.output_type == "png"
    assert Image.open(result.output).mode == "RGBA"


def test_metadata_boxes_are_reported_and_not_written(tmp_path):
    data = _jp2(corpus.picture().convert("RGB"), irreversible=False)
    secret = b"GPS 52.5200N 13.4050E owner=alice"
    uuid = _box(b"uuid", b"JpgTiffExif->JP2" + b"Exif\x00\x00" + secret)
    rights = _box(b"jp2i", b"Copyright holder secret " + secret)
    xmp = _box(b"xml ", b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><r>' + secret + b"</r></x:xmpmeta>")
    hostile = data + uuid + rights + xmp
    result = _clean(tmp_path, hostile)
    assert result.status == "ok", result.reason
    kinds = {(f.kind, f.action) for f in result.findings}
    assert {("exif", "removed"), ("metadata", "removed"), ("xmp_metadata", "removed")} <= kinds
    assert secret not in Path(result.output).read_bytes()


@pytest.mark.parametrize("mutate,code,words", [
    (lambda d: d[:len(d) // 2], "damaged", "runs past the end"),
    (lambda d: d[:40], "damaged", "JPEG 2000"),
    (lambda d: d.replace(b"jp2 ", b"mjp2", 1), "unsupported_type", "Motion JPEG 2000"),
])
def test_damaged_and_motion_jpeg2000_are_refused_with_a_reason(tmp_path, mutate, code, words):
    result = _clean(tmp_path, mutate(_jp2(irreversible=False)))
    assert result.status == "rejected"
    assert result.code == code and words in result.reason, result.reason


def test_a_huge_declared_size_is_refused_as_a_bomb(tmp_path):
    data = bytearray(_jp2(Image.new("L", (64, 64)), irreversible=False, no_jp2=True))
    # SIZ: marker, Lsiz, Rsiz, then Xsiz and Ysiz (the reference grid's size)
    struct.pack_into(">II", data, 8, 60000, 60000)
    result = _clean(tmp_path, bytes(data), "bomb.j2k")
    assert result.status == "rejected" and result.code == "bomb", result.reason


def test_metadata_boxes_go_even_when_the_policy_keeps_picture_metadata(tmp_path):
    data = _jp2(corpus.picture().convert("RGB"), irreversible=False)
    xmp = _box(b"xml ", b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><r>said words</r></x:xmpmeta>')
    result = _clean(tmp_path, data + xmp, policy=Policy().with_rules(imageMetadata="keep"))
    assert result.status == "ok", result.reason
    [finding] = [f for f in result.findings if f.kind == "xmp_metadata"]
    assert finding.action == "removed" and "not carried over" in finding.detail
    assert b"said words" not in Path(result.output).read_bytes()
