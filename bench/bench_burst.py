"""Burst benchmark: one signed-in user fires bursts of concurrent calls at a real `sanitas serve`
(SQLite, embedded executor) while another user keeps asking for their profile.

Figures (targets on a 2-core machine):
  1. every call of every burst answered (200, or 429 from the per-user limit), none lost
  2. p99 latency of the burst's answers                                   (<= 250 ms)
  3. the other user's answers during the bursts: worst latency            (<= 1 s)
  4. /health answered after the bursts

Usage: backend/.venv/bin/python bench/bench_burst.py [--bursts 3] [--size 200]
       [--path /api/auth/profile] [--api-workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "backend"))  # the test helpers are the package `tests`
from bench_service import pct  # noqa: E402
from tests.live_server import burst, free_port, make_users, start_server, stop_server  # noqa: E402


def server_cpu(pid: int) -> float:
    """CPU seconds of the server and its children (API worker processes, executor)."""
    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


async def bystander(base: str, headers: dict[str, str], stop: asyncio.Event,
                    latencies: list[float], failures: list[str]) -> None:
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                answer = await client.get("/api/auth/profile")
                if answer.status_code != 200:
                    failures.append(str(answer.status_code))
            except httpx.HTTPError as exc:
                failures.append(type(exc).__name__)
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.05)


async def run(base: str, port: int, server_pid: int, attacker: dict[str, str], other: dict[str, str], bursts: int,
              size: int, path: str) -> dict:
    stop = asyncio.Event()
    other_latencies: list[float] = []
    other_failures: list[str] = []
    watcher = asyncio.create_task(bystander(base, other, stop, other_latencies, other_failures))
    codes: Counter = Counter()
    latencies: list[float] = []
    cpu: list[float] = []
    by_code: dict[str, list[float]] = {}
    for _ in range(bursts):
        before = server_cpu(server_pid)
        got, times = await burst(port, attacker, size, path, timeout=20, by_code=by_code)
        cpu.append(server_cpu(server_pid) - before)
        codes.update(got)
        latencies += times
        await asyncio.sleep(1.0)
    stop.set()
    await watcher
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        started = time.perf_counter()
        try:
            health = str((await client.get("/health")).status_code)
        except httpx.HTTPError as exc:
            health = type(exc).__name__
        health_s = time.perf_counter() - started
    return {"cpu": cpu, "by_code": by_code, "codes": codes, "latencies": latencies, "other": other_latencies,
            "other_failures": other_failures, "health": health, "health_s": health_s}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--path", default="/api/auth/profile")
    parser.add_argument("--api-workers", type=int, default=2,
                        help="API processes (`serve --workers`; the executor runs once)")
    parser.add_argument("--user-concurrency", type=int, default=None,
                        help="SANITAS_USER_CONCURRENCY (default: the server's)")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="sanitas-bench-burst-"))
    port = free_port()
    proc = None
    try:
        env = {"SANITAS_API_WORKERS": str(args.api_workers)}
        if args.user_concurrency is not None:
            env["SANITAS_USER_CONCURRENCY"] = str(args.user_concurrency)
        proc = start_server(data_dir, port, extra_env=env)
        attacker, other = make_users(data_dir, 2)
        figures = asyncio.run(run(f"http://127.0.0.1:{port}", port, proc.pid, attacker, other, args.bursts,
                                  args.size, args.path))
        lat = figures["latencies"]
        print(f"bursts: {args.bursts} x {args.size} concurrent GET {args.path}, "
              f"{args.api_workers} API process(es)")
        print(f"  answers: {dict(figures['codes'])}")
        print(f"  latency p50 {pct(lat, 50) * 1000:.0f} ms, p99 {pct(lat, 99) * 1000:.0f} ms, "
              f"max {max(lat) * 1000:.0f} ms   (target p99 <= 250 ms)")
        for code, seconds in sorted(figures["by_code"].items()):
            print(f"    {code}: p50 {pct(seconds, 50) * 1000:.0f} ms, "
                  f"p99 {pct(seconds, 99) * 1000:.0f} ms")
        other_lat = figures["other"]
        print(f"  other user: {len(other_lat)} calls, worst {max(other_lat) * 1000:.0f} ms, "
              f"p99 {pct(other_lat, 99) * 1000:.0f} ms, failures {figures['other_failures']}"
              "   (target worst <= 1000 ms)")
        print(f"  server CPU per burst: {', '.join(f'{c * 1000:.0f} ms' for c in figures['cpu'])}")
        print(f"  /health after: {figures['health']} in {figures['health_s'] * 1000:.0f} ms")
    finally:
        if proc is not None:
            stop_server(proc)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
