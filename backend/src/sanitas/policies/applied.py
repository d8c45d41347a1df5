"""The policy an upload is cleaned with, as the file records it (no imports from the API
packages, so files and policies can both use it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sanitas.engine.policy import BUILT_IN

BUILT_IN_NAMES = {"basic": "Basic", "advanced": "Advanced"}
BUILT_IN_DESCRIPTIONS = {
    "basic": "The basic mode: active content, embedded files, external references and "
             "metadata removed; the file keeps its format.",
    "advanced": "The advanced mode: the basic mode's cleaning, then PDF and office documents "
                "rebuilt from pixels as PDF, their text recognised again by OCR (it may "
                "contain errors).",
}
assert set(BUILT_IN_NAMES) == set(BUILT_IN) == set(BUILT_IN_DESCRIPTIONS)


@dataclass(frozen=True)
class AppliedPolicy:
    """A built-in (`id` "basic"/"advanced") or a stored policy at one version."""

    id: str
    version: int
    name: str
    body: dict[str, Any]  # Policy.to_json() of that version: what the job runs
    mode: str  # "basic" or "advanced": the engine mode the policy's output means
    built_in: bool


def applied_built_in(policy_id: str) -> AppliedPolicy:
    """A built-in policy (version 1: built-ins do not change under a file)."""
    policy = BUILT_IN[policy_id]
    return AppliedPolicy(id=policy_id, version=1, name=BUILT_IN_NAMES[policy_id],
                         body=policy.to_json(), mode=policy.mode, built_in=True)
