"""ICAP benchmark: a real `sanitas icap` on a temporary data dir; clients send RESPMOD
transactions (whole body, Allow: 204, one kept-alive connection each) the way a proxy does.

Figures (targets on a 2-core machine):
  1. small PDF, sequential on an idle server: p50 latency                  (<= 100 ms)
  2. small PDF, N concurrent clients: p50/p99 latency and requests/s
  3. 1 MB DOCX (a document with a large picture), N concurrent clients: p50/p99 and requests/s

Every answer is checked (an ICAP 200 with a sanitized body, or 204), so a failure is not
measured as speed. The client is a light socket client in threads: the figures measure the
server, not the client.

Usage: backend/.venv/bin/python bench/bench_icap.py [--clients 8] [--requests 200]
"""

from __future__ import annotations

import argparse
import io
import random
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from PIL import Image

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND))  # the test helpers are the package `tests`
from tests.engine.corpus_office import _inline_image, _p, docx  # noqa: E402
from tests.icap.icapkit import start_icap, stop_icap  # noqa: E402


# -- sample files ------------------------------------------------------------------------------
def small_pdf() -> bytes:
    rng = random.Random(11)
    buf = io.BytesIO()
    Image.frombytes("RGB", (120, 160), rng.randbytes(120 * 160 * 3)).save(buf, "PDF")
    return buf.getvalue()


def one_mb_docx() -> bytes:
    """A Word document of about 1 MB: text and one noisy (incompressible) picture."""
    rng = random.Random(5)
    side = 590
    png = io.BytesIO()
    Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3)).save(png, "PNG")
    body = "".join(_p(f"Paragraph {i}: the quick brown fox jumps over the lazy dog.")
                   for i in range(40)) + _inline_image("rIdImg")
    return docx(body, parts={"word/media/image1.png": png.getvalue()})


# -- a minimal ICAP client -----------------------------------------------------------------------
class IcapClient:
    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.buf = b""

    def _fill(self) -> None:
        data = self.sock.recv(262144)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buf += data

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buf:
            self._fill()
        head, _, self.buf = self.buf.partition(marker)
        return head

    def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def respmod(self, name: str, body: bytes) -> tuple[int, int]:
        """One RESPMOD; (ICAP status, bytes of the HTTP body answered)."""
        req = f"GET http://files.example/{name} HTTP/1.1\r\nHost: files.example\r\n\r\n".encode()
        res = (f"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode()
        head = (f"RESPMOD icap://127.0.0.1:{self.port}/sanitize ICAP/1.0\r\n"
                f"Host: 127.0.0.1\r\nAllow: 204\r\n"
                f"Encapsulated: req-hdr=0, res-hdr={len(req)}, "
                f"res-body={len(req) + len(res)}\r\n\r\n").encode()
        self.sock.sendall(head + req + res + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
        icap_head = self._until(b"\r\n\r\n").decode("latin-1")
        status = int(icap_head.split(" ", 2)[1])
        encapsulated = next((line.split(":", 1)[1] for line in icap_head.split("\r\n")
                             if line.lower().startswith("encapsulated:")), "null-body=0")
        if "body=" not in encapsulated or "null-body" in encapsulated:
            return status, 0
        self._until(b"\r\n\r\n")  # the HTTP head
        size = 0
        while True:
            n = int(self._until(b"\r\n").split(b";")[0], 16)
            if n == 0:
                self._exactly(2)
                return status, size
            size += len(self._exactly(n + 2)) - 2

    def close(self) -> None:
        self.sock.close()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def check(status: int, size: int, name: str) -> None:
    if status not in (200, 204) or (status == 200 and size == 0):
        raise RuntimeError(f"{name}: unexpected answer ICAP {status} ({size} bytes)")


def concurrent(port: int, clients: int, total: int, name: str, body: bytes
               ) -> tuple[list[float], float]:
    latencies: list[float] = []
    lock = threading.Lock()
    left = [total]
    errors: list[BaseException] = []

    def worker() -> None:
        conn = IcapClient(port)
        try:
            while True:
                with lock:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
                t0 = time.perf_counter()
                status, size = conn.respmod(name, body)
                elapsed = time.perf_counter() - t0
                check(status, size, name)
                with lock:
                    latencies.append(elapsed)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if errors:
        raise errors[0]
    return latencies, len(latencies) / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200, help="small PDFs, concurrent")
    parser.add_argument("--docx-requests", type=int, default=40)
    parser.add_argument("--sequential", type=int, default=50)
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="sanitas-bench-icap-"))
    server = start_icap(data_dir, log_level="WARNING")
    pdf, big = small_pdf(), one_mb_docx()
    try:
        conn = IcapClient(server.port)
        for _ in range(5):  # warm-up: imports, spare sandboxes
            check(*conn.respmod("warm.pdf", pdf), "warm.pdf")
        seq = []
        for _ in range(args.sequential):
            t0 = time.perf_counter()
            check(*conn.respmod("small.pdf", pdf), "small.pdf")
            seq.append(time.perf_counter() - t0)
            time.sleep(0.02)
        conn.close()
        p50 = statistics.median(seq) * 1000
        print(f"1. small PDF ({len(pdf)} B), sequential: p50 {p50:.0f} ms, "
              f"p99 {pct(seq, 99) * 1000:.0f} ms  (target p50 <= 100 ms: "
              f"{'ok' if p50 <= 100 else 'MISSED'})")

        lat, rate = concurrent(server.port, args.clients, args.requests, "small.pdf", pdf)
        print(f"2. small PDF, {args.clients} clients, {len(lat)} requests: "
              f"p50 {statistics.median(lat) * 1000:.0f} ms, p99 {pct(lat, 99) * 1000:.0f} ms, "
              f"{rate:.1f} requests/s")

        lat, rate = concurrent(server.port, args.clients, args.docx_requests, "big.docx", big)
        print(f"3. DOCX ({len(big) / 1e6:.2f} MB), {args.clients} clients, {len(lat)} requests: "
              f"p50 {statistics.median(lat) * 1000:.0f} ms, p99 {pct(lat, 99) * 1000:.0f} ms, "
              f"{rate:.2f} requests/s")
    finally:
        stop_icap(server)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
