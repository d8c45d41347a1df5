"""/api/contact: anyone can write to the team; admins read the messages."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BeforeValidator, EmailStr, Field
from sqlalchemy import func, select

from sanitas import ratelimit
from sanitas.auth.service import normalise_email
from sanitas.deps import AdminUser, OptionalUser, SessionDep, SettingsDep, client_ip
from sanitas.models import ContactMessage
from sanitas.schemas import CamelModel, Envelope, ErrorEnvelope, Pagination, ok

router = APIRouter(prefix="/contact", tags=["contact"],
                   responses={422: {"model": ErrorEnvelope}, 429: {"model": ErrorEnvelope}})


def _strip(value: str) -> str:
    return value.strip() if isinstance(value, str) else value


class ContactIn(CamelModel):
    # Lengths are checked after surrounding whitespace is removed.
    name: Annotated[str, BeforeValidator(_strip), Field(min_length=1, max_length=200)]
    email: EmailStr
    subject: Annotated[str, BeforeValidator(_strip), Field(min_length=1, max_length=200)]
    message: Annotated[str, BeforeValidator(_strip), Field(min_length=10, max_length=5000)]


class ContactOut(CamelModel):
    id: str
    name: str
    email: str
    subject: str
    message: str
    user_id: str | None
    created_at: datetime


class ContactCreated(CamelModel):
    id: str


class ContactList(CamelModel):
    messages: list[ContactOut]
    pagination: Pagination


@router.post("", response_model=Envelope[ContactCreated], status_code=201)
def send_message(body: ContactIn, request: Request, user: OptionalUser, session: SessionDep,
                 settings: SettingsDep):
    sender = user.id if user else normalise_email(str(body.email))
    ratelimit.hit(session, [
        (f"contact:ip:{client_ip(request)}", settings.rate_limit_contact_per_ip),
        (f"contact:acct:{sender}", settings.rate_limit_contact_per_account),
    ], settings.rate_limit_window_seconds)
    row = ContactMessage(name=body.name, email=str(body.email), subject=body.subject,
                         message=body.message, user_id=user.id if user else None)
    session.add(row)
    session.commit()
    return ok(ContactCreated(id=row.id),
              "Thank you for your message. We will get back to you within 24 hours.")


@router.get("", response_model=Envelope[ContactList])
def list_messages(_: AdminUser, session: SessionDep, page: int = Query(1, ge=1, le=100000),
                  limit: int = Query(20, ge=1, le=100)):
    total = session.scalar(select(func.count()).select_from(ContactMessage)) or 0
    rows = session.scalars(select(ContactMessage).order_by(ContactMessage.created_at.desc())
                           .offset((page - 1) * limit).limit(limit)).all()
    return ok(ContactList(messages=[ContactOut.model_validate(r) for r in rows],
                          pagination=Pagination.of(page, limit, total)), "Messages loaded")
