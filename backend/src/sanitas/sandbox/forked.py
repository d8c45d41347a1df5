"""Pre-forked sandboxes, the host's half (template.py is the half inside).

One warm template per layout (files that do not need LibreOffice) runs in a bubblewrap
sandbox and forks each job a process tree in fresh namespaces of its own. A job here is a
`ForkedSandbox`: the same interface as a one-job `bwrap._Sandbox` (a `proc` with stdout, stderr,
poll and wait; the job socket; the job's cgroup; kill), so running a job and reading its
result are the same code either way.

The host creates the job's socket and pipes, asks the template to fork, reads the keeper's pid
from the hello's socket credentials (SO_PASSCRED: the kernel's word, not the sandbox's), moves
it into the job's own cgroup and only then sends the job. Should the template be unable to
start (a kernel that refuses nested user namespaces, say), jobs fall back to one-job sandboxes
for a while: both are isolated the same way, the template only saves the start.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import socket
import struct
import subprocess
import threading
import time
from typing import Any

from sanitas.sandbox import SandboxError, bwrap
from sanitas.sandbox.cgroups import CgroupHost, JobCgroup

log = logging.getLogger(__name__)

HELLO_TIMEOUT = 10.0
RETRY_AFTER = 60.0  # seconds before a template that would not start is tried again
_CREDENTIALS = struct.Struct("iII")  # struct ucred: pid, uid, gid


class _Template:
    def __init__(self, layout: bwrap._Layout, host: CgroupHost) -> None:
        self.box = bwrap._Sandbox(layout, bwrap._SPARE_LIMITS, host, template=True)
        self.lock = threading.Lock()
        self.uid = bwrap._sandbox_uid(layout)
        self.forks = 0
        # The thread below owns the template's stderr (reads it raw and closes it at EOF, once
        # the template is gone): kill() must not close a stream another thread reads.
        stderr, self.box.proc.stderr = self.box.proc.stderr, None
        if stderr is not None:
            threading.Thread(target=self._drain_stderr, args=(stderr,), daemon=True,
                             name="sanitas-template-stderr").start()

    @staticmethod
    def _drain_stderr(stream: Any) -> None:
        fd = stream.fileno()
        pending = b""
        try:
            while chunk := os.read(fd, 65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                pending = pending[-4096:]
                for line in lines:
                    log.warning("sandbox template: %s",
                                line.decode("utf-8", "replace").rstrip()[:500])
        except OSError:
            pass
        finally:
            stream.close()

    @property
    def pid(self) -> int:
        return self.box.proc.pid

    def alive(self) -> bool:
        return self.box.alive()

    def kill(self) -> None:
        self.box.kill()


_templates: dict[bwrap._Layout, _Template] = {}
_broken_until: dict[bwrap._Layout, float] = {}
_lock = threading.Lock()


def _forget_after_fork() -> None:
    """In a forked child (a Celery pool process, say) the parent's templates are not this
    process's children and their locks may have been held by a thread that no longer exists:
    start afresh, leaving the parent's templates alone."""
    global _lock
    _templates.clear()
    _broken_until.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def template_for(layout: bwrap._Layout, host: CgroupHost) -> _Template | None:
    """The layout's running template (started and awaited when there is none), or None when
    one cannot run here."""
    with _lock:
        template = _templates.get(layout)
        if template is not None and template.alive():
            return template
        if template is not None:
            template.kill()
            del _templates[layout]
        if time.monotonic() < _broken_until.get(layout, 0.0):
            return None
        try:
            template = _Template(layout, host)
            ready = template.box.wait_ready()
        except SandboxError as exc:
            log.warning("the sandbox template could not start (%s); one-job sandboxes instead",
                        exc)
            _broken_until[layout] = time.monotonic() + RETRY_AFTER
            return None
        if not ready:
            template.kill()
            log.warning("the sandbox template did not get ready; one-job sandboxes instead")
            _broken_until[layout] = time.monotonic() + RETRY_AFTER
            return None
        _templates[layout] = template
        return template


def shutdown() -> None:
    with _lock:
        templates = list(_templates.values())
        _templates.clear()
        _broken_until.clear()
    for template in templates:
        template.kill()


class _JobProcess:
    """What `bwrap._collect` and `_drain` use of a Popen, for a forked job: its output pipes,
    and its exit status, which the keeper reports over the job socket."""

    def __init__(self, stdout_fd: int, stderr_fd: int, sock: socket.socket) -> None:
        self.stdout = open(stdout_fd, "rb", buffering=0)  # noqa: SIM115 - closed by kill()
        self.stderr = open(stderr_fd, "rb", buffering=0)  # noqa: SIM115 - closed by kill()
        self.sock = sock
        self.pid = 0
        self.pidfd: int | None = None
        self.returncode: int | None = None
        self._buffer = b""

    def _read_status(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.returncode is None:
            remaining = deadline - time.monotonic()
            if remaining < 0:
                return False
            with selectors.DefaultSelector() as selector:
                selector.register(self.sock, selectors.EVENT_READ)
                if not selector.select(remaining):
                    return False
            try:
                chunk = self.sock.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:  # the keeper is gone without a word: killed
                self.returncode = -signal.SIGKILL
                break
            self._buffer = (self._buffer + chunk)[-4096:]
            for line in self._buffer.split(b"\n")[:-1]:
                with contextlib.suppress(ValueError, TypeError):
                    code = json.loads(line).get("exit")
                    if isinstance(code, int):
                        self.returncode = code
        return True

    def wait(self, timeout: float | None = None) -> int:
        if not self._read_status(3600.0 if timeout is None else timeout):
            raise subprocess.TimeoutExpired("sandbox job", timeout or 0)
        assert self.returncode is not None
        return self.returncode


class ForkedSandbox:
    """One job forked from a template; see the module's docstring."""

    ready = True  # warm by construction: the job's clock starts when it is handed over

    def __init__(self, template: _Template, limits: bwrap.SandboxLimits,
                 host: CgroupHost) -> None:
        self.layout = template.box.layout
        self.limits = limits
        self.cgroup: JobCgroup | None = bwrap._job_cgroup(host, limits)
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        self.proc = _JobProcess(out_r, err_r, self.sock)
        try:
            try:
                with template.lock:
                    socket.send_fds(template.box.sock, [b"fork\n"],
                                    [child.fileno(), out_w, err_w])
            finally:
                child.close()
                os.close(out_w)
                os.close(err_w)
            self.proc.pid = self._hello(template.uid)
            self.proc.pidfd = os.pidfd_open(self.proc.pid)
            if self.cgroup is not None:
                for procs in self.cgroup.procs_files():
                    with open(procs, "w") as fh:
                        fh.write(str(self.proc.pid))
        except (OSError, SandboxError) as exc:
            self.kill()
            raise SandboxError(f"The sandbox template could not fork a job: {exc}") from exc
        template.forks += 1
        bwrap.SANDBOX_STARTS.inc()

    def _hello(self, uid: int) -> int:
        """The keeper's host pid, from the credentials the kernel attached to its hello."""
        self.sock.settimeout(HELLO_TIMEOUT)
        try:
            data, ancillary, _flags, _addr = self.sock.recvmsg(
                6, socket.CMSG_SPACE(_CREDENTIALS.size))
        finally:
            self.sock.settimeout(None)
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and \
                    len(payload) >= _CREDENTIALS.size:
                pid, sender_uid, _gid = _CREDENTIALS.unpack(payload[:_CREDENTIALS.size])
                if data == b"hello\n" and sender_uid == uid and pid > 0:
                    return int(pid)
        raise SandboxError("no hello from the forked job")

    def job_setup(self) -> dict[str, Any]:
        """What the keeper needs to build the job's filesystem (template.py)."""
        from sanitas.sandbox.template import TMPFS_MOUNTS

        return {"tmpfs": dict(zip(TMPFS_MOUNTS, self.limits.tmpfs_sizes(), strict=True)),
                "binds": list(self.layout.binds)}

    def kill(self, wait_for_cgroup: bool = True) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()
        if self.proc.pidfd is not None:  # the keeper; its init follows (PDEATHSIG), then all
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.proc.pidfd, signal.SIGKILL)
            os.close(self.proc.pidfd)
            self.proc.pidfd = None
        bwrap._release(self.cgroup, (self.proc.stdout, self.proc.stderr), self.sock,
                       wait_for_cgroup)


def fork_job(layout: bwrap._Layout, limits: bwrap.SandboxLimits,
             host: CgroupHost) -> ForkedSandbox | None:
    """A job forked from the layout's template, or None (the caller starts a one-job sandbox)."""
    template = template_for(layout, host)
    if template is None:
        return None
    try:
        return ForkedSandbox(template, limits, host)
    except SandboxError as exc:
        log.warning("%s; restarting the template", exc)
        with _lock:
            if _templates.get(layout) is template:
                del _templates[layout]
        template.kill()
    template = template_for(layout, host)
    return None if template is None else ForkedSandbox(template, limits, host)
