"""Re-injection: one message to the next hop (Postfix's re-injection listener) with its
envelope, by SMTP (smtplib). The answer says whether the next hop took it; nothing here
retries: the filter answers Postfix 4xx and Postfix keeps the message queued."""

from __future__ import annotations

import smtplib
from dataclasses import dataclass, field


@dataclass
class Envelope:
    sender: str  # "" for the null sender (bounces)
    recipients: list[str]
    mail_options: list[str] = field(default_factory=list)  # as received: SMTPUTF8, BODY=...


@dataclass
class Outcome:
    accepted: bool
    temporary: bool  # not accepted: a 4xx or a failure to reach the next hop
    reply: str  # for the log and the answer to Postfix
    refused: dict[str, str] = field(default_factory=dict)  # recipients the next hop refused


class NextHopError(Exception):
    pass


def parse_hop(hop: str) -> tuple[str, int]:
    """host:port ("[::1]:10026" for IPv6)."""
    host, _, port = hop.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"next hop {hop!r}: expected host:port")
    return host, int(port)


def send(hop: str, envelope: Envelope, data: bytes, *, timeout: float,
         helo: str = "sanitas-mail") -> Outcome:
    """Send `data` to `hop` with `envelope`; accepted only when the next hop answered 250 to
    the data (for at least one recipient; refused ones are listed)."""
    host, port = parse_hop(hop)
    options = [o for o in envelope.mail_options if not o.upper().startswith("SIZE=")]
    try:
        with smtplib.SMTP(host, port, local_hostname=helo, timeout=timeout) as client:
            client.ehlo()
            if any(o.upper() == "SMTPUTF8" for o in options) and \
                    not client.has_extn("smtputf8"):
                return Outcome(False, False, "the next hop does not take SMTPUTF8 messages")
            refused = client.sendmail(envelope.sender, envelope.recipients, data,
                                      mail_options=options)
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        temporary = any(400 <= code < 500 for code in codes)
        return Outcome(False, temporary, "the next hop refused every recipient: " +
                       _first(exc.recipients), _texts(exc.recipients))
    except smtplib.SMTPResponseException as exc:
        text = exc.smtp_error.decode("utf-8", "replace") if isinstance(
            exc.smtp_error, bytes) else str(exc.smtp_error)
        return Outcome(False, not 500 <= exc.smtp_code < 600,
                       f"the next hop answered {exc.smtp_code} {text[:300]}")
    except (OSError, smtplib.SMTPException) as exc:
        return Outcome(False, True, f"the next hop {hop} could not be reached: "
                                    f"{type(exc).__name__}: {str(exc)[:200]}")
    return Outcome(True, False, "accepted", _texts(refused))


def _texts(recipients: dict[str, tuple[int, bytes]]) -> dict[str, str]:
    return {rcpt: f"{code} {text.decode('utf-8', 'replace')[:200]}"
            for rcpt, (code, text) in recipients.items()}


def _first(recipients: dict[str, tuple[int, bytes]]) -> str:
    for rcpt, (code, text) in recipients.items():
        return f"{rcpt}: {code} {text.decode('utf-8', 'replace')[:200]}"
    return ""
