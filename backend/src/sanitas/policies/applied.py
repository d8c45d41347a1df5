"""The policy a file is cleaned with: the one engine `Policy` that runs, and the record the file
keeps of it (no imports from the API packages, so files, policies and the channels can all use
it). Resolved once where a file enters (files/intake.py); the job reads it back from the
file (`policy_of_file`) and hands it to the sandbox as it is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sanitas.engine.policy import BUILT_IN, Mode, Policy, resolve

if TYPE_CHECKING:
    from sanitas.models import File, StoredPolicy

BUILT_IN_NAMES: dict[str, str] = {Mode.BASIC: "Basic", Mode.ADVANCED: "Advanced"}
BUILT_IN_DESCRIPTIONS: dict[str, str] = {
    Mode.BASIC: "The basic mode: active content, embedded files, external references and "
                "metadata removed; the file keeps its format.",
    Mode.ADVANCED: "The advanced mode: the basic mode's cleaning, then PDF and office "
                   "documents rebuilt from pixels as PDF, their text recognised again by OCR "
                   "(it may contain errors).",
}
assert set(BUILT_IN_NAMES) == set(BUILT_IN) == set(BUILT_IN_DESCRIPTIONS)


@dataclass(frozen=True)
class AppliedPolicy:
    """A built-in (`id` "basic"/"advanced") or a stored policy at one version."""

    id: str
    version: int
    name: str
    body: dict[str, Any]  # recorded with the file: Policy.to_json() of that version
    policy: Policy  # what the sandbox and the engine run (the mode is the policy's)
    built_in: bool

    @property
    def mode(self) -> Mode:
        """The engine mode the policy's output means (advanced: rebuilt from pixels)."""
        return self.policy.mode


def applied_built_in(policy_id: str, *, ocr: bool = False) -> AppliedPolicy:
    """A built-in policy (version 1: built-ins do not change under a file). `ocr`
    (SANITAS_OCR): the built-in advanced policy's pages get a text layer."""
    mode = Mode(policy_id)
    return AppliedPolicy(id=mode.value, version=1, name=BUILT_IN_NAMES[mode],
                         body=BUILT_IN[mode].to_json(), policy=resolve(None, mode, ocr=ocr),
                         built_in=True)


def applied_stored(stored: StoredPolicy) -> AppliedPolicy:
    """A stored policy at its current version."""
    return AppliedPolicy(id=stored.id, version=stored.version, name=stored.name,
                         body=stored.body, policy=Policy.from_json(stored.body), built_in=False)


def policy_of_file(file: File, *, ocr: bool = False) -> Policy:
    """The policy a file's job runs with, read back from what the file recorded at upload: a
    stored policy's exact JSON at the version chosen then, a built-in by its id, and for files
    from before policies the built-in of their mode. `ocr`: as for `applied_built_in` (the
    processing server's SANITAS_OCR)."""
    if file.policy_id is None or file.policy_body is None or file.policy_id in BUILT_IN:
        return resolve(None, file.policy_id if file.policy_id in BUILT_IN else file.mode,
                       ocr=ocr)
    return Policy.from_json(file.policy_body)
