"""Per-job cgroups: one memory budget and one process budget for everything a job runs.

rlimits bind each process separately (RLIMIT_AS) or every process of a uid together
(RLIMIT_NPROC), so a job that starts LibreOffice, tesseract and helpers may use several times
its address-space limit in total, and unrelated processes of the sandbox uid eat into its
process limit. A cgroup per sandbox fixes both: `memory.max` bounds the job's resident memory
*including its tmpfs files* (/tmp, HOME, /dev/shm live in RAM), swap is off for it, and
`pids.max` counts only its own tasks.

The parent creates the cgroup before the sandbox starts (a one-line `sh` moves itself into it and
execs the usual prlimit/setpriv/bwrap chain, so every process of the sandbox is inside from its
first instruction), lowers the budget to the job's values when a warm spare is given its job,
reads the OOM-kill counter to explain a failure, kills whatever is left and removes the cgroup.

Where the cgroups come from (`SANITAS_SANDBOX_CGROUP`, default `auto`):

* cgroup v2 with the memory and pids controllers: job cgroups are made inside the service's own
  cgroup when it is delegated to the service (systemd `Delegate=yes`, a container with its own
  cgroup namespace). cgroup v2 lets a cgroup hold either processes or child cgroups with
  controllers, so when the service is the only process in its cgroup it first moves itself into
  a `sanitas-service` leaf beside the jobs (what systemd's delegation documentation asks of a
  delegated service). A service sharing its cgroup with other processes needs a delegated
  directory named explicitly: `SANITAS_SANDBOX_CGROUP=/sys/fs/cgroup/<path>`.
* cgroup v1 (hybrid hosts, like the machines this was written on): job cgroups are made under
  the service's own cgroup in the memory and pids hierarchies when they are writable (root).
* `off`, or nothing usable: no cgroups; the log says why, and the rlimits stay the only
  limits (the process limit then counts the sandbox uid's live tasks at start, see bwrap.py).
  `required` refuses to run jobs without per-job cgroups.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import queue
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

PREFIX = "sanitas-job-"
SERVICE_LEAF = "sanitas-service"
_counter = itertools.count(1)


def _read(path: Path) -> str:
    with open(path) as fh:
        return fh.read()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _mountinfo() -> tuple[tuple[Path, str] | None, dict[str, tuple[Path, str]]]:
    """(cgroup2 mount, {v1 controller: mount}); each mount as (mount point, mounted root)."""
    v2 = None
    v1: dict[str, tuple[Path, str]] = {}
    try:
        lines = _read(Path("/proc/self/mountinfo")).splitlines()
    except OSError:
        return None, {}
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, tail_fields = head.split(), tail.split()
        if len(fields) < 5 or len(tail_fields) < 3:
            continue
        root, point, fstype = fields[3], Path(fields[4]), tail_fields[0]
        if fstype == "cgroup2" and v2 is None:
            v2 = (point, root)
        elif fstype == "cgroup":
            for option in tail_fields[2].split(","):
                if option in ("memory", "pids"):
                    v1.setdefault(option, (point, root))
    return v2, v1


def _own_cgroups() -> dict[str, str]:
    """{"" (v2) or v1 controller: this process's cgroup path}."""
    own: dict[str, str] = {}
    try:
        lines = _read(Path("/proc/self/cgroup")).splitlines()
    except OSError:
        return own
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            own[controller] = parts[2]
    return own


def _directory(mount: tuple[Path, str], path: str) -> Path:
    point, root = mount
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root):]
    return point / path.lstrip("/")


@dataclass
class JobCgroup:
    """The cgroup(s) of one sandbox: one directory on v2, memory and pids on v1."""

    version: int
    memory: Path
    pids: Path
    removed: bool = False

    @property
    def directories(self) -> list[Path]:
        return [self.memory] if self.memory == self.pids else [self.memory, self.pids]

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.directories]

    def set_budget(self, memory_bytes: int, processes: int) -> None:
        """The job's total memory (no swap) and task count. A spare is started with generous
        values and gets the job's when the job arrives."""
        if self.version == 2:
            _write(self.memory / "memory.max", str(memory_bytes))
            if (self.memory / "memory.swap.max").exists():
                _write(self.memory / "memory.swap.max", "0")
            _write(self.memory / "memory.oom.group", "1")  # an OOM ends the whole job
        else:
            limit = self.memory / "memory.limit_in_bytes"
            memsw = self.memory / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                # memsw (memory + swap) may never be below the memory limit: lower the
                # memory limit first, raise memsw first.
                try:
                    _write(limit, str(memory_bytes))
                    _write(memsw, str(memory_bytes))
                except OSError as exc:
                    if exc.errno != errno.EINVAL:
                        raise
                    _write(memsw, str(memory_bytes))
                    _write(limit, str(memory_bytes))
            else:
                _write(limit, str(memory_bytes))
        _write(self.pids / "pids.max", str(processes))

    def oom_kills(self) -> int:
        """Processes the kernel killed for exceeding the memory budget so far."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            for line in _read(self.memory / name).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def kill_all(self) -> None:
        """SIGKILL every process in the job (one pass; the kernel reaps them shortly)."""
        kill_file = self.memory / "cgroup.kill"
        if self.version == 2 and kill_file.exists():
            try:
                _write(kill_file, "1")
                return
            except OSError:
                pass
        pids: set[int] = set()
        for directory in self.directories:
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(p) for p in _read(directory / "cgroup.procs").split())
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left and remove the directories (rmdir answers EBUSY until the kernel
        has reaped the last task, usually within a few milliseconds)."""
        if self.removed:
            return
        deadline = time.monotonic() + 5
        for directory in self.directories:
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        log.warning("could not remove the job cgroup %s: %s", directory, exc)
                        break
                    self.kill_all()
                    time.sleep(0.001)
        self.removed = True

    def remove_later(self) -> None:
        """remove() on a helper thread: the kernel frees a killed job's memory before rmdir
        succeeds (about 5 ms for a Python process), which need not delay the job's answer."""
        global _remover
        with _remover_lock:
            if _remover is None:
                _remover = threading.Thread(target=_remove_queued, daemon=True,
                                            name="sanitas-cgroup-remover")
                _remover.start()
        _removals.put(self)


_removals: queue.Queue[JobCgroup] = queue.Queue()
_remover: threading.Thread | None = None
_remover_lock = threading.Lock()


def _remove_queued() -> None:
    while True:
        job = _removals.get()
        try:
            job.remove()
        except Exception:  # the thread must survive to remove the next ones
            log.exception("removing the job cgroup %s failed", job.memory)
        finally:
            _removals.task_done()


def wait_for_removals() -> None:
    """Block until every remove_later() so far is done."""
    _removals.join()


@dataclass
class CgroupHost:
    """Where job cgroups are made on this host, or why they are not."""

    version: int | None  # 2, 1 or None (not available)
    reason: str
    memory_parent: Path | None = None
    pids_parent: Path | None = None
    required: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def available(self) -> bool:
        return self.version is not None

    def create(self, memory_bytes: int, processes: int) -> JobCgroup | None:
        if self.version is None or self.memory_parent is None or self.pids_parent is None:
            return None
        name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        memory = self.memory_parent / name
        pids = self.pids_parent / name
        memory.mkdir()
        if pids != memory:
            try:
                pids.mkdir()
            except OSError:
                memory.rmdir()
                raise
        job = JobCgroup(self.version, memory, pids)
        try:
            job.set_budget(memory_bytes, processes)
        except OSError:
            job.remove()
            raise
        return job


def _stale(parent: Path) -> None:
    """Remove empty job cgroups left by services that died (their pid is in the name)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(PREFIX) or not entry.is_dir():
            continue
        try:
            owner = int(entry.name[len(PREFIX):].split("-", 1)[0])
        except ValueError:
            continue
        if owner == os.getpid() or Path(f"/proc/{owner}").exists():
            continue
        with contextlib.suppress(OSError):
            entry.rmdir()


def _controllers(directory: Path) -> set[str]:
    try:
        return set(_read(directory / "cgroup.controllers").split())
    except OSError:
        return set()


def _enable(directory: Path) -> None:
    enabled = set(_read(directory / "cgroup.subtree_control").split())
    missing = {"memory", "pids"} - enabled
    if missing:
        _write(directory / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(missing)))


def _detect_v2(mount: tuple[Path, str], own: str, explicit: Path | None) -> CgroupHost:
    if explicit is not None:
        parent = explicit
        try:
            parent.mkdir(parents=True, exist_ok=True)
            if not {"memory", "pids"} <= _controllers(parent):
                return CgroupHost(None, f"{parent} has no memory and pids controllers (the "
                                  "cgroup above it must enable them)")
            _enable(parent)
        except OSError as exc:
            return CgroupHost(None, f"cannot use {parent}: {exc.strerror or exc}")
        return CgroupHost(2, f"cgroup v2 under {parent}", parent, parent)
    base = _directory(mount, own)
    if not {"memory", "pids"} <= _controllers(base):
        return CgroupHost(None, f"the service's cgroup {base} has no memory and pids "
                          "controllers (not delegated to it)")
    if not os.access(base, os.W_OK):
        return CgroupHost(None, f"the service's cgroup {base} is not writable (not delegated "
                          "to it; set SANITAS_SANDBOX_CGROUP to a delegated cgroup)")
    try:
        _enable(base)
        return CgroupHost(2, f"cgroup v2 under {base}", base, base)
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            return CgroupHost(None, f"cannot enable memory and pids in {base}: {exc.strerror}")
    # EBUSY: processes live in `base`. When this process is the only one, it moves into a leaf.
    try:
        members = {int(p) for p in _read(base / "cgroup.procs").split()}
    except (OSError, ValueError) as exc:
        return CgroupHost(None, f"cannot read {base}/cgroup.procs: {exc}")
    if members != {os.getpid()}:
        return CgroupHost(None, f"the service's cgroup {base} holds other processes too, so it "
                          "cannot hold job cgroups; set SANITAS_SANDBOX_CGROUP to a delegated "
                          "cgroup")
    leaf = base / SERVICE_LEAF
    try:
        leaf.mkdir(exist_ok=True)
        _write(leaf / "cgroup.procs", str(os.getpid()))
        _enable(base)
    except OSError as exc:
        return CgroupHost(None, f"cannot move the service into {leaf}: {exc.strerror or exc}")
    log.info("moved the service into %s so that %s can hold per-job cgroups", leaf, base)
    return CgroupHost(2, f"cgroup v2 under {base}", base, base)


def _detect_v1(v1: dict[str, tuple[Path, str]], own: dict[str, str]) -> CgroupHost:
    if "memory" not in v1 or "pids" not in v1 or "memory" not in own or "pids" not in own:
        return CgroupHost(None, "no cgroup v1 memory and pids hierarchies")
    memory = _directory(v1["memory"], own["memory"])
    pids = _directory(v1["pids"], own["pids"])
    probe = f"{PREFIX}{os.getpid()}-probe"
    try:
        (memory / probe).mkdir()
        (memory / probe).rmdir()
        (pids / probe).mkdir()
        (pids / probe).rmdir()
    except OSError as exc:
        return CgroupHost(None, f"cgroup v1 memory/pids hierarchies are not writable here "
                          f"({exc.strerror or exc}; the service is not root)")
    return CgroupHost(1, f"cgroup v1 under {memory} and {pids}", memory, pids)


def detect(setting: str = "auto") -> CgroupHost:
    setting = (setting or "auto").strip()
    required = setting == "required"
    if setting == "off":
        return CgroupHost(None, "SANITAS_SANDBOX_CGROUP=off")
    if setting not in ("auto", "required") and not setting.startswith("/"):
        return CgroupHost(None, f"SANITAS_SANDBOX_CGROUP={setting!r} is not auto, off, "
                          "required or an absolute path", required=True)
    v2_mount, v1 = _mountinfo()
    own = _own_cgroups()
    explicit = Path(setting) if setting.startswith("/") else None
    if explicit is not None:
        host = (_detect_v2(v2_mount, own.get("", "/"), explicit) if v2_mount is not None
                else CgroupHost(None, f"{explicit} is not in a cgroup v2 hierarchy"))
    elif v2_mount is not None and {"memory", "pids"} <= _controllers(v2_mount[0]):
        host = _detect_v2(v2_mount, own.get("", "/"), None)
    elif "memory" in v1 and "pids" in v1:
        host = _detect_v1(v1, own)
    else:
        host = CgroupHost(None, "no cgroup hierarchy offers the memory and pids controllers")
    host.required = required
    for parent in {host.memory_parent, host.pids_parent}:
        if parent is not None:
            _stale(parent)
    return host


_hosts: dict[str, CgroupHost] = {}
_hosts_lock = threading.Lock()


def host_for(setting: str) -> CgroupHost:
    """The detection result for this setting, once per process (logged once)."""
    with _hosts_lock:
        host = _hosts.get(setting)
        if host is None:
            host = _hosts[setting] = detect(setting)
            if host.available:
                log.info("sandbox: per-job memory and process budgets through %s", host.reason)
            else:
                log.warning("sandbox: no per-job cgroups (%s); jobs are limited by rlimits "
                            "only: memory per process, not per job, and the process limit "
                            "counts every task of the sandbox uid", host.reason)
        return host
