"""Sanitization policies: what the engine does with each kind of content it may find.

A policy decides, per kind of content (a *rule*), one action: remove it, keep it, refuse the
whole file when it is there, and for some kinds a fourth choice (embedded files: sanitize
them inside; review data: keep with the authors anonymised). Beside the rules: the input types
it accepts, what the output is (the same format, or a PDF rebuilt from pixels, with or without
an OCR text layer) and the most pages it rebuilds.

The JSON form (`Policy.from_json` / `to_json`) is the one the API, the CLI (`--policy FILE`)
and the sandbox job message use:

    {"rules": {"macros": "remove", ..., "formFields": "keep"},
     "allowedTypes": ["pdf", "docx", "image"] | null,
     "output": "same" | "pdf" | "pdf+ocr",
     "maxPages": 500 | null}

Missing rules take the built-in basic policy's action; unknown keys and actions a rule does not
offer are errors (`PolicyError`, naming the field). The built-ins BASIC and ADVANCED are the
product's two modes (`Mode`); a policy's mode follows from its output (`Policy.mode`).

`resolve` is the one place a mode and a policy meet: a caller holding both (the engine's and the
sandbox's `mode=` shortcut, ICAP's advanced service) gets the one policy the job runs with; a
caller holding a policy passes only that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from sanitas.engine.modes import Mode as Mode  # re-exported: a policy's mode is one


class Action(StrEnum):
    REMOVE = "remove"
    # Kept, never as something that runs: embedded files only after the engine cleaned them
    # (the same as SANITIZE), external references only those that load nothing able to run.
    KEEP = "keep"
    REFUSE = "refuse"  # the whole file is refused when such content is found
    SANITIZE = "sanitize"  # embedded files only: cleaned by their own family, kept
    ANONYMISE = "anonymise"  # review data only: kept, reviewers renamed Author 1, 2...
    # Encrypted content only (what the engine cannot read, so cannot inspect): HOLD keeps it
    # out of the copy (the whole file when the file itself is encrypted; an encrypted part of
    # a message is replaced by a note), PASS delivers it unchanged and marked as not inspected.
    HOLD = "hold"
    PASS = "pass"  # noqa: S105 - an action's name


class Rule(StrEnum):
    """The kinds of content a policy decides about (JSON names)."""

    MACROS = "macros"  # VBA/XLM macros, scripts in office documents
    JAVASCRIPT = "javascript"  # JavaScript and PDF actions (launch, submit, open actions...)
    EMBEDDED_FILES = "embeddedFiles"  # PDF attachments, OLE objects, embedded packages
    EXTERNAL_REFERENCES = "externalReferences"  # remote templates, external links, DDE...
    HYPERLINKS = "hyperlinks"  # clickable links to web addresses
    REVIEW_DATA = "reviewData"  # comments, tracked changes, reviewers' names
    DOCUMENT_METADATA = "documentMetadata"  # author, company, dates, custom properties
    IMAGE_METADATA = "imageMetadata"  # EXIF (camera, GPS), XMP, IPTC in pictures
    HIDDEN_CONTENT = "hiddenContent"  # hidden sheets, slides and text
    FORM_FIELDS = "formFields"  # fillable form fields
    COVER_ART = "coverArt"  # cover pictures of audio and video files
    CHAPTERS = "chapters"  # chapter marks (and their titles) of audio and video files
    # Encrypted files and parts without their password (PDF, Office, archives, S/MIME and
    # PGP mail): nothing inside them can be inspected
    ENCRYPTED_CONTENT = "encryptedContent"


_COMMON = frozenset({Action.REMOVE, Action.KEEP, Action.REFUSE})
CHOICES: dict[Rule, frozenset[Action]] = {
    Rule.MACROS: frozenset({Action.REMOVE, Action.REFUSE}),  # never kept
    Rule.JAVASCRIPT: frozenset({Action.REMOVE, Action.REFUSE}),  # never kept
    Rule.EMBEDDED_FILES: _COMMON | {Action.SANITIZE},
    Rule.EXTERNAL_REFERENCES: _COMMON,
    Rule.HYPERLINKS: _COMMON,
    Rule.REVIEW_DATA: _COMMON | {Action.ANONYMISE},
    Rule.DOCUMENT_METADATA: _COMMON,
    Rule.IMAGE_METADATA: _COMMON,
    Rule.HIDDEN_CONTENT: _COMMON,
    Rule.FORM_FIELDS: _COMMON,
    Rule.COVER_ART: _COMMON,
    Rule.CHAPTERS: _COMMON,
    Rule.ENCRYPTED_CONTENT: frozenset({Action.HOLD, Action.PASS}),
}

# The product's basic mode, rule by rule (what the engine has always done).
BASIC_RULES: dict[Rule, Action] = {
    Rule.MACROS: Action.REMOVE,
    Rule.JAVASCRIPT: Action.REMOVE,
    Rule.EMBEDDED_FILES: Action.REMOVE,
    Rule.EXTERNAL_REFERENCES: Action.REMOVE,
    Rule.HYPERLINKS: Action.KEEP,
    Rule.REVIEW_DATA: Action.REMOVE,
    Rule.DOCUMENT_METADATA: Action.REMOVE,
    Rule.IMAGE_METADATA: Action.REMOVE,
    Rule.HIDDEN_CONTENT: Action.KEEP,
    Rule.FORM_FIELDS: Action.KEEP,
    Rule.COVER_ART: Action.REMOVE,
    Rule.CHAPTERS: Action.REMOVE,
    Rule.ENCRYPTED_CONTENT: Action.HOLD,
}

# What a policy makes of a file: the same type, or its pages as pixels in a PDF (with a text
# layer by OCR). Not `formats.Output`, which is one output format of the format table.
OutputChoice = Literal["same", "pdf", "pdf+ocr"]
OUTPUTS: tuple[OutputChoice, ...] = ("same", "pdf", "pdf+ocr")
MAX_PAGES_LIMIT = 5000  # the most pages any policy may rebuild from pixels


class PolicyError(ValueError):
    """A policy's JSON is not valid: `errors` maps each bad field (dotted path) to why."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{where}: {why}" for where, why in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Policy:
    """One job's decisions. The defaults are the built-in basic policy."""

    rules: Mapping[Rule, Action] = field(default_factory=lambda: dict(BASIC_RULES))
    allowed_types: frozenset[str] | None = None  # kinds or families; None: every type
    output: OutputChoice = "same"
    max_pages: int | None = None  # None: the engine's own limit (MAX_PAGES_LIMIT)

    def action(self, rule: Rule) -> Action:
        return self.rules.get(rule, BASIC_RULES[rule])

    @property
    def mode(self) -> Mode:
        """The engine mode this policy's output means: pixels are advanced mode."""
        return Mode.BASIC if self.output == "same" else Mode.ADVANCED

    # The engine's older switches, read from the rules.
    @property
    def keep_links(self) -> bool:
        return self.action(Rule.HYPERLINKS) is Action.KEEP

    @property
    def passes_encrypted(self) -> bool:
        """Encrypted content is delivered unchanged (marked), not held back."""
        return self.action(Rule.ENCRYPTED_CONTENT) is Action.PASS

    @property
    def ocr(self) -> bool:
        return self.output == "pdf+ocr"

    @property
    def review_data(self) -> Literal["remove", "anonymise"]:
        return "anonymise" if self.action(Rule.REVIEW_DATA) is Action.ANONYMISE else "remove"

    def with_rules(self, **rules: Action | str) -> Policy:
        """A copy with some rules changed, by JSON name (`with_rules(hyperlinks="remove")`)."""
        changed = dict(self.rules)
        for name, action in rules.items():
            changed[Rule(name)] = Action(action)
        return replace(self, rules=changed)

    def to_json(self) -> dict[str, Any]:
        return {"rules": {rule.value: self.action(rule).value for rule in Rule},
                "allowedTypes": sorted(self.allowed_types) if self.allowed_types else None,
                "output": self.output, "maxPages": self.max_pages}

    @classmethod
    def from_json(cls, data: Any) -> Policy:
        """The policy `data` describes (see the module docstring), or PolicyError."""
        errors: dict[str, str] = {}
        if not isinstance(data, Mapping):
            raise PolicyError({"policy": "must be an object"})
        for key in data:
            if key not in ("rules", "allowedTypes", "output", "maxPages"):
                errors[str(key)] = "unknown field"
        rules: dict[Rule, Action] = dict(BASIC_RULES)
        raw_rules = data.get("rules")
        if raw_rules is None:
            raw_rules = {}
        elif not isinstance(raw_rules, Mapping):
            errors["rules"] = "must be an object"
            raw_rules = {}
        for name, value in raw_rules.items():
            try:
                rule = Rule(name)
            except ValueError:
                errors[f"rules.{name}"] = "unknown rule"
                continue
            try:
                action = Action(value)
            except ValueError:
                action = None
            if action not in CHOICES[rule]:
                offered = ", ".join(sorted(a.value for a in CHOICES[rule]))
                errors[f"rules.{name}"] = f"must be one of: {offered}"
                continue
            rules[rule] = action
        allowed = data.get("allowedTypes")
        if allowed is not None and not (isinstance(allowed, list) and allowed
                                        and all(isinstance(t, str) for t in allowed)):
            errors["allowedTypes"] = "must be a non-empty list of type names, or null"
        elif allowed is not None:
            from sanitas.engine import formats

            allowed = [t.strip().lower() for t in allowed]
            unknown = sorted(set(allowed) - set(formats.KINDS) - set(formats.FAMILIES))
            if unknown:
                errors["allowedTypes"] = (f"unknown type(s): {', '.join(unknown)[:200]} (kinds "
                                          "such as pdf, docx, jpeg or families such as image)")
        output = data.get("output", "same")
        if output not in OUTPUTS:
            errors["output"] = "must be one of: same, pdf, pdf+ocr"
        max_pages = data.get("maxPages")
        if max_pages is not None and not (isinstance(max_pages, int)
                                          and not isinstance(max_pages, bool)
                                          and 1 <= max_pages <= MAX_PAGES_LIMIT):
            errors["maxPages"] = f"must be a whole number from 1 to {MAX_PAGES_LIMIT}, or null"
        if errors:
            raise PolicyError(errors)
        return cls(rules=rules, allowed_types=frozenset(allowed) if allowed else None,
                   output=output, max_pages=max_pages)


BASIC = Policy()
ADVANCED = Policy(output="pdf")
BUILT_IN: dict[str, Policy] = {Mode.BASIC: BASIC, Mode.ADVANCED: ADVANCED}


def resolve(policy: Policy | None, mode: Mode | str | None = None, *,
            ocr: bool = False) -> Policy:
    """The one policy a job runs with, from a policy and/or a mode: without a policy, the
    built-in of `mode` (basic when None); `mode` advanced with a policy whose output is "same"
    upgrades it to pixels; otherwise the policy's output decides (its `mode`). `ocr`
    (SANITAS_OCR): the pages that advanced *mode* rebuilds (the built-in, an upgrade) also get
    an OCR text layer; a policy that names its output keeps it. ValueError for another mode."""
    if mode is not None and mode not in tuple(Mode):
        raise ValueError(f"unknown mode {mode!r}")
    mode = Mode(mode) if mode is not None else None
    pixels: OutputChoice = "pdf+ocr" if ocr else "pdf"
    if policy is None:
        return replace(ADVANCED, output=pixels) if mode is Mode.ADVANCED else BASIC
    if mode is Mode.ADVANCED and policy.output == "same":
        return replace(policy, output=pixels)
    return policy
