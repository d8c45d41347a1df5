"""The password given with an upload, on its way from the API to the job that uses it.

Why a sealed column in the job row: the job row is what every executor shares (the embedded
one, the one in the supervisor of `sanitas serve --workers N`, and Celery workers on other
machines read their jobs from the database; Celery messages carry only the job id, so the
password never sits in Redis). Keeping it in API process memory would not reach the
supervisor or a worker; putting it in the message would store it in clear in the broker.

So the password is sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the app's
secret key, which is never in the database, and bound to its job (the job id is the associated
data: a sealed value copied into another row does not open). A database dump, backup or
replica without the secret key does not reveal it. It is wiped (NULL) as soon as the job
reaches a final state (completed or failed), when its file expires, and when the job is
removed; between an infrastructure retry and the next attempt it stays, so the retry can run.
API processes and workers must share `SANITAS_SECRET_KEY` (production requires it to be set);
a worker that cannot open a sealed password fails that job with a reason instead.

The clear password is never logged, never put into an exception message, and never returned
by any API answer.
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
_INFO = b"sanitas job password v1"


class SecretUnavailable(Exception):
    """The sealed password cannot be opened here (another secret key, or a damaged value)."""


@lru_cache(maxsize=8)
def _key(secret: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(
        secret.encode("utf-8"))


def seal(settings: Settings, job_id: str, password: str) -> str:
    """The value stored in `jobs.password_secret`."""
    nonce = os.urandom(12)
    sealed = AESGCM(_key(settings.signing_key())).encrypt(
        nonce, password.encode("utf-8"), job_id.encode("utf-8"))
    return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")


def unseal(settings: Settings, job_id: str, value: str) -> str:
    """The password sealed for `job_id`; SecretUnavailable if it cannot be opened."""
    if not value.startswith(PREFIX):
        raise SecretUnavailable("unknown format")
    try:
        raw = base64.urlsafe_b64decode(value[len(PREFIX):].encode("ascii"))
        clear = AESGCM(_key(settings.signing_key())).decrypt(
            raw[:12], raw[12:], job_id.encode("utf-8"))
        return clear.decode("utf-8")
    except (InvalidTag, ValueError, binascii.Error, UnicodeError):
        raise SecretUnavailable("the sealed password does not open with this key") from None
