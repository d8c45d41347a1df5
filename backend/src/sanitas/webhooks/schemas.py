"""Request and answer shapes of the webhook calls."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from sanitas.models.webhook import WEBHOOK_URL_MAX, DeliveryState, WebhookEvent
from sanitas.web.schemas import CamelModel, UtcTimestamp


class WebhookIn(BaseModel):
    """A new endpoint, or (PUT) an endpoint's whole new settings. Unknown keys are refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    url: str = Field(min_length=1, max_length=WEBHOOK_URL_MAX,
                     description="Where events are POSTed: an http(s) URL on a public address")
    events: list[WebhookEvent] = Field(min_length=1, max_length=len(WebhookEvent),
                                       description="The events to send")
    enabled: bool = Field(True, description="False: no new events are queued for it")

    @field_validator("url")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @field_validator("events")
    @classmethod
    def _unique(cls, value: list[WebhookEvent]) -> list[WebhookEvent]:
        return sorted(set(value), key=list(WebhookEvent).index)


class LastDelivery(CamelModel):
    """The endpoint's newest delivery, for a glance at whether it is healthy."""

    event_type: str
    state: DeliveryState
    attempts: int
    created_at: UtcTimestamp
    finished_at: UtcTimestamp | None = None
    last_status_code: int | None = None
    last_error: str | None = None


class WebhookOut(CamelModel):
    id: str
    url: str
    events: list[WebhookEvent]
    enabled: bool
    created_at: UtcTimestamp
    updated_at: UtcTimestamp
    last_delivery: LastDelivery | None = Field(None, description="The newest delivery; none "
                                                                 "before the first event")


class WebhookCreated(CamelModel):
    webhook: WebhookOut
    secret: str = Field(description="The signing secret (whsec_...), for verifying the "
                                    "`webhook-signature` header. Shown only in this answer.")


class WebhookDeleted(CamelModel):
    id: str


class DeliveryAttempt(CamelModel):
    attempt: int
    at: str = Field(description="When the attempt was made (ISO 8601, UTC)")
    status_code: int | None = Field(None, description="The endpoint's HTTP status; none when "
                                                      "it could not be reached")
    error: str | None = None
    duration_ms: int


class DeliveryOut(CamelModel):
    id: str
    event_id: str = Field(description="The `webhook-id` header, the same on every attempt")
    event_type: str
    state: DeliveryState
    attempts: int
    next_attempt_at: UtcTimestamp | None = Field(None, description="While pending")
    last_status_code: int | None = None
    last_error: str | None = None
    created_at: UtcTimestamp
    finished_at: UtcTimestamp | None = None
    attempt_log: list[DeliveryAttempt] = Field(default_factory=list,
                                               description="Every attempt, oldest first")
    payload: dict[str, Any] = Field(description="The body that is sent")
