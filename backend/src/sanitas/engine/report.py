"""What every sanitizer records and returns: findings, the rejection error, the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Action = Literal["removed", "converted", "kept", "blocked"]
Mode = Literal["basic", "advanced"]


class Rejected(Exception):
    """The input cannot be made safe (unknown type, executable, encrypted, bomb, corrupt).
    `reason` is a sentence a person understands."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Finding:
    kind: str  # e.g. "javascript", "macro", "exif", "external_relationship"
    location: str  # where in the file, e.g. "page 3 /AA", "word/vbaProject.bin"
    action: Action
    detail: str = ""


@dataclass
class Policy:
    """What to do with elements that are safe to keep or not (the `custom` mode's knobs)."""

    keep_links: bool = True  # URI links kept as plain links
    ocr: bool = False  # advanced mode: add an invisible OCR text layer (needs tesseract; slow)


@dataclass
class Context:
    """Passed to every family sanitizer."""

    mode: Mode = "basic"
    policy: Policy = field(default_factory=Policy)
    findings: list[Finding] = field(default_factory=list)
    on_progress: Callable[[int], None] | None = None  # percent 0..100
    workdir: Path | None = None  # scratch space (private tmpfs inside the sandbox)
    pages_rebuilt: list[int] = field(default_factory=list)  # advanced mode, 1-based

    def add(self, kind: str, location: str, action: Action, detail: str = "") -> None:
        self.findings.append(Finding(kind, location, action, detail))

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
    findings: list[Finding] = field(default_factory=list)
    duration_ms: int = 0
    detected_type: str | None = None
    pages_rebuilt: list[int] = field(default_factory=list)

    def to_json(self) -> dict:
        """The CLI's `--json` object (camelCase keys)."""
        return {
            "input": self.input, "status": self.status, "output": self.output,
            "outputType": self.output_type, "reason": self.reason,
            "findings": [asdict(f) for f in self.findings], "durationMs": self.duration_ms,
            "detectedType": self.detected_type, "pagesRebuilt": self.pages_rebuilt,
        }
