"""The verdict on one file: one word, its counts and one sentence, from the engine's findings.

    clean    nothing was found: the copy holds what the original held
    cleaned  threats (active content) or hidden data were removed; the content people see is kept
    partial  something a person may want was left out: a file inside (an archive member, an
             attachment), a part of the content (an image, a chapter, a font) or the text
             layer (pages rebuilt from pixels without OCR)
    encrypted  not inspected: the file, or a part of it, is encrypted and no password opened
             it; the policy's `encryptedContent` held it back (no copy of it) or passed it
             unchanged. Never "clean": nobody knows what it holds
    refused  no copy: the file was refused (or could not be processed)

It is computed here and only here (`of_findings`, `of_result`; `Result.file_report` stores it
with the file), and every channel shows the same word, counts and sentence (`summary`).

Every finding kind of `kinds.FINDING_KINDS` has one effect in `EFFECTS` (the tests fail when a
kind is added without one). A finding counts only when something was taken out: `kept` never
counts; `converted` counts for threats and hidden data (a field turned into its text, reviewers
anonymised) but not for files and content, where it means "cleaned and kept".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    CLEAN = "clean"
    CLEANED = "cleaned"
    PARTIAL = "partial"
    ENCRYPTED = "encrypted"  # not inspected: encrypted (held back or passed unchanged)
    REFUSED = "refused"


# Worst first: several verdicts (the parts of one ICAP form) combine into the worst of them.
SEVERITY = (Verdict.REFUSED, Verdict.ENCRYPTED, Verdict.PARTIAL, Verdict.CLEANED,
            Verdict.CLEAN)
# The rejection codes that mean "encrypted, not inspected" rather than "refused".
ENCRYPTED_CODES = frozenset(("encrypted", "wrong_password"))
NOT_INSPECTED = "Not inspected: encrypted"  # how every channel's sentence begins


class Effect(StrEnum):
    """What a finding of a kind means for the person who gets the copy."""

    THREAT = "threat"  # active content removed or neutralised: macros, scripts, actions, links
    HIDDEN = "hidden"  # hidden data removed: metadata, comments, hidden parts, trailing bytes
    FILE = "file"  # a file inside was left out (archive member, attachment): names are shown
    CONTENT = "content"  # a part of the visible content was left out (image, chapter, font)
    # The text layer: `pixel_reconstruction` (pages rebuilt from pixels) loses it, unless an
    # `ocr` finding with the action `converted` says a text layer was added; an `ocr` finding
    # `removed` says a page's text layer could not be added.
    TEXT_LAYER = "text_layer"
    # Encrypted content nobody could inspect: `removed` held back, `kept` passed unchanged
    # (counted whatever the action: a part passed unread is the opposite of clean)
    ENCRYPTED = "encrypted"
    NONE = "none"  # structure, repairs, encodings, format conversions: nothing taken out


_T, _H, _F, _C, _L, _N = (Effect.THREAT, Effect.HIDDEN, Effect.FILE, Effect.CONTENT,
                          Effect.TEXT_LAYER, Effect.NONE)

EFFECTS: dict[str, Effect] = {
    # macros and scripts of office documents
    "macro": _T, "xlm_macro": _T, "script": _T, "activex": _T, "add_in": _T,
    # JavaScript and PDF actions
    "javascript": _T, "event_handler": _T, "open_action": _T, "additional_action": _T,
    "action": _T, "chained_action": _T, "launch_action": _T, "submit_form": _T,
    "import_data": _T, "embedded_goto": _T, "form_field_script": _T, "form_calculation": _T,
    "rich_media": _T, "3d_content": _T, "movie": _T, "sound": _T, "screen_annotation": _T,
    "rendition": _T, "alternate_presentation": _T, "postscript": _T,
    "presentation_steps": _T,
    # embedded files: attachments are files a person may want; objects inside documents are
    # active content (OLE objects, applets, frames, binary parts)
    "embedded_file": _F, "file_attachment": _F, "associated_file": _F,
    "embedded_payload": _T, "portfolio": _T, "ole_object": _T, "embedded_object": _T,
    "embedded_content": _T, "binary_part": _T,
    # external references and links
    "external_reference": _T, "external_relationship": _T, "external_link": _T,
    "remote_template": _T, "remote_goto": _T, "data_connection": _T, "dde": _T, "field": _T,
    "formula": _T, "base_uri": _T, "base_url": _T, "web_capture": _T,
    "hyperlink": _T, "link": _T, "unsafe_link": _T,
    # review data, metadata, picture metadata, hidden content
    "comments": _H, "tracked_changes": _H, "personal_data": _H,
    "document_info": _H, "xmp_metadata": _H, "metadata": _H, "custom_properties": _H,
    "custom_xml": _H, "hidden_data": _H, "meta": _H, "private_application_data": _H,
    "printer_settings": _H,
    "exif": _H, "gps_location": _H, "iptc": _H, "comment": _H, "thumbnail": _H,
    "hidden_sheet": _H, "hidden_slide": _H, "hidden_text": _H,
    # audio and video: cover pictures and chapter titles are tags like the rest
    "cover_art": _H, "chapters": _H, "device_info": _H, "data_stream": _H,
    # form fields (fillable, scriptable)
    "form_field": _T, "form": _T, "form_control": _T, "xfa_form": _T,
    # decided by no policy: what the structure hid or could run
    "archive_comment": _H, "trailing_data": _H, "leading_data": _H, "incremental_update": _H,
    "hidden_part": _H, "unreferenced_part": _H, "orphan_part": _H, "unknown_part": _H,
    "xml_entities": _T, "dtd": _T, "processing_instruction": _T, "csv_formula": _T,
    "foreign_object": _T, "foreign_content": _T, "template": _T, "attribute": _T,
    "element": _T, "control_characters": _T, "icc_profile": _T, "catalog_entry": _T,
    "name_tree": _T, "form_entry": _T, "page_template": _T,
    # the total cap's summary line: findings not listed, counted as threats (never as less)
    "more": _T,
    # what a person may miss
    "archive_member": _F,
    "invalid_image": _C, "embedded_image": _C, "auxiliary_image": _C, "invalid_font": _C,
    "obfuscated_font": _C, "invalid_part": _C, "chart": _C,
    "pixel_reconstruction": _L, "ocr": _L,
    "encrypted_content": Effect.ENCRYPTED,
    # nothing taken out that anyone could use
    "structure": _N, "repaired": _N, "encoding": _N, "encryption": _N, "type_mismatch": _N,
    "renamed": _N, "image_format": _N, "animation": _N, "signature": _N, "drm": _N,
    "missing_resource": _N, "legacy_format": _N, "encoded_attachment": _N, "binary_workbook": _N,
    "macro_enabled_type": _N, "usage_rights": _N, "media_reencoded": _N,
    "values_rebuild": _N,
}

COUNTED_ACTIONS = frozenset(("removed", "blocked", "converted"))
MAX_NAMES = 20  # dropped files named in the counts
NAMES_IN_SUMMARY = 3
NAME_MAX = 120
# The summary lines the recorder adds past its caps (report.Context.closed_findings).
_MORE_OF_KIND = re.compile(r"and (\d+) more of this kind")
_MORE_FINDINGS = re.compile(r"(\d+) further findings not listed")
_ATTACHMENT = re.compile(r"(.+?) removed(?:: .*)?", re.DOTALL)


@dataclass
class Counts:
    """What was taken out of one file (the JSON form: `to_json`, camelCase)."""

    threats: int = 0
    hidden_data: int = 0
    files_dropped: int = 0
    content_dropped: int = 0
    text_layer_dropped: bool = False
    dropped_files: list[str] = field(default_factory=list)  # at most MAX_NAMES
    encrypted_held: int = 0  # encrypted files or parts held back, not inspected
    encrypted_passed: int = 0  # encrypted files or parts delivered unchanged, not inspected

    def to_json(self) -> dict[str, Any]:
        return {"threats": self.threats, "hiddenData": self.hidden_data,
                "filesDropped": self.files_dropped, "contentDropped": self.content_dropped,
                "textLayerDropped": self.text_layer_dropped,
                "droppedFiles": list(self.dropped_files),
                "encryptedHeld": self.encrypted_held, "encryptedPassed": self.encrypted_passed}

    @classmethod
    def from_json(cls, data: object) -> Counts:
        """Counts as stored (`to_json`); anything malformed reads as zero."""
        if not isinstance(data, Mapping):
            return cls()

        def number(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) and value >= 0 else 0

        names = data.get("droppedFiles")
        return cls(threats=number("threats"), hidden_data=number("hiddenData"),
                   files_dropped=number("filesDropped"),
                   content_dropped=number("contentDropped"),
                   text_layer_dropped=data.get("textLayerDropped") is True,
                   dropped_files=[str(n)[:NAME_MAX] for n in names[:MAX_NAMES]]
                   if isinstance(names, list) else [],
                   encrypted_held=number("encryptedHeld"),
                   encrypted_passed=number("encryptedPassed"))

    def header(self) -> str:
        """The counts as one ASCII header value (`X-Sanitas-Verdict-Counts`, ICAP's
        `X-Sanitas`): `threats=3; hiddenData=0; filesDropped=1; contentDropped=0;
        textLayerDropped=0; encryptedHeld=0; encryptedPassed=0`."""
        return (f"threats={self.threats}; hiddenData={self.hidden_data}; "
                f"filesDropped={self.files_dropped}; contentDropped={self.content_dropped}; "
                f"textLayerDropped={int(self.text_layer_dropped)}; "
                f"encryptedHeld={self.encrypted_held}; encryptedPassed={self.encrypted_passed}")

    def add(self, other: Counts) -> None:
        self.threats += other.threats
        self.hidden_data += other.hidden_data
        self.files_dropped += other.files_dropped
        self.content_dropped += other.content_dropped
        self.text_layer_dropped |= other.text_layer_dropped
        self.encrypted_held += other.encrypted_held
        self.encrypted_passed += other.encrypted_passed
        room = MAX_NAMES - len(self.dropped_files)
        self.dropped_files.extend(other.dropped_files[:max(0, room)])


def effect_of(kind: str) -> Effect:
    """A kind's effect; a kind this table does not know (a newer sandbox, a bug) counts as a
    threat removed: never as nothing."""
    return EFFECTS.get(kind, Effect.THREAT)


def weight(item: Mapping[str, Any]) -> int:
    """How many findings one listed finding stands for (the recorder's summary lines): the
    one reading of them, also for the charts and the compliance reports."""
    detail = item.get("detail")
    if item.get("location") != "whole file" or not isinstance(detail, str):
        return 1
    pattern = _MORE_FINDINGS if item.get("kind") == "more" else _MORE_OF_KIND
    match = pattern.fullmatch(detail)
    return int(match.group(1)) if match else 1


def _dropped_name(item: Mapping[str, Any]) -> str:
    """The name a dropped file is shown by: an attachment's label when the detail gives it
    ("invoice.exe removed: ..."), else where it was (an archive member's path)."""
    location, detail = str(item.get("location") or ""), str(item.get("detail") or "")
    if item.get("kind") != "archive_member":
        match = _ATTACHMENT.fullmatch(detail)
        if match and "attachment without" not in detail:
            return match.group(1)[:NAME_MAX]
    return location[:NAME_MAX] or "unnamed file"


def count(findings: Iterable[Mapping[str, Any]]) -> Counts:
    """The counts of a report's findings (as dicts: `kind`, `location`, `action`, `detail`)."""
    counts = Counts()
    rebuilt = text_added = text_failed = False
    for item in findings:
        kind, action = item.get("kind"), item.get("action")
        if isinstance(kind, str) and effect_of(kind) is Effect.ENCRYPTED:
            if action == "kept":
                counts.encrypted_passed += weight(item)
            else:
                counts.encrypted_held += weight(item)
            continue
        if not isinstance(kind, str) or action not in COUNTED_ACTIONS:
            continue
        effect = effect_of(kind)
        many = weight(item)
        if effect is Effect.THREAT:
            counts.threats += many
        elif effect is Effect.HIDDEN:
            counts.hidden_data += many
        elif effect is Effect.TEXT_LAYER:
            if kind == "ocr":
                text_added |= action == "converted"
                text_failed |= action != "converted"
            else:
                rebuilt = True
        elif action == "converted":
            continue  # a file or part cleaned and kept
        elif effect is Effect.FILE:
            counts.files_dropped += many
            if many == 1 and len(counts.dropped_files) < MAX_NAMES:
                counts.dropped_files.append(_dropped_name(item))
        elif effect is Effect.CONTENT:
            counts.content_dropped += many
    counts.text_layer_dropped = (rebuilt and not text_added) or text_failed
    return counts


def decide(counts: Counts) -> Verdict:
    if counts.encrypted_held or counts.encrypted_passed:
        return Verdict.ENCRYPTED
    if counts.files_dropped or counts.content_dropped or counts.text_layer_dropped:
        return Verdict.PARTIAL
    if counts.threats or counts.hidden_data:
        return Verdict.CLEANED
    return Verdict.CLEAN


def _plural(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def summary(verdict: Verdict, counts: Counts, reason: str | None = None) -> str:
    """The one sentence every channel shows: "3 threats removed, 1 file dropped: tool.exe",
    "Nothing found", "Refused: <reason>"."""
    if verdict is Verdict.REFUSED:
        return f"Refused: {reason}" if reason else "Refused"
    parts = []
    if verdict is Verdict.ENCRYPTED:
        how = []
        if counts.encrypted_held:
            how.append(_plural(counts.encrypted_held, "item", "items") + " held back")
        if counts.encrypted_passed:
            how.append(_plural(counts.encrypted_passed, "item", "items")
                       + " delivered unchanged")
        head = NOT_INSPECTED + (f" ({', '.join(how)})" if how else "")
        if reason:
            return f"{head}: {reason}"
        parts.append(head)
    if counts.threats:
        parts.append(_plural(counts.threats, "threat", "threats") + " removed")
    if counts.hidden_data:
        parts.append(_plural(counts.hidden_data, "item", "items") + " of hidden data removed")
    if counts.text_layer_dropped:
        parts.append("text layer dropped (pages rebuilt as images)")
    if counts.content_dropped:
        parts.append(_plural(counts.content_dropped, "part", "parts") + " of the content dropped")
    if counts.files_dropped:
        names = counts.dropped_files[:NAMES_IN_SUMMARY]
        text = _plural(counts.files_dropped, "file", "files") + " dropped"
        if names:
            text += ": " + ", ".join(names)
            if counts.files_dropped > len(names):
                text += f" and {counts.files_dropped - len(names)} more"
        parts.append(text)
    return ", ".join(parts) if parts else "Nothing found"


@dataclass(frozen=True)
class Outcome:
    """A file's verdict with its counts and sentence (the JSON form: `to_json`)."""

    verdict: Verdict
    counts: Counts
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "verdictCounts": self.counts.to_json(),
                "verdictSummary": self.summary}


def of_findings(findings: Iterable[Mapping[str, Any]]) -> Outcome:
    """The outcome of a file the engine accepted, from its findings."""
    counts = count(findings)
    verdict = decide(counts)
    return Outcome(verdict, counts, summary(verdict, counts))


def refused(reason: str | None, code: str | None = None) -> Outcome:
    """The outcome of a file that was refused (or not processed): `reason` says why. A file
    refused because it is encrypted (`code` in ENCRYPTED_CODES) was not inspected and is held
    back: its verdict is `encrypted`, never merely refused."""
    if code in ENCRYPTED_CODES:
        counts = Counts(encrypted_held=1)
        return Outcome(Verdict.ENCRYPTED, counts, summary(Verdict.ENCRYPTED, counts, reason))
    return Outcome(Verdict.REFUSED, Counts(), summary(Verdict.REFUSED, Counts(), reason))


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The verdict of several files taken together (an ICAP form's parts)."""
    found = set(verdicts)
    return next((v for v in SEVERITY if v in found), Verdict.CLEAN)


_VERDICT_WORDS = frozenset(v.value for v in Verdict)  # made once: reports read it per row


def of_report(report: object) -> Outcome | None:
    """The outcome stored in a file's report (`Result.file_report`), or derived from its
    findings for reports stored before verdicts existed; None for a report that is not one."""
    if not isinstance(report, Mapping):
        return None
    stored = report.get("verdict")
    if (isinstance(stored, str) and stored in _VERDICT_WORDS
            and isinstance(report.get("verdictSummary"), str)):
        return Outcome(Verdict(stored), Counts.from_json(report.get("verdictCounts")),
                       str(report["verdictSummary"]))
    findings = report.get("findings")
    return of_findings(item for item in (findings if isinstance(findings, list) else [])
                       if isinstance(item, Mapping))
