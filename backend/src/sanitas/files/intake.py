"""Intake: the one way a file enters Sanitas, whatever channel brings it.

Every channel -- the web upload and the one-call API (files/routes.py), the ICAP server
(icap/), the mail filter (mailfilter/) -- hands over the same things and gets the same answer:

    who      Caller.person(user, channel)           a signed-in user or an API key's owner:
                                                    their plan, quotas and policies
             Caller.service(channel, account_id)    a channel's service account (ICAP, mail;
                                                    None: the channel keeps no history)
    which    PolicyRef(policy_id=None, mode=None)   the policy asked for, by id or by mode
    what     a file spooled to disk (its path, name, size and SHA-256)

1. `choose_policy(settings, caller, ref, ...)` resolves the policy once: an `AppliedPolicy`
   (policies/applied.py) holding the engine `Policy` that runs (its `mode` is the policy's)
   and the record a file keeps of it (id, version, name, body).
2. Then one of two ways, as the channel needs the outcome:
   - `queue(...)`: a person's upload (web, one-call API): the files are stored, recorded
     with their policy and a job each, and handed to the executor; the outcome comes later
     (the status call, webhooks), from processing, which runs the recorded policy.
   - `sanitize_now(...)`: a transaction answered while the client waits (ICAP, mail): the
     file goes through the sandbox at once; `Outcome` holds the engine's result, the
     verdict (engine/verdict.py) and the sanitized file. `record(...)` then adds the
     transaction's row to the service account's history (audit; no bytes kept).

What a channel does around this stays its own: reading an HTTP body or an ICAP/SMTP stream,
early verdicts from the first bytes (ICAP), waiting for the job (the one-call API), the
answer's shape.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sanitas import plans
from sanitas.config import Settings
from sanitas.engine import verdict as verdicts
from sanitas.engine.policy import BUILT_IN, Mode, resolve
from sanitas.engine.report import Finding, Result
from sanitas.files import service as files_service
from sanitas.models import File, FileStatus, Job, Role, User
from sanitas.policies import service as policies_service
from sanitas.policies.applied import AppliedPolicy, applied_built_in, applied_stored

if TYPE_CHECKING:
    from sanitas.files.multipart import ReceivedFile
    from sanitas.storage import Storage
    from sanitas.web.deps import Executor

log = logging.getLogger(__name__)

__all__ = [
    "AppliedPolicy",
    "Caller",
    "Channel",
    "Outcome",
    "PolicyRef",
    "Record",
    "UnknownPolicy",
    "choose_policy",
    "precheck",
    "queue",
    "record",
    "sanitize_now",
    "service_account",
]


class Channel(StrEnum):
    """The ways files come in (also the key of a recorded transaction's details)."""

    WEB = "web"  # /api/upload/single and /multiple: the web app, API keys
    API = "api"  # /api/v1/sanitize: one call, the file in, the sanitized file out
    ICAP = "icap"  # a proxy's REQMOD/RESPMOD (sanitas icap)
    MAIL = "mail"  # an SMTP content filter's message (sanitas mail)


@dataclass(frozen=True)
class Caller:
    """Who hands a file in, and by which channel."""

    channel: Channel
    user: User | None = None  # a person: the plan, quotas and personal policies are theirs
    account_id: str | None = None  # a service account's user id (its history), or None

    @classmethod
    def person(cls, user: User, channel: Channel = Channel.WEB) -> Caller:
        return cls(channel=channel, user=user, account_id=user.id)

    @classmethod
    def service(cls, channel: Channel, account_id: str | None = None) -> Caller:
        return cls(channel=channel, account_id=account_id)


@dataclass(frozen=True)
class PolicyRef:
    """The policy a caller asks for: `policy_id` (a built-in's or a stored policy's id), else
    `mode` (the built-in of that name), else the default (a person's role's default; for a
    service, the built-in basic). For a service, `mode` advanced with a policy whose output
    is "same" rebuilds from pixels all the same (ICAP's advanced service)."""

    policy_id: str | None = None
    mode: str | None = None


class UnknownPolicy(ValueError):
    """A service channel named a policy that is neither a built-in nor organisation-wide."""


# -- 1. the policy ---------------------------------------------------------------------------
def choose_policy(settings: Settings, caller: Caller, ref: PolicyRef, *,
                  session: Session | None = None,
                  factory: sessionmaker[Session] | None = None) -> AppliedPolicy:
    """The policy `caller` gets for `ref`, resolved once (the server's OCR setting applied to
    the built-in advanced policy and to advanced mode's pixels).

    A person (`session` required): `ref.policy_id` if given (ApiError 404 when they cannot
    see it, 403 `policy_not_allowed` when its output needs a mode their plan lacks), else the
    built-in of `ref.mode` (400 `invalid_mode`, 403 `mode_not_allowed`), else their role's
    default.

    A service: a built-in or an organisation-wide policy (looked up with `session`, else a
    session of `factory`; with neither, built-ins only), else UnknownPolicy; no id: the
    built-in of `ref.mode` (basic when None)."""
    if caller.user is not None:
        if session is None:
            raise TypeError("choose_policy for a person needs their session")
        return policies_service.choose_for_upload(session, settings, caller.user,
                                                  ref.policy_id, ref.mode)
    mode = Mode(ref.mode) if ref.mode else Mode.BASIC
    policy_id = (ref.policy_id or "").strip()
    if not policy_id:
        return applied_built_in(mode, ocr=settings.ocr)
    if policy_id in BUILT_IN:
        applied = applied_built_in(policy_id, ocr=settings.ocr)
    else:
        stored = None
        if session is not None:
            stored = policies_service.find_organisation_policy(session, policy_id)
        elif factory is not None:
            with factory() as own:
                stored = policies_service.find_organisation_policy(own, policy_id)
        if stored is None:
            raise UnknownPolicy(f"Unknown policy {policy_id[:40]!r}: policyId must be "
                                "'basic', 'advanced' or the id of an organisation-wide policy.")
        applied = applied_stored(stored)
    runs = resolve(applied.policy, mode, ocr=settings.ocr)
    if runs is not applied.policy:  # advanced mode upgraded a policy that keeps the format
        applied = AppliedPolicy(id=applied.id, version=applied.version, name=applied.name,
                                body=applied.body, policy=runs, built_in=applied.built_in)
    return applied


# -- 2a. queued: a person's upload -----------------------------------------------------------
def precheck(session: Session, settings: Settings, caller: Caller) -> None:
    """Refuse before a body is read when no upload can be accepted anyway (the monthly
    quota: ApiError 403 `quota_exceeded`)."""
    assert caller.user is not None, "uploads are a person's"
    limits = plans.plan_for(settings, caller.user.role).limits
    files_service.check_monthly_quota(session, caller.user, limits, 1)


@dataclass(frozen=True)
class Queued:
    """A file accepted for processing and its job (waiting: the outcome comes later)."""

    file: File
    job: Job


def queue(session: Session, settings: Settings, storage: Storage, executor: Executor | None,
          caller: Caller, received: list[ReceivedFile], ref: PolicyRef, *,
          password: str | None = None) -> list[Queued]:
    """A person's files in: the policy chosen (as `choose_policy`), the password checked
    (400 `invalid_password`; it goes sealed to every file's job), the files' types sniffed,
    quotas checked under a lock, blobs stored, a File and a Job row each committed at once
    (nothing of a refused upload remains: files/service.accept_upload), then each job handed
    to `executor` (None: a worker elsewhere finds it). Blocking: call it in a thread."""
    assert caller.user is not None, "uploads are a person's"
    chosen = choose_policy(settings, caller, ref, session=session)
    checked = files_service.check_password(password)
    pairs = files_service.accept_upload(session, settings, storage, caller.user, received,
                                        chosen, password=checked)
    if executor is not None:
        for _, job in pairs:
            executor.submit(job.id, job.priority)
    return [Queued(file, job) for file, job in pairs]


# -- 2b. now: a transaction the client waits for ---------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What the sandbox made of one file."""

    result: Result  # the engine's: status, reason and code when refused, findings, types
    output: Path | None  # the sanitized file, when it was accepted

    @property
    def refused(self) -> bool:
        return self.output is None

    @property
    def verdict(self) -> verdicts.Outcome:
        """The verdict, its counts and sentence (refused when the file was refused)."""
        return self.result.outcome()

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings


def sanitize_now(settings: Settings, source: Path, out_dir: Path, chosen: AppliedPolicy, *,
                 name: str, password: str | None = None) -> Outcome:
    """`source` through a fresh sandbox with `chosen`'s policy, the output into `out_dir`
    (created here; it must not exist yet), named after `name`. Blocking (seconds to minutes):
    call it in a worker thread, within the channel's limit of concurrent jobs. Raises
    sandbox.SandboxError when the sandbox itself failed (not the file's fault: a channel
    answers "try again later")."""
    from sanitas.sandbox import run_sanitizer

    out_dir.mkdir()
    result = run_sanitizer(source, out_dir, settings=settings, policy=chosen.policy,
                           original_name=name, password=password)
    output = None
    if result.status == "ok" and result.output:
        output = Path(result.output)
        if not output.is_absolute():
            output = out_dir / output
    return Outcome(result=result, output=output)


# -- 3. the history row of a transaction answered now ----------------------------------------
def service_account(factory: sessionmaker[Session], email: str, first_name: str) -> str:
    """The id of a channel's service account (created if missing: ENTERPRISE, verified,
    without a password, so it cannot sign in; named `first_name` "service")."""
    from sanitas.auth.service import normalise_email

    email = normalise_email(email)
    with factory() as session:
        user = session.scalar(select(User).where(func.lower(User.email) == email))
        if user is None:
            user = User(email=email, role=Role.ENTERPRISE, is_email_verified=True,
                        password_hash=None, first_name=first_name, last_name="service")
            session.add(user)
            session.commit()
            log.info("%s: created the service account %s", first_name.lower(), email)
        return user.id


@dataclass
class Record:
    """What the history row of a transaction records."""

    channel: Channel
    name: str
    size: int
    sha256: str | None
    chosen: AppliedPolicy
    outcome: Literal["clean", "sanitized", "blocked", "passed"]
    code: str | None = None  # why it was blocked or passed
    reason: str | None = None
    result: Result | None = None  # the engine's, when the sandbox saw the file
    output_size: int | None = None
    duration: float = 0.0  # seconds
    details: dict[str, Any] = field(default_factory=dict)  # the channel's (ICAP: method, url)


def record(factory: sessionmaker[Session], account_id: str, rec: Record) -> None:
    """One history row of `account_id` for `rec`, born expired (no bytes kept: a download
    answers 410), with the report, the policy and the original's hash. `report[channel]`
    holds the details, the outcome, code and reason; a blocked transaction is FAILED with the
    verdict refused (encrypted when it was held back encrypted), one that passed unseen by
    the engine has no verdict. A failure is logged, never raised."""
    from sanitas.db import utcnow
    from sanitas.files.multipart import clean_filename
    from sanitas.files.naming import sanitized_name_for

    now = utcnow()
    result = rec.result
    report: dict[str, Any] = (result.file_report() if result else
                              Result(input=rec.name, status="rejected").file_report())
    report[rec.channel.value] = {**rec.details, "outcome": rec.outcome, "code": rec.code,
                                 "reason": (rec.reason or "")[:1000]}
    failed = rec.outcome == "blocked"
    if failed:  # refused by the engine or by a rule of the channel: its reason
        report.update(verdicts.refused(rec.reason, rec.code).to_json())
    elif rec.outcome == "passed":  # the engine never saw it: no verdict
        report.update(verdict=None, verdictCounts=None, verdictSummary=None)
    name = clean_filename(rec.name)
    file = File(user_id=account_id, original_name=name, original_size=rec.size,
                detected_type=(result.detected_type if result else None),
                mode=rec.chosen.mode.value, original_key=None, sanitized_key=None,
                sanitized_name=(sanitized_name_for(name, result.output_type)
                                if rec.outcome == "sanitized" and result else None),
                sanitized_size=rec.output_size,
                status=FileStatus.FAILED if failed else FileStatus.COMPLETED,
                error_message=(rec.reason or "")[:1000] if failed else None,
                error_code=(rec.code or "")[:32] if failed else None,
                report=report, created_at=now, processing_started_at=now,
                processing_completed_at=now, processing_duration=round(rec.duration, 3),
                expires_at=now, is_expired=True, download_count=0,
                policy_id=rec.chosen.id, policy_version=rec.chosen.version,
                policy_name=rec.chosen.name, policy_body=rec.chosen.body,
                sha256_original=rec.sha256, verdict=report["verdict"])
    try:
        with factory() as session:
            session.add(file)
            session.commit()
    except Exception:
        log.exception("%s: could not record the history row of a transaction",
                      rec.channel.value)
