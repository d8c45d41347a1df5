"""Fixtures of the ICAP tests: sample files and a `sanitas icap` server with default settings."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.engine.corpus import hostile_jpeg
from tests.engine.corpus_office import hostile_docm
from tests.icap.icapkit import Icap, start_icap, stop_icap


@pytest.fixture(scope="session")
def samples(tmp_path_factory) -> dict[str, Path]:
    """macro.docm (VBA project, hostile), photo.jpg (GPS EXIF), clean.png (nothing to remove),
    tool.exe (refused), font.woff2 (a type the engine does not take), broken.pdf (refused in the
    sandbox), macro.docm.gz (gzip of macro.docm)."""
    folder = tmp_path_factory.mktemp("icap-samples")
    docm = hostile_docm()
    (folder / "macro.docm").write_bytes(docm)
    (folder / "macro.docm.gz").write_bytes(gzip.compress(docm))
    hostile_jpeg(folder / "photo.jpg")
    png = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(png, "PNG")
    (folder / "clean.png").write_bytes(png.getvalue())
    (folder / "tool.exe").write_bytes(b"MZ" + bytes(510))
    (folder / "font.woff2").write_bytes(b"wOF2\x00\x01\x00\x00" + bytes(8000))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog" + b"x" * 300)
    return {p.name: p for p in folder.iterdir()}


@pytest.fixture(scope="module")
def icap(tmp_path_factory) -> Iterator[Icap]:
    server = start_icap(tmp_path_factory.mktemp("icap-data"))
    try:
        yield server
    finally:
        stop_icap(server)
