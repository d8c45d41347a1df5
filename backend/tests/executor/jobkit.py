"""Helpers for executor tests: sample files, seeded file+job rows, real server processes."""

from __future__ import annotations

import io
import os
import random
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import httpx
from PIL import Image

from sanitas.db import utcnow
from sanitas.models import File, Job
from sanitas.storage import make_storage, original_key

BIN = Path(sys.executable).parent


def pdf_bytes(pages: int = 1, side: tuple[int, int] = (200, 260), seed: int = 5) -> bytes:
    rng = random.Random(seed)
    images = [Image.frombytes("RGB", side, rng.randbytes(side[0] * side[1] * 3))
              for _ in range(pages)]
    buf = io.BytesIO()
    images[0].save(buf, "PDF", save_all=True, append_images=images[1:], quality=70)
    return buf.getvalue()


def seed_job(session, settings, user, content: bytes, *, name="doc.pdf", mode="basic",
             kind="pdf", priority=0) -> tuple[File, Job]:
    """A file and waiting job as an upload leaves them."""
    storage = make_storage(settings)
    now = utcnow()
    file = File(user_id=user.id, original_name=name, original_size=len(content),
                detected_type=kind, mode=mode, status="PENDING", created_at=now,
                expires_at=now + timedelta(hours=24))
    session.add(file)
    session.flush()
    file.original_key = original_key(file.id)
    tmp = settings.data_dir / f"seed-{file.id}"
    tmp.write_bytes(content)
    storage.put_file(file.original_key, tmp, move=True)
    job = Job(file_id=file.id, state="waiting", priority=priority, created_at=now)
    session.add(job)
    session.commit()
    return file, job


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def kill_hard(proc: subprocess.Popen) -> None:
    """SIGKILL the process and everything it started (a crash, not a shutdown)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


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
