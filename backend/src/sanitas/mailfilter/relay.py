"""Re-injection to the next hop (Postfix's re-injection listener), by SMTP (smtplib):

- `Transaction`: the filter's own transaction for a message Postfix is handing over, opened
  at its first RCPT TO (MAIL FROM with the same parameters) so that each recipient gets the
  next hop's own answer, and ended with the cleaned message as its DATA;
- `send`: one whole message with its envelope (the release of a held original).

Nothing here retries: the filter answers Postfix 4xx and Postfix keeps the message (or the
recipient) queued."""

from __future__ import annotations

import contextlib
import smtplib
import socket
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


Reply = tuple[int, str]


def _text(message: bytes | str) -> str:
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
    return " ".join(text.split())[:300]


class Transaction:
    """One SMTP transaction with the next hop, mirroring the one Postfix holds with the
    filter: `open` (connect, EHLO, MAIL FROM), `rcpt` per recipient, then `deliver` with the
    cleaned message, and `close`. Blocking (smtplib): the filter calls it from a thread.
    Every step answers (code, text); a failure to talk to the next hop is a 4xx answer with
    `unreachable` set."""

    def __init__(self, hop: str, sender: str, mail_options: list[str], *, timeout: float,
                 helo: str = "sanitas-mail") -> None:
        self.hop, self.sender, self.timeout, self.helo = hop, sender, timeout, helo
        # SIZE is the original's: the cleaned copy has another size.
        self.options = [o for o in mail_options if not o.upper().startswith("SIZE=")]
        self.client: smtplib.SMTP | None = None
        self.opened: Reply | None = None  # the answer to open(): 250 when MAIL was taken
        self.unreachable = False
        self.accepted: list[str] = []  # recipients the next hop took (250/251)
        self.handed_over = False  # deliver() began: it runs to its end and closes the session

    def _unreachable(self, exc: BaseException) -> Reply:
        self.unreachable = True
        self.abort()
        return 451, (f"4.4.1 the next hop {self.hop} could not be reached: "
                     f"{type(exc).__name__}: {str(exc)[:200]}")

    def open(self) -> Reply:
        """Connect, EHLO and MAIL FROM; the answer to MAIL (250 when taken)."""
        host, port = parse_hop(self.hop)
        try:
            self.client = smtplib.SMTP(host, port, local_hostname=self.helo,
                                       timeout=self.timeout)
            self.client.ehlo()
            if any(o.upper() == "SMTPUTF8" for o in self.options) and \
                    not self.client.has_extn("smtputf8"):
                self.close()
                self.opened = (553, "5.6.7 the next hop does not take SMTPUTF8 messages")
                return self.opened
            code, text = self.client.mail(self.sender, self.options)
        except (OSError, smtplib.SMTPException) as exc:
            self.opened = self._unreachable(exc)
            return self.opened
        self.opened = (code, _text(text))
        if code != 250:
            self.close()
        return self.opened

    def rcpt(self, recipient: str) -> Reply:
        if self.client is None:  # MAIL refused, or the session ended at an earlier step
            if self.opened is not None and self.opened[0] != 250:
                return self.opened
            return 451, "4.4.1 the session with the next hop ended; try again later"
        try:
            code, text = self.client.rcpt(recipient)
        except (OSError, smtplib.SMTPException) as exc:
            return self._unreachable(exc)
        if code in (250, 251):
            self.accepted.append(recipient)
        return code, _text(text)

    def _alive(self) -> bool:
        """The session is still open (the next hop may have ended it while the message was
        cleaned: Postfix's smtpd_timeout is 300 s, 10 s under stress)."""
        try:
            return self.client is not None and self.client.noop()[0] == 250
        except (OSError, smtplib.SMTPException):
            return False

    def _again(self) -> Reply | None:
        """A new session with the same MAIL FROM and recipients; None when the next hop took
        all of them again, else the answer that stopped it (the message is then answered 4xx
        as a whole, so no recipient is lost or gets it twice)."""
        accepted, self.accepted = self.accepted, []
        self.abort()
        code, text = self.open()
        if code != 250:
            return (451 if code < 500 or self.unreachable else code), text
        for rcpt in accepted:
            code, text = self.rcpt(rcpt)
            if code not in (250, 251):
                self.accepted = accepted
                return (451 if code < 500 or self.unreachable else code), \
                    f"{text} (for {rcpt}, accepted before)"
        return None

    def deliver(self, data: bytes) -> Reply:
        """DATA with `data` to the recipients taken; the next hop's answer to it."""
        if not self.accepted:
            return 451, "4.4.1 no recipient was accepted by the next hop"
        if not self._alive():
            stopped = self._again()
            if stopped is not None:
                return stopped
        assert self.client is not None
        try:
            code, text = self.client.data(data)
        except smtplib.SMTPResponseException as exc:  # an answer other than 354 to DATA
            return exc.smtp_code, _text(exc.smtp_error)
        except (OSError, smtplib.SMTPException) as exc:
            return self._unreachable(exc)
        return code, _text(text)

    def close(self) -> None:
        """QUIT (which also ends an unfinished transaction), or just the socket."""
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                client.quit()
            client.close()

    def abort(self) -> None:
        """Drop the connection at once, without waiting for the next hop (a transaction
        without its final DATA answer delivers nothing); safe from another thread."""
        client, self.client = self.client, None
        sock = getattr(client, "sock", None) if client is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if client is not None:
            client.close()


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
