"""Blob storage for originals and sanitized files: a local directory (default) or an
S3-compatible bucket, behind one small interface. Keys look like `originals/<fileId>`,
`sanitized/<fileId>` and `previews/<fileId>`; the database holds the keys, storage holds
the bytes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from sanitas.config import Settings

CHUNK = 256 * 1024


class StorageError(Exception):
    """The storage backend failed (not found is reported as BlobNotFound)."""


class BlobNotFound(StorageError):
    pass


class StorageFull(StorageError):
    """The backend has no room for the blob (answered as 507, see errors.is_out_of_space)."""

    out_of_space = True


class Storage(Protocol):
    name: str

    def put_file(self, key: str, src: Path, *, move: bool = False) -> int:
        """Store the file at `src` under `key` (replacing any blob there); returns its size.
        With move=True the source may be consumed (renamed) when the backend allows it."""

    def get_to_path(self, key: str, dest: Path) -> None:
        """Copy the blob to the local path `dest`."""

    def iter_chunks(self, key: str, chunk_size: int = CHUNK) -> Iterator[bytes]:
        """Stream the blob's bytes."""

    def size(self, key: str) -> int: ...

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None:
        """Remove the blob; a missing blob is not an error."""

    def keys(self, prefix: str = "") -> list[str]:
        """Every key under `prefix` (used by tests and maintenance)."""

    def healthy(self) -> bool: ...


def original_key(file_id: str) -> str:
    return f"originals/{file_id}"


def sanitized_key(file_id: str) -> str:
    return f"sanitized/{file_id}"


def preview_key(file_id: str) -> str:
    """The PNG preview of a sanitized file (engine/preview.py), beside it: stored by the job,
    deleted with the sanitized copy."""
    return f"previews/{file_id}"


def make_storage(settings: Settings) -> Storage:
    if settings.storage == "s3":
        from sanitas.storage.s3 import S3Storage

        return S3Storage(settings)
    from sanitas.storage.local import LocalStorage

    return LocalStorage(settings.files_dir)
