"""engine/preview.py on large photos: a JPEG is decoded at a fraction of its size (DCT
scaling) but never below the preview's, so the preview keeps its full size and its content."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from sanitas.engine import preview


@pytest.mark.parametrize("size, expected", [((4500, 3000), (800, 533)),
                                            ((3000, 4500), (533, 800)),
                                            ((6400, 800), (800, 100)),
                                            ((640, 480), (640, 480))])
def test_jpeg_preview_has_the_full_preview_size(tmp_path, size, expected):
    width, height = size
    picture = Image.new("RGB", size, (200, 30, 30))
    picture.paste((20, 40, 220), (width // 2, 0, width, height))  # right half blue
    source = tmp_path / "photo.jpg"
    picture.save(source, "JPEG", quality=90)
    target = io.BytesIO()
    assert preview.render_preview(source, "jpg", target, 800) == expected
    drawn = Image.open(io.BytesIO(target.getvalue()))
    assert drawn.format == "PNG" and drawn.size == expected
    left = drawn.getpixel((expected[0] // 4, expected[1] // 2))
    right = drawn.getpixel((3 * expected[0] // 4, expected[1] // 2))
    assert left[0] > 150 > left[2] and right[2] > 150 > right[0]


def test_fitted_size_bounds_the_long_side():
    assert preview._fitted((4500, 3000), 800) == (800, 534)
    assert preview._fitted((100, 50), 800) == (100, 50)
