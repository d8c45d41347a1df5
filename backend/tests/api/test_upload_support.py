"""Helpers shared by the upload, process, files, usage, queue and authorisation tests: sample
files made on the fly, an app without background executor, and rows in given states."""

from __future__ import annotations

import io
import random
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
import uvicorn
from fastapi.testclient import TestClient
from PIL import Image

from sanitas.db import utcnow
from sanitas.main import create_app
from sanitas.models import File, Job
from sanitas.storage import make_storage, original_key, sanitized_key


def pdf_bytes(target_size: int = 20_000, seed: int = 1) -> bytes:
    """A real PDF (one page with a noisy image) of roughly `target_size` bytes."""
    rng = random.Random(seed)
    side = max(16, int((target_size / 3) ** 0.5))
    img = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "PDF", resolution=72.0, quality=95)
    return buf.getvalue()


def png_bytes(side: int = 32, seed: int = 2) -> bytes:
    rng = random.Random(seed)
    img = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


TEXT = b"Quarterly numbers\nRevenue: 10\nCosts: 7\n"
EXE = b"MZ\x90\x00" + b"\x00" * 200 + b"This program cannot be run in DOS mode.\r\n"


@contextmanager
def app_server(settings, **config) -> Iterator[int]:
    """The app without background executor, served by uvicorn on a free loopback port in a
    thread of this process (uvicorn's `Config` options may be given); yields the port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings, start_background=False),
                                           host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on", **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the test server did not start"
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def api(settings):
    """The app without the background executor: uploads stay PENDING."""
    with TestClient(create_app(settings, start_background=False)) as c:
        yield c


@pytest.fixture
def storage(settings):
    return make_storage(settings)


def add_file(session, settings, user, *, status="PENDING", name="report.pdf", size=None,
             content=b"%PDF-1.4 original", sanitized=b"%PDF-1.4 sanitized", expired=False,
             created_at=None, job_state=None, mode="basic") -> File:
    """A file row (and its blobs) in a given state, as the executor would leave it."""
    storage = make_storage(settings)
    now = created_at or utcnow()
    file = File(user_id=user.id, original_name=name, original_size=size or len(content),
                detected_type="pdf", mode=mode, status=status, created_at=now,
                expires_at=(now - timedelta(minutes=1)) if expired else now + timedelta(hours=24),
                is_expired=False)
    session.add(file)
    session.flush()
    if not expired:
        file.original_key = original_key(file.id)
        tmp = settings.data_dir / f"seed-{file.id}"
        tmp.write_bytes(content)
        storage.put_file(file.original_key, tmp, move=True)
    if status == "COMPLETED" and not expired:
        file.sanitized_key = sanitized_key(file.id)
        tmp = settings.data_dir / f"seed-s-{file.id}"
        tmp.write_bytes(sanitized)
        storage.put_file(file.sanitized_key, tmp, move=True)
        file.sanitized_name = "sanitized_" + name
        file.sanitized_size = len(sanitized)
        file.processing_started_at = now
        file.processing_completed_at = now + timedelta(seconds=2)
        file.processing_duration = 2.0
        file.compression_ratio = round(len(sanitized) / file.original_size, 4)
        file.report = {"findings": [{"kind": "javascript", "location": "page 1",
                                     "action": "removed", "detail": ""}]}
    state = job_state or {"PENDING": "waiting", "PROCESSING": "active",
                          "COMPLETED": "completed", "FAILED": "failed"}[status]
    session.add(Job(file_id=file.id, state=state, progress=100 if state == "completed" else 0,
                    created_at=now))
    session.commit()
    return file
