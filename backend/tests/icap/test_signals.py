"""icap/signals.py on its own: ordinary files served with their own type and name carry no
signal their kind does not explain (so a clean one still passes as it came), unknown binary
data carries none (so it still passes), and each signature is found behind junk."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest

from sanitas.engine import formats
from sanitas.engine.detect import detect
from sanitas.icap import signals
from sanitas.icap.httpmsg import HttpHead
from tests.engine.corpus import picture, write_corpus
from tests.engine.corpus_office import clean_docx, clean_odt, clean_xlsx, hostile_docm


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("signals")
    files = write_corpus(folder / "corpus")
    camera = io.BytesIO()
    picture().save(camera, "JPEG", quality=80)
    for name, data in (("camera.jpg", camera.getvalue()), ("report.docx", clean_docx()),
                       ("book.xlsx", clean_xlsx()),
                       ("letter.odt", clean_odt()), ("macro.docm", hostile_docm())):
        files[name] = folder / name
        files[name].write_bytes(data)
    return files


def _ends(path: Path) -> tuple[bytes, bytes]:
    data = path.read_bytes()
    return data[:64 * 1024], data[-signals.TAIL:]


@pytest.mark.parametrize("name", [
    "clean.pdf", "camera.jpg", "image.png", "anim.gif", "image.webp", "scan.tiff", "plain.bmp",
    "drawing.svg", "data.csv", "page.html", "notes.txt", "bundle.zip", "report.docx",
    "book.xlsx", "letter.odt", "macro.docm"])
def test_files_served_as_what_they_are_carry_no_unexplained_signal(corpus, name):
    path = corpus[name]
    kind = detect(path, name).kind
    head, tail = _ends(path)
    served = HttpHead("HTTP/1.1 200 OK", [
        ("Content-Type", formats.kind(kind).media_type),
        ("Content-Disposition", f'attachment; filename="{name}"')])
    request = HttpHead(f"GET /files/{name} HTTP/1.1", [("Host", "files.example")])
    found = signals.gather(signals.clues_of(served, request, as_request=False), head, tail)
    assert signals.unexplained(found, kind) == [], found


def test_the_zip_after_a_jpegs_end_is_seen(corpus):
    """The corpus's hostile photo carries "PK\\x03\\x04" and a program after its end: the
    engine's JPEG does not explain it, so the photo never passes as it came."""
    head, tail = _ends(corpus["photo.jpg"])
    clues = signals.Clues("image/jpeg", (("the URL path", "photo.jpg"),))
    found = signals.unexplained(signals.gather(clues, head, tail), "jpeg")
    assert [s.what for s in found] == ["a ZIP archive"]


def test_unknown_binary_data_carries_no_signal():
    for data in (bytes(range(256)) * 1024, random.Random(19).randbytes(512 * 1024)):
        clues = signals.Clues("application/octet-stream", (("the URL path", "blob.bin"),))
        assert signals.gather(clues, data[:64 * 1024], data[-signals.TAIL:]) == []


def test_a_name_of_a_kind_the_engine_cleans_is_a_signal():
    """Video is a family of the engine now: a body named clip.mp4 goes to the engine
    (cleaned, or blocked as damaged), never passes as unknown data."""
    data = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + bytes(8000)
    clues = signals.Clues("application/octet-stream", (("the URL path", "clip.mp4"),))
    assert signals.gather(clues, data[:64 * 1024], data[-signals.TAIL:]) != []


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a.exe", b"MZ")
    return out.getvalue()


def _pe() -> bytes:
    stub = bytearray(b"MZ" + bytes(0x3E))
    stub[0x3C:0x40] = (0x40).to_bytes(4, "little")
    return bytes(stub) + b"PE\x00\x00" + bytes(100)


@pytest.mark.parametrize(("data", "category", "what"), [
    (b"\x01\x02" + _pe(), "executable", "Windows executable"),
    (b"\x01\x02\x7fELF\x02\x01\x01" + bytes(50), "executable", "Linux executable"),
    (b"\x01\x02\xcf\xfa\xed\xfe" + bytes(50), "executable", "macOS executable"),
    (b"\x00junk\n#!/bin/sh\nrm -rf ~\n", "executable", "#!"),
    (bytes(16) + _zip(), "archive", "ZIP"),
    (bytes(16) + b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "archive", "OLE"),
    (bytes(16) + b"Rar!\x1a\x07\x00" + bytes(20), "archive", "RAR"),
    (b"\x1f\x8b\x08" + bytes(20), "archive", "gzip"),
    (b"\x00\x01<HTML><ScRiPt>", "markup", "markup"),
    ("<svg onload=alert(1)>".encode("utf-16-be"), "markup", "markup"),
])
def test_signatures_behind_junk(data, category, what):
    found = signals.by_bytes(data, data)
    assert any(s.category == category and what in s.what for s in found), found


def test_zip_end_record_counts_only_in_the_tail():
    data = bytes(range(256)) * 512 + _zip()
    head = data[:64 * 1024]
    assert signals.by_bytes(head, None) == []  # not all here yet: nothing to see
    assert [s.what for s in signals.by_bytes(head, data[-signals.TAIL:])] == ["a ZIP archive"]


@pytest.mark.parametrize(("disposition", "url", "names"), [
    ("attachment; filename=\"a.bin\"; filename*=UTF-8''evil%2Ehtml", "/x/data",
     ["evil.html", "a.bin", "data"]),
    ("inline", "/download.php?id=3", []),  # the program that wrote it, not the body's name
    ("", "/static/app.js", ["app.js"]),
])
def test_names_from_content_disposition_and_url(disposition, url, names):
    fields = [("Content-Disposition", disposition)] if disposition else []
    clues = signals.clues_of(HttpHead("HTTP/1.1 200 OK", fields),
                             HttpHead(f"GET {url} HTTP/1.1", []), as_request=False)
    assert [n for _, n in clues.names] == names
