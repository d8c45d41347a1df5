"""Test-side LibreOffice helpers: many files converted by one soffice process, so the office
tests stay within their time budget on a shared 2-core machine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from sanitas.engine import libreoffice


def convert_many(paths: list[Path], target: str, outdir: Path, profile_dir: Path,
                 timeout: float = 180) -> dict[Path, Path]:
    """Convert every path with one LibreOffice process (private, macro-disabled profile).
    Returns {input: output}; inputs that failed are missing from the result."""
    outdir.mkdir(parents=True, exist_ok=True)
    # inputs must have distinct stems: soffice names outputs after them
    stems = [p.stem for p in paths]
    assert len(set(stems)) == len(stems), stems
    profile = libreoffice._profile(profile_dir)  # same hardened registry as the engine
    home = profile_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "SAL_USE_VCLPLUGIN": "svp"}
    cmd = [shutil.which("soffice") or "soffice", f"-env:UserInstallation={profile.as_uri()}",
           "--headless", "--norestore", "--nologo", "--nodefault", "--nolockcheck",
           "--convert-to", target, "--outdir", str(outdir), *map(str, paths)]
    subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                   timeout=timeout, check=False)
    ext = target.split(":", 1)[0]
    result = {}
    for p in paths:
        out = outdir / f"{p.stem}.{ext}"
        if out.exists() and out.stat().st_size > 0:
            result[p] = out
    return result
