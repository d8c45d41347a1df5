"""`sanitas serve --workers N`: several API processes share the port, the local executor runs
once in the supervising process, and an upload to any API process wakes it at once."""

from __future__ import annotations

import time

import httpx
import psutil

from sanitas.storage import make_storage
from tests.executor.jobkit import server_env, start, stop, wait_http, wait_until
from tests.factories import auth_headers, make_user, pdf_bytes
from tests.live_server import free_port


def _api_processes(pid: int) -> list[psutil.Process]:
    """uvicorn's worker processes (multiprocessing spawn children of the supervisor)."""
    found = []
    for child in psutil.Process(pid).children():
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:  # a sandbox that just ended
            pass
    return found


def test_several_api_processes_and_one_executor(settings, db_session, tmp_path):
    user = make_user(db_session, role="USER")
    headers = auth_headers(settings, db_session, user)
    port = free_port()
    # A scan every minute: only the wake-up sent through the socket can start jobs promptly.
    env = server_env(settings, SANITAS_PORT=port, SANITAS_API_WORKERS=2,
                     SANITAS_EXECUTOR_WORKERS=1, SANITAS_EXECUTOR_POLL_INTERVAL_SECONDS=60)
    base = f"http://127.0.0.1:{port}"
    server = start(["serve"], env, tmp_path / "serve.log")
    try:
        wait_http(f"{base}/health")
        assert len(_api_processes(server.pid)) == 2
        health = httpx.get(f"{base}/health").json()["data"]
        assert health["executor"] == "up"
        wait_until(lambda: make_storage(settings).healthy(), 5, "storage")
        started = time.monotonic()
        ids = []
        for i in range(4):  # several connections: both API processes take uploads
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                answer = client.post("/api/upload/single",
                                     files={"file": (f"r{i}.pdf", pdf_bytes(pages=1))})
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["data"]["fileId"])

        def all_done():
            states = [httpx.get(f"{base}/api/process/status/{i}", headers=headers)
                      .json()["data"]["file"]["status"] for i in ids]
            return states if all(s in ("COMPLETED", "FAILED") for s in states) else None

        states = wait_until(all_done, 50, "the uploads to be processed", 0.2)
        assert states == ["COMPLETED"] * 4
        assert time.monotonic() - started < 50  # well before the one-minute scan
    finally:
        stop(server)
    assert not (settings.data_dir / "run" / "executor.sock").exists()
