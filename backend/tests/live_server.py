"""Servers for tests that talk HTTP to a real server: `sanitas serve` as a subprocess on a
temporary data dir (start_server, stop_server, make_users), the app in a uvicorn thread of
this process (app_server), and bursts of raw concurrent GETs (burst).

The benchmarks (bench/) and scripts/fuzz_api.py use them too, with backend/ on their path."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.main import create_app
from tests.factories import auth_headers, make_user

BIN = Path(sys.executable).parent
SECRET = "bench-secret-key-that-is-long-enough-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- `sanitas serve` as a subprocess -------------------------------------------------------------
def start_server(data_dir: Path, port: int, extra_env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> subprocess.Popen:
    """`sanitas serve [args]` on `data_dir` (its own SQLite database unless `extra_env` names
    one), signing tokens with SECRET; returns once /health answers on `port`."""
    # Only executor tuning passes through (e.g. SANITAS_EXECUTOR_WORKERS, _NICE).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SANITAS_") or k.startswith("SANITAS_EXECUTOR_")}
    env.update(SANITAS_DATA_DIR=str(data_dir), SANITAS_SECRET_KEY=SECRET,
               SANITAS_PORT=str(port), SANITAS_LOG_LEVEL="WARNING",
               SANITAS_ACCESS_TOKEN_TTL_SECONDS="7200")
    env.update(extra_env or {})
    log = open(data_dir / "serve.log", "ab")  # noqa: SIM115 (kept open for the child)
    proc = subprocess.Popen([str(BIN / "sanitas"), "serve", *args], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"server exited; see {data_dir / 'serve.log'}")
        time.sleep(0.2)
    raise RuntimeError("server did not start")


def stop_server(proc: subprocess.Popen) -> None:
    """Stop a server `start_server` started: SIGTERM to its process group, SIGKILL after 30 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def make_users(data_dir: Path, n: int, role: str = "ENTERPRISE",
               database_url: str | None = None) -> list[dict[str, str]]:
    """`n` users in the database of a server `start_server` runs on `data_dir` (or on
    `database_url`), and the Authorization header of a live session of each."""
    settings = Settings(data_dir=data_dir, secret_key=SECRET,
                        **({"database_url": database_url} if database_url else {}))
    engine = make_engine(str(settings.database_url))
    try:
        with make_sessionmaker(engine)() as session:
            return [auth_headers(settings, session, make_user(session, role=role))
                    for _ in range(n)]
    finally:
        engine.dispose()


# -- the app in a thread of this process ---------------------------------------------------------
@contextmanager
def app_server(settings, **config) -> Iterator[int]:
    """The app without background executor, served by uvicorn on a free loopback port in a
    thread of this process (uvicorn's `Config` options may be given); yields the port."""
    port = free_port()
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


# -- bursts --------------------------------------------------------------------------------------
async def raw_get(port: int, path: str, headers: dict[str, str],
                  timeout: float) -> tuple[str, float]:
    """One GET on its own connection with asyncio streams (a light client, so that timings
    measure the server): the status code, or the exception's name, and the seconds taken."""
    started = time.perf_counter()
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port),
                                                timeout)
        writer.write(request)
        status = await asyncio.wait_for(reader.readline(), timeout)
        await asyncio.wait_for(reader.read(), timeout)
        writer.close()
        code = status.split()[1].decode() if len(status.split()) > 1 else "bad answer"
    except (TimeoutError, OSError) as exc:
        code = type(exc).__name__
    return code, time.perf_counter() - started


async def burst(port: int, headers: dict[str, str], size: int, path: str, timeout: float,
                by_code: dict[str, list[float]] | None = None) -> tuple[Counter, list[float]]:
    """`size` simultaneous GETs of `path`: how many got each status, and each one's time (also
    added to `by_code`, per status, when given)."""
    results = await asyncio.gather(*(raw_get(port, path, headers, timeout)
                                     for _ in range(size)))
    if by_code is not None:
        for code, seconds in results:
            by_code.setdefault(code, []).append(seconds)
    return Counter(code for code, _ in results), [t for _, t in results]
