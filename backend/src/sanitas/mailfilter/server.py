"""The mail filter (`sanitas mail`): an SMTP server (aiosmtpd) in the shape of Postfix's
after-queue content filter. For each message:

  1. the SIZE limit is announced and enforced while DATA arrives (552 beyond it);
  2. at the first RCPT TO the filter opens its own transaction with the next hop (MAIL FROM
     with the same parameters, relay.Transaction) and passes each RCPT TO on: every recipient
     gets the next hop's own answer, so Postfix retries a recipient refused with 4xx and
     bounces one refused with 5xx itself; an unreachable next hop is 451 for the recipient;
  3. a retry of a message already delivered (same envelope and bytes) is answered 250
     without a second delivery (the transaction with the next hop ends without DATA);
  4. the original is sealed into storage for the retention period (held.py, vault.py);
  5. the whole message is cleaned by the engine in the sandbox (service.run_engine), in one
     of the `mail_workers` slots, which a fair gate (channels/fairgate.py) hands out in turns
     between senders (`sender_key`: the envelope sender's domain, else the connecting
     client), none holding more than `executor_max_share` of them while another waits: a
     message the engine refuses (over a limit, unreadable, refused by the policy) is answered
     554 with the reason, so Postfix bounces it to its sender;
  6. the cleaned copy, with the original's trace fields and `X-Sanitas`, is the DATA of that
     transaction (a new one with the same envelope if the next hop ended it meanwhile), and
     only once the next hop accepted it the answer is 250. An internal fault, a sandbox fault
     or a next hop that cannot be reached or answers 4xx is answered 451: Postfix keeps the
     message queued and tries again; a 5xx of the next hop to the data is 554.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import secrets
import signal
import time
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.orm import sessionmaker

from sanitas.channels import peer_address
from sanitas.channels.fairgate import FairGate
from sanitas.config import Settings
from sanitas.datadir.scratch import JobScratch
from sanitas.engine.report import Result
from sanitas.mailfilter import headers, held, relay, service
from sanitas.mailfilter import metrics as mail_metrics
from sanitas.models import HeldStatus
from sanitas.storage import Storage

log = logging.getLogger(__name__)

SWEEP_SECONDS = 3600.0


class Reply(Exception):
    """The answer to the message: an SMTP reply line."""

    def __init__(self, line: str, outcome: str) -> None:
        super().__init__(line)
        self.line, self.outcome = line, outcome


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return "".join(c if " " <= c <= "~" else "?" for c in text)[:limit]


class MailFilter:
    """aiosmtpd's handler: handle_DATA answers each message."""

    def __init__(self, settings: Settings, factory: sessionmaker[DbSession] | None,
                 storage: Storage | None, policy_id: str, next_hop: str,
                 audit_user: str | None = None) -> None:
        self.settings, self.factory, self.storage = settings, factory, storage
        self.policy_id, self.next_hop = policy_id, next_hop
        self.audit_user = audit_user
        workers = settings.mail_workers or settings.executor_workers or 1
        self.gate = FairGate(workers, settings.executor_max_share)
        self.connections = 0

    # -- the envelope: one transaction with the next hop per message ----------------------
    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope,
                          address: str, rcpt_options: list[str]) -> str:
        """The next hop's answer for this recipient (a 2xx adds it to the envelope)."""
        tx = _transaction(session, envelope)
        if tx is None:
            drop(session)
            tx = relay.Transaction(self.next_hop, envelope.mail_from or "",
                                   list(envelope.mail_options),
                                   timeout=self.settings.mail_next_hop_timeout_seconds)
            session.sanitas_tx, session.sanitas_for = tx, envelope  # type: ignore[attr-defined]
            session.sanitas_refused = {}  # type: ignore[attr-defined]
            code, text = await asyncio.to_thread(tx.open)
            if code != 250:
                mail_metrics.next_hop_failed(_kind(code, tx.unreachable))
                log.info("mail: the next hop did not take MAIL FROM:<%s>: %d %s",
                         _one_line(envelope.mail_from or "", 100), code, text)
        if tx.opened is not None and tx.opened[0] != 250:
            code, text = tx.opened
        else:
            code, text = await asyncio.to_thread(tx.rcpt, address)
            if code not in (250, 251):
                mail_metrics.next_hop_failed(_kind(code, tx.unreachable))
        if code in (250, 251):
            envelope.rcpt_tos.append(address)
            envelope.rcpt_options.extend(rcpt_options)
            return f"{code} {_one_line(text) or 'Ok'}"
        session.sanitas_refused[address] = f"{code} {text}"  # type: ignore[attr-defined]
        if not 400 <= code < 600:
            return f"451 4.4.1 The next hop answered {code}: {_one_line(text)}"
        return f"{code} {_one_line(text)}"

    async def handle_RSET(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        tx = _detach(session)
        if tx is not None:
            await asyncio.to_thread(tx.close)
        if isinstance(server, FilterSMTP):
            server.waiting()
        return "250 2.0.0 Ok"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        started = time.monotonic()
        data = envelope.original_content or b""
        if isinstance(server, FilterSMTP):
            server.working()
        tx = _transaction(session, envelope)
        refused: dict[str, str] = getattr(session, "sanitas_refused", {})
        _detach(session)
        try:
            if tx is None:
                raise Reply("451 4.3.0 No transaction with the next hop; try again later",
                            "deferred")
            line, outcome = await self._message(envelope, data, started, tx, refused,
                                                sender_key(envelope.mail_from, session.peer))
        except Reply as reply:
            line, outcome = reply.line, reply.outcome
        except Exception:
            log.exception("mail: a message failed")
            line, outcome = "451 4.3.0 Sanitas failed on this message; try again later", \
                "deferred"
        except BaseException:  # cancelled: Postfix went away; the next hop gets no DATA end
            if tx is not None and not tx.handed_over:  # else handover() ends it
                tx.abort()
            raise
        if tx is not None:
            await asyncio.to_thread(tx.close)
        if isinstance(server, FilterSMTP):
            server.waiting()
        mail_metrics.message(outcome, time.monotonic() - started)
        log.info("mail: %s from=<%s> rcpts=%d size=%d: %s", outcome,
                 _one_line(envelope.mail_from or "", 100), len(envelope.rcpt_tos), len(data),
                 line)
        return line

    async def _message(self, env: Envelope, data: bytes, started: float,
                       tx: relay.Transaction, refused: dict[str, str],
                       key: str) -> tuple[str, str]:
        envelope = relay.Envelope(env.mail_from or "", list(env.rcpt_tos),
                                  list(env.mail_options))
        head = headers.read(data)
        digest = held.digest_of(envelope, data)
        chosen = await asyncio.to_thread(service.resolve, self.settings, self.factory,
                                         self.policy_id)
        begun = None
        if self.factory is not None:
            begun = await asyncio.to_thread(held.begin, self.factory, digest, envelope,
                                            len(data), head, chosen.applied.id)
            if begun.duplicate:
                return "250 2.0.0 Ok: already delivered (a retry of the same message)", \
                    "duplicate"
            if not begun.kept and self.storage is not None:
                await asyncio.to_thread(held.keep_original, self.settings, self.storage,
                                        self.factory, begun.id, data)
        held_id = begun.id if begun else None
        scratch = JobScratch(self.settings, "mail" + secrets.token_hex(2))
        try:
            source = scratch.path / service.MESSAGE_NAME
            await asyncio.to_thread(source.write_bytes, data)
            done = await self._clean(key, chosen, source, scratch.path / "out")
            result = done.result
            if done.output is None or result.output_type != "eml":
                reason = result.reason or "the message could not be read as a mail message"
                self._finish(held_id, started, status=HeldStatus.REFUSED, result=result,
                             reason=reason)
                self._audit(env, data, digest, chosen, result, started, "blocked", reason)
                raise Reply(f"554 5.6.0 Refused by Sanitas: {_one_line(reason)}", "refused")
            cleaned = await asyncio.to_thread(done.output.read_bytes)
            listed = await asyncio.to_thread(service.attachments, cleaned, result.findings)
            outcome = result.outcome()
            if self.settings.mail_footer:
                cleaned = await asyncio.to_thread(service.with_footer, cleaned,
                                                  service.footer_text(outcome))
            outgoing = service.outgoing(head, cleaned, service.x_sanitas(result, len(listed)))
        finally:
            scratch.close()

        def handover() -> tuple[int, str]:
            """The data to the next hop and its outcome on the held row, in one thread: once
            begun it ends even when Postfix goes away meanwhile (then the row says delivered
            and Postfix's retry is answered `already delivered`, not delivered twice). The
            next hop's answer code and, when it did not take the message, the reason."""
            try:
                code, text = tx.deliver(outgoing)
            finally:
                tx.close()
            if code == 250:
                self._finish(held_id, started, status=HeldStatus.DELIVERED, result=result,
                             listed=listed, refused=refused)
                return code, ""
            reason = f"the next hop answered {code} {text}"
            self._finish(held_id, started, status=HeldStatus.DEFERRED, result=result,
                         reason=reason, listed=listed, refused=refused)
            return code, reason

        tx.handed_over = True
        code, reason = await asyncio.to_thread(handover)
        if code != 250:
            mail_metrics.next_hop_failed(_kind(code, tx.unreachable))
            if not 500 <= code < 600:
                raise Reply(f"451 4.4.1 Not delivered, try again later: {_one_line(reason)}",
                            "deferred")
            raise Reply(f"554 5.4.0 Not delivered: {_one_line(reason)}", "refused")
        mail_metrics.cleaned(outcome.verdict.value, [a["verdict"] for a in listed])
        self._audit(env, data, digest, chosen, result, started, "sanitized", None)
        return f"250 2.0.0 Ok: cleaned, verdict {outcome.verdict.value}", "delivered"

    async def _clean(self, key: str, chosen: service.Chosen, source: Any,
                     out: Any) -> service.Cleaned:
        """The engine on the message, in a slot the gate gives `key` in its turn. Postfix
        going away cancels the wait (aiosmtpd cancels the handler): the message leaves the
        queue; once the engine runs, its slot stays taken until it ends."""
        from sanitas.sandbox import SandboxError

        try:
            return await self.gate.run(key, service.run_engine, self.settings, chosen,
                                       source, out)
        except SandboxError as exc:
            log.error("mail: the sandbox failed: %s", exc)
            raise Reply("451 4.3.0 The sandbox failed on this message; try again later",
                        "deferred") from exc

    def _finish(self, held_id: str | None, started: float, *, status: str,
                result: Result | None, reason: str | None = None,
                listed: list[dict[str, Any]] | None = None,
                refused: dict[str, str] | None = None) -> None:
        if held_id is None or self.factory is None:
            return
        outcome = result.outcome() if result is not None else None
        values: dict[str, Any] = {"status": status, "duration": round(time.monotonic() -
                                                                        started, 3)}
        if outcome is not None:
            values.update(verdict=outcome.verdict.value,
                          verdict_counts=outcome.counts.to_json(), summary=outcome.summary)
        if reason is not None:
            values["reason"] = reason[:2000]
        if listed is not None:
            values["attachments"] = listed
        if refused:
            values["refused_recipients"] = [f"{r}: {t}"[:400] for r, t in refused.items()]
        held.finish(self.factory, held_id, **values)

    def _audit(self, env: Envelope, data: bytes, digest: str, chosen: service.Chosen,
               result: Result, started: float, outcome: str, reason: str | None) -> None:
        """A history row of the mail service account (SANITAS_MAIL_AUDIT), as ICAP's."""
        if self.audit_user is None or self.factory is None:
            return
        import hashlib

        details = {"from": (env.mail_from or "")[:320], "to": list(env.rcpt_tos)[:50],
                   "digest": digest}
        asyncio.get_running_loop().run_in_executor(None, functools.partial(
            service.record, self.factory, self.audit_user, chosen, size=len(data),
            sha256=hashlib.sha256(data).hexdigest(), result=result,
            refused=outcome == "blocked", reason=reason,
            duration=time.monotonic() - started, details=details))


def sender_key(mail_from: str | None, peer: object) -> str:
    """Whom a message is for, as the fair gate counts senders: the envelope sender's domain
    (lower case), else (the null sender of a bounce) the connecting client's address. The
    domain is the sender's claim: in the after-queue position Postfix has already accepted
    the message under its own rules."""
    _, at, domain = (mail_from or "").rpartition("@")
    domain = domain.strip().lower()
    if at and domain:
        return f"domain:{domain[:255]}"
    return f"client:{peer_address(peer)}"


def _kind(code: int, unreachable: bool) -> str:
    """The next-hop failure metric's label."""
    return "unreachable" if unreachable else "permanent" if 500 <= code < 600 else "temporary"


def _transaction(session: Session, envelope: Envelope) -> relay.Transaction | None:
    """The transaction with the next hop opened for this envelope (aiosmtpd makes a new
    envelope after DATA, RSET and EHLO; a transaction of an older one is not this one's)."""
    if getattr(session, "sanitas_for", None) is not envelope:
        return None
    tx: relay.Transaction | None = getattr(session, "sanitas_tx", None)
    return tx


def _detach(session: Session) -> relay.Transaction | None:
    tx: relay.Transaction | None = getattr(session, "sanitas_tx", None)
    session.sanitas_tx = session.sanitas_for = None  # type: ignore[attr-defined]
    return tx


def drop(session: Session | None) -> None:
    """End the session's unfinished transaction with the next hop at once (no DATA end was
    sent, so the next hop delivers nothing)."""
    tx = _detach(session) if session is not None else None
    if tx is not None:
        tx.abort()


class FilterSMTP(SMTP):
    """aiosmtpd's server with a cap on connections (421 beyond it)."""

    def __init__(self, handler: MailFilter, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.filter = handler
        self._counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.filter.connections += 1
        self._counted = True
        if self.filter.connections > self.filter.settings.mail_max_connections:
            transport.write(b"421 4.3.2 Too many connections; try again later\r\n")  # type: ignore[attr-defined]
            transport.close()
            return
        super().connection_made(transport)

    def working(self) -> None:
        """No idle timeout (SANITAS_MAIL_TIMEOUT_SECONDS) while the filter works on a message:
        Postfix is waiting for the answer (its smtp_data_done_timeout bounds that wait), and
        aiosmtpd's timer, started with the DATA command, would otherwise cut the connection
        of a message whose cleaning takes longer."""
        if self._timeout_handle is not None:
            self._timeout_handle.cancel()

    def waiting(self) -> None:
        """The idle timeout again, from the answer on, for the client's next command."""
        if self.transport is not None:
            self._reset_timeout()

    def connection_lost(self, exc: Exception | None) -> None:
        drop(self.session)
        if self._counted:
            self.filter.connections -= 1
            self._counted = False
        super().connection_lost(exc)


def parse_listen(value: str) -> tuple[str, int]:
    return relay.parse_hop(value)


# -- running it --------------------------------------------------------------------------------
def run(settings: Settings, listen: str, next_hop: str, policy_id: str, *,
        migrate: bool = True) -> None:
    """Serve SMTP on `listen` until SIGTERM or SIGINT."""
    from sanitas.datadir import scratch
    from sanitas.db import make_engine, make_sessionmaker
    from sanitas.storage import make_storage

    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's every command
    if migrate:
        from sanitas.migrate import upgrade_to_head

        upgrade_to_head(str(settings.database_url))
    factory = make_sessionmaker(make_engine(str(settings.database_url)))
    service.resolve(settings, factory, policy_id)  # an unknown policy stops the start
    storage = make_storage(settings)
    audit_user = service.service_account(factory, settings.mail_service_account) \
        if settings.mail_audit else None
    scratch.sweep(settings)
    if settings.sandbox != "none":
        from sanitas.sandbox.bwrap import prestart

        prestart(settings)
    if settings.metrics_token and settings.mail_metrics_port:
        from sanitas.web.metrics import serve_worker_metrics

        serve_worker_metrics(settings.model_copy(update={
            "metrics_port": settings.mail_metrics_port}))
    asyncio.run(_serve(settings, factory, storage, audit_user, listen, next_hop, policy_id))


async def _serve(settings: Settings, factory: sessionmaker[DbSession], storage: Storage,
                 audit_user: str | None, listen: str, next_hop: str, policy_id: str) -> None:
    handler = MailFilter(settings, factory, storage, policy_id, next_hop, audit_user)
    host, port = parse_listen(listen)
    loop = asyncio.get_running_loop()

    def factory_smtp() -> SMTP:
        return FilterSMTP(handler, data_size_limit=settings.mail_max_message_bytes,
                          enable_SMTPUTF8=True, decode_data=False,
                          hostname="sanitas-mail", ident="Sanitas mail filter",
                          timeout=settings.mail_timeout_seconds)

    server = await loop.create_server(factory_smtp, host, port, reuse_address=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def sweeper() -> None:
        while True:
            with contextlib.suppress(Exception):
                removed = await asyncio.to_thread(held.sweep, factory, storage)
                if removed:
                    log.info("mail: %d held original(s) past retention deleted", removed)
            await asyncio.sleep(SWEEP_SECONDS)

    sweeping = asyncio.create_task(sweeper())
    log.info("mail: listening on %s:%d, next hop %s, policy %s (pid %d; audit %s)", host,
             port, next_hop, policy_id, os.getpid(), "on" if audit_user else "off")
    print(f"Sanitas mail filter listening on {host}:{port}", flush=True)
    async with server:
        await stop.wait()
    sweeping.cancel()
    log.info("mail: stopping")
