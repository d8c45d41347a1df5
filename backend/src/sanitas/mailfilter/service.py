"""What the mail filter decides, apart from the SMTP wire: the policy, the one engine call for
a message, the outgoing message (trace fields kept, `X-Sanitas`, an optional footer) and the
list of attachments with their verdicts."""

from __future__ import annotations

import email
import email.message
import email.policy
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from sanitas.config import Settings
from sanitas.engine import verdict as verdicts
from sanitas.engine.policy import Mode, Policy
from sanitas.engine.report import Finding, Result
from sanitas.files import intake
from sanitas.mailfilter import headers
from sanitas.policies.applied import AppliedPolicy

MESSAGE_NAME = "message.eml"


UnknownPolicy = intake.UnknownPolicy


@dataclass(frozen=True)
class Chosen:
    applied: AppliedPolicy  # recorded with the message; `applied.policy` is what runs

    @property
    def policy(self) -> Policy:
        return self.applied.policy

    @property
    def mode(self) -> Mode:
        return self.applied.mode


def resolve(settings: Settings, factory: sessionmaker[Session] | None,
            policy_id: str) -> Chosen:
    """'basic', 'advanced' or the id of an organisation-wide policy (UnknownPolicy), through
    intake.choose_policy as every channel's."""
    caller = intake.Caller.service(intake.Channel.MAIL)
    ref = intake.PolicyRef(policy_id=(policy_id or Mode.BASIC).strip())
    try:
        return Chosen(intake.choose_policy(settings, caller, ref, factory=factory))
    except intake.UnknownPolicy as exc:
        raise UnknownPolicy(str(exc).replace("policyId must be", "the mail policy must be")) \
            from None


@dataclass(frozen=True)
class Cleaned:
    result: Result
    output: Path | None  # the cleaned message, when the engine accepted it


def run_engine(settings: Settings, chosen: Chosen, source: Path, out: Path) -> Cleaned:
    """The one place a message meets the engine: the whole message (`source`, an .eml) is
    cleaned in the sandbox by the .eml cleaner (engine/mail.py: every attachment, nested
    messages included, under the message limits) into the new folder `out`
    (intake.sanitize_now). SandboxError for a fault of the sandbox itself."""
    done = intake.sanitize_now(settings, source, out, chosen.applied, name=MESSAGE_NAME)
    return Cleaned(done.result, done.output)


def service_account(factory: sessionmaker[Session], email: str) -> str:
    """The mail service account's id (created if missing, as ICAP's: it cannot sign in)."""
    return intake.service_account(factory, email, "Mail")


def record(factory: sessionmaker[Session], account_id: str, chosen: Chosen, *, size: int,
           sha256: str, result: Result, refused: bool, reason: str | None, duration: float,
           details: dict[str, Any]) -> None:
    """One history row of the mail service account for a message, through the intake's
    record as every channel's (born expired, no bytes kept: the original is held apart)."""
    intake.record(factory, account_id, intake.Record(
        channel=intake.Channel.MAIL, name=MESSAGE_NAME, size=size, sha256=sha256,
        chosen=chosen.applied, outcome="blocked" if refused else "sanitized",
        code=(result.code.value if result.code else "refused") if refused else None,
        reason=reason, result=result, duration=duration, details=details))


def x_sanitas(result: Result, attachments: int) -> str:
    """The `X-Sanitas` value, in the words of the ICAP channel's header: `sanitized;
    findings=N; verdict=...; threats=...; ...` and the number of attachments."""
    from sanitas.icap.service import verdict_tokens

    findings = sum(1 for f in result.findings if f.action != "kept")
    return f"sanitized; findings={findings}; {verdict_tokens([result])}; " \
        f"attachments={attachments}"


def footer_text(outcome: verdicts.Outcome) -> str:
    return ("This message was checked by Sanitas before delivery. Verdict: "
            f"{outcome.verdict.value}. {outcome.summary}.\n")


def _split(data: bytes) -> tuple[bytes, bytes]:
    """A message we wrote (CRLF lines) as its header block (with the blank line) and body."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return data, b""
    return data[:end + 4], data[end + 4:]


def with_footer(cleaned: bytes, text: str) -> bytes:
    """The cleaned message (the engine's output) with a short inline text part at the end:
    added to a multipart/mixed, or the body wrapped in one with the footer beside it."""
    from email.mime.text import MIMEText

    from sanitas.engine.mail import serialise

    message = email.message_from_bytes(cleaned, policy=email.policy.compat32)
    if message.get_content_type() in ("multipart/encrypted", "application/pkcs7-mime",
                                      "application/x-pkcs7-mime"):
        return cleaned  # encrypted content passed as it came: wrapping it would break it
    footer = MIMEText(text, "plain", "utf-8")
    footer.add_header("Content-Disposition", "inline")
    if message.get_content_type() == "multipart/mixed":
        message.attach(footer)
        return serialise(message)
    body = email.message.Message()
    for name, value in message.items():
        if name.lower().startswith("content-"):
            body[name] = value
    body.set_payload(message.get_payload())
    for name in {n for n in message if n.lower().startswith("content-")}:
        del message[name]
    message["Content-Type"] = "multipart/mixed"
    message.set_payload([body, footer])
    return serialise(message)


def outgoing(head: headers.Head, cleaned: bytes, sanitas_value: str) -> bytes:
    """What goes to the next hop: the original's trace fields (Return-Path, Received,
    Authentication-Results... as received, unless the cleaned copy kept its own), the
    `X-Sanitas` field, then the cleaned message (any X-Sanitas field in it removed: only the
    filter writes one)."""
    block, body = _split(cleaned)
    kept = [whole for name, whole in headers.fields(block) if not name.startswith(b"x-sanitas")]
    present = {name for name, _ in headers.fields(block)}
    trace = [f for f in head.trace if f.split(b":", 1)[0].strip().lower() not in present]
    value = sanitas_value.encode("ascii", "replace")
    return (b"".join(trace) + b"X-Sanitas: " + value + b"\r\n" + b"".join(kept) + b"\r\n"
            + body)


def attachments(cleaned: bytes, findings: list[Finding]) -> list[dict[str, Any]]:
    """The attachments of the cleaned message (the engine's output), each with its name, the
    name it came with, its verdict and sentence: `refused` for one replaced by the note
    (`encrypted` when it was held back encrypted)."""
    from sanitas.engine import safe_output_name

    removed: dict[str, tuple[str, str, str]] = {}  # note name -> (label, verdict, summary)
    renamed: dict[str, str] = {}  # new name -> label
    for f in findings:
        label = f.location.removeprefix("(nested) ")
        if f.kind == "archive_member" and f.action == "removed" and ": " not in f.location:
            removed[safe_output_name(label, "removed.txt")] = (label, "refused",
                                                               f"Removed: {f.detail}")
        elif f.kind == "encrypted_content" and f.action == "removed" and \
                ": " not in f.location:  # an encrypted attachment held back
            removed[safe_output_name(label, "removed.txt")] = (
                label, verdicts.Verdict.ENCRYPTED.value, f"{verdicts.NOT_INSPECTED}: {f.detail}")
        elif f.kind == "renamed" and f.detail.startswith("attached as "):
            new = f.detail[len("attached as "):].split(" (was", 1)[0]
            renamed[new] = label
    message = email.message_from_bytes(cleaned, policy=email.policy.compat32)
    out: list[dict[str, Any]] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        try:
            name = part.get_filename()
        except (LookupError, ValueError, UnicodeError):
            name = None
        if not name:
            continue
        if name in removed:
            label, word, sentence = removed[name]
            out.append({"name": label[:255], "deliveredAs": name[:255], "verdict": word,
                        "summary": sentence[:500]})
            continue
        label = renamed.get(name, name)
        own = [asdict(f) for f in findings
               if f.location.removeprefix("(nested) ") == label
               or f.location.removeprefix("(nested) ").startswith(label + ": ")]
        outcome = verdicts.of_findings(own)
        out.append({"name": label[:255], "deliveredAs": name[:255],
                    "verdict": outcome.verdict.value, "summary": outcome.summary[:500]})
        if len(out) >= 200:
            break
    return out
