"""Archives other than ZIP through the real sandbox: libarchive loads and reads each type there,
members are cleaned into a ZIP, and a hostile one of each is refused with its code."""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import pytest

from sanitas.engine.report import RejectionCode
from sanitas.sandbox import run_sanitizer
from tests.engine.archive_corpus import rar4_bytes, seven_zip_bytes, tar_bytes
from tests.engine.corpus import FAKE_EXE

MEMBERS = {"docs/notes.txt": b"hello\n", "tools/setup.exe": FAKE_EXE}


def _make(folder: Path, kind: str) -> Path:
    if kind == "7z":
        return seven_zip_bytes(folder / "a.7z", MEMBERS)
    data = rar4_bytes(MEMBERS) if kind == "rar" else tar_bytes(
        MEMBERS, {"tar": "", "tar.gz": "gz", "tar.bz2": "bz2", "tar.xz": "xz"}[kind])
    path = folder / f"a.{kind}"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind,detected", [("tar", "tar"), ("tar.gz", "gzip"),
                                           ("tar.bz2", "bzip2"), ("tar.xz", "xz"),
                                           ("7z", "7z"), ("rar", "rar")])
def test_each_type_cleaned_in_the_sandbox(kind, detected, sandbox_settings, tmp_path):
    path = _make(tmp_path, kind)
    result = run_sanitizer(path, tmp_path / "out", settings=sandbox_settings,
                           original_name=path.name, prewarm=False)
    assert result.status == "ok", (result.reason, result.code)
    assert result.detected_type == detected and result.output_type == "zip"
    with zipfile.ZipFile(result.output) as zf:
        assert zf.namelist() == ["docs/notes.txt"]
    assert any(f.location == "tools/setup.exe" and f.action == "removed"
               for f in result.findings)


def test_hostile_archives_refused_in_the_sandbox(sandbox_settings, tmp_path):
    bomb = tmp_path / "zeros.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = compressor.compress(bytes(1 << 20)) + compressor.flush()
    bomb.write_bytes(member * 2048)  # 2 GB of zeros in about 2 MB
    encrypted = tmp_path / "enc.rar"
    encrypted.write_bytes(rar4_bytes({"a.txt": b"x"}, encrypted=True))
    traversal = tmp_path / "t.tar"
    traversal.write_bytes(tar_bytes({"../../x.txt": b"x"}))
    truncated = _make(tmp_path, "7z")
    truncated.write_bytes(truncated.read_bytes()[:40])
    for path, code in [(bomb, RejectionCode.BOMB), (encrypted, RejectionCode.ENCRYPTED),
                       (traversal, RejectionCode.UNSAFE_STRUCTURE),
                       (truncated, RejectionCode.DAMAGED)]:
        result = run_sanitizer(path, tmp_path / f"out-{path.name}", settings=sandbox_settings,
                               original_name=path.name, prewarm=False)
        assert (result.status, result.code) == ("rejected", code), (path.name, result.reason)
