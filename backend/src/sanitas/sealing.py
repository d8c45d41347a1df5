"""Secrets the server must read back but the database must not reveal, sealed with the app's
secret key: an upload's password on its way to the job that uses it (`jobs.password_secret`)
and a webhook's signing secret (`webhooks.secret_sealed`).

A value is sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the app's secret key
(`SANITAS_SECRET_KEY`), which is never in the database, and bound to its row: the caller's
`bound_to` (a job id, `webhook:<id>`) is the associated data, so a sealed value copied into
another row does not open. A database dump, backup or replica without the secret key reveals
none of them. Every process that opens them (API processes, the executor, Celery workers) must
share the secret key; one that cannot open a value gets `SecretUnavailable` and says so.

Why a job's password is sealed in its row: the job row is what every executor shares (the
embedded one, the one in the supervisor of `sanitas serve --workers N`, and Celery workers on
other machines read their jobs from the database; Celery messages carry only the job id, so
the password never sits in Redis). It is wiped (NULL) as soon as the job reaches a final state
(completed or failed), when its file expires, and when the job is removed; between an
infrastructure retry and the next attempt it stays, so the retry can run.

A clear value is never logged, never put into an exception message, and never returned by any
API answer.
"""

from __future__ import annotations

import base64
import binascii
import os
from functools import lru_cache
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

if TYPE_CHECKING:
    from sanitas.config import Settings

PREFIX = "v1."
# The HKDF label of every sealed value (its wording predates webhook secrets; changing it would
# leave the values already stored unopenable).
_INFO = b"sanitas job password v1"


class SecretUnavailable(Exception):
    """The sealed value cannot be opened here (another secret key, or a damaged value)."""


@lru_cache(maxsize=8)
def _key(secret: str, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(
        secret.encode("utf-8"))


def seal_bytes(settings: Settings, bound_to: str, data: bytes, *, info: bytes = _INFO) -> bytes:
    """`data` sealed for the row `bound_to` names: a 12-byte nonce, then the AES-256-GCM
    ciphertext and tag, under the key HKDF derives from the secret key with the label `info`
    (one label per kind of value)."""
    nonce = os.urandom(12)
    return nonce + AESGCM(_key(settings.signing_key(), info)).encrypt(
        nonce, data, bound_to.encode("utf-8"))


def unseal_bytes(settings: Settings, bound_to: str, blob: bytes, *, info: bytes = _INFO) -> bytes:
    """What seal_bytes sealed for `bound_to`; SecretUnavailable if it cannot be opened."""
    if len(blob) < 12 + 16:
        raise SecretUnavailable("too short to be a sealed value")
    try:
        return AESGCM(_key(settings.signing_key(), info)).decrypt(
            blob[:12], blob[12:], bound_to.encode("utf-8"))
    except InvalidTag:
        raise SecretUnavailable("the sealed value does not open with this key") from None


def seal(settings: Settings, bound_to: str, clear: str) -> str:
    """`clear` sealed for the row `bound_to` names (a job id, `webhook:<id>`), as text."""
    sealed = seal_bytes(settings, bound_to, clear.encode("utf-8"))
    return PREFIX + base64.urlsafe_b64encode(sealed).decode("ascii")


def unseal(settings: Settings, bound_to: str, value: str) -> str:
    """The clear value sealed for `bound_to`; SecretUnavailable if it cannot be opened."""
    if not value.startswith(PREFIX):
        raise SecretUnavailable("unknown format")
    try:
        raw = base64.urlsafe_b64decode(value[len(PREFIX):].encode("ascii"))
        return unseal_bytes(settings, bound_to, raw).decode("utf-8")
    except (ValueError, binascii.Error, UnicodeError):
        raise SecretUnavailable("the sealed value does not open with this key") from None
