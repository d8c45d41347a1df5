"""Blobs as files under a directory (settings.files_dir). Writes go to a temporary name in
the same directory and are renamed into place, so a reader never sees half a blob."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from sanitas.storage import CHUNK, BlobNotFound, StorageError


class LocalStorage:
    name = "local"

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if not key or key.startswith("/") or ".." in key.split("/") or "\\" in key:
            raise StorageError(f"invalid storage key {key!r}")
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root):
            raise StorageError(f"invalid storage key {key!r}")
        return path

    def put_file(self, key: str, src: Path, *, move: bool = False) -> int:
        dest = self._path(key)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".put-")
        os.close(fd)
        try:
            if move:
                try:
                    os.replace(src, tmp)
                except OSError:  # another filesystem: copy instead
                    shutil.copyfile(src, tmp)
            else:
                shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return dest.stat().st_size

    def get_to_path(self, key: str, dest: Path) -> None:
        try:
            shutil.copyfile(self._path(key), dest)
        except FileNotFoundError as exc:
            raise BlobNotFound(key) from exc

    def iter_chunks(self, key: str, chunk_size: int = CHUNK) -> Iterator[bytes]:
        try:
            fh = open(self._path(key), "rb")  # noqa: SIM115 (closed by the generator)
        except FileNotFoundError as exc:
            raise BlobNotFound(key) from exc
        return _read_chunks(fh, chunk_size)

    def size(self, key: str) -> int:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError as exc:
            raise BlobNotFound(key) from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def keys(self, prefix: str = "") -> list[str]:
        out = []
        for path in self.root.rglob("*"):
            if path.is_file() and not path.name.startswith(".put-"):
                key = path.relative_to(self.root).as_posix()
                if key.startswith(prefix):
                    out.append(key)
        return sorted(out)

    def healthy(self) -> bool:
        return self.root.is_dir() and os.access(self.root, os.W_OK)

    def sweep_partials(self, min_age: float) -> int:
        """Remove half-written `.put-*` files older than `min_age` seconds (a crash mid-copy)."""
        removed = 0
        cutoff = time.time() - min_age
        for path in self.root.rglob(".put-*"):
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:
                pass
        return removed


def _read_chunks(fh: BinaryIO, chunk_size: int) -> Iterator[bytes]:
    with fh:
        while chunk := fh.read(chunk_size):
            yield chunk
