"""/api/contact: anyone can write to the team; admins read the messages."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from sanitas.auth.service import normalise_email
from sanitas.contact import service
from sanitas.contact.schemas import ContactCreated, ContactIn, ContactList
from sanitas.web import ratelimit
from sanitas.web.deps import AdminUser, OptionalUser, SessionDep, SettingsDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/contact", tags=["contact"],
                   responses={422: {"model": ErrorEnvelope}, 429: {"model": ErrorEnvelope}})


@router.post("", response_model=Envelope[ContactCreated], status_code=201)
def send_message(body: ContactIn, request: Request, user: OptionalUser, session: SessionDep,
                 settings: SettingsDep):
    sender = user.id if user else normalise_email(str(body.email))
    ratelimit.hit(session, [
        (f"contact:ip:{client_ip(request)}", settings.rate_limit_contact_per_ip),
        (f"contact:acct:{sender}", settings.rate_limit_contact_per_account),
    ], settings.rate_limit_window_seconds)
    row = service.save_message(session, body, user)
    return ok(ContactCreated(id=row.id),
              "Thank you for your message. We will get back to you within 24 hours.")


@router.get("", response_model=Envelope[ContactList])
def list_messages(_: AdminUser, session: SessionDep, page: int = Query(1, ge=1, le=100000),
                  limit: int = Query(20, ge=1, le=100)):
    return ok(service.list_messages(session, page=page, limit=limit), "Messages loaded")
