"""Run the engine on one file inside bubblewrap.

The sandbox sees a read-only /usr (plus the usual symlinks), the Python environment and the
sanitas source read-only, /etc/libreoffice and /etc/fonts only when the file may be an office
document, private tmpfs for /tmp and HOME, no network (new net, PID, IPC, UTS, user and cgroup
namespaces), no capabilities and a clean environment. It gets no host path for the file at all:
the parent passes two descriptors over a socket (the input, read-only, and an empty output file
it created), so nothing of the host is writable from inside.

As root the child first drops to the unprivileged `settings.sandbox_user` with setpriv (as root
a user namespace is host root underneath, and RLIMIT_NPROC only binds a non-root uid).
Limits: address space, CPU seconds, file size and process count (rlimits, set by `prlimit` at
start and lowered by the child for the job before it reads the file), and a wall-clock timeout
scaled to the file, enforced here. Per job in total (SandboxLimits.job_memory_bytes,
.processes): a cgroup with memory.max (tmpfs files included, no swap) and pids.max where the
host delegates one (cgroups.py); without one, the process limit is the sandbox uid's live tasks
at start plus the job's allowance (RLIMIT_NPROC counts every task of the uid).

Disk: the only writable places are tmpfs mounts with a size, together `disk_bytes`: /tmp (most
of it), HOME and /dev/shm (bwrap 0.8's --size applies to --tmpfs only, so /dev/shm is a sized
tmpfs mounted over the one --dev makes); the root and /dev themselves are remounted read-only
(both are bwrap-made tmpfs without a size limit otherwise).

Start-up (Python plus pikepdf/Pillow imports) dominates a small job, so one sandbox is started
ahead of time as a spare ("warm"); it is still used for a single job only. Every sandbox
(spares, templates, one-job sandboxes) is started by one long-lived thread (`_start_process`):
bubblewrap's --die-with-parent follows the thread that started it, not the process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import pwd
import queue
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import Counter

from sanitas.engine import formats
from sanitas.engine.detect import HEAD_SIZE, sniff
from sanitas.engine.policy import Mode
from sanitas.engine.report import Rejected, RejectionCode, Result
from sanitas.sandbox import PreviewRequest, SandboxError, cgroups
from sanitas.sandbox.cgroups import CgroupHost, JobCgroup

if TYPE_CHECKING:
    from sanitas.config import Settings
    from sanitas.engine.policy import Policy
    from sanitas.sandbox.forked import ForkedSandbox

log = logging.getLogger(__name__)

# Served at /metrics with the others (web/metrics.py), counted here: the sandbox imports only the
# engine and the settings.
SANDBOX_STARTS = Counter("sanitas_sandbox_starts", "Sandboxes started (each serves one job)")
SANDBOX_TIMEOUTS = Counter("sanitas_sandbox_timeouts",
                           "Sandboxes stopped at their time limit: while starting, or a job",
                           ["phase"])

MB = 1024 * 1024
MAX_STDOUT_BYTES = 8 * MB
MAX_STDERR_KEPT = 16 * 1024
STARTUP_TIMEOUT = 60.0


@dataclass
class SandboxLimits:
    """Per-job limits; None means derived from the file size and the mode.

    memory_bytes: address space of each process (RLIMIT_AS). job_memory_bytes: resident
    memory of the whole job, tmpfs files included (cgroup memory.max; default memory_bytes).
    processes: tasks (threads included) of the job (cgroup pids.max, else RLIMIT_NPROC above
    the uid's live tasks). disk_bytes: the writable tmpfs mounts together; fixed when a
    sandbox starts, so a warm spare has the default."""

    memory_bytes: int = 3072 * MB
    cpu_seconds: int | None = None
    wall_seconds: float | None = None
    file_size_bytes: int | None = None
    processes: int = 512
    disk_bytes: int = 4096 * MB
    job_memory_bytes: int | None = None

    def resolved(self, input_size: int, mode: Mode, office: bool,
                 ocr: bool = False, container: bool = False) -> SandboxLimits:
        """The limits for one file. `office`: the job may run LibreOffice; `container`: the
        file is an archive or container (ZIP, OLE) whose members may each be an office
        document, so each may start LibreOffice of its own."""
        size_mb = input_size / MB
        wall = self.wall_seconds
        if wall is None:
            advanced = mode is Mode.ADVANCED
            wall = 30 + size_mb * (6 if advanced else 3)
            if office:
                wall += office_seconds(input_size, container)
            if ocr and advanced:
                wall += 600  # tesseract: about a second per page, and the page count is unknown
            wall = min(wall, 1800)
        cpu = self.cpu_seconds if self.cpu_seconds is not None else int(wall) + 5
        fsize = self.file_size_bytes
        if fsize is None:
            fsize = min(max(256 * MB, 8 * input_size), 8192 * MB)
        return SandboxLimits(self.memory_bytes, cpu, wall, fsize, self.processes,
                             self.disk_bytes, self.job_memory_bytes or self.memory_bytes)

    def tmpfs_sizes(self) -> tuple[int, int, int]:
        """(/tmp, HOME, /dev/shm) sizes: HOME and /dev/shm get up to 64 MB each (nothing
        measured writes much there), /tmp the rest."""
        small = max(MB, min(64 * MB, self.disk_bytes // 8))
        return self.disk_bytes - 2 * small, small, small


# LibreOffice's share of a job's wall clock: a single office document's grows with its size
# (a small file that LibreOffice cannot finish holds a worker for seconds, not minutes); an
# archive or container, whose members may each start LibreOffice, keeps a flat share.
OFFICE_SECONDS_BASE = 20
OFFICE_SECONDS_PER_MB = 10
OFFICE_SECONDS_MAX = 300
OFFICE_SECONDS_CONTAINER = 90


def office_seconds(input_size: int, container: bool = False) -> float:
    """The wall-clock seconds a job gets on top for LibreOffice (see SandboxLimits.resolved)."""
    if container:
        return OFFICE_SECONDS_CONTAINER
    return min(OFFICE_SECONDS_MAX, OFFICE_SECONDS_BASE + OFFICE_SECONDS_PER_MB * input_size / MB)


# --- spawning ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Layout:
    python: str
    binds: tuple[str, ...]
    office: bool
    user: str | None  # drop to this user (when running as root)
    warm_office: bool = False  # an office sandbox starts LibreOffice idle (child.py)


def _layout(settings: Settings, office: bool) -> _Layout:
    import sanitas

    python = sys.executable
    binds: list[str] = []
    prefix = os.path.realpath(sys.prefix)
    if not prefix.startswith("/usr/"):
        binds.append(prefix)
    source = str(Path(sanitas.__file__).resolve().parent.parent)
    if not any(source == b or source.startswith(b + "/") for b in [*binds, "/usr"]):
        binds.append(source)
    user = settings.sandbox_user if os.geteuid() == 0 else None
    return _Layout(python, tuple(binds), office, user,
                   warm_office=office and settings.sandbox_warm_office)


def _seccomp_fd(template: bool = False) -> int | None:
    """A pipe holding the seccomp program for bwrap to read (None: no filter here)."""
    from sanitas.sandbox.seccomp import filter_program

    program = filter_program(template)
    if program is None:
        return None
    read_fd, write_fd = os.pipe()
    os.write(write_fd, program)  # a few hundred bytes: fits the pipe buffer
    os.close(write_fd)
    return read_fd


# Moves itself into the job's cgroup(s) (the cgroup.procs files are its arguments, then "--"),
# then execs the sandbox: every process of the sandbox starts inside.
_ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; ' \
    'exec "$@"'


def _sandbox_uid(layout: _Layout) -> int:
    if layout.user:
        try:
            return pwd.getpwnam(layout.user).pw_uid
        except KeyError:
            raise SandboxError(f"The sandbox user {layout.user!r} does not exist; run "
                               "scripts/install.sh as root to create it.") from None
    return os.geteuid()


def _tasks_of(uid: int) -> int:
    """Tasks (threads included) the kernel counts against `uid`'s RLIMIT_NPROC right now."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            continue
    return count


# With a pids cgroup the job's process budget is pids.max; RLIMIT_NPROC (per uid, across all
# sandboxes) then only stops a runaway that the cgroup somehow does not see.
NPROC_BACKSTOP_FACTOR = 16


def _nproc(layout: _Layout, limits: SandboxLimits, cgroup: JobCgroup | None) -> int:
    if cgroup is not None:
        return limits.processes * NPROC_BACKSTOP_FACTOR
    return _tasks_of(_sandbox_uid(layout)) + limits.processes


def _cgroup_host(settings: Settings | None) -> CgroupHost:
    setting = settings.sandbox_cgroup if settings is not None else \
        os.environ.get("SANITAS_SANDBOX_CGROUP", "auto")
    host = cgroups.host_for(setting)
    if host.required and not host.available:
        raise SandboxError(f"Per-job cgroups are required but unavailable: {host.reason}")
    return host


def _job_cgroup(host: CgroupHost, limits: SandboxLimits) -> JobCgroup | None:
    try:
        return host.create(limits.job_memory_bytes or limits.memory_bytes, limits.processes)
    except OSError as exc:
        raise SandboxError(f"The job's cgroup could not be created: {exc}") from exc


def _command(layout: _Layout, limits: SandboxLimits, python_args: list[str] | None = None,
             headroom: bool = True, seccomp_fd: int | None = None,
             cgroup: JobCgroup | None = None, template: bool = False) -> list[str]:
    """The full command line. `headroom` leaves room above the job's limits for the warm-up
    (the child lowers them to the job's values before it reads the file). `template`: the
    pre-forked template (template.py), which may create each job's user namespace, and whose
    process allowance is the backstop (each job's worker lowers it to the job's)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed, so files cannot be processed "
                           "safely. Install it (`make install` or `apt-get install bubblewrap`).")
    command: list[str] = []
    if cgroup is not None:
        command += ["/bin/sh", "-c", _ENTER_CGROUP, "sanitas-enter-cgroup",
                    *cgroup.procs_files(), "--"]
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise SandboxError("prlimit (util-linux) is missing; the sandbox cannot set limits.")
    extra_memory, extra_cpu = (512 * MB, 30) if headroom else (0, 0)
    nproc = limits.processes * NPROC_BACKSTOP_FACTOR if template else \
        _nproc(layout, limits, cgroup)
    command += [prlimit, f"--as={limits.memory_bytes + extra_memory}",
                f"--cpu={int(limits.cpu_seconds or 3600) + extra_cpu}",
                f"--fsize={limits.file_size_bytes}",
                f"--nproc={nproc}",
                "--core=0", "--"]
    if layout.user:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise SandboxError("setpriv (util-linux) is missing; cannot drop root privileges.")
        entry = pwd.getpwuid(_sandbox_uid(layout))
        command += [setpriv, f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}",
                    "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
    command += [bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL", "--hostname", "sandbox", "--unshare-user"]
    if not template:  # the template's jobs cannot: their worker's filter denies namespaces
        command.append("--disable-userns")
    command += ["--ro-bind", "/usr", "/usr"]
    for link in ("lib", "lib64", "bin", "sbin", "lib32", "libx32"):
        target = f"/{link}"
        if os.path.islink(target):
            command += ["--symlink", os.readlink(target), target]
    tmp_size, home_size, shm_size = limits.tmpfs_sizes()
    command += ["--proc", "/proc", "--dev", "/dev",
                "--size", str(shm_size), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                "--size", str(tmp_size), "--tmpfs", "/tmp",
                "--size", str(home_size), "--tmpfs", "/home/sandbox"]
    for path in layout.binds:
        command += ["--ro-bind", path, path]
    if layout.office:
        for path in ("/etc/libreoffice", "/etc/fonts"):
            if os.path.isdir(path):
                command += ["--ro-bind", path, path]
    command += ["--remount-ro", "/"]  # last: bwrap creates the mount points in it first
    if seccomp_fd is not None:
        command += ["--seccomp", str(seccomp_fd)]
    command += ["--chdir", "/tmp", "--", layout.python]
    command += python_args if python_args is not None else ["-I", "-m", "sanitas.sandbox.child"]
    return command


# --- the thread that starts every sandbox ------------------------------------------------------
# bubblewrap's --die-with-parent is PR_SET_PDEATHSIG, which follows the *thread* that started
# it: a sandbox started from a short-lived thread (the executor's prestart thread, say) is
# killed when that thread ends. So one long-lived daemon thread starts them all; the others
# hand it their command and wait for the Popen. A forked process (a Celery pool process) does
# not have the parent's thread: it starts its own at its first sandbox.

_StartRequest = tuple[list[str], dict[str, Any], "int | None",
                      "Future[subprocess.Popen[bytes]]"]
_starter: threading.Thread | None = None
_starter_lock = threading.Lock()
_start_requests: queue.SimpleQueue[_StartRequest] = queue.SimpleQueue()


def _forget_starter_after_fork() -> None:
    global _starter, _starter_lock, _start_requests
    _starter = None
    _starter_lock = threading.Lock()
    _start_requests = queue.SimpleQueue()


os.register_at_fork(after_in_child=_forget_starter_after_fork)


def ensure_starter() -> threading.Thread:
    """The thread that starts sandboxes, started now if it is not running. It takes the
    niceness of the thread that starts it as its own: start it from a thread that is not
    niced (processing/local.py does, before its job threads), since without privilege it can
    start sandboxes only at that niceness or above."""
    global _starter
    with _starter_lock:
        if _starter is None or not _starter.is_alive():
            _starter = threading.Thread(target=_serve_starts, args=(_start_requests,),
                                        name="sanitas-sandbox-starter", daemon=True)
            _starter.start()
        return _starter


def _serve_starts(requests: queue.SimpleQueue[_StartRequest]) -> None:
    while True:
        command, kwargs, nice, future = requests.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(_popen(command, kwargs, nice))
        except BaseException as exc:  # noqa: BLE001 - the requester raises it
            future.set_exception(exc)


def _thread_nice() -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except OSError:
        return None


def _popen(command: list[str], kwargs: dict[str, Any],
           nice: int | None) -> subprocess.Popen[bytes]:
    """Popen on this thread, at niceness `nice` (the requester's: a niced job thread's
    sandboxes run niced, as when they were its own children)."""
    own = _thread_nice()
    if nice is not None and own is not None:
        if nice < own:  # only with privilege; otherwise the sandbox runs at this thread's
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
                own = nice
        tool = shutil.which("nice") if nice > own else None
        if tool is not None:
            command = [tool, "-n", str(nice - own), *command]
    return subprocess.Popen(command, **kwargs)  # noqa: S603 - argv lists built here (_command), no shell


def _start_process(command: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """subprocess.Popen(command, **kwargs), run by the starting thread (see above)."""
    nice = _thread_nice()
    starter = ensure_starter()
    if threading.current_thread() is starter:
        return _popen(command, kwargs, nice)
    future: Future[subprocess.Popen[bytes]] = Future()
    with _starter_lock:
        _start_requests.put((command, kwargs, nice, future))
    return future.result()


def probe(code: str, settings: Settings, limits: SandboxLimits | None = None,
          timeout: float = 60, office: bool = False) -> subprocess.CompletedProcess[bytes]:
    """Run Python `code` in exactly the sandbox a job gets, with exactly `limits` (for the
    tests that prove the boundary, and for diagnostics): forked from the template where jobs
    of that layout are (sandbox_prefork), a sandbox of its own otherwise."""
    limits = (limits or SandboxLimits()).resolved(0, Mode.BASIC, office)
    layout, host = _layout(settings, office), _cgroup_host(settings)
    if _prefork(settings):
        from sanitas.sandbox import forked

        job = forked.fork_job(_template_layout(layout), limits, host)
        if job is not None:
            return _probe_forked(job, code, layout, limits, timeout)
    cgroup = _job_cgroup(host, limits)
    filter_fd = _seccomp_fd()
    try:
        command = _command(layout, limits, ["-I", "-c", code],
                           headroom=False, seccomp_fd=filter_fd, cgroup=cgroup)
        with _start_process(command, env=dict(CLEAN_ENV), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            stdin=subprocess.DEVNULL,
                            pass_fds=() if filter_fd is None else (filter_fd,)) as proc:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
            return subprocess.CompletedProcess(command, proc.returncode, out, err)
    finally:
        if filter_fd is not None:
            os.close(filter_fd)
        if cgroup is not None:
            cgroup.remove()


def _probe_forked(job: ForkedSandbox, code: str, layout: _Layout, limits: SandboxLimits,
                  timeout: float) -> subprocess.CompletedProcess[bytes]:
    job_limits: dict[str, Any] = {"cpu_seconds": limits.cpu_seconds,
                                  "memory_bytes": limits.memory_bytes,
                                  "file_size_bytes": limits.file_size_bytes}
    if job.cgroup is None:
        job_limits["uid_processes"] = _nproc(layout, limits, None)
    message = {"probe": code, "limits": job_limits, "setup": job.job_setup()}
    deadline = time.monotonic() + timeout
    output: dict[int, bytes] = {}
    try:
        socket.send_fds(job.sock, [json.dumps(message).encode() + b"\n"], [])
        streams = {job.proc.stdout.fileno(): job.proc.stdout,
                   job.proc.stderr.fileno(): job.proc.stderr}
        with selectors.DefaultSelector() as selector:
            for fd, stream in streams.items():
                selector.register(stream, selectors.EVENT_READ)
                output[fd] = b""
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(["probe"], timeout)
                for key, _ in selector.select(min(remaining, 1.0)):
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        selector.unregister(key.fileobj)
                    output[key.fd] += chunk
        code_ = job.proc.wait(max(1.0, deadline - time.monotonic()))
        return subprocess.CompletedProcess(["probe"], code_, output[job.proc.stdout.fileno()],
                                           output[job.proc.stderr.fileno()])
    finally:
        job.kill()


CLEAN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/home/sandbox", "LANG": "C.UTF-8",
             "LC_ALL": "C.UTF-8", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1",
             "OMP_NUM_THREADS": "1",
             # glibc malloc: blocks up to 256 MiB come from the heap and freed memory stays
             # there, so the pages an idle spare touches ahead (child.py, _prefault_heap) are
             # the ones its job's image buffers reuse. A job is one process: nothing is held
             # longer than the job.
             "MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20)}


class _Sandbox:
    """One started sandbox, waiting for its single job."""

    def __init__(self, layout: _Layout, limits: SandboxLimits,
                 host: CgroupHost | None = None, template: bool = False) -> None:
        self.layout = layout
        self.disk_bytes = limits.disk_bytes
        self.cgroup = _job_cgroup(host or _cgroup_host(None), limits)
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = parent_sock
        filter_fd = _seccomp_fd(template)
        child_fd = child_sock.fileno()
        try:
            command = _command(layout, limits, seccomp_fd=filter_fd, cgroup=self.cgroup,
                               template=template)
            command.append(str(child_fd))  # the child learns its job socket from argv
            # what to preload, and whether LibreOffice waits started
            command.append(("template-office" if layout.office else "template") if template
                           else "office-warm" if layout.warm_office
                           else "office" if layout.office else "plain")
            self.proc = _start_process(  # by the long-lived starting thread: see above
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=dict(CLEAN_ENV), close_fds=True,
                pass_fds=(child_fd,) if filter_fd is None else (child_fd, filter_fd),
                start_new_session=True)
        except OSError as exc:
            parent_sock.close()
            if self.cgroup is not None:
                self.cgroup.remove()
            raise SandboxError(f"The sandbox could not be started: {exc}") from exc
        except BaseException:
            parent_sock.close()
            if self.cgroup is not None:
                self.cgroup.remove()
            raise
        finally:
            child_sock.close()
            if filter_fd is not None:
                os.close(filter_fd)
        self.started = time.monotonic()
        SANDBOX_STARTS.inc()
        self.ready = False
        self.warm = False

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> bool:
        """Block until the child has warmed up (consumes its 'ready' line)."""
        if self.ready:
            return True
        self.ready = b'"ready"' in self._read_line(timeout)
        return self.ready

    def wait_warm(self, timeout: float = STARTUP_TIMEOUT) -> bool:
        """After `wait_ready`: block until the idle child has also imported what it imports
        only when idle (the PDF libraries; its 'warm' line), as a spare of a quiet server
        has. False if it has not within `timeout`."""
        if not self.warm and self.wait_ready(timeout):
            self.warm = self._read_line(timeout) == b'{"event":"warm"}\n'
        return self.warm

    def _read_line(self, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not selector.select(timeout):
                return b""
        finally:
            selector.close()
        # Byte by byte, so nothing after the line is left in a buffer _collect cannot see.
        line = b""
        fd = self.proc.stdout.fileno()
        while not line.endswith(b"\n") and len(line) < 4096:
            byte = os.read(fd, 1)
            if not byte:
                break
            line += byte
        return line

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, wait_for_cgroup: bool = True) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()  # every process of the job at once, wherever it is
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        _release(self.cgroup, (self.proc.stdout, self.proc.stderr), self.sock, wait_for_cgroup)


def _release(cgroup: JobCgroup | None, streams: tuple[Any, ...], sock: socket.socket,
             wait_for_cgroup: bool) -> None:
    """After a sandbox's processes are killed (either kind: a one-job `_Sandbox`, a
    `forked.ForkedSandbox`): close its pipes and socket and remove its cgroup, now or on the
    removal thread."""
    for stream in streams:
        if stream:
            stream.close()
    sock.close()
    if cgroup is not None:
        if wait_for_cgroup:
            cgroup.remove()
        else:
            cgroup.remove_later()


_spares: dict[_Layout, list[_Sandbox]] = {}
_spares_lock = threading.Lock()
# Limits a spare is started with (upper bounds; each job lowers them inside).
_SPARE_LIMITS = SandboxLimits(memory_bytes=8192 * MB, cpu_seconds=3600, file_size_bytes=8192 * MB)
MAX_SPARES = 4


def spares() -> list[_Sandbox]:
    with _spares_lock:
        return [box for boxes in _spares.values() for box in boxes]


def _take_sandbox(layout: _Layout, limits: SandboxLimits, prewarm: bool,
                  host: CgroupHost) -> _Sandbox:
    dead: list[_Sandbox] = []
    chosen = None
    with _spares_lock:
        boxes = _spares.get(layout, [])
        for box in list(boxes):
            if not box.alive():
                boxes.remove(box)
                dead.append(box)
            elif chosen is None and box.disk_bytes == limits.disk_bytes:
                boxes.remove(box)  # a spare's disk budget was fixed when it started
                chosen = box
    for box in dead:
        box.kill()
    spare_limits = replace(_SPARE_LIMITS, disk_bytes=limits.disk_bytes)
    return chosen or _Sandbox(layout, spare_limits if prewarm else limits, host)


def _start_spare(layout: _Layout, host: CgroupHost, target: int = 1) -> None:
    """Keep `target` started sandboxes for the next jobs. Started after a job, not during it:
    the warm-up would compete with the job for the CPU."""
    with _spares_lock:
        alive = [box for box in _spares.get(layout, []) if box.alive()]
        missing = min(target, MAX_SPARES) - len(alive)
    for _ in range(max(0, missing)):
        try:
            spare = _Sandbox(layout, _SPARE_LIMITS, host)
        except SandboxError:
            return
        with _spares_lock:
            _spares.setdefault(layout, []).append(spare)


def _prefork(settings: Settings, libreoffice: bool = False) -> bool:
    """Whether the job is forked from a warm template (forked.py): where the setting is on, for
    every job that will most likely not run LibreOffice (those take a spare with LibreOffice
    idle, SANITAS_SANDBOX_WARM_OFFICE)."""
    return not libreoffice and settings.sandbox_prefork


def _template_layout(layout: _Layout) -> _Layout:
    """A template's layout: never a warm LibreOffice (a job that needs one after all starts
    its own)."""
    return replace(layout, warm_office=False)


def prestart(settings: Settings) -> None:
    """Start the template, or spares, for ordinary files ahead of the first job (e.g. when the
    service starts)."""
    layout, host = _layout(settings, office=False), _cgroup_host(settings)
    if _prefork(settings):
        from sanitas.sandbox import forked

        if forked.template_for(layout, host) is not None:
            return
    _start_spare(layout, host, _spare_target(settings))


def _spare_target(settings: Settings) -> int:
    return max(1, min(int(getattr(settings, "executor_workers", 1) or 1), MAX_SPARES))


@atexit.register
def shutdown_spares() -> None:
    from sanitas.sandbox import forked

    forked.shutdown()
    with _spares_lock:
        boxes = [box for group in _spares.values() for box in group]
        _spares.clear()
    for box in boxes:
        box.kill()
    cgroups.wait_for_removals()


# --- running a job -----------------------------------------------------------------------------

def _needs_office(path: Path, name: str,
                  mode: Mode = Mode.BASIC) -> tuple[bool, bool, bool]:
    """(whether the job may need LibreOffice's layout and budgets, whether it will most likely
    run LibreOffice, whether it is a container that is no office kind itself): an office kind,
    or a container (ZIP, OLE) whose structure may turn out to hold one; modern office files in
    basic mode clean without it. The bounded sniff only."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD_SIZE)
    try:
        found = sniff(head, name)
    except Rejected:
        return False, False, False  # refused in the sandbox at once, without LibreOffice
    office_kind = formats.office_family(found.kind)
    office = found.provisional or office_kind
    return (office, office and (not office_kind or formats.libreoffice_expected(found.kind, mode)),
            office and not office_kind)


def run_in_bwrap(input_path: Path, output_dir: Path, *, policy: Policy, settings: Settings,
                 on_progress: Callable[[int], None] | None = None,
                 original_name: str | None = None,
                 limits: SandboxLimits | None = None, prewarm: bool = True,
                 password: str | None = None,
                 preview: PreviewRequest | None = None) -> Result:
    from sanitas.engine import safe_output_name, unique_output_path

    started = time.perf_counter()
    mode = policy.mode  # the policy's output decides; the child gets the policy alone
    name = original_name or input_path.name
    input_size = input_path.stat().st_size
    office, libreoffice, container = _needs_office(input_path, name, mode)
    limits = (limits or SandboxLimits()).resolved(input_size, mode, office,
                                                  ocr=policy.ocr, container=container)
    layout = _layout(settings, office)
    host = _cgroup_host(settings)
    forked_job: ForkedSandbox | None = None
    if _prefork(settings, libreoffice):  # `prewarm` is about spares; a template is warm
        from sanitas.sandbox import forked

        forked_job = forked.fork_job(_template_layout(layout), limits, host)
    sandbox: _Sandbox | ForkedSandbox = forked_job or _take_sandbox(layout, limits, prewarm, host)
    job_limits = {"cpu_seconds": limits.cpu_seconds, "memory_bytes": limits.memory_bytes,
                  "file_size_bytes": limits.file_size_bytes, "disk_bytes": limits.disk_bytes,
                  "wall_seconds": limits.wall_seconds}  # LibreOffice's own timeout fits in it
    try:
        if sandbox.cgroup is not None:  # a spare's generous budget becomes the job's
            sandbox.cgroup.set_budget(limits.job_memory_bytes or limits.memory_bytes,
                                      limits.processes)
        else:  # RLIMIT_NPROC counts every task of the uid: the job gets its allowance on top
            job_limits["uid_processes"] = _nproc(layout, limits, None)
    except OSError as exc:
        sandbox.kill()
        raise SandboxError(f"The job's budget could not be set: {exc}") from exc

    output_dir.mkdir(parents=True, exist_ok=True)
    partial = output_dir / f".sanitas-partial-{os.getpid()}-{time.monotonic_ns()}"
    out_fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    preview_partial = preview_fd = None
    try:
        in_fd = os.open(input_path, os.O_RDONLY | os.O_CLOEXEC)
        if preview is not None:
            preview_partial = preview.path.with_name(f".sanitas-preview-{time.monotonic_ns()}")
            preview_fd = os.open(preview_partial,
                                 os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError:
        os.close(out_fd)
        partial.unlink()
        sandbox.kill()
        raise
    job: dict[str, Any] = {"name": name, "policy": policy.to_json(),
                           "limits": job_limits, "ocr_languages": settings.ocr_languages,
                           "ocr_own_text": settings.ocr_own_text}
    if forked_job is not None:
        job["setup"] = forked_job.job_setup()
    if preview is not None:
        job["preview"] = {"max_side": preview.max_side}
    preview_event: dict[str, Any] = {}
    if password:
        # Only in the job message over the private socket pair: never in argv, the
        # environment or a file, so nothing outside this process and the child sees it.
        job["password"] = password
    try:
        try:
            socket.send_fds(sandbox.sock, [json.dumps(job).encode() + b"\n"],
                            [in_fd, out_fd] + ([] if preview_fd is None else [preview_fd]))
        except OSError as exc:
            stderr = _drain(sandbox)
            raise SandboxError(f"The sandbox did not start: {stderr or exc}") from exc
        finally:
            os.close(in_fd)
            os.close(out_fd)
            if preview_fd is not None:
                os.close(preview_fd)
        payload, outcome = _collect(sandbox, limits, on_progress,
                                    preview_seconds=preview.seconds if preview else None,
                                    preview_event=preview_event)
    except BaseException:
        sandbox.kill()
        partial.unlink(missing_ok=True)
        if preview_partial is not None:
            preview_partial.unlink(missing_ok=True)
        raise
    out_of_memory = sandbox.cgroup is not None and sandbox.cgroup.oom_kills() > 0
    sandbox.kill(wait_for_cgroup=False)
    memory_reason = ("The file needs more memory than the "
                     f"{(limits.job_memory_bytes or limits.memory_bytes) // MB} MB a job may use "
                     "to process it safely.")
    try:
        if payload is None:
            partial.unlink(missing_ok=True)
            assert outcome is not None
            if out_of_memory:
                outcome = Rejected(memory_reason, RejectionCode.MEMORY_LIMIT)
            result = Result(input=name, status="rejected", reason=outcome.reason,
                            code=outcome.code)
        else:
            result = _result_from_payload(payload, name, mode)
            if result.status == "rejected" and out_of_memory:
                # a helper (LibreOffice, tesseract) was killed at the job's memory budget
                result.reason, result.code = memory_reason, RejectionCode.MEMORY_LIMIT
            if result.status == "ok":
                assert result.output_type is not None
                if result.passed_encrypted:
                    _check_passed(partial, input_path, result, policy)
                else:
                    _check_output(partial, result.output_type, limits)
                final = unique_output_path(
                    output_dir / safe_output_name(name, result.output_type))
                os.replace(partial, final)
                result.output = str(final)
            else:
                partial.unlink(missing_ok=True)
    except SandboxError:
        partial.unlink(missing_ok=True)
        raise
    except Rejected as exc:
        partial.unlink(missing_ok=True)
        result = Result(input=name, status="rejected", reason=exc.reason, code=exc.code)
    if preview is not None and preview_partial is not None:
        _keep_preview(preview_partial, preview, result.status == "ok" and
                      preview_event.get("status") == "ok")
    result.duration_ms = int((time.perf_counter() - started) * 1000)
    if prewarm and forked_job is None:
        _start_spare(layout, host, 1 if office else _spare_target(settings))
    return result


def _drain(sandbox: _Sandbox | ForkedSandbox) -> str:
    try:
        sandbox.proc.wait(timeout=2)
        stderr = sandbox.proc.stderr
        if stderr is None:
            return ""
        return (stderr.read(MAX_STDERR_KEPT) or b"").decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - best-effort stderr of a failed sandbox for the log; must not hide the failure
        return ""


def _collect(sandbox: _Sandbox | ForkedSandbox, limits: SandboxLimits,
             on_progress: Callable[[int], None] | None,
             preview_seconds: float | None = None,
             preview_event: dict[str, Any] | None = None,
             ) -> tuple[dict[str, Any] | None, Rejected | None]:
    """Read progress and the result within the wall-clock limit. Returns (result payload,
    explanation when there is none). Raises SandboxError when the sandbox never started.
    With `preview_seconds`, a result is followed by the preview's event, awaited that long
    more (into `preview_event`); missing it leaves the result as it is."""
    proc = sandbox.proc
    assert proc.stdout is not None and proc.stderr is not None
    # The job's clock starts when the child is ready (it reads the job only then); a sandbox
    # that cannot even start is an infrastructure fault.
    deadline = time.monotonic() + STARTUP_TIMEOUT
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    buffer = b""
    stdout_total = 0
    stderr_tail = b""
    ready = sandbox.ready
    if ready:
        deadline = time.monotonic() + float(limits.wall_seconds or 60)
    result: dict[str, Any] | None = None
    timed_out = False
    open_streams = 2
    while open_streams:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for key, _ in selector.select(timeout=min(remaining, 1.0)):
            chunk = os.read(key.fd, 65536)  # the fd of proc.stdout or proc.stderr
            if not chunk:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            if key.data == "err":
                stderr_tail = (stderr_tail + chunk)[-MAX_STDERR_KEPT:]
                continue
            stdout_total += len(chunk)
            if stdout_total > MAX_STDOUT_BYTES:
                sandbox.kill()
                return None, Rejected("The sanitizer produced an abnormal amount of output.",
                                      RejectionCode.CRASHED)
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict):
                    continue
                kind = event.get("event")
                if kind == "ready" and not ready:
                    ready = True
                    deadline = time.monotonic() + float(limits.wall_seconds or 60)
                elif kind == "progress" and on_progress is not None:
                    percent = event.get("percent")
                    if isinstance(percent, int):
                        on_progress(max(0, min(100, percent)))
                elif kind == "result" and isinstance(event.get("result"), dict) \
                        and result is None:
                    result = event["result"]
                    if preview_seconds is not None:  # the preview's own budget, from now
                        deadline = time.monotonic() + preview_seconds
                elif kind == "preview" and result is not None and preview_event is not None:
                    preview_event.update(event)
                    preview_seconds = None
        if result is not None and preview_seconds is None:
            break
    selector.close()
    if result is not None:
        return result, None
    if timed_out:
        sandbox.kill()
        SANDBOX_TIMEOUTS.labels("start" if not ready else "job").inc()
        if not ready:
            raise SandboxError("The sandbox did not start within the time limit.")
        return None, Rejected(f"Processing took longer than the {int(limits.wall_seconds or 0)} "
                              "s allowed for this file and was stopped.", RejectionCode.TIME_LIMIT)
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        sandbox.kill()
        code = -9
    stderr = stderr_tail.decode("utf-8", "replace").strip()
    if not ready:
        raise SandboxError(f"The sandbox failed to start (exit {code}): {stderr[-2000:]}")
    log.warning("sandboxed sanitizer died (exit %s): %s", code, stderr[-2000:])
    signal_number = code - 128 if code > 128 else -code if code < 0 else 0
    if signal_number == signal.SIGXCPU or "SIGXCPU" in stderr:
        return None, Rejected("Processing used more CPU time than allowed for this file and was "
                              "stopped.", RejectionCode.CPU_LIMIT)
    if signal_number == signal.SIGKILL:
        return None, Rejected("Processing was stopped at the sandbox's memory or CPU limit (the "
                              "file is too complex or hostile).", RejectionCode.MEMORY_LIMIT)
    if signal_number == signal.SIGXFSZ:
        return None, Rejected("Processing wrote more data than allowed and was stopped.",
                              RejectionCode.TOO_LARGE)
    if "MemoryError" in stderr:
        return None, Rejected("The file needs more memory than is allowed to process it safely.",
                              RejectionCode.MEMORY_LIMIT)
    return None, Rejected("The sanitizer crashed on this file (it is damaged or hostile)"
                          + (f", signal {signal_number}." if signal_number else "."),
                          RejectionCode.CRASHED)


MAX_PREVIEW_BYTES = 8 * MB


def _keep_preview(partial: Path, preview: PreviewRequest, drawn: bool) -> None:
    """Move the sandbox's preview into place when it says it drew one and the file looks like
    what was asked for (a bounded header read: a PNG of at most max_side pixels a side, not
    over MAX_PREVIEW_BYTES); otherwise drop it."""
    from sanitas.engine.preview import png_size

    try:
        if drawn:
            size = os.lstat(partial).st_size
            with open(partial, "rb") as fh:
                dimensions = png_size(fh.read(24))
            if 0 < size <= MAX_PREVIEW_BYTES and dimensions is not None and \
                    all(0 < side <= preview.max_side for side in dimensions):
                os.replace(partial, preview.path)
                return
            log.warning("sandbox preview refused (%d bytes, %s)", size, dimensions)
    finally:
        partial.unlink(missing_ok=True)


def _result_from_payload(payload: dict[str, Any], name: str, mode: Mode) -> Result:
    """The sandbox's answer as a Result (parsed by `Result.from_json`), with an output type
    the format registry allows for the detected kind in this mode."""
    try:
        result = Result.from_json(payload, name=name)
    except ValueError:
        raise SandboxError("The sandbox returned a malformed result.") from None
    if result.status == "ok" and not result.passed_encrypted and \
            result.output_type not in formats.allowed_outputs(result.detected_type, mode):
        raise Rejected("The sanitizer produced an output of a type that is not allowed.",
                       RejectionCode.INVALID_OUTPUT)
    return result


def _check_passed(path: Path, input_path: Path, result: Result, policy: Policy) -> None:
    """An encrypted file passed unchanged (`Result.passed_encrypted`): allowed only when the
    policy passes encrypted content, and only as the input itself, byte for byte (the sandbox
    could otherwise call anything it writes "passed")."""
    import filecmp

    if not policy.passes_encrypted or not re.fullmatch(r"[a-z0-9]{1,10}",
                                                       result.output_type or ""):
        raise Rejected("The sanitizer passed a file this policy does not pass.",
                       RejectionCode.INVALID_OUTPUT)
    if not filecmp.cmp(path, input_path, shallow=False):
        raise Rejected("The file passed unchanged is not the original.",
                       RejectionCode.INVALID_OUTPUT)


def _check_output(path: Path, output_type: str, limits: SandboxLimits) -> None:
    info = os.lstat(path)
    if info.st_size == 0:
        raise Rejected("The sanitizer produced an empty file.", RejectionCode.INVALID_OUTPUT)
    if limits.file_size_bytes and info.st_size > limits.file_size_bytes:
        raise Rejected("The sanitized file is larger than allowed.", RejectionCode.TOO_LARGE)
    with open(path, "rb") as fh:
        head = fh.read(4096)
    output = formats.OUTPUTS[output_type]
    if output.text:
        if b"\x00" in head:
            raise Rejected("The sanitizer produced a text file with binary content.",
                           RejectionCode.INVALID_OUTPUT)
        return
    if not output.accepts(head):
        raise Rejected(f"The sanitized file is not a valid {output_type.upper()} file.",
                       RejectionCode.INVALID_OUTPUT)

