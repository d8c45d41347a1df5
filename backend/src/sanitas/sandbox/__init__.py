"""Runs the engine on one file in a sandbox (see bwrap.py). The service calls only this.

    run_sanitizer(input_path, output_dir, policy=..., settings=..., on_progress=...,
                  password=None) -> Result
        `password` opens an encrypted input; it reaches the sandbox only in the job message
        over the job socket (never argv, the environment, a file or a log).
        `Result` is sanitas.engine.report.Result; status "rejected" means the file is hostile or
        unusable (never retried). Raises SandboxError for infrastructure faults (no sandbox
        available, crash, timeout not caused by the file...), which a caller may retry.

Kept import-light: the sandboxed child imports this package too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sanitas.config import Settings
    from sanitas.engine.policy import Mode, Policy
    from sanitas.engine.report import Result
    from sanitas.sandbox.bwrap import SandboxLimits

__all__ = ["PreviewRequest", "SandboxError", "require_working_sandbox", "run_sanitizer"]

log = logging.getLogger(__name__)


class SandboxError(Exception):
    """The sandbox itself failed (not the file)."""


@dataclass(frozen=True)
class PreviewRequest:
    """Draw a preview of the sanitized output (engine/preview.py) at `path`: a PNG of at
    most `max_side` pixels a side, within `seconds` after the result (else there is none)."""

    path: Path
    max_side: int
    seconds: float


def run_sanitizer(input_path: Path | str, output_dir: Path | str, *, settings: Settings,
                  policy: Policy | None = None, mode: Mode | str | None = None,
                  on_progress: Callable[[int], None] | None = None,
                  original_name: str | None = None, limits: SandboxLimits | None = None,
                  prewarm: bool = True, password: str | None = None,
                  preview: PreviewRequest | None = None) -> Result:
    """Sanitize `input_path` into `output_dir` in a fresh sandbox, with `policy`: the one a
    job resolved (files/intake.py, processing), passed on as it is. Callers without one (the
    CLI, tests) may give `mode` instead, or both (engine.policy.resolve: advanced upgrades a
    policy whose output is "same"; SANITAS_OCR then adds a text layer).

    The output is named after `original_name` (default: the input's name) with the safe
    extension. `limits` overrides the per-job limits (tests); `prewarm` keeps one started
    sandbox ready for the next job so Python start-up is off the critical path. `preview`:
    the same sandbox then draws a PNG of the output's first page or picture at
    `preview.path` (engine/preview.py), within its own time budget; the file is missing when
    there is none (a type without previews, a failure, the budget ran out)."""
    input_path, output_dir = Path(input_path), Path(output_dir)
    if mode is not None or policy is None:
        from sanitas.engine.policy import resolve

        policy = resolve(policy, mode, ocr=settings.ocr)  # ValueError for an unknown mode
    if settings.sandbox == "none":
        if not settings.allow_unsandboxed:
            raise SandboxError("Processing without a sandbox is disabled; set "
                               "SANITAS_ALLOW_UNSANDBOXED=1 only on a development machine.")
        log.warning("!!! SANITIZING %s WITHOUT A SANDBOX (SANITAS_SANDBOX=none): a hostile "
                    "file runs with this process's privileges. Never do this in production.",
                    original_name or input_path.name)
        from sanitas.engine import sanitize_file

        output_dir.mkdir(parents=True, exist_ok=True)
        result = sanitize_file(input_path, output_dir, policy=policy, on_progress=on_progress,
                               original_name=original_name, password=password,
                               ocr_languages=settings.ocr_languages,
                               ocr_own_text=settings.ocr_own_text)
        if preview is not None and result.status == "ok" and result.output:
            _preview_unsandboxed(Path(result.output), result.output_type, preview)
        return result
    from sanitas.sandbox.bwrap import run_in_bwrap

    return run_in_bwrap(input_path, output_dir, policy=policy, settings=settings,
                        on_progress=on_progress, original_name=original_name, limits=limits,
                        prewarm=prewarm, password=password, preview=preview)


def _preview_unsandboxed(output: Path, output_type: str | None,
                         preview: PreviewRequest) -> None:
    from sanitas.engine.preview import PreviewUnavailable, can_preview, render_preview

    if not can_preview(output_type):
        return
    assert output_type is not None
    try:
        with open(preview.path, "wb") as target:
            render_preview(output, output_type, target, preview.max_side)
    except (PreviewUnavailable, OSError):
        preview.path.unlink(missing_ok=True)


SANDBOX_HELP = ("docs/deploying.md, 'What the sandbox needs': in a container, user namespaces, "
                "a seccomp profile that allows sethostname (deploy/container/seccomp.json) and "
                "unmasked /proc (podman/docker: --security-opt unmask=ALL, or "
                "--security-opt systempaths=unconfined)")


def require_working_sandbox(settings: Settings) -> None:
    """Start one sandbox exactly as a job gets it and check that it runs Python; raise
    SandboxError naming bubblewrap's complaint and what the host must provide otherwise.
    Run at service start (`serve` with the local executor, `worker`), so a host or container
    that cannot isolate jobs fails there, not on the first file."""
    if settings.sandbox == "none":
        return
    from sanitas.sandbox import bwrap

    try:
        done = bwrap.probe("print('sandbox ok')", settings, timeout=60)
    except (OSError, SandboxError) as exc:
        raise SandboxError(f"The sandbox cannot start: {exc}. See {SANDBOX_HELP}.") from exc
    if done.returncode != 0 or done.stdout.strip() != b"sandbox ok":
        complaint = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["?"])[-1]
        raise SandboxError(f"The sandbox cannot start here ({complaint[:300]}). "
                           f"See {SANDBOX_HELP}.")
