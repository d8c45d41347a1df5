"""Webhooks: an account's endpoints that are told when its files finish or expire, and the
deliveries queued for them (see sanitas/webhooks/).

The signing secret must be readable again to sign each delivery, so it cannot be hashed like an
API key: `secret_sealed` holds it sealed with the server's secret key (AES-GCM, bound to the
webhook's id; sanitas.webhooks.service.seal_secret). Deliveries are rows, so queued and retried
deliveries survive restarts; each keeps the log of its attempts (at most MAX_ATTEMPTS)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column

WEBHOOK_URL_MAX = 2048


class WebhookEvent(StrEnum):
    FILE_COMPLETED = "file.completed"
    FILE_FAILED = "file.failed"
    FILE_EXPIRED = "file.expired"


TEST_EVENT = "webhook.test"  # what the "send test event" call delivers; never subscribed to


class DeliveryState(StrEnum):
    PENDING = "pending"  # waiting for its next attempt (next_attempt_at)
    SUCCEEDED = "succeeded"  # the endpoint answered 2xx
    FAILED = "failed"  # every attempt failed: given up


class Webhook(Base):
    __tablename__ = "webhooks"

    id: Mapped[str] = id_column()
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(WEBHOOK_URL_MAX))
    events: Mapped[list[str]] = mapped_column(JSON)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    secret_sealed: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDelivery(Base):
    """One event for one endpoint, tried until it succeeds or the retry schedule runs out.
    A sender claims it (claim_token, claimed_until) for one attempt; a claim whose sender died
    lapses at claimed_until and the delivery is due again."""

    __tablename__ = "webhook_deliveries"

    id: Mapped[str] = id_column()
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"),
                                            index=True)
    event_id: Mapped[str] = mapped_column(String(64))  # the `webhook-id` header, every attempt
    event_type: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(16), default=DeliveryState.PENDING, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(index=True)
    claim_token: Mapped[str | None] = mapped_column(String(64))
    claimed_until: Mapped[datetime | None]
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    # [{attempt, at, statusCode, error, durationMs}], oldest first, one per attempt.
    attempt_log: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    finished_at: Mapped[datetime | None]
