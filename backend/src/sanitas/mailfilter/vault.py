"""Originals kept for release, sealed at rest by sanitas.sealing: AES-256-GCM under a key derived
(HKDF-SHA256, with a label of its own) from the server's secret key, which is never in storage or
the database, bound to the held message's id (a blob copied under another id does not open).
Storage (local folder or S3) only ever holds the sealed bytes, under `mail/originals/<id>`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sanitas.config import Settings
from sanitas.sealing import SecretUnavailable, seal_bytes, unseal_bytes
from sanitas.storage import Storage

MAGIC = b"SNMAIL1\0"
_INFO = b"sanitas held mail v1"


class Unsealable(Exception):
    """The blob does not open with this server's secret key (another key, or damaged)."""


def key_of(held_id: str) -> str:
    return f"mail/originals/{held_id}"


def seal(settings: Settings, held_id: str, data: bytes) -> bytes:
    """The original sealed by sanitas.sealing (its own key label), after a magic line."""
    return MAGIC + seal_bytes(settings, held_id, data, info=_INFO)


def unseal(settings: Settings, held_id: str, blob: bytes) -> bytes:
    if not blob.startswith(MAGIC):
        raise Unsealable("not a sealed original")
    try:
        return unseal_bytes(settings, held_id, blob[len(MAGIC):], info=_INFO)
    except SecretUnavailable:
        raise Unsealable("the sealed original does not open with this key") from None


def store(settings: Settings, storage: Storage, held_id: str, data: bytes) -> str:
    """Seal `data` and put it in storage; returns its key."""
    key = key_of(held_id)
    with tempfile.TemporaryDirectory(dir=settings.data_dir) as folder:
        path = Path(folder) / "sealed"
        path.write_bytes(seal(settings, held_id, data))
        storage.put_file(key, path, move=True)
    return key


def load(settings: Settings, storage: Storage, held_id: str, key: str) -> bytes:
    """The original kept under `key` (BlobNotFound, Unsealable)."""
    blob = b"".join(storage.iter_chunks(key))
    return unseal(settings, held_id, blob)
