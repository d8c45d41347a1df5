"""Archives other than ZIP (7z, RAR, tar, gzip/bzip2/xz): members sanitized recursively into a
ZIP, with the bomb, depth, name and encryption rules of ZIP archives."""

from __future__ import annotations

import gzip
import tarfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from sanitas.engine import sanitize_file
from sanitas.engine.report import RejectionCode
from tests.engine.archive_corpus import link_member, rar4_bytes, seven_zip_bytes, tar_bytes
from tests.engine.corpus import FAKE_EXE
from tests.engine.corpus_office import hostile_docm

MEMBERS = {"docs/report.docm": hostile_docm(), "tools/setup.exe": FAKE_EXE,
           "docs/notes.txt": b"hello\n"}


def _archive(tmp_path: Path, kind: str, members: dict[str, bytes], **kw) -> Path:
    if kind == "7z":
        return seven_zip_bytes(tmp_path / "a.7z", members)
    path = tmp_path / f"a.{kind}"
    if kind == "rar":
        path.write_bytes(rar4_bytes(members, **kw))
    else:
        compression = {"tar": "", "tgz": "gz", "tbz2": "bz2", "txz": "xz"}[kind]
        path.write_bytes(tar_bytes(members, compression, **kw))
    return path


@pytest.mark.parametrize("kind,detected", [("tar", "tar"), ("tgz", "gzip"), ("tbz2", "bzip2"),
                                           ("txz", "xz"), ("7z", "7z"), ("rar", "rar")])
def test_members_cleaned_into_a_zip(tmp_path, out_dir, kind, detected):
    result = sanitize_file(_archive(tmp_path, kind, MEMBERS), out_dir)
    assert result.status == "ok", result.reason
    assert result.detected_type == detected and result.output_type == "zip"
    with zipfile.ZipFile(result.output) as zf:
        assert set(zf.namelist()) == {"docs/report.docx", "docs/notes.txt"}
        assert not any("vbaProject" in n for n in zipfile.ZipFile(
            zf.open("docs/report.docx")).namelist())
    dropped = {f.location for f in result.findings if f.kind == "archive_member"
               and f.action == "removed"}
    assert dropped == {"tools/setup.exe"}
    assert any(f.kind == "macro" and f.location.startswith("docs/report.docm")
               for f in result.findings)
    assert any(f.kind == "renamed" and "docs/report.docx" in (f.detail or "")
               for f in result.findings)


def test_single_compressed_document_comes_out_in_a_zip(tmp_path, out_dir):
    path = tmp_path / "table.csv.gz"
    with open(path, "wb") as raw, \
            gzip.GzipFile("table.csv", "wb", fileobj=raw, mtime=0) as gz:
        gz.write(b"name,value\n=HYPERLINK(1),2\n")
    result = sanitize_file(path, out_dir)
    assert result.status == "ok" and result.detected_type == "gzip", result.reason
    with zipfile.ZipFile(result.output) as zf:
        assert zf.namelist() == ["table.csv"]
        assert b"'=HYPERLINK" in zf.read("table.csv")


@pytest.mark.parametrize("kind", ["tar", "tgz", "7z", "rar"])
@pytest.mark.parametrize("name,words", [("../../etc/cron.d/x", "path traversal"),
                                        ("/etc/passwd", "absolute path"),
                                        ("CON.txt", "Windows treats specially")])
def test_unsafe_names_refuse_the_archive(tmp_path, out_dir, kind, name, words):
    if kind == "7z" and name.startswith("/"):
        pytest.skip("libarchive's 7z writer strips a leading slash")
    result = sanitize_file(_archive(tmp_path, kind, {name: b"x"}), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.UNSAFE_STRUCTURE
    assert words in result.reason


@pytest.mark.parametrize("special", [
    link_member("link", "/etc/passwd"), link_member("hard", "a.txt", tarfile.LNKTYPE),
    link_member("dev", "", tarfile.CHRTYPE), link_member("fifo", "", tarfile.FIFOTYPE)])
def test_links_and_devices_refuse_a_tar(tmp_path, out_dir, special):
    path = tmp_path / "x.tar.gz"
    path.write_bytes(tar_bytes({"a.txt": b"x"}, "gz", special=(special,)))
    result = sanitize_file(path, out_dir)
    assert result.code == RejectionCode.UNSAFE_STRUCTURE
    assert "link" in result.reason or "special" in result.reason


def test_symlink_in_a_rar_and_setuid_in_a_tar(tmp_path, out_dir):
    rar = tmp_path / "l.rar"
    rar.write_bytes(rar4_bytes({"a": b"/etc/passwd"}, modes={"a": 0o120777}))
    assert sanitize_file(rar, out_dir).code == RejectionCode.UNSAFE_STRUCTURE
    info = tarfile.TarInfo("run.txt")
    info.mode = 0o4755
    path = tmp_path / "s.tar"
    path.write_bytes(tar_bytes({}, special=(info,)))
    result = sanitize_file(path, out_dir)
    assert result.code == RejectionCode.UNSAFE_STRUCTURE and "set-user-ID" in result.reason


def test_duplicate_names(tmp_path, out_dir):
    path = tmp_path / "d.tar"
    path.write_bytes(tar_bytes({"a.txt": b"1"}, special=(tarfile.TarInfo("A.TXT"),)))
    result = sanitize_file(path, out_dir)
    assert result.code == RejectionCode.UNSAFE_STRUCTURE and "twice" in result.reason


def test_gzip_bomb_stops_at_the_limit(tmp_path, out_dir):
    """2 GB of zeros compressed in a stream (about 2 MB): refused as a bomb long before it is
    inflated (the ratio limit stops it near 100 times the file's size)."""
    path = tmp_path / "zeros.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip wrapper
    member = compressor.compress(bytes(1 << 20)) + compressor.flush()  # 1 MB of zeros
    with open(path, "wb") as fh:
        for _ in range(2048):  # concatenated gzip members are one stream (RFC 1952)
            fh.write(member)
    assert path.stat().st_size < 4 * 2**20
    started = time.monotonic()
    result = sanitize_file(path, out_dir)
    assert result.code == RejectionCode.BOMB, result.reason
    assert time.monotonic() - started < 30
    assert not any(p.stat().st_size > 2**20 for p in out_dir.iterdir())


def test_tar_with_ten_thousand_members(tmp_path, out_dir):
    path = tmp_path / "many.tar.gz"
    path.write_bytes(tar_bytes({f"f{i}.txt": b"x" for i in range(10_000)}, "gz"))
    result = sanitize_file(path, out_dir)
    assert result.code == RejectionCode.BOMB and "too many members" in result.reason


def test_nesting_beyond_the_depth_limit(tmp_path, out_dir):
    data = tar_bytes({"deep.txt": b"deep"})
    for level in range(4):
        data = tar_bytes({f"level{level}.tar": data}, "gz" if level % 2 else "")
    path = tmp_path / "nested.tar"
    path.write_bytes(data)
    result = sanitize_file(path, out_dir)
    assert result.status == "ok"
    assert any("nested too deeply" in (f.detail or "") for f in result.findings
               if f.kind == "archive_member")


def test_encrypted_and_split_rar(tmp_path, out_dir):
    enc = tmp_path / "enc.rar"
    enc.write_bytes(rar4_bytes({"a.txt": b"hello"}, encrypted=True))
    result = sanitize_file(enc, out_dir)
    assert result.code == RejectionCode.ENCRYPTED
    assert sanitize_file(enc, out_dir, password="secret").code == RejectionCode.ENCRYPTED
    split = tmp_path / "split.part1.rar"
    split.write_bytes(rar4_bytes({"a.txt": b"hi"}, volume=True))
    result = sanitize_file(split, out_dir)
    assert result.code == RejectionCode.UNSUPPORTED_TYPE and "multi-volume" in result.reason


@pytest.mark.parametrize("kind", ["tgz", "txz", "7z", "rar"])
def test_truncated_is_damaged(tmp_path, out_dir, kind):
    path = _archive(tmp_path, kind, {"notes.txt": b"some words " * 2000,
                                     "more.txt": b"other words " * 2000})
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    result = sanitize_file(path, out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED, result.reason
