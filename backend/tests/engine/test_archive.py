"""ZIP archives: members sanitized recursively, the unsafe ones dropped and listed, bombs and
unsafe names refused."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from sanitas.engine import sanitize_file
from tests.engine.corpus import zip_bytes


def test_members_sanitized_and_dropped(corpus, out_dir, tmp_path):
    result = sanitize_file(corpus["bundle.zip"], out_dir)
    assert result.status == "ok"
    with zipfile.ZipFile(result.output) as zf:
        names = set(zf.namelist())
        assert {"docs/hostile.pdf", "docs/photo.jpg", "docs/notes.txt", "inner.zip"} <= names
        assert not any(n.startswith("tools/") for n in names)
        for name in names:
            assert b"EVIL" not in zf.read(name), name
        inner = zipfile.ZipFile(io.BytesIO(zf.read("inner.zip")))
        assert set(inner.namelist()) == {"deep/hostile.pdf", "photo.jpg"}
        pdf = tmp_path / "member.pdf"
        pdf.write_bytes(zf.read("docs/hostile.pdf"))
    from tests.engine.pdfscan import pdf_dangers
    assert pdf_dangers(pdf) == set()
    dropped = {f.location: f.detail for f in result.findings if f.kind == "archive_member"}
    assert "tools/setup.exe" in dropped and "tools/install.sh" in dropped
    assert any("nested too deeply" in d for d in dropped.values())
    assert any(f.kind == "gps_location" and f.location.startswith("docs/photo.jpg")
               for f in result.findings)


@pytest.mark.parametrize("name,words", [
    ("bomb.zip", "zip bomb"), ("traversal.zip", "path traversal"),
    ("symlink.zip", "symbolic link"), ("encrypted.zip", "encrypted"),
])
def test_refused(corpus, out_dir, name, words):
    result = sanitize_file(corpus[name], out_dir)
    assert result.status == "rejected" and words in result.reason


def test_too_many_members_and_absolute_names(tmp_path, out_dir):
    many = tmp_path / "many.zip"
    many.write_bytes(zip_bytes({f"f{i}.txt": b"x" for i in range(5001)}))
    assert "too many members" in sanitize_file(many, out_dir).reason
    absolute = tmp_path / "abs.zip"
    absolute.write_bytes(zip_bytes({"/etc/cron.d/x": b"x"}))
    assert "absolute path" in sanitize_file(absolute, out_dir).reason


def test_lying_size_header_refused_while_extracting(tmp_path, out_dir):
    data = bytearray(zip_bytes({"a.txt": b"A" * 10_000}))
    central = data.find(b"PK\x01\x02")
    data[central + 24:central + 28] = (100).to_bytes(4, "little")  # claims 100 bytes
    path = tmp_path / "liar.zip"
    path.write_bytes(bytes(data))
    result = sanitize_file(path, out_dir)
    assert result.status == "rejected"
    assert "larger than its header" in result.reason or "damaged" in result.reason


def test_output_names_never_from_inside(corpus, tmp_path, out_dir):
    path = tmp_path / "x.zip"
    path.write_bytes(zip_bytes({"a.txt": b"hi"}))
    result = sanitize_file(path, out_dir, original_name="../../evil/name.zip")
    assert Path(result.output).parent == out_dir and Path(result.output).name == "name.zip"


@pytest.mark.parametrize("member,words", [
    ("report.txt:hidden", "colon"), ("CON.txt", "Windows treats specially"),
    ("trailing. ", "Windows treats specially"), ("C:/x.txt", "absolute path"),
    ("..\\..\\x.txt", "path traversal"),
])
def test_windows_unsafe_names(tmp_path, out_dir, member, words):
    path = tmp_path / "names.zip"
    path.write_bytes(zip_bytes({member: b"x"}))
    result = sanitize_file(path, out_dir)
    assert result.status == "rejected" and words in result.reason


def test_java_and_android_packages_are_executables(tmp_path, out_dir):
    jar = tmp_path / "tool.zip"
    jar.write_bytes(zip_bytes({"META-INF/MANIFEST.MF": b"Main-Class: X\n", "X.class": b"\xca"}))
    apk = tmp_path / "app.zip"
    apk.write_bytes(zip_bytes({"AndroidManifest.xml": b"x", "classes.dex": b"dex\n035"}))
    for path, words in ((jar, "Java"), (apk, "Android")):
        result = sanitize_file(path, out_dir)
        assert result.status == "rejected" and words in result.reason
