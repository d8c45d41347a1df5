"""Webhooks: an account's endpoints (create, list, change, delete), their delivery log, the
test event, and queueing the events of finished and expired files.

Queueing never waits on the network and never raises into its caller (a job finishing, the
expiry sweep): it writes delivery rows, which the sender (sender.py) picks up.
"""

from __future__ import annotations

import base64
import logging
import secrets
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from sanitas import sealing
from sanitas.audit.service import record
from sanitas.config import Settings, get_settings
from sanitas.db import rows_matched, utcnow
from sanitas.models import AuditAction, User
from sanitas.models.webhook import (
    TEST_EVENT,
    DeliveryState,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from sanitas.plans import Capability
from sanitas.users.service import lock_user
from sanitas.web import ratelimit
from sanitas.web.errors import ApiError
from sanitas.web.schemas import iso
from sanitas.webhooks import ssrf
from sanitas.webhooks.schemas import DeliveryOut, LastDelivery, WebhookIn, WebhookOut

log = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"  # noqa: S105 - the Standard Webhooks prefix, not a secret
SECRET_BYTES = 32
MAX_WEBHOOKS_PER_USER = 20
DELIVERIES_SHOWN = 50  # default page of the delivery log
DELIVERIES_MAX = 200
TESTS_PER_MINUTE = 10  # test events per endpoint
KEEP_FINISHED_DAYS = 30  # succeeded and failed deliveries are kept this long

# Senders in this process wait on these; queueing a delivery sets them (a sender in another
# process finds it at its next poll).
_wakers: list[threading.Event] = []


def register_waker(event: threading.Event) -> None:
    _wakers.append(event)


def unregister_waker(event: threading.Event) -> None:
    if event in _wakers:
        _wakers.remove(event)


def _wake_senders() -> None:
    for event in list(_wakers):
        event.set()


# -- the signing secret -----------------------------------------------------------------------
def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def _bound_to(webhook_id: str) -> str:
    return f"webhook:{webhook_id}"


def seal_secret(settings: Settings, webhook_id: str, secret: str) -> str:
    """The stored form: sealed with the server's secret key, bound to this webhook (the job
    password sealing of sealing.py, with `webhook:<id>` as associated data)."""
    return sealing.seal(settings, _bound_to(webhook_id), secret)


def open_secret(settings: Settings, webhook: Webhook) -> str:
    """The signing secret; sealing.SecretUnavailable when this server's key differs."""
    return sealing.unseal(settings, _bound_to(webhook.id), webhook.secret_sealed)


# -- managing endpoints (routes.py: only for plans with Capability.WEBHOOKS) -----------------
def _not_found() -> ApiError:
    return ApiError(404, "Webhook not found.", "not_found")


def _own(session: Session, user: User, webhook_id: str) -> Webhook:
    webhook = session.get(Webhook, webhook_id) if len(webhook_id) <= 64 else None
    if webhook is None or webhook.user_id != user.id:
        raise _not_found()
    return webhook


def _check_url(settings: Settings, url: str) -> None:
    try:
        ssrf.check_url(url, settings.webhook_allow_private, settings.webhook_timeout_seconds)
    except ssrf.UnsafeUrl as exc:
        raise ApiError(422, exc.message, exc.code) from None


def _shown_url(url: str) -> str:
    """The URL for the audit log: without its query (it may carry a token)."""
    parts = urlsplit(url)
    return parts._replace(query="", fragment="").geturl()


def _audit_detail(webhook: Webhook) -> dict[str, Any]:
    return {"url": _shown_url(webhook.url), "events": list(webhook.events),
            "enabled": webhook.enabled}


def _last_deliveries(session: Session, webhook_ids: list[str]) -> dict[str, WebhookDelivery]:
    """Each endpoint's newest delivery (one query, whatever the number of endpoints)."""
    if not webhook_ids:
        return {}
    newest = (select(WebhookDelivery.id, func.row_number().over(
        partition_by=WebhookDelivery.webhook_id,
        order_by=(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())).label("n"))
        .where(WebhookDelivery.webhook_id.in_(webhook_ids)).subquery())
    rows = session.scalars(select(WebhookDelivery).join(newest, newest.c.id == WebhookDelivery.id)
                           .where(newest.c.n == 1)).all()
    return {row.webhook_id: row for row in rows}


def webhook_out(webhook: Webhook, last: WebhookDelivery | None = None) -> WebhookOut:
    out = WebhookOut.model_validate(webhook)
    if last is not None:
        out.last_delivery = LastDelivery.model_validate(last)
    return out


def create_webhook(session: Session, settings: Settings, user: User, body: WebhookIn, *,
                   ip: str | None) -> tuple[WebhookOut, str]:
    """A new endpoint for `user`; returns it and its signing secret (shown this once)."""
    _check_url(settings, body.url)
    # Counted and added in one transaction serialised per account (concurrent creations
    # cannot all see room for one more), as upload quotas are.
    lock_user(session, user)
    count = session.scalar(select(func.count()).select_from(Webhook)
                           .where(Webhook.user_id == user.id)) or 0
    if count >= MAX_WEBHOOKS_PER_USER:
        raise ApiError(409, f"An account can have at most {MAX_WEBHOOKS_PER_USER} webhooks; "
                            "delete one you no longer use.", "too_many_webhooks")
    secret = new_secret()
    webhook_id = str(uuid.uuid4())
    now = utcnow()
    webhook = Webhook(id=webhook_id, user_id=user.id, url=body.url,
                      events=[e.value for e in body.events], enabled=body.enabled,
                      secret_sealed=seal_secret(settings, webhook_id, secret),
                      created_at=now, updated_at=now)
    session.add(webhook)
    session.flush()
    record(session, action=AuditAction.WEBHOOK_CREATED, actor=user, ip=ip,
           target=("webhook", webhook.id), detail=_audit_detail(webhook))
    session.commit()
    return webhook_out(webhook), secret


def list_webhooks(session: Session, user: User) -> list[WebhookOut]:
    rows = session.scalars(select(Webhook).where(Webhook.user_id == user.id)
                           .order_by(Webhook.created_at.desc(), Webhook.id)).all()
    last = _last_deliveries(session, [w.id for w in rows])
    return [webhook_out(w, last.get(w.id)) for w in rows]


def update_webhook(session: Session, settings: Settings, user: User, webhook_id: str,
                   body: WebhookIn, *, ip: str | None) -> WebhookOut:
    webhook = _own(session, user, webhook_id)
    _check_url(settings, body.url)
    before = _audit_detail(webhook)
    webhook.url = body.url
    webhook.events = [e.value for e in body.events]
    webhook.enabled = body.enabled
    webhook.updated_at = utcnow()
    after = _audit_detail(webhook)
    record(session, action=AuditAction.WEBHOOK_UPDATED, actor=user, ip=ip,
           target=("webhook", webhook.id),
           detail={**after, "changed": sorted(k for k in after if after[k] != before[k])})
    session.commit()
    return webhook_out(webhook, _last_deliveries(session, [webhook.id]).get(webhook.id))


def delete_webhook(session: Session, user: User, webhook_id: str, *, ip: str | None) -> None:
    """Delete the endpoint and its deliveries (queued ones are not sent)."""
    webhook = _own(session, user, webhook_id)
    detail = _audit_detail(webhook)
    session.execute(delete(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook.id))
    session.delete(webhook)
    record(session, action=AuditAction.WEBHOOK_DELETED, actor=user, ip=ip,
           target=("webhook", webhook_id), detail=detail)
    session.commit()


# -- deliveries -------------------------------------------------------------------------------
def delivery_out(delivery: WebhookDelivery) -> DeliveryOut:
    return DeliveryOut.model_validate(delivery)


def list_deliveries(session: Session, user: User, webhook_id: str,
                    limit: int = DELIVERIES_SHOWN) -> list[DeliveryOut]:
    """The endpoint's deliveries, newest first."""
    webhook = _own(session, user, webhook_id)
    rows = session.scalars(select(WebhookDelivery)
                           .where(WebhookDelivery.webhook_id == webhook.id)
                           .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id)
                           .limit(max(1, min(limit, DELIVERIES_MAX)))).all()
    return [delivery_out(d) for d in rows]


def new_event_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def _delivery(webhook_id: str, event_type: str, data: dict[str, Any]) -> WebhookDelivery:
    now = utcnow()
    return WebhookDelivery(
        webhook_id=webhook_id, event_id=new_event_id(), event_type=event_type,
        payload={"type": event_type, "timestamp": iso(now), "data": data},
        state=DeliveryState.PENDING, attempts=0, next_attempt_at=now, attempt_log=[],
        created_at=now)


def send_test(session: Session, user: User, webhook_id: str) -> DeliveryOut:
    """Queue a `webhook.test` event for the endpoint (enabled or not); it is sent like any
    other, within seconds."""
    webhook = _own(session, user, webhook_id)
    try:
        ratelimit.hit(session, [(f"webhook-test:{webhook.id}", TESTS_PER_MINUTE)], 60)
    except ApiError as exc:
        if exc.status_code == 429:
            raise ApiError(429, f"At most {TESTS_PER_MINUTE} test events a minute per webhook; "
                                "try again shortly.", "too_many_requests",
                           headers=exc.headers) from None
        raise
    delivery = _delivery(webhook.id, TEST_EVENT, {
        "webhook": {"id": webhook.id, "url": webhook.url},
        "message": "A test event sent from Sanitas."})
    session.add(delivery)
    session.commit()
    _wake_senders()
    return delivery_out(delivery)


def add_events(s: Session, event: WebhookEvent,
               events: Iterable[tuple[str, Callable[[], dict[str, Any]]]]) -> int:
    """Add `event`'s deliveries to the session's open transaction, one per enabled endpoint of
    each event's owner that subscribes to it: they are committed with the change that caused
    them (a job's outcome, an expiry), so a crash cannot keep the one and lose the other. Each
    event is (owner's user id, its `data`), the data built only when an endpoint will receive
    it; the caller (processing/outcome.py) knows what the event is about, webhooks only whom to
    tell. The caller commits and then calls `wake_senders`. Returns the deliveries added."""
    pending = list(events)
    if not pending:
        return 0
    # Owners still on a plan with webhooks and active (a downgraded account's endpoints stay,
    # silent, until it is upgraded again). The job body and the expiry sweep call this
    # without the settings in hand: the process's own settings hold the plan table.
    owners = set(s.scalars(select(User.id).where(
        User.id.in_({owner for owner, _ in pending}), User.is_active.is_(True),
        User.role.in_(get_settings().plans.roles_with(Capability.WEBHOOKS)))))
    if not owners:
        return 0
    hooks = s.scalars(select(Webhook).where(Webhook.user_id.in_(owners),
                                            Webhook.enabled.is_(True))).all()
    by_owner: dict[str, list[Webhook]] = {}
    for hook in hooks:
        if event.value in (hook.events or []):
            by_owner.setdefault(hook.user_id, []).append(hook)
    added = 0
    for owner, make_data in pending:
        targets = by_owner.get(owner, [])
        if not targets:
            continue
        data = make_data()
        for hook in targets:
            s.add(_delivery(hook.id, event.value, data))
            added += 1
    return added


def wake_senders() -> None:
    """Tell this process's senders that deliveries were committed (others find them by
    polling)."""
    _wake_senders()


def prune_deliveries(factory: sessionmaker[Session], days: int = KEEP_FINISHED_DAYS) -> int:
    """Delete succeeded and failed deliveries that finished more than `days` ago."""
    from datetime import timedelta

    with factory() as s:
        result = s.execute(delete(WebhookDelivery).where(
            WebhookDelivery.state != DeliveryState.PENDING,
            WebhookDelivery.finished_at < utcnow() - timedelta(days=days)))
        s.commit()
        return rows_matched(result) or 0
