"""Helpers for executor tests: batches of sample files, real server processes, and what a
crash leaves behind (rows, files and jobs themselves come from tests.factories)."""

from __future__ import annotations

import contextlib
import io
import os
import pwd
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
from PIL import Image
from sqlalchemy import select

from sanitas.datadir import scratch
from sanitas.models import File, Job
from sanitas.storage import make_storage, original_key, preview_key, sanitized_key
from tests.factories import pdf_bytes

BIN = Path(sys.executable).parent


def slow_pdf(seed: int = 5) -> bytes:
    """A PDF whose advanced-mode job runs for a few seconds (40 pages rebuilt as images), long
    enough to be killed mid-flight."""
    return pdf_bytes(pages=40, side=(300, 400), seed=seed, quality=70)


def small_files(count: int, seed: int = 0) -> list[tuple[str, bytes]]:
    """Quick files of mixed kinds, all of which sanitize: a PDF, PNG and JPEG images, text."""
    out = []
    for i in range(seed, seed + count):
        kind = i % 4
        if kind == 0:
            out.append((f"small{i}.pdf", pdf_bytes(side=(200, 260), seed=i, quality=70)))
        elif kind == 3:
            out.append((f"notes{i}.txt", f"plain text file {i}\n".encode() * 20))
        else:
            rng = random.Random(i)
            buf = io.BytesIO()
            Image.frombytes("RGB", (64, 48), rng.randbytes(64 * 48 * 3)).save(
                buf, "PNG" if kind == 1 else "JPEG")
            out.append((f"image{i}.{'png' if kind == 1 else 'jpg'}", buf.getvalue()))
    return out


def multipart(files: list[tuple[str, bytes]]) -> list[tuple[str, tuple[str, bytes]]]:
    """`files=` for /api/upload/multiple (httpx and the TestClient)."""
    return [("files", item) for item in files]


def server_env(settings, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANITAS_")}
    env.update({
        "SANITAS_DATA_DIR": str(settings.data_dir),
        "SANITAS_DATABASE_URL": str(settings.database_url),
        "SANITAS_SECRET_KEY": settings.secret_key,
        "SANITAS_LOG_LEVEL": "WARNING",
    })
    env.update({k: str(v) for k, v in extra.items()})
    return env


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    fh = open(log, "ab")  # noqa: SIM115 (kept open for the child)
    return subprocess.Popen([str(BIN / "sanitas"), *args], env=env, stdout=fh,
                            stderr=subprocess.STDOUT, start_new_session=True)


def process_tree(pid: int) -> list[psutil.Process]:
    """The process and all its descendants as they are now (record it before a kill_hard:
    the sandboxes a server starts run in sessions of their own, out of the kill's reach, and
    must die with their parent; see survivors)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def sandbox_uid(settings) -> int:
    """The uid sandboxes run as (the sandbox user when the service runs as root)."""
    return pwd.getpwnam(settings.sandbox_user).pw_uid if os.geteuid() == 0 else os.geteuid()


def of_uid(processes: list[psutil.Process], uid: int) -> list[psutil.Process]:
    """Those of `processes` running as `uid` (ask before they are killed)."""
    out = []
    for p in processes:
        try:
            if p.uids().real == uid:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def kill_hard(proc: subprocess.Popen) -> None:
    """SIGKILL the process and everything in its process group (a crash, not a shutdown)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def survivors(processes: list[psutil.Process], timeout: float = 10) -> list[str]:
    """Those of `processes` (recorded before a kill) still running after `timeout` seconds,
    described. psutil compares start times, so a reused pid is not mistaken for one of them."""
    def alive():
        out = []
        for p in processes:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(p)
            except psutil.NoSuchProcess:
                pass
        return out

    deadline = time.monotonic() + timeout
    while (left := alive()) and time.monotonic() < deadline:
        time.sleep(0.1)
    described = []
    for p in left:
        with contextlib.suppress(psutil.NoSuchProcess):
            described.append(f"{p.pid} uid={p.uids().real} {' '.join(p.cmdline()[:4])}")
    return described


def stalled_upload(url: str, headers: dict[str, str], tmp_dir: Path
                   ) -> tuple[threading.Event, threading.Thread]:
    """An upload whose body stops half-way (a client still sending when the server dies):
    returns once the server holds its part in `tmp_dir`. Set the event to let the client go
    (its request then fails)."""
    before = set(tmp_dir.iterdir()) if tmp_dir.exists() else set()
    release = threading.Event()
    boundary = "stalledboundary1234"

    def body():
        yield (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; "
               f"filename=\"stalled.pdf\"\r\nContent-Type: application/pdf\r\n\r\n").encode()
        yield pdf_bytes(seed=99)[:4096]
        release.wait(120)

    def send():
        with contextlib.suppress(httpx.HTTPError):  # the server died under it
            httpx.post(url, headers={**headers, "Content-Type":
                                     f"multipart/form-data; boundary={boundary}"},
                       content=body(), timeout=120)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    wait_until(lambda: tmp_dir.exists() and set(tmp_dir.iterdir()) - before, 30,
               "the stalled upload to reach the server")
    return release, thread


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            kill_hard(proc)


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not come up")


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


# -- after a crash: the batch's state, scratch and blobs ----------------------------------------
def job_states(session, file_ids: list[str]) -> dict[str, Job]:
    """Each file's job, fresh from the database (exactly one job per file)."""
    session.expire_all()
    jobs = session.scalars(select(Job).where(Job.file_id.in_(file_ids))).all()
    assert sorted(j.file_id for j in jobs) == sorted(file_ids), "one job per file"
    return {j.file_id: j for j in jobs}


def wait_files_done(session, file_ids: list[str], timeout: float) -> None:
    def done():
        session.expire_all()
        statuses = session.scalars(select(File.status).where(File.id.in_(file_ids))).all()
        return len(statuses) == len(file_ids) and \
            all(s in ("COMPLETED", "FAILED") for s in statuses)

    wait_until(done, timeout, "every file of the batch to finish", 0.3)


def scratch_entries(settings) -> list[Path]:
    """What is in $DATA_DIR/tmp/jobs and tmp/uploads."""
    return sorted(p for base in (scratch.jobs_dir(settings), scratch.uploads_dir(settings))
                  if base.exists() for p in base.iterdir())


def past_grace(paths: list[Path]) -> None:
    """Date entries a crash left back past the sweep's grace period (which spares an entry in
    the moment between its creation and its lock)."""
    old = time.time() - scratch.GRACE_SECONDS - 3600
    for path in paths:
        os.utime(path, (old, old))


def stored_blobs(settings) -> list[str]:
    """Every file in the local storage, half-written ones (.put-*) included."""
    root = settings.files_dir
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def logged_retries(log: Path | None, job_id: str) -> list[str]:
    """The server log's lines saying this job met an infrastructure fault and was put back
    to wait (the executor's one legitimate reason to run a job once more, e.g. a sandbox
    that could not start on an overloaded machine)."""
    if log is None or not log.exists():
        return []
    needle = f"job {job_id}: infrastructure fault"
    return [line for line in log.read_text("utf-8", "replace").splitlines() if needle in line]


def assert_batch_recovered(session, settings, attempts_at_crash: dict[str, int],
                           killed: set[str], log: Path | None = None) -> None:
    """After a crash and its recovery: every file COMPLETED; a job killed mid-run ran once
    more, a waiting one once, any other not again; exactly one original and one sanitized
    blob per file and nothing else in storage; the scratch folders empty.
    `attempts_at_crash` maps each file to its job's attempts just after the crash, `killed`
    holds the files whose job the crash interrupted. With the server's `log`, a retry it
    logged (an infrastructure fault, not the crash) counts as the one extra run it is; any
    other extra run fails, with the log's lines about the job in the message."""
    file_ids = list(attempts_at_crash)
    jobs = job_states(session, file_ids)
    files = {f.id: f for f in session.scalars(select(File))}
    assert sorted(files) == sorted(file_ids), "a file row nobody uploaded (or one missing)"
    for file_id, attempts in attempts_at_crash.items():
        file, job = files[file_id], jobs[file_id]
        assert file.status == "COMPLETED", (file.original_name, file.error_message)
        assert job.state == "completed" and job.progress == 100, (file.original_name, job.state)
        retries = logged_retries(log, job.id)
        expected = max(attempts, 1) + (file_id in killed) + len(retries)
        about = ([line for line in log.read_text("utf-8", "replace").splitlines()
                  if job.id in line][-20:] if log is not None and log.exists() else [])
        assert job.attempts == expected, (file.original_name, attempts, job.attempts, about)
        assert (file.original_key, file.sanitized_key) == (original_key(file_id),
                                                           sanitized_key(file_id))
    expected_blobs = sorted(k for f in file_ids for k in (original_key(f), sanitized_key(f)))
    # the job also stores a preview of each PDF or picture it produced (at most one a file)
    previews = {preview_key(f) for f in file_ids}
    stored = stored_blobs(settings)
    assert [k for k in stored if k not in previews] == expected_blobs, stored
    storage = make_storage(settings)
    for file_id in file_ids:  # the blob is the one the row describes, not a killed run's
        assert storage.size(sanitized_key(file_id)) == files[file_id].sanitized_size
    # A job's folder goes just after its row is written: wait for the last one.
    try:
        wait_until(lambda: not scratch_entries(settings), 15, "the scratch folders to empty")
    except AssertionError:
        raise AssertionError(f"scratch left behind: {scratch_entries(settings)}") from None
