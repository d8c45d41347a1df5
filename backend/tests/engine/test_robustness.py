"""Damaged input never crashes or hangs the engine: truncated and bit-flipped corpus files all
come back as a Result (ok, or rejected with a reason) quickly."""

from __future__ import annotations

import random
import time

import pytest

from sanitas.engine import sanitize_file

FAMILIES = ["hostile.pdf", "hostile-objstm.pdf", "incremental.pdf", "photo.jpg", "image.png",
            "anim.gif", "image.webp", "scan.tiff", "drawing.svg", "page.html", "data.csv",
            "bundle.zip"]


@pytest.mark.parametrize("name", FAMILIES)
def test_mangled_files_get_an_answer(corpus, tmp_path, out_dir, name):
    rng = random.Random(name)
    original = corpus[name].read_bytes()
    for round_number in range(10):
        data = bytearray(original)
        if round_number % 3 == 0:
            data = data[:rng.randrange(1, len(data))]
        else:
            for _ in range(rng.randrange(1, 25)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path = tmp_path / f"mangled-{round_number}-{name}"
        path.write_bytes(bytes(data))
        started = time.perf_counter()
        result = sanitize_file(path, out_dir, original_name=name)
        assert time.perf_counter() - started < 10
        assert result.status in ("ok", "rejected")
        if result.status == "rejected":
            assert result.reason
            assert "TypeError" not in result.reason and "AttributeError" not in result.reason
        else:
            assert result.output
