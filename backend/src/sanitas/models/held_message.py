"""Messages the mail filter (`sanitas mail`, sanitas/mailfilter/) handled: one row per message
(a retry of the same queued message reuses its row), with what an admin needs to find it and
the key of its original, kept sealed in storage until `expires_at` for release."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column


class HeldStatus(StrEnum):
    RECEIVED = "received"  # being cleaned (or the filter stopped before an answer)
    DELIVERED = "delivered"  # the next hop accepted the cleaned copy
    REFUSED = "refused"  # the message was refused (5xx): it bounces to its sender
    DEFERRED = "deferred"  # an internal fault or the next hop failed (4xx): Postfix retries
    RELEASED = "released"  # an admin re-injected the original


HELD_STATUSES = tuple(s.value for s in HeldStatus)


class HeldMessage(Base):
    __tablename__ = "held_messages"
    __table_args__ = (Index("ix_held_messages_created", "created_at"),)

    id: Mapped[str] = id_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # sha256 of the envelope and the bytes: the same queued message retried has the same one.
    digest: Mapped[str] = mapped_column(String(64), index=True)
    message_id: Mapped[str | None] = mapped_column(String(255))
    sender: Mapped[str] = mapped_column(String(320))
    recipients: Mapped[list[str]] = mapped_column(JSON)
    subject: Mapped[str | None] = mapped_column(String(500))
    size: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), index=True)
    verdict: Mapped[str | None] = mapped_column(String(16))
    verdict_counts: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    summary: Mapped[str | None] = mapped_column(Text)
    # [{name, verdict, summary}] of the attachments, as the cleaned message carries them.
    attachments: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    reason: Mapped[str | None] = mapped_column(Text)  # refused or deferred: why
    refused_recipients: Mapped[list[str] | None] = mapped_column(JSON)
    policy_id: Mapped[str | None] = mapped_column(String(36))
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    duration: Mapped[float | None] = mapped_column(Float)
    original_key: Mapped[str | None] = mapped_column(String(200))  # None: not (or no longer) kept
    expires_at: Mapped[datetime | None] = mapped_column(index=True)
    released_at: Mapped[datetime | None] = mapped_column()
    released_by: Mapped[str | None] = mapped_column(String(320))
