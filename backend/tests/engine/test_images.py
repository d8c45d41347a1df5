"""Images: metadata, comments and trailers gone; orientation applied; ICC kept; quality kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from fidelity import ssim
from PIL import Image

from sanitas.engine import sanitize_file

METADATA_BYTES = [b"Exif\x00\x00", b"EVIL", b"GPS", b"ns.adobe.com/xap", b"x:xmpmeta",
                  b"Photoshop 3.0", b"tEXt", b"iTXt", b"zTXt", b"eXIf", b"MZ\x90"]


@pytest.mark.parametrize("name", ["photo.jpg", "image.png", "anim.gif", "image.webp",
                                  "scan.tiff", "plain.bmp"])
def test_metadata_and_trailers_removed(corpus, out_dir, name):
    result = sanitize_file(corpus[name], out_dir)
    assert result.status == "ok", result.reason
    data = Path(result.output).read_bytes()
    assert [m for m in METADATA_BYTES if m in data] == []


def test_gps_reported(corpus, out_dir):
    for name in ("photo.jpg", "image.png", "image.webp"):
        kinds = {f.kind for f in sanitize_file(corpus[name], out_dir).findings}
        assert "gps_location" in kinds, name


def test_jpeg_orientation_applied_quality_kept(corpus, out_dir):
    result = sanitize_file(corpus["photo.jpg"], out_dir)
    with Image.open(corpus["photo.jpg"]) as before, Image.open(result.output) as after:
        assert before.size == (200, 100) and after.size == (100, 200)  # orientation 6
        assert after.quantization == before.quantization
        assert not after.getexif()
        upright = before.transpose(Image.Transpose.ROTATE_270)
        assert ssim(upright, after) >= 0.98


def test_png_pixels_identical_and_icc_kept(corpus, out_dir):
    result = sanitize_file(corpus["image.png"], out_dir)
    with Image.open(corpus["image.png"]) as before, Image.open(result.output) as after:
        assert before.tobytes() == after.tobytes()
        assert after.info.get("icc_profile") == before.info.get("icc_profile")
        assert "Author" not in after.info and "exif" not in after.info


def test_animation_kept(corpus, out_dir):
    result = sanitize_file(corpus["anim.gif"], out_dir)
    with Image.open(result.output) as after:
        assert after.n_frames == 3
        assert "comment" not in after.info


def test_bomb_refused_quickly(corpus, out_dir):
    result = sanitize_file(corpus["bomb.png"], out_dir)
    assert result.status == "rejected" and "bomb" in result.reason
    assert result.duration_ms < 1000


def test_truncated_image_rejected(corpus, tmp_path, out_dir):
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(corpus["photo.jpg"].read_bytes()[:900])
    result = sanitize_file(cut, out_dir)
    assert result.status == "rejected" and "damaged" in result.reason
