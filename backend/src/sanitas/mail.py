"""Outgoing email: SMTP when configured, else .eml files in the outbox folder."""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage
from email.utils import make_msgid

from sanitas.config import Settings
from sanitas.db import utcnow

log = logging.getLogger(__name__)


def send_email(settings: Settings, to: str, subject: str, body: str) -> None:
    msg = EmailMessage()
    msg["From"] = settings.mail_from
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(domain="sanitas.local")
    msg.set_content(body)
    if settings.smtp_host:
        with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=30) as smtp:
            if settings.smtp_starttls:
                smtp.starttls()
            if settings.smtp_username:
                smtp.login(settings.smtp_username, settings.smtp_password or "")
            smtp.send_message(msg)
        log.info("sent email %r to %s via SMTP", subject, to)
        return
    settings.outbox_dir.mkdir(parents=True, exist_ok=True)
    stamp = utcnow().strftime("%Y%m%dT%H%M%S%f")
    safe_to = "".join(c if c.isalnum() else "_" for c in to)[:60]
    path = settings.outbox_dir / f"{stamp}-{safe_to}.eml"
    path.write_bytes(bytes(msg))
    # The link is in the file (the operator's outbox); the log names only the file.
    log.info("email %r to %s written to %s", subject, to, path)
