"""Originals kept for release, sealed at rest: AES-256-GCM under a key derived (HKDF-SHA256)
from the server's secret key, which is never in storage or the database, bound to the held
message's id (a blob copied under another id does not open). Storage (local folder or S3)
only ever holds the sealed bytes, under `mail/originals/<id>`."""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from sanitas.config import Settings
from sanitas.storage import Storage

MAGIC = b"SNMAIL1\0"
_INFO = b"sanitas held mail v1"


class Unsealable(Exception):
    """The blob does not open with this server's secret key (another key, or damaged)."""


def key_of(held_id: str) -> str:
    return f"mail/originals/{held_id}"


@lru_cache(maxsize=8)
def _key(secret: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(
        secret.encode("utf-8"))


def seal(settings: Settings, held_id: str, data: bytes) -> bytes:
    nonce = os.urandom(12)
    return MAGIC + nonce + AESGCM(_key(settings.signing_key())).encrypt(
        nonce, data, held_id.encode("ascii"))


def unseal(settings: Settings, held_id: str, blob: bytes) -> bytes:
    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + 12 + 16:
        raise Unsealable("not a sealed original")
    nonce = blob[len(MAGIC):len(MAGIC) + 12]
    try:
        return AESGCM(_key(settings.signing_key())).decrypt(
            nonce, blob[len(MAGIC) + 12:], held_id.encode("ascii"))
    except InvalidTag:
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
