"""The warm template inside the sandbox (`child.py ... template`): imports the engine once, then
forks one fresh process tree per job, each in namespaces of its own (docs/security-and-limits.md,
"Pre-forked sandboxes").

The template runs in a bubblewrap sandbox like any job's (read-only system, no network, the
unprivileged uid, no capabilities, a seccomp filter) except that its filter lets it create
namespaces and mount (seccomp.filter_program(template=True)). It never sees a file. For each
job the host sends it, over the control socket, a fork request carrying three descriptors: the
job's socket and the write ends of the job's stdout and stderr pipes. The tree of one job:

* the *keeper* (forked from the template) says hello on the job socket (the host reads its pid
  from the socket's credentials and moves it into the job's cgroup), receives the job (the same
  message and descriptors a one-job sandbox gets), then unshares new user, mount, PID, network,
  IPC, UTS and cgroup namespaces, mounts fresh sized tmpfs over /tmp, HOME and /dev/shm (the
  template's are hidden), forks the job's init and reports its exit status to the host;
* the *init* (PID 1 of the job's PID namespace) mounts a /proc that shows only the job, forks
  the worker, reaps every process of the job and exits with the worker's status (when it
  exits the kernel kills whatever is left in the namespace);
* the *worker* (PID 2) drops every capability and the bounding set, installs the full seccomp
  filter (no namespaces, no mounts: stacked on the template's, so the stricter answer wins),
  lowers its limits to the job's and runs it exactly as a one-job sandbox does (child.py).

The template is single-threaded (fork is safe) and keeps nothing a job could change: a job's
processes only ever run in a copy of its memory.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import select
import signal
import socket
import struct
import sys
from collections.abc import Callable
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
JOB_NAMESPACES = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                  | CLONE_NEWUTS | CLONE_NEWCGROUP)

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
SYS_CAPSET = 126
LINUX_CAPABILITY_VERSION_3 = 0x20080522

MAX_REQUEST = 4096
HOME = "/home/sandbox"
# Each job's own sized tmpfs mounts, in SandboxLimits.tmpfs_sizes() order.
TMPFS_MOUNTS = ("/tmp", HOME, "/dev/shm")  # noqa: S108 - inside the job's mount namespace

_libc = ctypes.CDLL(None, use_errno=True)


class SetupError(Exception):
    """A job's namespaces or filters could not be set up: the job never runs."""


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    _check(_libc.mount(source.encode(), target.encode(),
                       fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                       data.encode() if data else None), f"mount {target}")


def _write(path: str, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


# --- the template ------------------------------------------------------------------------------

Job = tuple[dict[str, Any], list[int]]  # the job message and its descriptors (child.py)


def serve(control: socket.socket, emit: Callable[[dict[str, Any]], None],
          receive_job: Callable[[socket.socket], Job],
          run_job: Callable[[dict[str, Any], list[int]], int]) -> int:
    """Fork a job tree for every request on `control` until the host closes it."""
    emit({"event": "ready", "template": True})
    waiting = select.poll()
    waiting.register(control, select.POLLIN)
    while True:
        _reap()
        if not waiting.poll(1000):
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, MAX_REQUEST, 3)
        except OSError:
            return 0
        if not data:
            return 0  # the host closed the control socket (or died: bwrap follows it)
        if data != b"fork\n" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue  # only the host writes here; anything else is ignored
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                control.close()
                code = _keeper(*fds, receive_job=receive_job, run_job=run_job)
            except BaseException as exc:  # noqa: BLE001 - never return into the template's loop
                with contextlib.suppress(Exception):
                    print(f"sandbox keeper failed: {type(exc).__name__}: {exc}",
                          file=sys.stderr, flush=True)
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- one job -----------------------------------------------------------------------------------

def _keeper(sock_fd: int, out_fd: int, err_fd: int, *,
            receive_job: Callable[[socket.socket], Job],
            run_job: Callable[[dict[str, Any], list[int]], int]) -> int:
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)  # fd 0 is /dev/null from here on
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.dup2(sock_fd, 3)
    os.closerange(4, os.sysconf("SC_OPEN_MAX"))
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sock = socket.socket(fileno=3)
    sock.sendall(b"hello\n")  # the host reads this process's pid from the credentials
    job, fds = receive_job(sock)  # sent once this process is in the job's cgroup
    try:
        _enter_namespaces(job.get("setup") or {})
    except (SetupError, OSError) as exc:
        print(f"sandbox setup failed: {exc}", file=sys.stderr, flush=True)
        _report(sock, 125)
        return 125
    alive_r, alive_w = os.pipe()  # open here until the keeper is gone, however it goes
    init = os.fork()
    if init == 0:
        code = 1
        try:
            sock.close()
            os.close(alive_w)
            code = _init(job, fds, run_job, alive_r)
        except BaseException as exc:  # noqa: BLE001 - the init must never return into the template's code
            print(f"sandbox init failed: {type(exc).__name__}: {exc}", file=sys.stderr,
                  flush=True)
        finally:
            os._exit(code)
    os.close(alive_r)
    for fd in fds:
        os.close(fd)
    for fd in (1, 2):
        os.dup2(0, fd)  # EOF on the job's pipes once its own processes are gone
    while True:
        try:
            _pid, status = os.waitpid(init, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    _report(sock, os.waitstatus_to_exitcode(status))
    return 0


def _report(sock: socket.socket, code: int) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(json.dumps({"exit": code}).encode() + b"\n")


def _enter_namespaces(setup: dict[str, Any]) -> None:
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(JOB_NAMESPACES), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    sizes = setup.get("tmpfs") or {}
    # The code's read-only binds under /tmp or HOME (a checkout under /tmp) stay visible: held
    # by descriptor across the new tmpfs, bound again inside it.
    keep = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC))
            for path in setup.get("binds") or () if isinstance(path, str)
            and any(path.startswith(top + "/") for top in TMPFS_MOUNTS)]
    for target in TMPFS_MOUNTS:
        size = int(sizes.get(target) or 0)
        if size <= 0:
            raise SetupError(f"no size for {target}")
        _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=0755")
    for path, fd in keep:
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        _mount("none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)


def _init(job: dict[str, Any], fds: list[int],
          run_job: Callable[[dict[str, Any], list[int]], int], keeper_alive: int) -> int:
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    hung_up = select.poll()
    hung_up.register(keeper_alive, select.POLLIN)
    if hung_up.poll(0):  # the keeper died before the line above: nobody would stop this job
        return 1
    os.close(keeper_alive)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    worker = os.fork()
    if worker == 0:
        code = 1
        try:
            _harden()
            code = run_job(job, fds)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # noqa: BLE001 - report and exit, never return
            print(f"sandbox job failed: {type(exc).__name__}: {exc}", file=sys.stderr,
                  flush=True)
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    for fd in fds:
        os.close(fd)
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while True:  # PID 1: reap everything; the worker's status is the job's
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 1
        except InterruptedError:
            continue
        if pid == worker:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


def _harden() -> None:
    """The worker: no capabilities (bounding and ambient sets included), then the full filter."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise SetupError(f"cap drop {cap}: {os.strerror(ctypes.get_errno())}")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two u32 triples (effective, permitted, inheritable): all clear
    _check(_libc.syscall(SYS_CAPSET, ctypes.c_char_p(header), ctypes.c_char_p(data)), "capset")
    from sanitas.sandbox.seccomp import filter_program

    program = filter_program()
    if program is not None:
        _install_filter(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _install_filter(program: bytes) -> None:
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0),
           "seccomp")
