"""Run LibreOffice headless for one conversion, with a private profile that forbids macros.

The profile lives in the job's workdir (a tmpfs inside the sandbox) and is pre-seeded with
registry settings: macro execution disabled outright, macro security at its highest level,
remote references in documents blocked, link updates never. HOME and TMPDIR point into the
workdir, the environment is otherwise minimal, and a wall-clock timeout kills the whole
process group.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

from sanitas.engine.report import Context, Rejected, RejectionCode

SOFFICE_CANDIDATES = ("soffice", "/usr/bin/soffice", "/usr/lib/libreoffice/program/soffice")
DEFAULT_TIMEOUT = 90.0

# (path, property, value): macros never run (DisableMacrosExecution wins over any security
# level), remote content in documents is blocked, linked data is never refreshed.
_SETTINGS = [
    ("/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "true"),
    ("/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "3"),
    ("/org.openoffice.Office.Common/Security/Scripting", "BlockUntrustedRefererLinks", "true"),
    ("/org.openoffice.Office.Writer/Content/Update", "Link", "2"),
    ("/org.openoffice.Office.Calc/Content/Update", "Link", "1"),
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false"),
    ("/org.openoffice.Office.Common/Save/Document", "WarnAlienFormat", "false"),
    ("/org.openoffice.Office.Common/Save/Document", "CreateBackup", "false"),
]
_REGISTRY = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/'
    'registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
    + "".join(f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse"><value>{value}'
              "</value></prop></item>\n" for path, name, value in _SETTINGS)
    + "</oor:items>\n")


def soffice_path() -> str:
    for cand in SOFFICE_CANDIDATES:
        found = shutil.which(cand)
        if found:
            return found
    raise Rejected("Office documents of this kind need LibreOffice, which is not installed.",
                   RejectionCode.UNAVAILABLE)


def _workdir(ctx: Context) -> Path:
    if ctx.workdir is None:
        raise RuntimeError("LibreOffice conversions need ctx.workdir")
    ctx.workdir.mkdir(parents=True, exist_ok=True)
    return ctx.workdir


def _profile(work: Path) -> Path:
    profile = work / "lo-profile"
    user = profile / "user"
    if not (user / "registrymodifications.xcu").exists():
        user.mkdir(parents=True, exist_ok=True)
        (user / "registrymodifications.xcu").write_text(_REGISTRY, encoding="utf-8")
    return profile


# Input filters by (sniffed) extension: LibreOffice then parses the file only as that format
# and fails cleanly on garbage, instead of falling back to another importer (plain text, HTML
# with remote resources...).
IMPORT_FILTERS = {
    "doc": "MS Word 97", "dot": "MS Word 97 Vorlage", "rtf": "Rich Text Format",
    "xls": "MS Excel 97", "xlt": "MS Excel 97 Vorlage/Template",
    "ppt": "MS PowerPoint 97", "pot": "MS PowerPoint 97 Vorlage",
    "pps": "MS PowerPoint 97 AutoPlay", "xlsb": "Calc MS Excel 2007 Binary",
}


def convert(src: Path, ctx: Context, target: str, in_ext: str, *,
            timeout: float | None = None) -> Path:
    """Convert src with LibreOffice to `target` (e.g. "docx", "pdf", or "xlsx:Calc MS Excel
    2007 XML"); return the output path inside ctx.workdir. Raises Rejected on failure."""
    work = _workdir(ctx)
    profile = _profile(work)
    seq = len(list(work.glob("lo-job-*")))
    job = work / f"lo-job-{seq}"
    job.mkdir()
    # A fixed, harmless name: never a name taken from the upload.
    safe_in = job / f"input.{in_ext}"
    shutil.copyfile(src, safe_in)
    outdir = job / "out"
    outdir.mkdir()
    home = work / "lo-home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "SAL_USE_VCLPLUGIN": "svp",
    }
    cmd = [soffice_path(), f"-env:UserInstallation={profile.resolve().as_uri()}",
           "--headless", "--invisible", "--norestore", "--nologo", "--nodefault",
           "--nolockcheck"]
    if in_ext in IMPORT_FILTERS:
        cmd.append(f"--infilter={IMPORT_FILTERS[in_ext]}")
    cmd += ["--convert-to", target, "--outdir", str(outdir), str(safe_in)]
    if timeout is None:
        size_mb = safe_in.stat().st_size / 1e6
        timeout = DEFAULT_TIMEOUT + 3 * size_mb
    proc = subprocess.Popen(  # noqa: S603 - an argv list, no shell
        cmd, cwd=job, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True)
    try:
        _out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise Rejected(f"LibreOffice did not finish converting the document within "
                       f"{int(timeout)} s; it was stopped.", RejectionCode.TIME_LIMIT) from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    ext = target.split(":", 1)[0]
    outputs = [p for p in outdir.iterdir() if p.suffix.lower() == "." + ext]
    if proc.returncode != 0 or not outputs or outputs[0].stat().st_size == 0:
        detail = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise Rejected("LibreOffice could not open or convert the document (damaged or "
                       f"unsupported content){': ' + detail[0][:200] if detail[0] else ''}.",
                       RejectionCode.DAMAGED)
    return outputs[0]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
