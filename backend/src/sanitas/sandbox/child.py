"""The process inside the sandbox: `python -I -m sanitas.sandbox.child JOB_SOCKET_FD [plain |
office | office-warm | template | template-office]` (office: preload the office libraries;
office-warm: also start LibreOffice idle for the job's first conversion, engine/libreoffice.py;
template: import everything once and fork a fresh sandboxed process tree per job, template.py).

It warms up (imports what most jobs need), says "ready", receives one job over the socket (a
JSON line plus two file descriptors: the input, read-only, and the output file to fill), lowers
its own limits for that job *before* reading the file, runs the engine, copies the output into
the output descriptor and reports. One job per process: a sandbox is never reused. When the
job's tmpfs fills up (its disk budget), the reason says so instead of "damaged".

stdout carries only JSON lines ({"event": "ready" | "progress" | "result", ...}); anything a
library prints goes to stderr.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import logging
import os
import resource
import select
import shutil
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

MAX_JOB_MESSAGE = 64 * 1024
IDLE_GRACE = 1.0  # seconds a ready spare waits for a job before its idle imports
# Heap an idle spare touches ahead of its job: a fresh process pays a page fault for every
# page of its first big buffers (a 12-MP photo: ~25 ms of 110), a warm heap does not.
PREFAULT_BYTES = 64 << 20
LO_WARM_ROOT = "/tmp/lo-warm"  # the warm LibreOffice's profile and home (engine/libreoffice.py)


# What most jobs need, imported while no file is present (off the job's clock). The PDF
# libraries (pikepdf, pypdfium2: ~85 ms of CPU, more than the rest together) are not among
# them: under load every spare's warm-up is CPU taken from the running jobs, so preloading them
# for every image or text file cost more throughput than it saved PDF latency. They come
# afterwards, while the ready spare waits (`_import_while_idle`): an idle server's next PDF job
# starts warm, and a spare taken at once (a busy server) never pays for them.
PRELOAD = ("PIL.Image", "PIL.ImageCms", "PIL.ImageOps", "PIL.ImageSequence", "lxml.etree",
           "lxml.html", "defusedxml.ElementTree", "olefile", "csv", "zipfile")


def _emitter(stream: BinaryIO) -> Callable[[dict[str, Any]], None]:
    def emit(event: dict[str, Any]) -> None:
        stream.write((json.dumps(event, separators=(",", ":")) + "\n").encode())
        stream.flush()
    return emit


def _lower_limit(which: int, value: int | None) -> None:
    if value is None:
        return
    _soft, hard = resource.getrlimit(which)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (value, value))


def _apply_limits(limits: dict[str, Any]) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    used_cpu = int(used.ru_utime + used.ru_stime) + 1
    if limits.get("cpu_seconds"):
        # Soft limit sends SIGXCPU (fatal); the hard one a SIGKILL a second later.
        soft = used_cpu + int(limits["cpu_seconds"])
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        new_hard = soft + 1 if hard == resource.RLIM_INFINITY else min(soft + 1, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (min(soft, new_hard), new_hard))
    _lower_limit(resource.RLIMIT_AS, limits.get("memory_bytes"))
    _lower_limit(resource.RLIMIT_FSIZE, limits.get("file_size_bytes"))
    # Without a pids cgroup: the uid's tasks when the job was handed over, plus the job's share.
    _lower_limit(resource.RLIMIT_NPROC, limits.get("uid_processes"))


def _disk_reason(limits: dict[str, Any]) -> str:
    budget = limits.get("disk_bytes")
    return ("Processing needed more temporary disk space than the "
            + (f"{int(budget) // (1024 * 1024)} MB " if budget else "")
            + "a job may use.")


class _DiskFull(logging.Handler):
    """Notices when the engine gave up because the job's tmpfs filled up (the engine turns the
    OSError into a generic 'damaged' reason and logs it)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
                self.seen = True
                return
            exc = exc.__cause__ or exc.__context__


def _import_while_idle(sock: socket.socket, modules: tuple[str, ...],
                       emit: Callable[[dict[str, Any]], None]) -> None:
    """Once no job has come for IDLE_GRACE seconds, import `modules` one at a time for as long
    as none is waiting on `sock` (a job that arrives meanwhile waits for one import at most),
    then say "warm". A busy server hands a spare its job at once, within the grace."""
    waiting = select.poll()  # poll(2): a call the seccomp census saw, where select(2) is not
    waiting.register(sock, select.POLLIN)
    if waiting.poll(int(IDLE_GRACE * 1000)):
        return
    for module in modules:
        if waiting.poll(0):
            return
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    if not waiting.poll(0):
        _prefault_heap()
    emit({"event": "warm"})


def _prefault_heap() -> None:
    """Touch PREFAULT_BYTES of heap and free them: with the sandbox's malloc settings
    (bwrap.CLEAN_ENV) glibc keeps the pages, already mapped, for the job's allocations."""
    with contextlib.suppress(MemoryError):
        block = bytearray(PREFAULT_BYTES)  # zero-filled: every page is written
        del block


def receive_job(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    buffer = b""
    fds: list[int] = []
    while not buffer.endswith(b"\n"):
        data, new_fds, _flags, _addr = socket.recv_fds(sock, MAX_JOB_MESSAGE, 4)
        fds.extend(new_fds)
        if not data:
            raise SystemExit("job socket closed before a job arrived")
        buffer += data
        if len(buffer) > MAX_JOB_MESSAGE:
            raise SystemExit("job message too large")
    return json.loads(buffer), fds


def main() -> int:
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # stray prints must not corrupt the protocol
    sys.stdout = sys.stderr
    emit = _emitter(out)

    mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
    office = mode in ("office", "office-warm", "template-office")
    warm_office = mode == "office-warm"
    if warm_office:  # LibreOffice starts idle beside the imports below, off the job's clock
        from sanitas.engine import libreoffice
        libreoffice.start_warm(Path(LO_WARM_ROOT))
    # Warm-up: the expensive imports happen before any file is seen.
    from sanitas.engine import formats

    for module in PRELOAD + formats.preload_modules(False) + (
            formats.preload_modules(True) if office else ()):
        with contextlib.suppress(ImportError):
            __import__(module)
    from PIL import Image
    Image.preinit()  # the common image plugins; the rarer ones load when a job needs them
    sock = socket.socket(fileno=int(sys.argv[1]))
    if mode.startswith("template"):  # every job gets a copy: import all it may need first
        for module in formats.idle_modules():
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        from sanitas.sandbox import template

        return template.serve(sock, emit, receive_job, _forked_job)
    emit({"event": "ready"})
    _import_while_idle(sock, formats.idle_modules(), emit)
    job, fds = receive_job(sock)
    return _run_job(job, fds, emit, warm_office)


def _forked_job(job: dict[str, Any], fds: list[int]) -> int:
    """A job in a tree forked from the template (template.py), once its namespaces, filter
    and capabilities are in place: stdout (fd 1) is the job's own pipe."""
    probe = job.get("probe")
    if isinstance(probe, str):  # the boundary tests: a Python run exactly where a job runs
        for fd in fds:
            os.close(fd)
        _apply_limits(job.get("limits", {}))
        os.execv(sys.executable, [sys.executable, "-I", "-c", probe])  # noqa: S606 - the host's test code, no shell
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return _run_job(job, fds, _emitter(out), False)


def _run_job(job: dict[str, Any], fds: list[int], emit: Callable[[dict[str, Any]], None],
             warm_office: bool) -> int:
    from sanitas.engine import Policy, RejectionCode, libreoffice, sanitize_file

    if len(fds) not in (2, 3):
        raise SystemExit("expected two descriptors (input, output) and maybe a preview's")
    input_fd, output_fd = fds[:2]
    preview_fd = fds[2] if len(fds) == 3 else None
    limits = job.get("limits", {})
    wall = limits.get("wall_seconds")  # the host's clock for the job runs from about now
    libreoffice.set_job_deadline(float(wall) if isinstance(wall, (int, float)) else None)
    _apply_limits(limits)
    if warm_office:
        libreoffice.limit_warm(limits)

    work = "/tmp/job"
    os.makedirs(f"{work}/out", exist_ok=True)
    input_path = f"{work}/input"
    try:
        with os.fdopen(input_fd, "rb") as src, open(input_path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1024 * 1024)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        emit({"event": "result", "result": {"status": "rejected", "input": job.get("name"),
                                            "reason": _disk_reason(limits),
                                            "code": "disk_limit"}})
        return 0
    disk_full = _DiskFull()
    engine_log = logging.getLogger("sanitas")
    engine_log.addHandler(disk_full)
    # A handler in the tree switches off logging's last-resort stderr output: keep it explicit.
    stderr_handler = logging.StreamHandler(sys.stderr)
    stderr_handler.setLevel(logging.WARNING)
    engine_log.addHandler(stderr_handler)

    last = [-1]

    def on_progress(percent: int) -> None:
        if percent != last[0]:
            last[0] = percent
            emit({"event": "progress", "percent": percent})

    policy = Policy.from_json(job.get("policy") or {})
    password = job.pop("password", None)
    languages = job.get("ocr_languages")
    result = sanitize_file(input_path, f"{work}/out", policy=policy, on_progress=on_progress,
                           workdir=work,
                           original_name=job.get("name") or "file",
                           password=password if isinstance(password, str) else None,
                           ocr_languages=languages if isinstance(languages, str) else "eng",
                           ocr_own_text=job.get("ocr_own_text") is not False)
    del password
    os.unlink(input_path)
    if result.status == "rejected" and disk_full.seen:
        result.reason, result.code = _disk_reason(limits), RejectionCode.DISK_LIMIT
    if result.status == "ok" and result.output:
        try:
            with open(result.output, "rb") as produced, os.fdopen(output_fd, "wb") as target:
                shutil.copyfileobj(produced, target, 1024 * 1024)
        except OSError as exc:
            result.status, result.output, result.output_type = "rejected", None, None
            result.reason = ("The sanitized file is larger than allowed." if exc.errno == 27
                             else f"The sanitized file could not be written ({exc.strerror}).")
            result.code = RejectionCode.TOO_LARGE if exc.errno == 27 else RejectionCode.DISK_LIMIT
    emit({"event": "result", "result": result.to_json()})
    if preview_fd is not None:  # after the result: a preview never delays or fails the job
        _render_preview(result, preview_fd, job.get("preview"), emit)
    return 0


def _render_preview(result: Any, fd: int, options: object,
                    emit: Callable[[dict[str, Any]], None]) -> None:
    """Draw the preview of the sanitized output (never the input, deleted by now) into `fd`
    and report {"event": "preview", "status": "ok" | "unavailable", ...}."""
    from sanitas.engine import preview

    max_side = options.get("max_side") if isinstance(options, dict) else None
    with os.fdopen(fd, "wb") as target:
        if result.status != "ok" or not result.output or \
                not preview.can_preview(result.output_type) or not isinstance(max_side, int):
            emit({"event": "preview", "status": "unavailable"})
            return
        try:
            width, height = preview.render_preview(Path(result.output), result.output_type,
                                                   target, max_side)
        except Exception as exc:  # noqa: BLE001 - any failure only means no preview
            print(f"preview: {type(exc).__name__}: {exc}"[:500], file=sys.stderr)
            emit({"event": "preview", "status": "unavailable"})
            return
    emit({"event": "preview", "status": "ok", "width": width, "height": height})


if __name__ == "__main__":
    sys.exit(main())
