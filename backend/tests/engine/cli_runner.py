"""`sanitas sanitize` run as a user runs it: a real subprocess of this environment's command,
with the real sandbox (SANITAS_ALLOW_UNSANDBOXED is not passed on)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SANITAS = str(Path(sys.executable).parent / "sanitas")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "SANITAS_ALLOW_UNSANDBOXED"}
    environment.update(env or {})
    return subprocess.run([SANITAS, "sanitize", *args], capture_output=True, text=True,
                          env=environment, timeout=120, check=False)
