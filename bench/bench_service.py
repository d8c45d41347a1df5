"""End-to-end service benchmark: a real `sanitas serve` (embedded executor, SQLite, local
storage) on a temporary data dir; concurrent HTTP clients upload a mix of files and poll until
done.

Figures (targets on a 2-core machine):
  1. 1 MB PDF, upload -> COMPLETED, median over sequential runs      (<= 1 s)
  2. small files per second sustained, N concurrent clients           (>= 10 /s)
  3. status polling p99 while the workers are busy                    (<= 50 ms)
  4. server RSS over 1,000 files: after warm-up vs at the end         (flat)

Usage: backend/.venv/bin/python bench/bench_service.py [--files 1000] [--clients 8]
"""

from __future__ import annotations

import argparse
import io
import multiprocessing
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
from PIL import Image

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND))  # the test helpers are the package `tests`
from tests.live_server import free_port, make_users, start_server, stop_server  # noqa: E402


# -- sample files ------------------------------------------------------------------------------
def one_mb_pdf() -> bytes:
    """A one-page PDF of about 1 MB (a noisy photo-like image: worst case for size)."""
    rng = random.Random(7)
    side = 1020
    img = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "PDF", quality=93)
    return buf.getvalue()


def small_files() -> list[tuple[str, bytes]]:
    rng = random.Random(11)
    png = io.BytesIO()
    Image.frombytes("RGB", (64, 64), rng.randbytes(64 * 64 * 3)).save(png, "PNG")
    jpg = io.BytesIO()
    Image.frombytes("RGB", (96, 96), rng.randbytes(96 * 96 * 3)).save(jpg, "JPEG")
    pdf = io.BytesIO()
    Image.frombytes("RGB", (120, 160), rng.randbytes(120 * 160 * 3)).save(pdf, "PDF")
    csv = b"name,amount\n" + b"".join(b"item%d,%d\n" % (i, i * 7) for i in range(200))
    txt = b"Meeting notes\n" + b"All good.\n" * 100
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40">'
           b'<rect width="40" height="40" fill="#08f"/></svg>')
    return [("photo.png", png.getvalue()), ("photo.jpg", jpg.getvalue()),
            ("scan.pdf", pdf.getvalue()), ("table.csv", csv), ("notes.txt", txt),
            ("logo.svg", svg)]


# -- server ------------------------------------------------------------------------------------
# -- measurements ------------------------------------------------------------------------------
class Client:
    def __init__(self, base: str, headers: dict[str, str]) -> None:
        self.http = httpx.Client(base_url=base, headers=headers, timeout=60)

    def upload(self, name: str, content: bytes) -> str:
        r = self.http.post("/api/upload/single", files={"file": (name, content)})
        if r.status_code != 201:
            raise RuntimeError(f"upload failed: {r.status_code} {r.text}")
        return r.json()["data"]["fileId"]

    def status(self, file_id: str) -> str:
        r = self.http.get(f"/api/process/status/{file_id}")
        return r.json()["data"]["file"]["status"]

    def wait(self, file_id: str, interval: float = 0.02, timeout: float = 300) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.status(file_id)
            if status in ("COMPLETED", "FAILED"):
                return status
            time.sleep(interval)
        raise RuntimeError(f"{file_id} not done after {timeout}s")


def poller(base: str, headers: dict[str, str], file_id: str, stop_flag, results) -> None:
    watcher = Client(base, headers)
    latencies: list[float] = []
    while not stop_flag.is_set():
        t0 = time.perf_counter()
        watcher.status(file_id)
        latencies.append(time.perf_counter() - t0)
        time.sleep(0.05)
    results.put(latencies)


def busy_cpu_seconds() -> float:
    """CPU time the whole machine spent busy (all cores), from /proc/stat."""
    times = psutil.cpu_times()
    return times.user + times.nice + times.system + times.irq + times.softirq + times.steal


def cpu_seconds(process: psutil.Process | None = None) -> float:
    """User + system CPU of a process (this one by default) and the children it has reaped."""
    times = (process or psutil.Process()).cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--pdf-runs", type=int, default=15)
    parser.add_argument("--env", action="append", default=[], metavar="SANITAS_X=VALUE",
                        help="a setting for the server (repeatable), e.g. to compare options")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="sanitas-bench-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(data_dir, port, dict(item.split("=", 1) for item in args.env))
    try:
        headers = make_users(data_dir, args.clients + 2)
        proc = psutil.Process(server.pid)

        # 1. 1 MB PDF latency (sequential, idle server)
        pdf = one_mb_pdf()
        client = Client(base, headers[0])
        client.wait(client.upload("warmup.pdf", pdf))
        latencies, failures = [], 0
        for i in range(args.pdf_runs):
            t0 = time.perf_counter()
            status = client.wait(client.upload(f"doc{i}.pdf", pdf), interval=0.01)
            latencies.append(time.perf_counter() - t0)
            failures += status != "COMPLETED"
        pdf_median = statistics.median(latencies)

        # 2-4. many small files from concurrent clients, polling measured meanwhile
        samples = small_files()
        done_count = 0
        lock = threading.Lock()
        rss: list[tuple[int, int]] = []
        outcomes: dict[str, int] = {}

        # The poller is a process of its own, so the upload clients' threads (which share
        # this process's GIL) do not inflate the latencies it measures.
        probe = Client(base, headers[-1])
        probe_id = probe.upload("probe.txt", b"probe\n")
        probe.wait(probe_id)
        stop_flag = multiprocessing.Event()
        results = multiprocessing.Queue()
        poll_proc = multiprocessing.Process(
            target=poller, args=(base, headers[-1], probe_id, stop_flag, results), daemon=True)
        poll_proc.start()

        def worker(idx: int, count: int) -> None:
            nonlocal done_count
            c = Client(base, headers[1 + idx])
            pending: list[str] = []
            for k in range(count):
                name, content = samples[(idx + k) % len(samples)]
                pending.append(c.upload(name, content))
                if len(pending) >= 4:  # each client keeps a few files in flight
                    status = c.wait(pending.pop(0), interval=0.25)
                    with lock:
                        done_count += 1
                        outcomes[status] = outcomes.get(status, 0) + 1
                        if done_count % 100 == 0:
                            rss.append((done_count, proc.memory_info().rss))
            for fid in pending:
                status = c.wait(fid, interval=0.25)
                with lock:
                    done_count += 1
                    outcomes[status] = outcomes.get(status, 0) + 1
                    if done_count % 100 == 0:
                        rss.append((done_count, proc.memory_info().rss))

        per_client = [args.files // args.clients + (1 if i < args.files % args.clients else 0)
                      for i in range(args.clients)]
        machine_cpu0, server_cpu0, bench_cpu0 = busy_cpu_seconds(), cpu_seconds(proc), cpu_seconds()
        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(lambda a: worker(*a), enumerate(per_client)))
        elapsed = time.perf_counter() - t0
        machine_cpu = busy_cpu_seconds() - machine_cpu0
        server_cpu = cpu_seconds(proc) - server_cpu0
        bench_cpu = cpu_seconds() - bench_cpu0
        stop_flag.set()
        poll_latencies = results.get(timeout=30)
        poll_proc.join(timeout=10)

        rate = args.files / elapsed
        p99 = pct(poll_latencies, 99) * 1000 if poll_latencies else float("nan")
        p50 = pct(poll_latencies, 50) * 1000 if poll_latencies else float("nan")
        warm = rss[0][1] if rss else proc.memory_info().rss
        end = rss[-1][1] if rss else proc.memory_info().rss
        peak = max((r for _, r in rss), default=end)

        mb = 1024 * 1024
        print(f"1 MB PDF ({len(pdf) / mb:.2f} MB) upload->COMPLETED: median {pdf_median:.3f} s, "
              f"p90 {pct(latencies, 90):.3f} s over {len(latencies)} runs "
              f"(target <= 1 s){'; FAILED: ' + str(failures) if failures else ''}")
        print(f"small files: {args.files} by {args.clients} clients in {elapsed:.1f} s = "
              f"{rate:.1f} files/s sustained (target >= 10); outcomes {outcomes}")
        ms_per_file = 1000 / args.files  # CPU seconds over the run -> ms per file
        sandbox_cpu = machine_cpu - server_cpu - bench_cpu
        print(f"CPU per small file: {machine_cpu * ms_per_file:.0f} ms in all = server "
              f"{server_cpu * ms_per_file:.0f} ms + benchmark clients "
              f"{bench_cpu * ms_per_file:.0f} ms + sandboxes and the rest "
              f"{sandbox_cpu * ms_per_file:.0f} ms")
        print(f"status polling while busy: p50 {p50:.1f} ms, p99 {p99:.1f} ms over "
              f"{len(poll_latencies)} polls (target p99 <= 50 ms)")
        print(f"server RSS: {warm / mb:.1f} MB after 100 files, {end / mb:.1f} MB after "
              f"{rss[-1][0] if rss else args.files} files, peak {peak / mb:.1f} MB "
              f"(growth {(end - warm) / mb:+.1f} MB)")
        print("RSS trace (files, MB): " + ", ".join(f"{n}:{r / mb:.0f}" for n, r in rss))
    finally:
        stop_server(server)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
