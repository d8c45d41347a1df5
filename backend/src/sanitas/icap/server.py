"""The ICAP server (`sanitas icap`): asyncio connections, one request at a time each; bodies
go to the sandbox in worker threads (at most `icap_workers` at once).

One transaction (REQMOD or RESPMOD with a body):
  1. the heads may decide alone (a non-200 response, an undecodable body, a multipart body
     that is not a form);
  2. with a preview, its bytes may decide (a type the engine does not take, an executable, a
     type set aside, a declared size over the limit): 204 or a block page, without the rest;
  3. otherwise the body is spooled to a locked scratch folder under the data dir (bounded),
     gzip/deflate decoded (bounded), and sanitized (`intake.sanitize_now`, the policy
     `intake.choose_policy` resolved for the service and its policyId) once one of the
     `icap_workers` slots is free: a fair gate (channels/fairgate.py) hands them out in turns
     between clients (`client_key`: the user or address the proxy names), none holding more
     than `executor_max_share` of them while another client waits;
  4. clean: 204 (or the original echoed when the client does not allow 204); sanitized: the
     HTTP message with the new body and fixed Content-Type/Length; refused: a 403 page.
A multipart/form-data body is split into its parts at step 3 (form.py) and each file part
goes through the sandbox in turn; the form is put back together with the cleaned files.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import signal
import ssl
import time
from collections.abc import AsyncIterator
from email.utils import formatdate
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from sanitas.channels import peer_address
from sanitas.channels.fairgate import Abandoned, FairGate
from sanitas.config import Settings
from sanitas.datadir.scratch import JobScratch
from sanitas.engine import verdict as verdicts
from sanitas.engine.report import Result
from sanitas.files import intake
from sanitas.icap import form, service, signals, tls
from sanitas.icap.httpmsg import HttpHead, name_from_url
from sanitas.icap.protocol import (
    LAST_CHUNK,
    MAX_ICAP_HEAD,
    Conn,
    ConnectionDone,
    IcapError,
    IcapRequest,
    chunk,
    response_head,
)
from sanitas.icap.service import VERSION, ServicePolicy, Verdict

log = logging.getLogger(__name__)

OPTIONS_TTL = 3600


class _Overflow(Exception):
    """The body passed the size limit while it was being spooled."""


class Spool:
    """A body written to a file as it arrives, at most `limit` bytes; the first bytes kept in
    memory for the sniff."""

    HEAD = 64 * 1024

    def __init__(self, path: Path, limit: int) -> None:
        self.path, self.limit = path, limit
        self.size = 0
        self.head = b""
        self.digest = hashlib.sha256()
        self.pending = b""  # the piece that did not fit (over-size: forwarded after the file)
        self._fh = open(path, "wb")  # noqa: SIM115 - closed by close(), across awaits

    def add(self, data: bytes) -> None:
        if self.size + len(data) > self.limit:
            self.pending = data
            raise _Overflow
        if len(self.head) < self.HEAD:
            self.head += data[:self.HEAD - len(self.head)]
        self.size += len(data)
        self.digest.update(data)
        self._fh.write(data)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


class IcapServer:
    def __init__(self, settings: Settings, factory: sessionmaker[Session] | None,
                 audit_user: str | None = None) -> None:
        self.settings = settings
        self.factory = factory
        self.audit_user = audit_user
        self.fingerprint = service.engine_fingerprint()
        workers = settings.icap_workers or settings.executor_workers or 1
        self.gate = FairGate(workers, settings.executor_max_share)
        self.connections = 0
        self.by_client: dict[str, int] = {}  # open connections per client address
        self.client_cap = client_cap(settings)

    # -- connections -----------------------------------------------------------------------
    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Conn(reader, writer, self.settings.icap_timeout_seconds)
        peer = writer.get_extra_info("peername")
        address = peer_address(peer)
        self.connections += 1
        self.by_client[address] = self.by_client.get(address, 0) + 1
        try:
            if self.connections > self.settings.icap_max_connections:
                self._error(conn, IcapError(503, "Too many connections; try again later.",
                                            "overloaded"))
                await conn.drain()
                return
            if self.by_client[address] > self.client_cap:
                self._error(conn, IcapError(
                    503, f"Too many connections from this address (at most {self.client_cap}"
                         "); try again later.", "client_overloaded"))
                await conn.drain()
                return
            while True:
                try:
                    request = await conn.read_request()
                    keep = await self.dispatch(conn, request)
                except IcapError as exc:
                    self._error(conn, exc)
                    keep = not exc.close
                await conn.drain()
                if not keep:
                    return
        except (ConnectionDone, ConnectionError):
            pass
        except Exception:
            log.exception("icap: a transaction failed")
            try:
                self._error(conn, IcapError(500, "The server failed on this request.",
                                            "internal"))
                await conn.drain()
            except (ConnectionDone, ConnectionError):
                pass
        finally:
            self.connections -= 1
            self.by_client[address] -= 1
            if not self.by_client[address]:
                del self.by_client[address]
            writer.close()
            with contextlib.suppress(TimeoutError, ConnectionError, OSError):
                await asyncio.wait_for(writer.wait_closed(), 5)

    def _error(self, conn: Conn, exc: IcapError) -> None:
        log.info("icap: %d %s: %s", exc.status, exc.code, exc.message)
        headers = [("Date", formatdate(usegmt=True)), ("Server", f"Sanitas/{VERSION}"),
                   ("X-Sanitas-Error", f"{exc.code}: {exc.message}"),
                   ("Encapsulated", "null-body=0")]
        if exc.close:
            headers.append(("Connection", "close"))
        conn.write(response_head(exc.status, headers))

    async def dispatch(self, conn: Conn, request: IcapRequest) -> bool:
        try:
            chosen = await asyncio.to_thread(service.resolve, self.settings, self.factory,
                                             request.service,
                                             request.query)
        except IcapError as exc:
            exc.close = exc.close or request.has_body  # the unread body follows
            raise
        if request.method == "OPTIONS":
            self._options(conn, chosen)
        else:
            await self._modify(conn, request, chosen)
        return request.keep_alive

    def _common(self, chosen: ServicePolicy) -> list[tuple[str, str]]:
        return [("Date", formatdate(usegmt=True)), ("Server", f"Sanitas/{VERSION}"),
                ("ISTag", service.istag(self.fingerprint, self.settings, chosen))]

    def _options(self, conn: Conn, chosen: ServicePolicy) -> None:
        headers = [*self._common(chosen),
                   ("Methods", "RESPMOD, REQMOD"),
                   ("Service", f"Sanitas {VERSION} file sanitization ({chosen.mode}, policy "
                               f"{chosen.applied.id})"),
                   ("Encapsulated", "null-body=0"),
                   # What one client may open: a proxy (one address) keeps to it.
                   ("Max-Connections", str(min(self.settings.icap_max_connections,
                                               self.client_cap))),
                   ("Options-TTL", str(OPTIONS_TTL)),
                   ("Allow", "204"),
                   ("Preview", str(self.settings.icap_preview_bytes)),
                   ("Transfer-Preview", "*")]
        conn.write(response_head(200, headers))

    # -- answers ---------------------------------------------------------------------------
    def _no_content(self, conn: Conn, chosen: ServicePolicy, why: str) -> None:
        conn.write(response_head(204, [*self._common(chosen), ("X-Sanitas", why),
                                       ("Encapsulated", "null-body=0")]))

    def _message(self, conn: Conn, chosen: ServicePolicy, head: HttpHead, body: bytes | None,
                 *, as_request: bool, note: str, request_head: HttpHead | None = None) -> None:
        """An ICAP 200 carrying one whole HTTP message (body given in memory, or none)."""
        parts: list[tuple[str, bytes]] = []
        if request_head is not None:
            parts.append(("req-hdr", request_head.to_bytes()))
        if not head.synthetic:  # no head came, none goes back
            parts.append(("req-hdr" if as_request else "res-hdr", head.to_bytes()))
        offsets, at = [], 0
        for name, data in parts:
            offsets.append(f"{name}={at}")
            at += len(data)
        body_name = ("req-body" if as_request else "res-body") if body is not None \
            else "null-body"
        offsets.append(f"{body_name}={at}")
        conn.write(response_head(200, [*self._common(chosen), ("X-Sanitas", note),
                                       ("Encapsulated", ", ".join(offsets))]))
        for _, data in parts:
            conn.write(data)
        if body is not None:
            conn.write(chunk(body))
            conn.write(LAST_CHUNK)

    async def _message_from(self, conn: Conn, chosen: ServicePolicy, head: HttpHead,
                            path: Path, rest: AsyncIterator[tuple[bytes, bool]] | None, *,
                            as_request: bool, note: str, pending: bytes = b"") -> None:
        """An ICAP 200 carrying `head` and a body read from `path`, then whatever is left of
        the client's body (`rest`, forwarded as it arrives: an over-size pass-through)."""
        name = "req" if as_request else "res"
        raw = b"" if head.synthetic else head.to_bytes()  # no head came, none goes back
        sections = f"{name}-body=0" if head.synthetic else \
            f"{name}-hdr=0, {name}-body={len(raw)}"
        conn.write(response_head(200, [*self._common(chosen), ("X-Sanitas", note),
                                       ("Encapsulated", sections)]))
        conn.write(raw)
        with open(path, "rb") as fh:
            while data := fh.read(256 * 1024):
                conn.write(chunk(data))
                await conn.drain()
        conn.write(chunk(pending))
        if rest is not None:
            async for piece, _ in rest:
                if piece:
                    conn.write(chunk(piece))
                    await conn.drain()
        conn.write(LAST_CHUNK)

    def _block(self, conn: Conn, chosen: ServicePolicy, verdict: Verdict) -> None:
        head, body = service.block_response(verdict.reason, verdict.code)
        word = verdicts.refused(verdict.reason, verdict.code).verdict  # encrypted: held back
        self._message(conn, chosen, head, body, as_request=False,
                      note=f"blocked; {verdict.code}; verdict={word}")

    # -- REQMOD / RESPMOD ------------------------------------------------------------------
    async def _modify(self, conn: Conn, request: IcapRequest, chosen: ServicePolicy) -> None:
        started = time.monotonic()
        as_request = request.method == "REQMOD"
        http_request = HttpHead.parse(request.sections["req-hdr"], "HTTP request head") \
            if "req-hdr" in request.sections else None
        given = http_request if as_request else HttpHead.parse(
            request.sections["res-hdr"], "HTTP response head") \
            if "res-hdr" in request.sections else None
        # RFC 3507 lets a client leave the head out (c-icap-client -noreshdr): the body is
        # then judged as a 200 response (or a request) with no fields.
        message = given if given is not None else HttpHead.stand_in(as_request)
        url = http_request.target if http_request is not None else None
        clues = signals.clues_of(message, http_request, as_request=as_request)
        name = message.filename() or name_from_url(url) or ("upload" if as_request
                                                            else "download")
        tx = intake.Record(channel=intake.Channel.ICAP, name=name, size=0, sha256=None,
                           chosen=chosen.applied, outcome="passed",
                           details={"method": request.method, "url": (url or "")[:1000]})
        preview = request.preview
        if not request.has_body:
            self._pass(conn, request, chosen, message, None, as_request, "no body")
            return
        verdict = service.before_body(self.settings, request.method, message, http_request)
        boundary = service.form_boundary(message) if verdict is None else None
        scratch = JobScratch(self.settings, "icap" + secrets.token_hex(2))
        spool = Spool(scratch.path / "body", self.settings.icap_max_body_bytes)
        body = conn.chunks()
        try:
            ieof = False
            overflow = False
            in_preview = preview is not None
            try:
                if preview is not None:
                    ieof = await self._read_preview(body, spool, preview)
                    request.preview_eof = ieof
                    in_preview = False
                    if not ieof:
                        verdict = verdict or self._by_head(spool, message, name, boundary,
                                                           clues)
                        if verdict is not None:  # decided on the preview: no more bytes
                            await self._conclude_early(conn, request, chosen, message, verdict,
                                                       tx, started, spool)
                            return
                        conn.write(response_head(100, []))
                        await conn.drain()
                        body = conn.chunks()
                        async for piece, _ in body:
                            spool.add(piece)
                else:
                    async for piece, _ in body:
                        spool.add(piece)
            except _Overflow:
                overflow = True
            spool.close()
            tx.size, tx.sha256 = spool.size, spool.digest.hexdigest()
            if overflow:
                verdict = verdict or self._by_head(spool, message, name, boundary, clues,
                                                   overflow=True) \
                    or service.oversize(self.settings)
                await self._conclude_overflow(conn, request.may_204 or in_preview, chosen,
                                              message, verdict, body, spool, as_request)
                tx.size = max(tx.size, message.content_length or 0)
                tx.sha256 = None
                self._audit(tx, verdict, started)
                return
            tail = await asyncio.to_thread(signals.read_tail, spool.path, spool.size)
            verdict = verdict or self._by_head(spool, message, name, boundary, clues,
                                               tail=tail)
            if verdict is not None:
                await self._conclude_full(conn, request, chosen, message, verdict, spool,
                                          as_request)
                self._audit(tx, verdict, started)
                return
            found = [] if message.encodings or boundary is not None else \
                signals.gather(clues, spool.head, tail)
            await self._sanitize(conn, request, chosen, message, spool, scratch.path, name,
                                 as_request, tx, started, boundary, clues, found)
        finally:
            spool.close()
            scratch.close()

    async def _read_preview(self, body: AsyncIterator[tuple[bytes, bool]], spool: Spool,
                            preview: int) -> bool:
        ieof = False
        async for piece, last in body:
            if piece:
                if spool.size + len(piece) > preview:
                    raise IcapError(400, f"The client sent more than its Preview of {preview} "
                                         "bytes.", "bad_preview")
                spool.add(piece)
            else:
                ieof = last
        return ieof

    def _by_head(self, spool: Spool, message: HttpHead, name: str, boundary: bytes | None,
                 clues: signals.Clues, *, tail: bytes | None = None,
                 overflow: bool = False) -> Verdict | None:
        """The verdict of an unencoded body's first bytes and other signals, and of the
        declared size; `tail`: the body's last bytes, once all of it is here (only then may
        it pass unchanged). A form's first bytes are its first part's headers: only its size
        decides early."""
        if message.encodings:
            return None  # decoded first, once the whole body is here
        declared = message.content_length
        if boundary is not None:
            return service.oversize(self.settings) if declared is not None and \
                declared > self.settings.icap_max_body_bytes else None
        found = signals.gather(clues, spool.head, tail)
        verdict = service.by_head(self.settings, spool.head, name,
                                  declared if declared is not None else
                                  (None if overflow else spool.size), found,
                                  whole=tail is not None) if spool.head else None
        if verdict is None and declared is not None and \
                declared > self.settings.icap_max_body_bytes:
            return service.oversize(self.settings)
        return verdict

    def _pass(self, conn: Conn, request: IcapRequest, chosen: ServicePolicy, message: HttpHead,
              body: bytes | None, as_request: bool, why: str) -> None:
        if request.may_204:
            self._no_content(conn, chosen, why)
        else:
            self._message(conn, chosen, message, body, as_request=as_request, note=why)

    async def _conclude_early(self, conn: Conn, request: IcapRequest, chosen: ServicePolicy,
                              message: HttpHead, verdict: Verdict, tx: intake.Record,
                              started: float, spool: Spool) -> None:
        """A verdict after the preview: 204 is always allowed there (RFC 3507, 4.5)."""
        if verdict.action == "pass":
            self._no_content(conn, chosen, f"passed; {verdict.code}")
        else:
            self._block(conn, chosen, verdict)
        tx.size = message.content_length or spool.size
        self._audit(tx, verdict, started)

    async def _conclude_full(self, conn: Conn, request: IcapRequest, chosen: ServicePolicy,
                       message: HttpHead, verdict: Verdict, spool: Spool,
                       as_request: bool) -> None:
        if verdict.action == "block":
            self._block(conn, chosen, verdict)
        elif request.may_204:
            self._no_content(conn, chosen, f"passed; {verdict.code}")
        else:
            await self._message_from(conn, chosen, message, spool.path, None,
                                     as_request=as_request, note=f"passed; {verdict.code}")

    async def _conclude_overflow(self, conn: Conn, allow_204: bool,
                                 chosen: ServicePolicy, message: HttpHead, verdict: Verdict,
                                 rest: AsyncIterator[tuple[bytes, bool]], spool: Spool,
                                 as_request: bool) -> None:
        if verdict.action == "pass" and not allow_204:
            await self._message_from(conn, chosen, message, spool.path, rest,
                                     as_request=as_request, note=f"passed; {verdict.code}",
                                     pending=spool.pending)
            return
        async for _ in rest:  # the client sends it all before reading an answer
            pass
        if verdict.action == "pass":
            self._no_content(conn, chosen, f"passed; {verdict.code}")
        else:
            self._block(conn, chosen, verdict)

    async def _sanitize(self, conn: Conn, request: IcapRequest, chosen: ServicePolicy,
                        message: HttpHead, spool: Spool, workdir: Path, name: str,
                        as_request: bool, tx: intake.Record, started: float,
                        boundary: bytes | None, clues: signals.Clues,
                        found: list[signals.Signal]) -> None:
        source = spool.path
        if message.encodings:
            source = workdir / "decoded"
            try:
                await asyncio.to_thread(service.decode, spool.path, source,
                                        message.encodings[0],
                                        self.settings.icap_max_body_bytes)
            except service.TooLarge:
                verdict = service.oversize(self.settings)
                await self._conclude_full(conn, request, chosen, message, verdict, spool,
                                          as_request)
                self._audit(tx, verdict, started)
                return
            except ValueError as exc:
                verdict = service.block(f"The body could not be decoded: {exc}", "damaged")
                await self._conclude_full(conn, request, chosen, message, verdict, spool,
                                          as_request)
                self._audit(tx, verdict, started)
                return
            head, tail, size = await asyncio.to_thread(_ends, source)
            found = [] if boundary is not None else signals.gather(clues, head, tail)
            early = None if boundary is not None else \
                service.by_head(self.settings, head, name, size, found, whole=True)
            if early is not None:
                await self._conclude_full(conn, request, chosen, message, early, spool, as_request)
                self._audit(tx, early, started)
                return
        if boundary is not None:
            await self._sanitize_form(conn, request, chosen, message, spool, source, workdir,
                                      boundary, as_request, tx, started)
            return
        out = workdir / "out"
        done = await self._run(conn, request, source, out, name, chosen)
        tx.result = result = done.result
        if done.output is None:
            verdict = service.refused(result)
            self._block(conn, chosen, verdict)
            self._audit(tx, verdict, started)
            return
        if service.is_clean(result, chosen, found):
            if request.may_204:
                self._no_content(conn, chosen, "clean")
            else:
                await self._message_from(conn, chosen, message, spool.path, None,
                                         as_request=as_request, note="clean")
            tx.outcome = "clean"
            self._audit(tx, None, started)
            return
        output = done.output
        new_head = self._rewritten(message, result, name, output.stat().st_size)
        findings = sum(1 for f in result.findings if f.action != "kept")
        await self._message_from(conn, chosen, new_head, output, None, as_request=as_request,
                                 note=f"sanitized; findings={findings}; "
                                      f"{service.verdict_tokens([result])}")
        tx.outcome, tx.output_size = "sanitized", output.stat().st_size
        self._audit(tx, None, started)

    async def _run(self, conn: Conn, request: IcapRequest, source: Path, out: Path, name: str,
                   chosen: ServicePolicy) -> intake.Outcome:
        """`source` through the sandbox into the new folder `out`, in one of the worker slots
        the gate gives the request's client in its turn. A client that goes away while waiting
        leaves the queue (ConnectionDone)."""
        from sanitas.sandbox import SandboxError

        key = client_key(request, conn.writer.get_extra_info("peername"))
        try:
            return await self.gate.run(key, intake.sanitize_now, self.settings, source, out,
                                       chosen.applied, name=name, unless=conn.gone())
        except Abandoned:
            log.info("icap: the client (%s) went away while waiting for a slot", key)
            raise ConnectionDone from None
        except SandboxError as exc:
            log.error("icap: the sandbox failed: %s", exc)
            raise IcapError(500, "The sandbox failed while processing this body.",
                            "sandbox_failed", close=False) from exc

    async def _sanitize_form(self, conn: Conn, request: IcapRequest, chosen: ServicePolicy,
                             message: HttpHead, spool: Spool, source: Path, workdir: Path,
                             boundary: bytes, as_request: bool, tx: intake.Record,
                             started: float) -> None:
        """A multipart/form-data body: every file part through the sandbox in turn (fields
        as they are). Clean parts stay; sanitized parts are replaced; the first part refused
        blocks the whole message, naming its file. One audit row per file part."""
        from sanitas.engine import safe_output_name

        try:
            parts = await asyncio.to_thread(form.split, source, boundary, workdir / "parts")
        except form.FormError as exc:
            unread = service.by_setting(self.settings.icap_undecodable_action,
                                        f"The form upload cannot be read: {exc.reason}.",
                                        exc.code)
            await self._conclude_full(conn, request, chosen, message, unread, spool,
                                      as_request)
            self._audit(tx, unread, started)
            return
        changed = findings = 0
        results: list[Result] = []  # of the parts replaced by the engine's copy
        for number, part in enumerate(parts):
            if not part.is_file or part.blank:
                continue
            part_started = time.monotonic()
            name = part.name
            ptx = intake.Record(channel=intake.Channel.ICAP, name=name, size=part.size,
                                sha256=part.sha256, chosen=chosen.applied, outcome="passed",
                                details=dict(tx.details))
            head, tail, _ = await asyncio.to_thread(_ends, part.path)
            found = signals.gather(signals.part_clues(part.content_type, part.filename),
                                   head, tail)
            verdict = service.by_head(self.settings, head, name, part.size, found, whole=True)
            if verdict is None:
                out = workdir / f"out{number}"
                done = await self._run(conn, request, part.path, out, name, chosen)
                ptx.result = result = done.result
                if done.output is None:
                    verdict = service.refused(result)
                elif service.is_clean(result, chosen, found):
                    ptx.outcome = "clean"
                    self._audit(ptx, None, part_started)
                    continue
                else:
                    output = done.output
                    new_name = safe_output_name(name, result.output_type or "") \
                        if service.renamed(name, result.output_type) else None
                    part.replace(output, service.media_type(result.output_type), new_name)
                    changed += 1
                    results.append(result)
                    findings += sum(1 for f in result.findings if f.action != "kept")
                    ptx.outcome, ptx.output_size = "sanitized", part.size
                    self._audit(ptx, None, part_started)
                    continue
            if verdict.action == "block":
                shown = name if len(name) <= 200 else name[:200] + "..."
                self._block(conn, chosen, service.block(
                    f'The form\'s file "{shown}" was blocked: {verdict.reason}', verdict.code))
                self._audit(ptx, verdict, part_started)
                return
            self._audit(ptx, verdict, part_started)  # passed unchanged
        if not changed:
            if request.may_204:
                self._no_content(conn, chosen, "clean")
            else:
                await self._message_from(conn, chosen, message, spool.path, None,
                                         as_request=as_request, note="clean")
            return
        body = workdir / "form"
        size = await asyncio.to_thread(form.assemble, parts, boundary, body)
        new_head = self._fresh(message, size)
        note = f"sanitized; parts={changed}; findings={findings}; " \
            f"{service.verdict_tokens(results)}"
        new_head.set("X-Sanitas", note)
        await self._message_from(conn, chosen, new_head, body, None, as_request=as_request,
                                 note=note)

    @staticmethod
    def _fresh(message: HttpHead, size: int) -> HttpHead:
        """`message`'s head for a new body of `size` bytes: validators, digests, ranges and
        encodings of the old one no longer hold; the message is sent whole with a length."""
        head = HttpHead(message.start_line, list(message.fields), synthetic=message.synthetic)
        head.remove("Content-Encoding", "Transfer-Encoding", "Content-MD5", "Digest",
                    "Content-Digest", "Repr-Digest", "ETag", "Content-Range", "Accept-Ranges",
                    "Last-Modified")
        head.set("Content-Length", str(size))
        return head

    def _rewritten(self, message: HttpHead, result: Result, name: str, size: int) -> HttpHead:
        from sanitas.engine import safe_output_name

        head = self._fresh(message, size)
        head.set("Content-Type", service.media_type(result.output_type))
        renamed = service.renamed(name, result.output_type)
        if message.get("Content-Disposition") is not None or renamed:
            new_name = safe_output_name(name, result.output_type or "")
            disposition = "attachment" if (message.get("Content-Disposition") or "") \
                .lower().startswith("attachment") or renamed else "inline"
            ascii_name = new_name.encode("ascii", "replace").decode().replace('"', "_")
            head.set("Content-Disposition", f'{disposition}; filename="{ascii_name}"')
        head.set("X-Sanitas", f"sanitized; findings={len(result.findings)}; "
                               f"{service.verdict_tokens([result])}")
        return head

    def _audit(self, tx: intake.Record, verdict: Verdict | None, started: float) -> None:
        if verdict is not None:
            tx.outcome = "blocked" if verdict.action == "block" else "passed"
            tx.code, tx.reason = verdict.code, verdict.reason
        if self.audit_user is None or self.factory is None:
            return
        tx.duration = time.monotonic() - started
        factory, user = self.factory, self.audit_user
        asyncio.get_running_loop().run_in_executor(None, intake.record, factory, user, tx)


def client_cap(settings: Settings) -> int:
    """Connections one client address may hold: icap_max_connections_per_client, or half of
    icap_max_connections when that is 0."""
    return settings.icap_max_connections_per_client or \
        max(1, settings.icap_max_connections // 2)


KEY_CHARS = 200


def client_key(request: IcapRequest, peer: object) -> str:
    """Whom a request is for, as the fair gate counts clients: the end user the proxy names
    (`X-Authenticated-User`, Squid's icap_send_client_username), else the end user's address
    (`X-Client-IP`, icap_send_client_ip), else the proxy's own address. The names are the
    proxy's word: only proxies should reach the ICAP port."""
    for header, kind in (("x-authenticated-user", "user"), ("x-client-ip", "ip")):
        value = request.headers.get(header, "").strip()
        if value:
            return f"{kind}:{value[:KEY_CHARS]}"
    return f"peer:{peer_address(peer)}"


def _ends(path: Path) -> tuple[bytes, bytes, int]:
    """The first `Spool.HEAD` and last `signals.TAIL` bytes of a file, and its size."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(Spool.HEAD)
    return head, signals.read_tail(path, size), size


# -- running it --------------------------------------------------------------------------------
def run(settings: Settings, host: str, port: int, *, migrate: bool = True,
        context: ssl.SSLContext | None = None) -> None:
    """Serve ICAP on host:port until SIGTERM or SIGINT; over TLS only with `context`
    (tls.server_context)."""
    from sanitas.datadir import scratch
    from sanitas.db import make_engine, make_sessionmaker

    if migrate:
        from sanitas.migrate import upgrade_to_head

        upgrade_to_head(str(settings.database_url))
    factory = make_sessionmaker(make_engine(str(settings.database_url)))
    audit_user = intake.service_account(factory, settings.icap_service_account, "ICAP") \
        if settings.icap_audit else None
    scratch.sweep(settings)
    if settings.sandbox != "none":
        from sanitas.sandbox.bwrap import prestart

        prestart(settings)
    asyncio.run(_serve(settings, factory, audit_user, host, port, context))


async def _serve(settings: Settings, factory: sessionmaker[Session], audit_user: str | None,
                 host: str, port: int, context: ssl.SSLContext | None) -> None:
    server = IcapServer(settings, factory, audit_user)
    loop = asyncio.get_running_loop()
    # With TLS, asyncio does each handshake on the event loop, without blocking it or other
    # connections, and drops one not finished within the read timeout; `handle` only sees
    # connections whose handshake (and client certificate, if required) succeeded.
    listener = await asyncio.start_server(
        server.handle, host, port, limit=MAX_ICAP_HEAD, reuse_address=True, ssl=context,
        ssl_handshake_timeout=settings.icap_timeout_seconds if context is not None else None)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    where = ", ".join(str(s.getsockname()[:2]) for s in listener.sockets)
    log.info("icap: listening on %s (pid %d; audit %s; %s)", where, os.getpid(),
             "on" if audit_user else "off",
             tls.describe(settings) if context is not None else "plain ICAP (no TLS)")
    print(f"Sanitas ICAP listening on {host}:{port}", flush=True)  # the start line tests wait for
    async with listener:
        await stop.wait()
    log.info("icap: stopping")
