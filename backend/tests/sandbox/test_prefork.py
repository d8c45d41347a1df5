"""Pre-forked sandboxes (issue 30): consecutive jobs forked from one warm template share
nothing. Job A writes everywhere it can, binds an abstract socket, makes a System V shared
memory segment and a message queue, and leaves processes running behind it; job B, forked from
the same template right after, looks for every one of them. Plus: what the template itself
may do that a job may not, and that a job never sees the template."""

from __future__ import annotations

import json
import os
import pwd
import time

import pytest

from sanitas.sandbox import bwrap, forked, run_sanitizer
from tests.sandbox.probes import run_json

MARK = "sanitas-job-a-was-here"
SHM_KEY = 0x5A17A5
QUEUE_KEY = 0x5A17A6

JOB_A = f"""
    import ctypes, json, os, socket, subprocess, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    written = []
    for folder in ("/tmp", "/home/sandbox", "/dev/shm", "/tmp/job", "/var/tmp", "/run", "/usr"):
        try:
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, {MARK!r}), "w") as fh:
                fh.write("A")
            written.append(folder)
        except OSError:
            pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\\0{MARK}")
    listener.listen()
    shm = libc.shmget({SHM_KEY}, 4096, 0o1666)  # IPC_CREAT | 0666
    queue = libc.msgget({QUEUE_KEY}, 0o1666)
    # processes left behind: one that holds the socket, one detached in its own session
    holder = os.fork()
    if holder == 0:
        time.sleep(60)
        os._exit(0)
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                     start_new_session=True)
    os.environ["SANITAS_JOB_A"] = "1"
    print(json.dumps({{"written": written, "shm": shm, "queue": queue,
                      "pid": os.getpid(), "hostname": socket.gethostname()}}))
"""

JOB_B = f"""
    import ctypes, errno, json, os, socket
    libc = ctypes.CDLL(None, use_errno=True)
    found = [folder for folder in ("/tmp", "/home/sandbox", "/dev/shm", "/tmp/job", "/var/tmp",
                                   "/run", "/usr")
             if os.path.exists(os.path.join(folder, {MARK!r}))]
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect("\\0{MARK}")
        abstract = "connected"
    except OSError as exc:
        abstract = exc.errno
    shm = libc.shmget({SHM_KEY}, 0, 0)
    shm_errno = ctypes.get_errno()
    queue = libc.msgget({QUEUE_KEY}, 0)
    queue_errno = ctypes.get_errno()
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    commands = {{p: open(f"/proc/{{p}}/cmdline", "rb").read().split(b"\\0")[:3]
                for p in pids if p != os.getpid()}}
    print(json.dumps({{"found": found, "abstract": abstract,
                      "shm": [shm, shm_errno], "queue": [queue, queue_errno],
                      "pid": os.getpid(), "pids": pids,
                      "others": {{str(p): [part.decode() for part in c]
                                 for p, c in commands.items()}},
                      "env": "SANITAS_JOB_A" in os.environ,
                      "tmp": sorted(os.listdir("/tmp")), "home": os.listdir("/home/sandbox"),
                      "shm_dir": os.listdir("/dev/shm"),
                      "cgroup": open("/proc/self/cgroup").read().split()}}))
"""


def _sandbox_processes(uid: int) -> set[int]:
    found = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture
def template(sandbox_settings):
    bwrap.shutdown_spares()  # this test's own template, and no spares beside it
    layout = bwrap._layout(sandbox_settings, False)
    started = forked.template_for(layout, bwrap._cgroup_host(sandbox_settings))
    if started is None:
        pytest.fail("the sandbox template does not start on this machine")
    yield started
    bwrap.shutdown_spares()


def test_job_b_finds_no_trace_of_job_a(sandbox_settings, template):
    uid = bwrap._sandbox_uid(bwrap._layout(sandbox_settings, False))
    before = _sandbox_processes(uid)
    forks = template.forks
    a = run_json(JOB_A, sandbox_settings)
    assert set(a["written"]) >= {"/tmp", "/home/sandbox", "/dev/shm", "/tmp/job"}
    assert "/usr" not in a["written"]
    assert a["shm"] >= 0 and a["queue"] >= 0  # it did make them, in its own IPC namespace
    assert a["pid"] == 2 and a["hostname"] == "sandbox"
    # Every process A left behind died with its job (the PID namespace's init exits).
    deadline = time.monotonic() + 5
    while _sandbox_processes(uid) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sandbox_processes(uid) - before == set()

    b = run_json(JOB_B, sandbox_settings)
    assert template.forks == forks + 2 and template.alive()  # one template, two jobs
    assert b["found"] == []
    assert b["abstract"] == 111  # ECONNREFUSED: no such socket in B's network namespace
    assert b["shm"] == [-1, 2] and b["queue"] == [-1, 2]  # ENOENT in B's IPC namespace
    assert b["pid"] == 2 and b["pids"] == [1, 2]  # its init and itself, nothing of A's
    assert b["others"]["1"][0].endswith("python3") or "python" in b["others"]["1"][0]
    assert b["env"] is False
    assert b["home"] == [] and b["shm_dir"] == []
    code_under_tmp = {p.split("/")[2] for p in bwrap._layout(sandbox_settings, False).binds
                      if p.startswith("/tmp/")}
    assert set(b["tmp"]) == code_under_tmp
    assert b["cgroup"] and all(line.endswith(":/") for line in b["cgroup"])  # its own cgroup ns


def test_the_template_is_invisible_and_out_of_reach(sandbox_settings, template):
    """A job cannot name the template (another PID namespace), cannot do what the template
    may (namespaces, mounts), and has no capability left in its user namespace."""
    outcome = run_json(f"""
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        def call(number, *args):
            result = libc.syscall(number, *args)
            return "allowed" if result == 0 else ctypes.get_errno()
        status = dict(line.split(":", 1) for line in open("/proc/self/status"))
        print(json.dumps({{
            "unshare_user": call(272, 0x10000000),
            "unshare_mount": call(272, 0x00020000),
            "mount": call(165, b"tmpfs", b"/tmp", b"tmpfs", 0, 0),
            "kill_template": call(62, {template.pid}, 0),
            "template_proc": os.path.exists("/proc/{template.pid}"),
            "cap_eff": status["CapEff"].strip(), "cap_prm": status["CapPrm"].strip(),
            "cap_bnd": status["CapBnd"].strip(), "cap_amb": status["CapAmb"].strip(),
            "no_new_privs": status["NoNewPrivs"].strip(),
            "seccomp": status["Seccomp"].strip(),
            "filters": status.get("Seccomp_filters", "").strip(),
            "uid": os.getuid(),
        }}))
    """, sandbox_settings)
    assert outcome["unshare_user"] == outcome["unshare_mount"] == outcome["mount"] == 1  # EPERM
    assert outcome["kill_template"] == 3  # ESRCH: no such process from where the job stands
    assert outcome["template_proc"] is False
    assert {outcome[k] for k in ("cap_eff", "cap_prm", "cap_bnd", "cap_amb")} == \
        {"0000000000000000"}
    assert outcome["no_new_privs"] == "1" and outcome["seccomp"] == "2"
    if outcome["filters"]:
        assert int(outcome["filters"]) >= 2  # the template's and the job's full one
    if os.geteuid() == 0:
        assert outcome["uid"] == pwd.getpwnam(sandbox_settings.sandbox_user).pw_uid


def test_a_job_killed_mid_way_takes_its_whole_tree(sandbox_settings, template, tmp_path):
    """The wall-clock limit stops a forked job and every process it started; the template
    lives on and serves the next job."""
    uid = bwrap._sandbox_uid(bwrap._layout(sandbox_settings, False))
    before = _sandbox_processes(uid)
    from tests.engine.corpus import clean_pdf, save_pdf

    source = save_pdf(clean_pdf(pages=400), tmp_path / "long.pdf")
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=sandbox_settings,
                           limits=bwrap.SandboxLimits(wall_seconds=0.5))
    assert result.status == "rejected" and "longer than" in result.reason
    deadline = time.monotonic() + 5
    while _sandbox_processes(uid) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sandbox_processes(uid) - before == set()
    assert template.alive()
    text = tmp_path / "notes.txt"
    text.write_text("after the killed job\n")
    forks = template.forks
    after = run_sanitizer(text, tmp_path / "out2", mode="basic", settings=sandbox_settings)
    assert after.status == "ok" and template.forks == forks + 1


def test_a_template_that_dies_is_replaced(sandbox_settings, template, tmp_path):
    template.kill()
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    result = run_sanitizer(text, tmp_path / "out", mode="basic", settings=sandbox_settings)
    assert result.status == "ok"
    layout = bwrap._layout(sandbox_settings, False)
    replacement = forked.template_for(layout, bwrap._cgroup_host(sandbox_settings))
    assert replacement is not None and replacement is not template and replacement.forks == 1


def test_setup_failure_is_an_error_not_an_unisolated_job(sandbox_settings, template, tmp_path):
    """A job whose namespaces cannot be made (here: no tmpfs sizes) never runs."""
    layout = bwrap._layout(sandbox_settings, False)
    limits = bwrap.SandboxLimits().resolved(0, bwrap.Mode.BASIC, False)
    job = forked.ForkedSandbox(template, limits, bwrap._cgroup_host(sandbox_settings))
    try:
        import socket

        message = {"probe": "print('ran')", "limits": {}, "setup": {"tmpfs": {}}}
        socket.send_fds(job.sock, [json.dumps(message).encode() + b"\n"], [])
        assert job.proc.wait(10) == 125
        assert job.proc.stdout.read() == b""
        assert b"sandbox setup failed" in job.proc.stderr.read()
    finally:
        job.kill()
    assert layout == job.layout


def _office_template(settings):
    layout = bwrap._template_layout(bwrap._layout(settings, True))
    return forked.template_for(layout, bwrap._cgroup_host(settings))


def test_modern_office_files_in_basic_mode_fork_from_the_office_template(
        sandbox_settings, template, tmp_path):
    """A .docx in basic mode cleans its package without LibreOffice: it forks from the office
    template (fonts and LibreOffice's configuration visible, no LibreOffice idle); in
    advanced mode LibreOffice renders it, so it takes a spare with LibreOffice idle."""
    from tests.engine.corpus_office import clean_docx

    source = tmp_path / "letter.docx"
    source.write_bytes(clean_docx())
    office = _office_template(sandbox_settings)
    assert office is not None and office is not template
    forks = office.forks
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings)
    assert result.status == "ok", result.reason
    assert office.forks == forks + 1
    advanced = run_sanitizer(source, tmp_path / "adv", mode="advanced", settings=sandbox_settings,
                             prewarm=False)
    assert advanced.status == "ok" and advanced.output_type == "pdf", advanced.reason
    assert office.forks == forks + 1


def test_a_forked_job_that_needs_libreoffice_after_all_starts_its_own(
        sandbox_settings, template, tmp_path, monkeypatch):
    """The sniff's guess only picks the warm sandbox: a legacy .doc sent to the office
    template (the guess made wrong here) converts with a LibreOffice of its own, inside the
    job's namespaces."""
    from sanitas.engine import formats
    from tests.engine.samples import all_samples

    samples = all_samples(tmp_path / "samples")
    monkeypatch.setattr(formats, "libreoffice_expected", lambda kind, mode: False)
    office = _office_template(sandbox_settings)
    assert office is not None
    forks = office.forks
    result = run_sanitizer(samples["doc"], tmp_path / "out", mode="basic",
                           settings=sandbox_settings, original_name="old.doc")
    assert result.status == "ok", result.reason
    assert result.output_type == "docx" and office.forks == forks + 1
