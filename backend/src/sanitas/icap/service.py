"""What the ICAP server decides, apart from the wire: the services and their policies, the
ISTag, which bodies go to the sandbox, what counts as clean, the block page, and the decoding
of gzip/deflate bodies."""

from __future__ import annotations

import hashlib
import html
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sqlalchemy.orm import Session, sessionmaker

from sanitas.config import Settings
from sanitas.engine import formats
from sanitas.engine import verdict as verdicts
from sanitas.engine.policy import Mode
from sanitas.engine.report import Rejected, RejectionCode, Result
from sanitas.files import intake
from sanitas.icap import form, signals
from sanitas.icap.httpmsg import HttpHead
from sanitas.icap.protocol import IcapError
from sanitas.policies.applied import AppliedPolicy

# Service path -> the built-in mode it stands for (a policyId query parameter overrides).
SERVICES: dict[str, Mode] = {"/sanitize": Mode.BASIC, "/sanitize-advanced": Mode.ADVANCED}
SANITIZED_STATUSES = frozenset({200, 203})  # responses whose bodies are files; others pass
DECODABLE = frozenset({"gzip", "x-gzip", "deflate"})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sanitas")
    except PackageNotFoundError:
        return "0"


VERSION = _version()


@dataclass(frozen=True)
class ServicePolicy:
    """What one request's service and policyId resolve to (intake.choose_policy)."""

    service: str
    applied: AppliedPolicy  # what runs, and what an audited transaction records

    @property
    def mode(self) -> Mode:
        return self.applied.mode

    @property
    def rebuilds(self) -> bool:
        """Whether every output is rebuilt from pixels (advanced): never "clean" then."""
        return self.applied.mode is Mode.ADVANCED


def resolve(settings: Settings, factory: sessionmaker[Session] | None, service: str,
            query: dict[str, list[str]]) -> ServicePolicy:
    """The service at `service` with its `policyId` (a built-in or an organisation-wide
    policy; on the advanced service, a policy keeping the format is rebuilt from pixels all
    the same); ICAP 404 for another service, 400 naming the policy when it is unknown."""
    mode = SERVICES.get(service)
    if mode is None:
        raise IcapError(404, f"No ICAP service at {service[:100]!r}; the services are "
                             f"{', '.join(SERVICES)}.", "unknown_service", close=False)
    given = query.get("policyId") or []
    if len(given) > 1:
        raise IcapError(400, "Give policyId once.", "bad_policy", close=False)
    caller = intake.Caller.service(intake.Channel.ICAP)
    ref = intake.PolicyRef(policy_id=given[0] if given else None, mode=mode)
    try:
        return ServicePolicy(service, intake.choose_policy(settings, caller, ref,
                                                           factory=factory))
    except intake.UnknownPolicy as exc:
        raise IcapError(400, str(exc), "unknown_policy", close=False) from None


def engine_fingerprint() -> str:
    """A digest of the package version and the source of the engine and of this ICAP
    package: it changes when an upgrade may change what the engine does to a file or how a
    transaction is answered (a form's parts, what passes, what is blocked)."""
    from sanitas import engine, icap

    digest = hashlib.sha256(VERSION.encode())
    for package in (engine, icap):
        root = Path(package.__file__ or ".").parent  # both are packages on disk
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{package.__name__}/{path.relative_to(root)}".encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def istag(fingerprint: str, settings: Settings, chosen: ServicePolicy) -> str:
    """The service's ISTag (quoted, at most 32 characters): changes with the engine, the
    policy (id, version, body) and the settings that change answers."""
    parts = {"engine": fingerprint, "service": chosen.service, "mode": chosen.mode,
             "policy": [chosen.applied.id, chosen.applied.version, chosen.applied.body],
             "ocr": [settings.ocr, settings.ocr_languages, settings.ocr_own_text],
             "pass": sorted(settings.icap_pass_types),
             "actions": [settings.icap_oversize_action, settings.icap_unsupported_action,
                         settings.icap_undecodable_action, settings.icap_max_body_bytes]}
    text = json.dumps(parts, sort_keys=True, default=str)
    return '"S' + hashlib.sha256(text.encode()).hexdigest()[:28] + '"'


# -- verdicts --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    action: Literal["pass", "block"]
    reason: str
    code: str  # machine-readable: why it passed or was blocked


def pass_(reason: str, code: str) -> Verdict:
    return Verdict("pass", reason, code)


def block(reason: str, code: str) -> Verdict:
    return Verdict("block", reason, code)


def refused(result: Result) -> Verdict:
    """The block verdict for a body (or a form's file) the sandbox did not give back clean."""
    return block(result.reason or "The file could not be sanitized.",
                 result.code.value if result.code else "damaged")


def renamed(name: str, output_type: str | None) -> bool:
    """Whether the cleaned copy of `name` has another type than its extension says."""
    original_ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return (output_type or "") != original_ext


def by_setting(action: str, reason: str, code: str) -> Verdict:
    return Verdict("block" if action == "block" else "pass", reason, code)


def before_body(settings: Settings, method: str, message: HttpHead,
                http_request: HttpHead | None) -> Verdict | None:
    """A verdict the HTTP heads alone give (None: the body decides)."""
    if method == "RESPMOD":
        if http_request is not None and http_request.method == "HEAD":
            return pass_("a HEAD response has no body", "no_body")
        status = message.status
        if status == 206:
            return block("A partial download (HTTP 206, a byte range) cannot be sanitized; "
                         "fetch the whole file.", "partial_content")
        if status not in SANITIZED_STATUSES:
            return pass_(f"HTTP status {status} is not a file download", "status")
    encodings = message.encodings
    if encodings and not (len(encodings) == 1 and encodings[0] in DECODABLE):
        return by_setting(settings.icap_undecodable_action,
                          f"The body is encoded as {', '.join(encodings)[:60]}, which this "
                          "server cannot decode to inspect it.", "undecodable")
    content_type = message.get("content-type") or ""
    try:
        if form.boundary_of(content_type) is not None:
            return None  # a form: split into its parts once the whole body is here
    except form.FormError as exc:
        return by_setting(settings.icap_undecodable_action,
                          f"The form upload cannot be read: {exc.reason}.", exc.code)
    if content_type.lower().startswith("multipart/"):
        return by_setting(settings.icap_undecodable_action,
                          "Multipart bodies other than form uploads (multipart/form-data) are "
                          "not split into their parts by this server.", "multipart")
    return None


def form_boundary(message: HttpHead) -> bytes | None:
    """The boundary of a form body whose heads `before_body` let through (None: no form)."""
    try:
        return form.boundary_of(message.get("content-type") or "")
    except form.FormError:
        return None


def by_head(settings: Settings, head: bytes, name: str, size: int | None,
            found: list[signals.Signal], *, whole: bool) -> Verdict | None:
    """A verdict the body's first bytes and the other signals (`found`, signals.gather)
    give, before the sandbox: the engine's bounded sniff (as the upload API uses) refuses
    executables and scripts; a body it cannot read is blocked when any signal points to a type
    the engine handles, an archive, markup or an executable, and otherwise follows
    icap_unsupported_action; a kind set aside by icap_pass_types passes when every signal
    fits it. `whole`: all of the body is here (`found` includes its end); until then no pass
    is given, only blocks. None: the sandbox decides (or, before `whole`, read on)."""
    from sanitas.engine.detect import sniff

    try:
        kind = sniff(head, name, size)
    except Rejected as exc:
        if exc.code is RejectionCode.EMPTY:
            return pass_("the body is empty", "empty")
        if exc.code is not RejectionCode.UNSUPPORTED_TYPE:
            return block(exc.reason, exc.code.value)
        if found:
            return disguised(exc.reason, found)
        if not whole:
            return None
        return by_setting(settings.icap_unsupported_action, exc.reason, "unsupported_type")
    skipped = {t.strip().lower() for t in settings.icap_pass_types}
    if (kind.kind in skipped or kind.family in skipped) and whole and \
            not signals.unexplained(found, kind.kind):
        return pass_(f"{kind.kind} is set aside by SANITAS_ICAP_PASS_TYPES", "pass_type")
    return None


def disguised(reason: str, found: list[signals.Signal]) -> Verdict:
    """The block of a body the engine cannot read although `found` points to something it
    must not pass unchanged: code `executable`, `unsupported_archive` or `type_mismatch`."""
    categories = {s.category for s in found}
    code = "executable" if "executable" in categories else \
        "unsupported_archive" if "archive" in categories else "type_mismatch"
    return block(f"{reason.rstrip('.')}, but {signals.describe(found)}: a body like this is "
                 "not passed unchanged.", code)


def oversize(settings: Settings) -> Verdict:
    limit = settings.icap_max_body_bytes
    return by_setting(settings.icap_oversize_action,
                      f"The file is larger than this server's limit of {limit} bytes.",
                      "too_large")


def is_clean(result: Result, chosen: ServicePolicy, found: list[signals.Signal]) -> bool:
    """Clean: the sandbox accepted the file and reports nothing it changed (every finding, if
    any, is 'kept'), the output keeps the input's type, no page was rebuilt from pixels, and
    every signal (`found`: the declared type, the names, magic bytes past the start) fits
    the kind the engine found. The original then passes as it came (204), not the engine's
    re-written copy; otherwise the copy replaces it (a PDF served as text/html, a PNG with a
    ZIP at its end, plain text served as HTML go out as the engine's copy, typed as such)."""
    if result.status != "ok" or chosen.rebuilds or result.pages_rebuilt:
        return False
    if result.passed_encrypted:  # kept, but never inspected: its verdict is not clean
        return False
    if any(f.action != "kept" for f in result.findings):
        return False
    kind = formats.KINDS.get(result.detected_type or "")
    if signals.unexplained(found, result.detected_type):
        return False
    return kind is not None and (result.output_type or "") in kind.extensions


def verdict_tokens(results: list[Result]) -> str:
    """The `X-Sanitas` tokens of the verdict on the engine's results for one message (a form's
    parts together: the worst verdict, the counts added up): `verdict=partial; threats=3;
    hiddenData=0; filesDropped=1; contentDropped=0; textLayerDropped=0;
    encryptedHeld=0; encryptedPassed=0`."""
    counts = verdicts.Counts()
    words = []
    for result in results:
        outcome = result.outcome()
        counts.add(outcome.counts)
        words.append(outcome.verdict)
    return f"verdict={verdicts.worst(words)}; {counts.header()}"


def media_type(extension: str | None) -> str:
    output = formats.OUTPUTS.get((extension or "").lower())
    if output is not None:
        return output.media_type
    for kind in formats.KINDS.values():
        if extension in kind.extensions:
            return kind.media_type
    return "application/octet-stream"


def block_page(reason: str, code: str) -> bytes:
    text = html.escape(reason[:2000])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>Blocked by Sanitas</title></head>\n<body style=\"font-family:sans-serif;"
        "max-width:40em;margin:3em auto\">\n<h1>This file was blocked</h1>\n"
        f"<p>{text}</p>\n<p><small>Sanitas ICAP &middot; code "
        f"<code>{html.escape(code[:40])}</code></small></p>\n</body></html>\n").encode()


def block_response(reason: str, code: str) -> tuple[HttpHead, bytes]:
    body = block_page(reason, code)
    head = HttpHead("HTTP/1.1 403 Forbidden", [
        ("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body))),
        ("Cache-Control", "no-store"), ("X-Sanitas-Code", code[:40]),
        ("Connection", "close")])
    return head, body


# -- Content-Encoding ----------------------------------------------------------------------
class TooLarge(Exception):
    """The decoded body exceeds the limit."""


def decode(source: Path, target: Path, encoding: str, limit: int) -> None:
    """Decode a gzip or deflate body into `target`, at most `limit` bytes (TooLarge beyond);
    ValueError when it is not valid data of that encoding."""
    wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
    for attempt in (wbits, -zlib.MAX_WBITS):  # deflate is zlib-wrapped, or raw in practice
        try:
            _inflate(source, target, attempt, limit)
            return
        except zlib.error as exc:
            if encoding not in ("deflate",) or attempt < 0:
                raise ValueError(f"the {encoding} body is not valid: {exc}") from exc
    raise AssertionError("unreachable")


def _inflate(source: Path, target: Path, wbits: int, limit: int) -> None:
    inflater = zlib.decompressobj(wbits)
    written = 0
    with open(source, "rb") as src, open(target, "wb") as dst:
        while data := src.read(256 * 1024):
            while data:
                out = inflater.decompress(data, 256 * 1024)
                written += len(out)
                if written > limit:
                    raise TooLarge
                dst.write(out)
                data = inflater.unconsumed_tail
            if inflater.eof:
                break
        rest = inflater.flush()
        written += len(rest)
        if written > limit:
            raise TooLarge
        dst.write(rest)
    if not inflater.eof:
        raise zlib.error("the compressed data ends early")
