"""Archives other than ZIP, made for the tests: tar (plain and gzip/bzip2/xz), 7z (written by
libarchive) and RAR4 (built by hand: nothing here writes RAR, and a stored RAR4 is a few
headers around the bytes)."""

from __future__ import annotations

import io
import struct
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path


def tar_bytes(members: dict[str, bytes], compression: str = "",
              special: tuple[tarfile.TarInfo, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}" if compression else "w",
                      format=tarfile.PAX_FORMAT) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.uid, info.uname, info.mode = len(data), 1000, "alice", 0o644
            tf.addfile(info, io.BytesIO(data))
        for info in special:
            tf.addfile(info)
    return buffer.getvalue()


def link_member(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def seven_zip_bytes(path: Path, members: dict[str, bytes]) -> Path:
    import libarchive

    with libarchive.file_writer(str(path), "7zip") as writer:
        for name, data in members.items():
            writer.add_file_from_memory(name, len(data), data)
    return path


def _rar_block(head_type: int, flags: int, body: bytes) -> bytes:
    size = 7 + len(body)
    rest = struct.pack("<BHH", head_type, flags, size) + body
    return struct.pack("<H", zlib.crc32(rest) & 0xFFFF) + rest


def rar4_bytes(members: dict[str, bytes], *, encrypted: bool = False, volume: bool = False,
               modes: dict[str, int] | None = None) -> bytes:
    """A RAR 4 archive of stored members (method 0x30). `modes` gives a member Unix host
    attributes (a symbolic link: 0o120777 and the target as its data)."""
    out = b"Rar!\x1a\x07\x00" + _rar_block(0x73, 0x0001 if volume else 0, b"\x00" * 6)
    for name, data in members.items():
        raw_name = name.encode()
        unix_mode = (modes or {}).get(name)
        host, attributes = (3, unix_mode) if unix_mode is not None else (2, 0x20)
        body = struct.pack("<IIBIIBBHI", len(data), len(data), host, zlib.crc32(data),
                           0x5A000000, 20, 0x30, len(raw_name), attributes) + raw_name
        flags = 0x8000 | (0x0004 if encrypted else 0)
        out += _rar_block(0x74, flags, body) + data
    return out + _rar_block(0x7B, 0x4000, b"")


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


_MEMBERS = {"notes.txt": b"A text member.\n", "folder/table.csv": b"a,b\n1,2\n"}

# One sample per archive kind, for tests/engine/samples.py (the registry walk).
ARCHIVE_SAMPLES: dict[str, Callable[[Path], Path]] = {
    "tar": lambda folder: _write(folder, "sample.tar", tar_bytes(_MEMBERS)),
    "gzip": lambda folder: _write(folder, "sample.tar.gz", tar_bytes(_MEMBERS, "gz")),
    "bzip2": lambda folder: _write(folder, "sample.tar.bz2", tar_bytes(_MEMBERS, "bz2")),
    "xz": lambda folder: _write(folder, "sample.tar.xz", tar_bytes(_MEMBERS, "xz")),
    "7z": lambda folder: seven_zip_bytes(folder / "sample.7z", _MEMBERS),
    "rar": lambda folder: _write(folder, "sample.rar", rar4_bytes(_MEMBERS)),
}
