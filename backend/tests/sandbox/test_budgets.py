"""Per-job budgets: disk (sized tmpfs, read-only root and /dev), memory of the whole job
(cgroup), and a process limit that other tasks of the sandbox uid do not eat into."""

from __future__ import annotations

import json
import os
import pwd
import random
import subprocess
import textwrap
import zipfile
from pathlib import Path

import pytest

from sanitas.sandbox import bwrap, cgroups, run_sanitizer
from sanitas.sandbox.bwrap import SandboxLimits, probe
from tests.sandbox.probes import FORK_UP_TO_200, run_json

MB = 1024 * 1024


def cgroup_host(settings) -> cgroups.CgroupHost:
    return bwrap._cgroup_host(settings)


# --- disk --------------------------------------------------------------------------------------

def test_every_writable_place_is_sized_and_the_rest_read_only(sandbox_settings):
    outcome = run_json("""
        import errno, json, os
        def fill(path, megabytes):
            try:
                with open(path, "wb") as fh:
                    for _ in range(megabytes):
                        fh.write(b"x" * (1024 * 1024))
                        fh.flush()
                return "written"
            except OSError as exc:
                return errno.errorcode[exc.errno]
            finally:
                try:
                    os.unlink(path)
                except OSError:
                    pass
        sizes = {p: os.statvfs(p).f_blocks * os.statvfs(p).f_frsize
                 for p in ("/tmp", os.environ["HOME"], "/dev/shm")}
        print(json.dumps({
            "sizes": sizes,
            "tmp": fill("/tmp/big", 40),
            "home": fill(os.environ["HOME"] + "/big", 40),
            "shm": fill("/dev/shm/big", 40),
            "root": fill("/big", 1),
            "root_dir": fill("/usr/../big", 1),
            "dev": fill("/dev/big", 1),
            "dev_null": fill("/dev/null", 1),
            "small_tmp_file": fill("/tmp/small", 1),
        }))
    """, sandbox_settings, limits=SandboxLimits(disk_bytes=32 * MB))
    assert sum(outcome["sizes"].values()) == 32 * MB
    assert outcome["tmp"] == outcome["home"] == outcome["shm"] == "ENOSPC"
    assert outcome["root"] == outcome["root_dir"] == outcome["dev"] == "EROFS"
    assert outcome["dev_null"] == outcome["small_tmp_file"] == "written"


def test_default_disk_budget_covers_all_tmpfs(sandbox_settings):
    outcome = run_json("""
        import json, os
        print(json.dumps({p: os.statvfs(p).f_blocks * os.statvfs(p).f_frsize
                          for p in ("/tmp", os.environ["HOME"], "/dev/shm")}))
    """, sandbox_settings)
    assert sum(outcome.values()) == SandboxLimits().disk_bytes
    assert outcome["/dev/shm"] == outcome["/home/sandbox"] == 64 * MB


def test_input_larger_than_the_disk_budget_is_refused_clearly(sandbox_settings, tmp_path):
    source = tmp_path / "big.txt"
    source.write_bytes(b"plain words on a line\n" * (1024 * 1024))  # 22 MB
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                           limits=SandboxLimits(disk_bytes=16 * MB), prewarm=False)
    assert result.status == "rejected"
    assert result.reason == ("Processing needed more temporary disk space than the 16 MB a job "
                             "may use.")


def test_engine_filling_the_disk_budget_is_refused_clearly(sandbox_settings, tmp_path):
    """A small archive whose member (ratio 10, no bomb) does not fit the job's /tmp."""
    rng = random.Random(1)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    # random words compress about 10:1; a 1 MB block repeated lies beyond deflate's 32 KB window
    block = " ".join(rng.choice(words) for _ in range(170_000)).encode()
    source = tmp_path / "words.zip"
    with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("words.txt", block * 40)  # 40 MB
    assert source.stat().st_size < 6 * MB
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                           limits=SandboxLimits(disk_bytes=32 * MB), prewarm=False)
    assert result.status == "rejected"
    assert "temporary disk space than the 32 MB" in result.reason


# --- processes ---------------------------------------------------------------------------------

CROWD = """
import threading, time
for _ in range(40):
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print("up", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run tasks as the sandbox uid")
def test_process_limit_is_per_job_not_per_uid(sandbox_settings):
    """40 unrelated tasks of the sandbox uid used to leave a 30-process job none at all."""
    entry = pwd.getpwnam(sandbox_settings.sandbox_user)
    crowd = subprocess.Popen(
        ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
         "--", "/usr/bin/python3", "-c", CROWD],
        stdout=subprocess.PIPE)
    try:
        assert crowd.stdout.readline() == b"up\n"
        outcome = run_json(FORK_UP_TO_200, sandbox_settings,
                           limits=SandboxLimits(processes=30))
    finally:
        crowd.kill()
        crowd.wait()
    assert outcome["error"] == "BlockingIOError"
    assert 20 <= outcome["forked"] < _upper(30, sandbox_settings)


def _upper(processes: int, settings) -> int:
    """pids.max is exact. Without a cgroup the allowance sits on top of the uid's tasks counted
    at start, and tasks that were exiting then (an earlier sandbox) leave the job more room."""
    return processes if bwrap._cgroup_host(settings).available else 2 * processes


# --- memory of the whole job -------------------------------------------------------------------

THREE_CHILDREN = """
    import json, os, time
    pids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            block = b"\\x01" * (120 * 1024 * 1024)  # touched, so resident
            time.sleep(1.5)
            os._exit(0)
        pids.append(pid)
    statuses = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    print(json.dumps({"statuses": statuses}))
"""


def test_memory_budget_bounds_the_whole_job(sandbox_settings):
    """Three children of 120 MB each: fine for a 512 MB address-space limit per process, not
    for a 256 MB job."""
    host = cgroup_host(sandbox_settings)
    if not host.available:
        pytest.skip(f"no per-job cgroups on this host: {host.reason}")
    proc = probe(textwrap.dedent(THREE_CHILDREN), sandbox_settings, timeout=60,
                 limits=SandboxLimits(memory_bytes=512 * MB, job_memory_bytes=256 * MB))
    killed = proc.returncode in (-9, 128 + 9)  # cgroup v2 memory.oom.group: the whole job
    if not killed:
        assert proc.returncode == 0, proc.stderr.decode()
        statuses = json.loads(proc.stdout.decode().strip().splitlines()[-1])["statuses"]
        killed = -9 in statuses
    assert killed, "three 120 MB children ran inside a 256 MB job budget"
    # the same job with room for all three runs to the end
    proc = probe(textwrap.dedent(THREE_CHILDREN), sandbox_settings, timeout=60,
                 limits=SandboxLimits(memory_bytes=512 * MB, job_memory_bytes=768 * MB))
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout.decode().strip().splitlines()[-1])["statuses"] == [0, 0, 0]


def test_tmpfs_files_count_against_the_memory_budget(sandbox_settings):
    host = cgroup_host(sandbox_settings)
    if not host.available:
        pytest.skip(f"no per-job cgroups on this host: {host.reason}")
    proc = probe(textwrap.dedent("""
        with open("/tmp/fill", "wb") as fh:
            for _ in range(200):
                fh.write(b"x" * (1024 * 1024))
        print("wrote 200 MB")
    """), sandbox_settings, timeout=60,
        limits=SandboxLimits(job_memory_bytes=128 * MB, disk_bytes=1024 * MB))
    assert b"wrote 200 MB" not in proc.stdout


def test_job_over_its_memory_budget_is_rejected_with_a_reason(sandbox_settings, tmp_path):
    host = cgroup_host(sandbox_settings)
    if not host.available:
        pytest.skip(f"no per-job cgroups on this host: {host.reason}")
    from tests.engine.corpus import huge_png

    source = huge_png(tmp_path / "big.png", 8000, 8000)  # 192 MB of pixels, small file
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                           limits=SandboxLimits(job_memory_bytes=160 * MB), prewarm=False)
    assert result.status == "rejected"
    assert "more memory than the 160 MB a job may use" in result.reason


def test_job_cgroups_are_removed(sandbox_settings, sandbox_corpus, tmp_path):
    host = cgroup_host(sandbox_settings)
    if not host.available:
        pytest.skip(f"no per-job cgroups on this host: {host.reason}")
    bwrap.shutdown_spares()
    mine = f"{cgroups.PREFIX}{os.getpid()}-"
    parents = {host.memory_parent, host.pids_parent}

    def leftovers():
        return [p for parent in parents for p in parent.iterdir() if p.name.startswith(mine)]

    result = run_sanitizer(sandbox_corpus["notes.txt"], tmp_path / "out", mode="basic",
                           settings=sandbox_settings, prewarm=True)
    assert result.status == "ok"
    cgroups.wait_for_removals()  # the job's own cgroup goes on a helper thread
    assert len(leftovers()) == len(parents)  # the warm spare's
    bwrap.shutdown_spares()
    assert leftovers() == []


# --- detection (no kernel needed) --------------------------------------------------------------

def _fake_v2(root: Path, own: str, controllers: str = "cpu memory pids") -> Path:
    base = root / own.lstrip("/")
    base.mkdir(parents=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (base / "cgroup.controllers").write_text(controllers + "\n")
    (base / "cgroup.subtree_control").write_text("\n")
    (base / "cgroup.procs").write_text("")
    return base


def test_v2_delegated_cgroup_holds_the_jobs(tmp_path):
    base = _fake_v2(tmp_path, "/system.slice/sanitas.service")
    host = cgroups._detect_v2((tmp_path, "/"), "/system.slice/sanitas.service", None)
    assert host.version == 2 and host.memory_parent == host.pids_parent == base
    assert (base / "cgroup.subtree_control").read_text() == "+memory +pids"
    job = host.create(300 * MB, 40)
    assert job is not None and job.directories == [base / job.memory.name]
    assert (job.memory / "memory.max").read_text() == str(300 * MB)
    assert (job.memory / "pids.max").read_text() == "40"
    assert (job.memory / "memory.oom.group").read_text() == "1"
    assert job.procs_files() == [str(job.memory / "cgroup.procs")]
    job.set_budget(100 * MB, 10)
    assert (job.memory / "memory.max").read_text() == str(100 * MB)


def test_v2_without_delegated_controllers_falls_back_with_a_reason(tmp_path):
    _fake_v2(tmp_path, "/user.slice", controllers="cpu io")
    host = cgroups._detect_v2((tmp_path, "/"), "/user.slice", None)
    assert not host.available and "no memory and pids controllers" in host.reason
    assert host.create(MB, 1) is None


def test_v1_hierarchies_are_used_side_by_side(tmp_path, monkeypatch):
    memory = tmp_path / "memory" / "svc"
    pids = tmp_path / "pids"
    memory.mkdir(parents=True)
    pids.mkdir(parents=True)
    host = cgroups._detect_v1({"memory": (tmp_path / "memory", "/"), "pids": (pids, "/")},
                              {"memory": "/svc", "pids": "/"})
    assert host.version == 1 and host.memory_parent == memory and host.pids_parent == pids
    job = host.create(200 * MB, 25)
    assert (job.memory / "memory.limit_in_bytes").read_text() == str(200 * MB)
    assert (job.pids / "pids.max").read_text() == "25"
    assert job.procs_files() == [str(job.memory / "cgroup.procs"),
                                 str(job.pids / "cgroup.procs")]


def test_settings_off_required_and_typos(tmp_path):
    assert not cgroups.detect("off").available
    typo = cgroups.detect("yes please")
    assert not typo.available and typo.required  # a typo refuses jobs rather than guessing


def test_required_cgroups_refuse_jobs_when_missing(sandbox_settings, monkeypatch):
    from sanitas.sandbox import SandboxError

    monkeypatch.setitem(cgroups._hosts, "required",
                        cgroups.CgroupHost(None, "test: none here", required=True))
    settings = sandbox_settings.model_copy(update={"sandbox_cgroup": "required"})
    with pytest.raises(SandboxError, match="required but unavailable"):
        probe("pass", settings)
