"""Messages sent through the contact form."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sanitas.contact.schemas import ContactIn, ContactList, ContactOut
from sanitas.models import ContactMessage, User
from sanitas.web.schemas import Pagination


def save_message(session: Session, body: ContactIn, user: User | None) -> ContactMessage:
    row = ContactMessage(name=body.name, email=str(body.email), subject=body.subject,
                         message=body.message, user_id=user.id if user else None)
    session.add(row)
    session.commit()
    return row


def list_messages(session: Session, *, page: int, limit: int) -> ContactList:
    """One page of the messages, newest first."""
    total = session.scalar(select(func.count()).select_from(ContactMessage)) or 0
    rows = session.scalars(select(ContactMessage).order_by(ContactMessage.created_at.desc())
                           .offset(Pagination.offset(page, limit)).limit(limit)).all()
    return ContactList(messages=[ContactOut.model_validate(r) for r in rows],
                       pagination=Pagination.of(page, limit, total))
