"""Run LibreOffice headless for one conversion, with a private profile that forbids macros.

The profile lives in the job's workdir (a tmpfs inside the sandbox) and is pre-seeded with
registry settings: macro execution disabled outright, macro security at its highest level,
remote references in documents blocked, link updates never. HOME and TMPDIR point into the
workdir, the environment is otherwise minimal, and a wall-clock timeout kills the whole
process group.

Warm start: LibreOffice spends most of a conversion starting (about a second here, more under
load), so a sandbox made for an office file starts it ahead, idle (`start_warm`), while it
waits for its job. The job's `convert` then runs `soffice` as usual: with the same profile,
LibreOffice hands the command line (input filter included) to the instance already running,
which converts and exits. The warm instance lives in the job's sandbox with the job's profile,
serves that job's first conversion and no other (it ends after one request; a second
conversion starts cold), and dies with the sandbox. `limit_warm` gives it the job's limits.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

from sanitas.engine.report import Context, Rejected, RejectionCode

SOFFICE_CANDIDATES = ("soffice", "/usr/bin/soffice", "/usr/lib/libreoffice/program/soffice")
DEFAULT_TIMEOUT = 90.0
# A conversion's own timeout ends this long before the job's wall clock (set_job_deadline), so
# a conversion that cannot finish is refused as LibreOffice's, not cut by the sandbox.
WALL_MARGIN = 5.0
_job_deadline: float | None = None

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
    "wri": "MS_Write", "pub": "Publisher Document", "vsd": "Visio Document",
    "wpd": "WordPerfect", "wps": "MS_Works", "wk1": "Lotus", "wk3": "WPS_Lotus_Calc",
    "wq1": "WPS_QPro_Calc",
    "pct": "PCT - Mac Pict",
}
# Word files older than Word 97 by the version in their FIB (legacy_office.word_filter).
WORD_FILTERS = {"word2": "MS WinWord 5", "word6": "MS WinWord 6.0", "word95": "MS Word 95"}


def _home(work: Path) -> Path:
    home = work / "lo-home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return home


def _env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home / "tmp"),
            "LANG": "C.UTF-8", "SAL_USE_VCLPLUGIN": "svp"}


def _base_command(profile: Path) -> list[str]:
    return [soffice_path(), f"-env:UserInstallation={profile.resolve().as_uri()}",
            "--headless", "--invisible", "--norestore", "--nologo", "--nodefault",
            "--nolockcheck"]


# The instance started ahead for this process's job (start_warm), until a conversion used it,
# and the folder of its profile, which every conversion of the job then uses.
_warm: subprocess.Popen[bytes] | None = None
_warm_root: Path | None = None
served_warm = False  # whether the last conversion was the warm instance's (benchmarks, tests)


def start_warm(work: Path) -> bool:
    """Start LibreOffice idle with the profile `convert` will use in `work`, so that the job's
    first conversion skips the start (module docstring). False when it cannot start (no
    LibreOffice): the job then converts cold, as without a warm instance."""
    global _warm, _warm_root
    try:
        work.mkdir(parents=True, exist_ok=True)
        home = _home(work)
        command = _base_command(_profile(work))  # no document: it waits, headless
        _warm = subprocess.Popen(  # noqa: S603 - an argv list, no shell
            command, cwd=work, env=_env(home), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except (Rejected, OSError):
        _warm = None
        return False
    _warm_root = work
    return True


def warm_pid() -> int | None:
    """The process group of the idle instance, while one is waiting."""
    return _warm.pid if _warm is not None and _warm.poll() is None else None


def limit_warm(limits: dict[str, int | None]) -> None:
    """Give the waiting instance's processes (started with the spare's generous limits) the
    job's: address space, file size, and CPU seconds from now on."""
    group = warm_pid()
    if group is None:
        return
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) != group:  # pgrp (fields after the name: state ppid pgrp ...)
            continue
        pid = int(entry)
        with contextlib.suppress(OSError, ValueError):
            for which, value in ((resource.RLIMIT_AS, limits.get("memory_bytes")),
                                 (resource.RLIMIT_FSIZE, limits.get("file_size_bytes"))):
                if value:
                    resource.prlimit(pid, which, (value, value))
            if limits.get("cpu_seconds"):
                used = (int(fields[11]) + int(fields[12])) // tick + 1  # utime + stime
                soft = used + int(limits["cpu_seconds"])  # type: ignore[arg-type]
                resource.prlimit(pid, resource.RLIMIT_CPU, (soft, soft + 1))


def set_job_deadline(wall_seconds: float | None) -> None:
    """The job's wall clock, from now: the sandbox stops the whole job when it runs out
    (sandbox/child.py sets it when the job arrives). None: no such limit."""
    global _job_deadline
    _job_deadline = time.monotonic() + float(wall_seconds) if wall_seconds else None


def conversion_timeout(size_bytes: int) -> float:
    """Seconds one conversion of a `size_bytes` file may take: DEFAULT_TIMEOUT plus 3 s a MB,
    and never past WALL_MARGIN before the job's deadline (at least a second)."""
    timeout = DEFAULT_TIMEOUT + 3 * size_bytes / 1e6
    if _job_deadline is not None:
        timeout = min(timeout, max(1.0, _job_deadline - time.monotonic() - WALL_MARGIN))
    return timeout


def convert(src: Path, ctx: Context, target: str, in_ext: str, *,
            timeout: float | None = None, infilter: str | None = None) -> Path:
    """Convert src with LibreOffice to `target` (e.g. "docx", "pdf", or "xlsx:Calc MS Excel
    2007 XML"); return the output path inside ctx.workdir. The import filter is `infilter`,
    else the one IMPORT_FILTERS names for `in_ext`. Raises Rejected on failure."""
    global _warm
    work = _workdir(ctx)
    root = _warm_root or work  # the profile (and home) a warm instance was started with
    profile = _profile(root)
    warm, _warm = _warm, None  # it serves this conversion only
    seq = len(list(work.glob("lo-job-*")))
    job = work / f"lo-job-{seq}"
    job.mkdir()
    # A fixed, harmless name: never a name taken from the upload.
    safe_in = job / f"input.{in_ext}"
    shutil.copyfile(src, safe_in)
    outdir = job / "out"
    outdir.mkdir()
    env = _env(_home(root))
    cmd = _base_command(profile)
    infilter = infilter or IMPORT_FILTERS.get(in_ext)
    if infilter:
        cmd.append(f"--infilter={infilter}")
    cmd += ["--convert-to", target, "--outdir", str(outdir), str(safe_in)]
    if timeout is None:
        timeout = conversion_timeout(safe_in.stat().st_size)
    proc = subprocess.Popen(  # noqa: S603 - an argv list, no shell
        cmd, cwd=job, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        if warm is not None:  # the conversion may be running in the warm instance
            _kill_group(warm)
        raise Rejected(f"LibreOffice did not finish converting the document within "
                       f"{int(timeout)} s; it was stopped.", RejectionCode.TIME_LIMIT) from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
        if warm is not None and warm.poll() is None:
            _kill_group(warm)  # its one request is answered: it serves nothing more
    # The instance that converts prints the "convert ... using filter" line: this process when
    # it started cold, the warm one (whose output goes nowhere) when it was handed the request.
    global served_warm
    served_warm = warm is not None and b"convert " not in (out or b"")
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
