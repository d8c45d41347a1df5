"""A packed device-independent bitmap (issue 29: .dib files with no BMP file header, as the
clipboard holds them): detected by its info header, decoded by Pillow's DIB reader under the
image family's limits, written as a BMP file and reported as converted."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from sanitas.engine import sanitize_file
from sanitas.engine.detect import detect
from sanitas.engine.report import RejectionCode
from tests.engine.legacy_corpus import dib


def _clean(tmp_path: Path, data: bytes, name: str = "picture.dib"):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return sanitize_file(src, out, original_name=name, workdir=tmp_path)


@pytest.mark.parametrize("mode,v5", [("RGB", False), ("L", False), ("RGB", True)],
                         ids=["24-bit", "8-bit-grey", "v5-header"])
def test_a_packed_dib_becomes_a_bmp_file(tmp_path, mode, v5):
    data = dib(mode=mode, v5=v5)
    (tmp_path / "upload.bin").write_bytes(data)
    assert detect(tmp_path / "upload.bin", "upload.bin").kind == "dib"
    result = _clean(tmp_path, data)
    assert result.status == "ok", result.reason
    assert (result.detected_type, result.output_type) == ("dib", "bmp")
    assert [f.kind for f in result.findings] == ["image_format"]
    with Image.open(result.output) as image:
        assert image.format == "BMP" and image.size == (20, 10)
        assert image.convert("RGB").getpixel((5, 5))[0] == 200
    assert result.outcome().verdict.value == "clean"  # nothing taken out


def test_a_bmp_file_named_dib_stays_a_bmp(tmp_path):
    import io

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(buffer, "BMP")
    result = _clean(tmp_path, buffer.getvalue())
    assert (result.status, result.detected_type) == ("ok", "bmp")


@pytest.mark.parametrize("data,code", [
    (dib()[:60], RejectionCode.DAMAGED),  # the pixels cut off
    (dib(claimed=(60_000, 60_000)), RejectionCode.BOMB),  # 3.6 gigapixels claimed
], ids=["truncated", "bomb"])
def test_a_damaged_or_oversized_dib_is_refused(tmp_path, data, code):
    result = _clean(tmp_path, data)
    assert (result.status, result.code) == ("rejected", code), result.reason
