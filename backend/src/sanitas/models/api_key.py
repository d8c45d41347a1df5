"""API keys: long-lived secrets a program presents instead of a signed-in session, on the file
calls only (see sanitas/apikeys/). The secret itself is never stored: `secret_hash` is the
SHA-256 of the whole secret (a 238-bit random string, so a plain digest cannot be reversed),
`prefix` its first characters, shown so people can tell keys apart."""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column

API_KEY_NAME_MAX = 100


def looks_like_key(credential: str | None) -> bool:
    """Whether a credential is an API key by its form (`sk_...`), before any lookup."""
    return credential is not None and credential.startswith("sk_")


def hash_secret(secret: str) -> str:
    """What `api_keys.secret_hash` stores of a key: its SHA-256 (the key is random enough)."""
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


class ApiKeyScope(StrEnum):
    FILES_WRITE = "files:write"  # upload, the one-call sanitize
    FILES_READ = "files:read"  # status, download, history


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = id_column()
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(API_KEY_NAME_MAX))
    prefix: Mapped[str] = mapped_column(String(24))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]
    # Revoked keys stay (the audit log names them) but never authenticate again.
    revoked_at: Mapped[datetime | None] = mapped_column(index=True)
