"""Outgoing email: SMTP when configured, else .eml files in the outbox folder.

Bodies (which hold single-use links) never go to the log: the log names the recipient, the
subject and, for the outbox, the file the operator can open.
"""

from __future__ import annotations

import logging
import os
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from sanitas.config import Settings
from sanitas.db import utcnow

log = logging.getLogger(__name__)

SMTP_TIMEOUT_SECONDS = 30


def build_message(settings: Settings, to: str, subject: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = settings.mail_from
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain="sanitas.local")
    # Plain 7bit when possible, so a person opening the .eml sees the links as they are
    # (quoted-printable would break them with '=3D' and soft line breaks).
    msg.set_content(body, cte="7bit" if body.isascii() else "quoted-printable")
    return msg


def _send_smtp(settings: Settings, host: str, msg: EmailMessage) -> None:
    context = ssl.create_default_context()  # verifies the server's certificate
    smtp: smtplib.SMTP
    if settings.smtp_ssl:
        smtp = smtplib.SMTP_SSL(host, settings.smtp_port, timeout=SMTP_TIMEOUT_SECONDS,
                                context=context)
    else:
        smtp = smtplib.SMTP(host, settings.smtp_port, timeout=SMTP_TIMEOUT_SECONDS)
    with smtp:
        if settings.smtp_starttls and not settings.smtp_ssl:
            smtp.starttls(context=context)
        if settings.smtp_username:
            smtp.login(settings.smtp_username, settings.smtp_password or "")
        smtp.send_message(msg)


def _write_outbox(settings: Settings, msg: EmailMessage, to: str) -> None:
    settings.outbox_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = utcnow().strftime("%Y%m%dT%H%M%S%f")
    safe_to = "".join(c if c.isalnum() else "_" for c in to)[:60]
    path = settings.outbox_dir / f"{stamp}-{safe_to}.eml"
    # The message holds single-use links: readable by this account only, whatever the umask.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(bytes(msg))
    log.info("email %r to %s written to %s", msg["Subject"], to, path)


def send_email(settings: Settings, to: str, subject: str, body: str) -> bool:
    """Send one message. A delivery failure is logged (without the body) and reported as
    False rather than raised: the account action that asked for the mail has already
    happened, and the person can ask for the mail again."""
    msg = build_message(settings, to, subject, body)
    try:
        if settings.smtp_host:
            _send_smtp(settings, settings.smtp_host, msg)
            log.info("email %r to %s sent via SMTP %s:%s", subject, to, settings.smtp_host,
                     settings.smtp_port)
        else:
            _write_outbox(settings, msg, to)
    except (OSError, smtplib.SMTPException) as exc:
        log.error("could not send email %r to %s: %s: %s", subject, to, type(exc).__name__,
                  exc)
        return False
    return True
