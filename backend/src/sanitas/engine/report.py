"""What every sanitizer records and returns: findings, the rejection error, the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from sanitas.engine import verdict
from sanitas.engine.kinds import CONTENT_NAMES, rule_of
from sanitas.engine.modes import Mode as Mode  # re-exported: Context.mode is one
from sanitas.engine.policy import CHOICES, Action, Rule
from sanitas.engine.policy import Policy as Policy  # re-exported: the Context carries one

# What was done about one finding (a policy's rule says what to do: `policy.Action`).
FindingAction = Literal["removed", "converted", "kept", "blocked"]

MAX_PER_KIND = 100  # findings listed per kind; the rest are counted
MAX_FINDINGS = 500  # findings listed per file


class RejectionCode(StrEnum):
    """Why a file was refused, for programs (the reason sentence is for people)."""

    EMPTY = "empty"
    EXECUTABLE = "executable"  # a program, a script, an installer or an add-in
    UNSUPPORTED_TYPE = "unsupported_type"
    ENCRYPTED = "encrypted"  # password-protected and no (or no right) password given
    WRONG_PASSWORD = "wrong_password"  # noqa: S105 - a rejection code, not a password
    DAMAGED = "damaged"  # malformed beyond repair
    BOMB = "bomb"  # expands far beyond its size (zip or decompression bomb)
    TOO_LARGE = "too_large"  # input or output over a size limit
    TOO_COMPLEX = "too_complex"  # nesting, element, page or frame count over a limit
    UNSAFE_STRUCTURE = "unsafe_structure"  # DTD/entities, unsafe names, duplicate parts
    NO_CONTENT = "no_content"  # nothing displayable is left once the active content is gone
    INVALID_OUTPUT = "invalid_output"  # the output did not re-open as a valid file
    UNAVAILABLE = "unavailable"  # this installation lacks the tool the format needs
    TIME_LIMIT = "time_limit"
    CPU_LIMIT = "cpu_limit"
    MEMORY_LIMIT = "memory_limit"
    DISK_LIMIT = "disk_limit"
    CRASHED = "crashed"  # the sanitizer died on the file
    TYPE_NOT_ALLOWED = "type_not_allowed"  # the policy's allowedTypes leave this type out
    # The policy refuses files holding this content (one code per rule, see engine/kinds.py).
    REFUSED_MACROS = "refused_macros"
    REFUSED_JAVASCRIPT = "refused_javascript"
    REFUSED_EMBEDDED_FILES = "refused_embedded_files"
    REFUSED_EXTERNAL_REFERENCES = "refused_external_references"
    REFUSED_HYPERLINKS = "refused_hyperlinks"
    REFUSED_REVIEW_DATA = "refused_review_data"
    REFUSED_DOCUMENT_METADATA = "refused_document_metadata"
    REFUSED_IMAGE_METADATA = "refused_image_metadata"
    REFUSED_HIDDEN_CONTENT = "refused_hidden_content"
    REFUSED_FORM_FIELDS = "refused_form_fields"
    REFUSED_COVER_ART = "refused_cover_art"
    REFUSED_CHAPTERS = "refused_chapters"


class Rejected(Exception):
    """The input cannot be made safe (unknown type, executable, encrypted, bomb, corrupt).
    `reason` is a sentence a person understands; `code` says the same for a program."""

    def __init__(self, reason: str, code: RejectionCode) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = RejectionCode(code)


class Refused(Rejected):
    """The policy refuses files with this content (`rule`). Never turned into a lesser outcome
    (an archive member dropped, a part removed): the whole upload is refused."""

    def __init__(self, rule: Rule, kind: str, location: str) -> None:
        what = CONTENT_NAMES[rule]
        where = f" ({location[:200]})" if location else ""
        super().__init__(f"The file contains {what}{where}, which this policy refuses.",
                         REFUSAL_CODES[rule])
        self.rule = rule
        self.kind = kind


REFUSAL_CODES: dict[Rule, RejectionCode] = {
    rule: RejectionCode("refused_" + "".join("_" + c.lower() if c.isupper() else c
                                              for c in rule.value))
    for rule in Rule if Action.REFUSE in CHOICES[rule]}


@dataclass
class Finding:
    kind: str  # e.g. "javascript", "macro", "exif", "external_relationship"
    location: str  # where in the file, e.g. "page 3 /AA", "word/vbaProject.bin"
    action: FindingAction
    detail: str = ""


@dataclass
class Nested:
    """What the files found inside one upload (archive members, PDF attachments, embedded
    office packages, at every level) have used so far of the archive limits: one per upload,
    shared by every level (`nested.nested_context`)."""

    count: int = 0
    size: int = 0


@dataclass
class Context:
    """Passed to every family sanitizer."""

    mode: Mode = Mode.BASIC
    policy: Policy = field(default_factory=Policy)
    findings: list[Finding] = field(default_factory=list)
    on_progress: Callable[[int], None] | None = None  # percent 0..100
    workdir: Path | None = None  # scratch space (private tmpfs inside the sandbox)
    pages_rebuilt: list[int] = field(default_factory=list)  # advanced mode, 1-based
    depth: int = 0  # how deep inside archives this file is (0: the upload itself)
    # The password that opens an encrypted input (PDF, OOXML, ZIP): never stored, never logged,
    # never part of the result.
    password: str | None = field(default=None, repr=False)
    nested: Nested = field(default_factory=Nested, repr=False)
    ocr_languages: str = "eng"  # tesseract's languages for advanced mode's text layer
    ocr_own_text: bool = True  # a page whose own text is all shown keeps it (shown_text.py)

    _seen: set[tuple[str, str, str, str]] = field(default_factory=set, repr=False)
    _per_kind: dict[str, int] = field(default_factory=dict, repr=False)
    _suppressed: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # a caller's "basic"/"advanced" becomes the member (`is Mode.ADVANCED` holds), any
        # other word is a ValueError here rather than a silent basic clean
        self.mode = Mode(self.mode)

    def add(self, kind: str, location: str, *, action: FindingAction = "removed",
            detail: str = "", rule: Rule | None = None) -> None:
        """Record one finding: the one recorder of every family. Repeats of the same finding
        are dropped, and past `MAX_PER_KIND` of a kind only a count is kept (a hostile file
        must not turn the report into a bomb); `closed_findings` adds one line per kind.

        The kind is looked up in `kinds.FINDING_KINDS` (`rule` picks among a shared kind's rules):
        when the policy refuses that rule's content, the file is refused here (`Refused`)."""
        decided_by = rule_of(kind, rule)
        if decided_by is not None and self.policy.action(decided_by) is Action.REFUSE:
            raise Refused(decided_by, kind, location)
        self.record(kind, location, action=action, detail=detail)

    def decides(self, rule: Rule) -> Action:
        """The policy's action for `rule`."""
        return self.policy.action(rule)

    def record(self, kind: str, location: str, *, action: FindingAction = "removed",
               detail: str = "") -> None:
        """Record a finding without applying the policy (a member's finding already decided
        by the member's own context, see `adopt`)."""
        rule_of(kind)  # an undeclared kind is still noticed
        key = (kind, location, action, detail)
        if key in self._seen:
            return
        self._seen.add(key)
        count = self._per_kind.get(kind, 0) + 1
        self._per_kind[kind] = count
        if count > MAX_PER_KIND:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return
        self.findings.append(Finding(kind, location, action, detail))

    def count(self, kind: str) -> int:
        """How many findings of `kind` were recorded, those summarised included."""
        return self._per_kind.get(kind, 0)

    def closed_findings(self) -> list[Finding]:
        """The findings for the result: at most `MAX_FINDINGS`, with a summary line for each
        kind that reached its cap and one for whatever the total cap left out."""
        findings = list(self.findings)
        for kind, n in self._suppressed.items():
            findings.append(Finding(kind, "whole file", "removed", f"and {n} more of this kind"))
        if len(findings) > MAX_FINDINGS:
            extra = len(findings) - MAX_FINDINGS
            findings = [*findings[:MAX_FINDINGS],
                        Finding("more", "whole file", "removed",
                                f"{extra} further findings not listed")]
        return findings

    def progress(self, percent: int) -> None:
        if self.on_progress is not None:
            self.on_progress(max(0, min(100, int(percent))))


@dataclass
class Result:
    input: str
    status: Literal["ok", "rejected"]
    output: str | None = None
    output_type: str | None = None  # the output's extension without dot, e.g. "pdf"
    reason: str | None = None
    code: RejectionCode | None = None  # with a rejection: the reason for programs
    findings: list[Finding] = field(default_factory=list)
    duration_ms: int = 0
    detected_type: str | None = None
    pages_rebuilt: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """The CLI's `--json` object (camelCase keys); the verdict keys are for people and
        programs reading it, `from_json` never takes them (the API side computes its own)."""
        return {
            "input": self.input, "status": self.status, "output": self.output,
            "outputType": self.output_type, "reason": self.reason,
            "code": self.code.value if self.code else None,
            "findings": [asdict(f) for f in self.findings], "durationMs": self.duration_ms,
            "detectedType": self.detected_type, "pagesRebuilt": self.pages_rebuilt,
            **self.outcome().to_json(),
        }

    def file_report(self) -> dict[str, Any]:
        """The report stored with a file row (`files.report`) and shown by the status call:
        what was found and done, the kinds in and out, pages rebuilt and the engine's time,
        and the verdict with its counts and sentence (engine/verdict.py, computed here once)."""
        findings = [asdict(f) for f in self.findings]
        return {
            "findings": findings,
            "detectedType": self.detected_type, "outputType": self.output_type,
            "pagesRebuilt": list(self.pages_rebuilt), "durationMs": self.duration_ms,
            **self.outcome(findings).to_json(),
        }

    @property
    def passed_encrypted(self) -> bool:
        """The output is the input itself, unread: an encrypted file the policy passes
        (`encryptedContent: pass`, engine `_pass_encrypted`). The sandbox's parent then checks
        it byte for byte against the input instead of as an output of its type."""
        return self.status == "ok" and any(
            f.kind == "encrypted_content" and f.location == "file" and f.action == "kept"
            for f in self.findings)

    def outcome(self, findings: list[dict[str, Any]] | None = None) -> verdict.Outcome:
        """The verdict on this result: refused when rejected, else from its findings."""
        if self.status != "ok":
            return verdict.refused(self.reason, self.code.value if self.code else None)
        return verdict.of_findings(findings if findings is not None
                                   else [asdict(f) for f in self.findings])

    @classmethod
    def from_json(cls, payload: object, *, name: str) -> Result:
        """The inverse of `to_json`, for JSON that crossed a trust boundary (the sandbox's
        answer): strict types, bounded sizes, unknown actions and codes mapped to safe values.
        `name` replaces the input's name; the output path is never taken from the payload.
        Raises ValueError when the payload is not a result at all."""
        if not isinstance(payload, dict) or payload.get("status") not in ("ok", "rejected"):
            raise ValueError("not a sanitizer result")
        status = payload["status"]
        raw_findings = payload.get("findings")
        findings = [
            Finding(kind=_bounded_text(item.get("kind"), 100),
                    location=_bounded_text(item.get("location"), 500),
                    action=item["action"] if item.get("action") in ACTIONS else "removed",
                    detail=_bounded_text(item.get("detail"), 1000))
            for item in (raw_findings if isinstance(raw_findings, list) else [])[:1000]
            if isinstance(item, dict)]
        pages = payload.get("pagesRebuilt")
        detected = payload.get("detectedType")
        output_type = payload.get("outputType")
        code = None
        if status == "rejected":
            raw_code = payload.get("code")
            code = (RejectionCode(raw_code) if raw_code in set(RejectionCode)
                    else RejectionCode.DAMAGED)
        duration = payload.get("durationMs")
        return cls(
            input=name, status=status, output=None,
            output_type=_bounded_text(output_type, 16) if status == "ok" and output_type
            else None,
            reason=_bounded_text(payload.get("reason"), 2000) if status == "rejected" else None,
            code=code, findings=findings,
            duration_ms=duration if isinstance(duration, int) and duration >= 0 else 0,
            detected_type=_bounded_text(detected, 40) if detected else None,
            pages_rebuilt=([p for p in pages[:100_000] if isinstance(p, int)]
                           if isinstance(pages, list) else []))


ACTIONS: frozenset[str] = frozenset(("removed", "converted", "kept", "blocked"))


def _bounded_text(value: object, limit: int) -> str:
    return str(value)[:limit] if value is not None else ""
