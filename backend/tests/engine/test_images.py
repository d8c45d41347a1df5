"""Images: metadata, comments and trailers gone; orientation applied; ICC kept; quality kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from sanitas.engine import sanitize_file
from tests.engine.fidelity import ssim

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


def _variants(folder: Path) -> dict[str, Path]:
    import io

    from tests.engine.corpus import _gps_exif, picture
    pic = picture((300, 200))
    frames = [pic.rotate(angle) for angle in (0, 45, 90)]
    paths = {name: folder / name for name in (
        "cmyk.jpg", "progressive.jpg", "gray.jpg", "deep.png", "la.png", "palette.png",
        "anim.webp", "pages.tiff", "anim.png", "fax.tiff", "palette.bmp", "stereo.jpg")}
    pic.convert("CMYK").save(paths["cmyk.jpg"], "JPEG", quality=80, exif=_gps_exif())
    pic.save(paths["progressive.jpg"], "JPEG", quality=70, progressive=True)
    pic.convert("L").save(paths["gray.jpg"], "JPEG")
    pic.convert("I;16").save(paths["deep.png"])
    pic.convert("LA").save(paths["la.png"])
    pic.convert("P").save(paths["palette.png"], transparency=3)
    frames[0].save(paths["anim.webp"], save_all=True, append_images=frames[1:], duration=100,
                   exif=_gps_exif())
    frames[0].save(paths["pages.tiff"], save_all=True, append_images=frames[1:])
    frames[0].save(paths["anim.png"], save_all=True, append_images=frames[1:], duration=100)
    pic.convert("1").save(paths["fax.tiff"], compression="group4")
    pic.convert("P").save(paths["palette.bmp"])
    buffer = io.BytesIO()
    pic.save(buffer, "MPO", save_all=True, append_images=[pic.rotate(10)])
    paths["stereo.jpg"].write_bytes(buffer.getvalue())
    return paths


def test_image_variants_keep_mode_frames_and_look(tmp_path, out_dir):
    for name, path in _variants(tmp_path).items():
        result = sanitize_file(path, out_dir)
        assert result.status == "ok", (name, result.reason)
        with Image.open(path) as before, Image.open(result.output) as after:
            expected_frames = 1 if name == "stereo.jpg" else getattr(before, "n_frames", 1)
            assert getattr(after, "n_frames", 1) == expected_frames, name
            assert after.size == before.size, name
            assert b"GPS" not in Path(result.output).read_bytes(), name
            assert ssim(before.convert("RGB"), after.convert("RGB")) >= 0.98, name
