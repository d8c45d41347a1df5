"""What code inside the sandbox cannot do: reach the network, see host files, keep privileges,
or outlive its limits. `probe` runs code in exactly the sandbox a job gets."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from sanitas.sandbox import bwrap
from sanitas.sandbox.bwrap import SandboxLimits, probe
from tests.sandbox.probes import FORK_UP_TO_200, run_json

MB = 1024 * 1024


def test_no_network_loopback_external_dns_or_abstract_sockets(sandbox_settings):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract_name = f"\0sanitas-test-{os.getpid()}"
    abstract.bind(abstract_name)
    abstract.listen()
    try:
        outcome = run_json(f"""
            import json, socket
            def attempt(fn):
                try:
                    fn()
                    return "connected"
                except OSError as exc:
                    return type(exc).__name__
            def tcp(host, port):
                s = socket.socket(); s.settimeout(3); s.connect((host, port))
            def unix(name):
                s = socket.socket(socket.AF_UNIX); s.connect(name)
            print(json.dumps({{
                "loopback": attempt(lambda: tcp("127.0.0.1", {port})),
                "external": attempt(lambda: tcp("1.1.1.1", 53)),
                "dns": attempt(lambda: socket.getaddrinfo("pypi.org", 443)),
                "abstract": attempt(lambda: unix({abstract_name!r})),
                # (if_nameindex needs a netlink socket, which the filter refuses)
                "interfaces": [line.split(":")[0].strip()
                               for line in open("/proc/net/dev").readlines()[2:]],
            }}))
        """, sandbox_settings)
    finally:
        listener.close()
        abstract.close()
    assert outcome["loopback"] != "connected"
    assert outcome["external"] != "connected"
    assert outcome["dns"] != "connected"
    assert outcome["abstract"] != "connected"
    assert outcome["interfaces"] == ["lo"]


def test_host_files_are_invisible(sandbox_settings, tmp_path):
    secret_db = tmp_path / "sanitas.db"
    secret_db.write_bytes(b"SQLite format 3\x00 secret rows")
    other_upload = sandbox_settings.data_dir / "files" / "other-user-upload.pdf"
    other_upload.parent.mkdir(parents=True)
    other_upload.write_bytes(b"%PDF- someone else's file")
    outcome = run_json(f"""
        import json, os
        def read(path):
            try:
                with open(path, "rb") as fh:
                    return "read " + str(len(fh.read()))
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps({{
            "db": read({str(secret_db)!r}),
            "upload": read({str(other_upload)!r}),
            "passwd": read("/etc/passwd"),
            "shadow": read("/etc/shadow"),
            "root_home": read("/root/.bash_history"),
            "top": sorted(os.listdir("/")),
            "home": os.listdir(os.environ["HOME"]),
            "tmp": os.listdir("/tmp"),
            "env": sorted(os.environ),
        }}))
    """, sandbox_settings)
    assert outcome["db"] == "FileNotFoundError"
    assert outcome["upload"] == "FileNotFoundError"
    assert outcome["passwd"] == "FileNotFoundError"
    assert outcome["shadow"] == "FileNotFoundError"
    assert outcome["root_home"] == "FileNotFoundError"
    assert "etc" not in outcome["top"] and "root" not in outcome["top"]
    # /tmp is a fresh tmpfs; the only names in it are the read-only binds of the code itself
    # when the checkout lives under /tmp (as a CI clone may).
    code_under_tmp = {Path(b).relative_to("/tmp").parts[0]
                      for b in bwrap._layout(sandbox_settings, False).binds
                      if b.startswith("/tmp/")}
    assert outcome["home"] == [] and set(outcome["tmp"]) == code_under_tmp
    assert "SANITAS_SECRET_KEY" not in outcome["env"]
    assert set(outcome["env"]) <= {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR",
                                   "PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS", "LC_CTYPE", "PWD",
                                   "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}


def test_read_only_system_and_no_privileges(sandbox_settings):
    outcome = run_json("""
        import json, os
        status = dict(line.split(":", 1) for line in open("/proc/self/status"))
        try:
            open("/usr/bin/EVIL", "wb")
            write = "written"
        except OSError as exc:
            write = type(exc).__name__
        print(json.dumps({"uid": os.getuid(), "cap_eff": status["CapEff"].strip(),
                          "cap_bnd": status["CapBnd"].strip(),
                          "no_new_privs": status["NoNewPrivs"].strip(), "write_usr": write,
                          "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}))
    """, sandbox_settings)
    assert outcome["cap_eff"] == "0000000000000000" == outcome["cap_bnd"]
    assert outcome["no_new_privs"] == "1"
    assert outcome["write_usr"] in ("OSError", "PermissionError")
    assert len(outcome["pids"]) <= 3  # a private PID namespace: bwrap's init and us
    if os.geteuid() == 0:
        import pwd
        assert outcome["uid"] == pwd.getpwnam(sandbox_settings.sandbox_user).pw_uid


def test_killed_at_cpu_limit(sandbox_settings):
    proc = probe("while True: pass", sandbox_settings,
                 limits=SandboxLimits(cpu_seconds=1), timeout=30)
    assert proc.returncode in (128 + 24, -24, 128 + 9, -9)  # SIGXCPU, then SIGKILL


def test_memory_limit(sandbox_settings):
    proc = probe("x = bytearray(1024 * 1024 * 1024)", sandbox_settings,
                 limits=SandboxLimits(memory_bytes=256 * MB), timeout=30)
    assert proc.returncode != 0 and b"MemoryError" in proc.stderr


def test_file_size_limit(sandbox_settings):
    outcome = run_json("""
        import json
        try:
            with open("/tmp/big", "wb") as fh:
                fh.write(b"x" * (8 * 1024 * 1024))
            result = "written"
        except OSError as exc:
            result = exc.errno
        print(json.dumps({"result": result}))
    """, sandbox_settings, limits=SandboxLimits(file_size_bytes=1 * MB))
    assert outcome["result"] == 27  # EFBIG


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds only after the root drop")
def test_process_limit(sandbox_settings):
    # The job's own allowance, whatever else the sandbox uid runs (see test_budgets.py for a
    # crowd of unrelated tasks of that uid).
    outcome = run_json(FORK_UP_TO_200, sandbox_settings,
                       limits=SandboxLimits(processes=30))
    # exact with a pids cgroup; without one the allowance sits on the uid's tasks at start
    upper = 30 if bwrap._cgroup_host(sandbox_settings).available else 60
    assert outcome["error"] == "BlockingIOError" and 20 <= outcome["forked"] < upper


def test_seccomp_denies_inet_sockets_and_kernel_interfaces(sandbox_settings):
    outcome = run_json("""
        import ctypes, json, os, socket
        def attempt(fn):
            try:
                fn()
                return "allowed"
            except OSError as exc:
                return exc.errno
        libc = ctypes.CDLL(None, use_errno=True)
        def syscall(number, *args):
            if libc.syscall(number, *args) == -1:
                raise OSError(ctypes.get_errno(), "denied")
        print(json.dumps({
            "inet": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
            "inet6": attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)),
            "unix": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
            "unshare_user": attempt(lambda: syscall(272, 0x10000000)),
            "ptrace": attempt(lambda: syscall(101, 16, os.getppid(), 0, 0)),
            "bpf": attempt(lambda: syscall(321, 0, 0, 0)),
        }))
    """, sandbox_settings)
    assert outcome["inet"] == outcome["inet6"] == 13  # EACCES
    assert outcome["unix"] == "allowed"
    assert outcome["unshare_user"] == 1 and outcome["ptrace"] == 1 and outcome["bpf"] == 1
