"""The webhook calls: an account's endpoints, their delivery log and the test event. These are
account calls: they take a signed-in session, never an API key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from sanitas.plans import Capability
from sanitas.web.deps import CurrentUser, Requires, SessionDep, SettingsDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok
from sanitas.webhooks import service
from sanitas.webhooks.schemas import (
    DeliveryOut,
    WebhookCreated,
    WebhookDeleted,
    WebhookIn,
    WebhookOut,
)

router = APIRouter(prefix="/webhooks", tags=["webhooks"],
                   dependencies=[Requires(Capability.WEBHOOKS)],
                   responses={401: {"model": ErrorEnvelope},
                              403: {"model": ErrorEnvelope, "description": "The caller's plan "
                                    "has no webhooks (`plan_required`)"}})

_NOT_FOUND = {"model": ErrorEnvelope, "description": "No such webhook of this account "
              "(`not_found`)"}
_INVALID = {"model": ErrorEnvelope, "description": "A bad URL (`invalid_webhook_url`), one "
            "whose host resolves to a loopback, private, link-local, reserved or metadata "
            "address (`webhook_url_not_allowed`) or does not resolve "
            "(`webhook_url_unresolvable`), an unknown event or field (`validation_error`)"}


@router.post("", status_code=201, response_model=Envelope[WebhookCreated], responses={
    409: {"model": ErrorEnvelope, "description": "The account has as many webhooks as it "
          "may (`too_many_webhooks`)"},
    422: _INVALID})
def create_webhook(body: WebhookIn, request: Request, user: CurrentUser, session: SessionDep,
                   settings: SettingsDep):
    webhook, secret = service.create_webhook(session, settings, user, body,
                                             ip=client_ip(request))
    return ok(WebhookCreated(webhook=webhook, secret=secret),
              "Webhook created. Copy the signing secret now: it will not be shown again.")


@router.get("", response_model=Envelope[list[WebhookOut]])
def list_webhooks(user: CurrentUser, session: SessionDep):
    return ok(service.list_webhooks(session, user), "Webhooks")


@router.put("/{webhook_id}", response_model=Envelope[WebhookOut],
            responses={404: _NOT_FOUND, 422: _INVALID})
def update_webhook(webhook_id: str, body: WebhookIn, request: Request, user: CurrentUser,
                   session: SessionDep, settings: SettingsDep):
    return ok(service.update_webhook(session, settings, user, webhook_id, body,
                                     ip=client_ip(request)), "Webhook updated")


@router.delete("/{webhook_id}", response_model=Envelope[WebhookDeleted],
               responses={404: _NOT_FOUND})
def delete_webhook(webhook_id: str, request: Request, user: CurrentUser, session: SessionDep):
    service.delete_webhook(session, user, webhook_id, ip=client_ip(request))
    return ok(WebhookDeleted(id=webhook_id), "Webhook deleted")


@router.get("/{webhook_id}/deliveries", response_model=Envelope[list[DeliveryOut]],
            responses={404: _NOT_FOUND, 422: {"model": ErrorEnvelope,
                                              "description": "A bad limit (`validation_error`)"}})
def list_deliveries(webhook_id: str, user: CurrentUser, session: SessionDep,
                    limit: Annotated[int, Query(ge=1, le=service.DELIVERIES_MAX,
                                                description="How many, newest first")]
                    = service.DELIVERIES_SHOWN):
    return ok(service.list_deliveries(session, user, webhook_id, limit), "Deliveries")


@router.post("/{webhook_id}/test", status_code=202, response_model=Envelope[DeliveryOut],
             responses={404: _NOT_FOUND})
def send_test(webhook_id: str, user: CurrentUser, session: SessionDep):
    return ok(service.send_test(session, user, webhook_id),
              "Test event queued; it is sent within seconds (see the delivery log).")
