"""Runs the engine on one file in a sandbox (see bwrap.py). The service calls only this.

    run_sanitizer(input_path, output_dir, mode=..., settings=..., on_progress=...) -> Result
        `Result` is sanitas.engine.report.Result; status "rejected" means the file is hostile or
        unusable (never retried). Raises SandboxError for infrastructure faults (no sandbox
        available, crash, timeout not caused by the file...), which a caller may retry.
"""

from __future__ import annotations


class SandboxError(Exception):
    """The sandbox itself failed (not the file)."""
