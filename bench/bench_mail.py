"""Mail benchmark: a real `sanitas mail` on a temporary data dir re-injecting to an SMTP sink,
driven with smtplib the way Postfix's smtp client does (one connection per message), and,
when Postfix is installed and this runs as root, the same through a private Postfix
instance (tests/mail/postfixkit.py) with swaks-free submission by smtplib.

Figures (a message with three small attachments: a macro .docm, a GPS JPEG, a PDF with
JavaScript, plus an HTML body):
  1. through the filter alone, sequential: p50/p99 latency (end of DATA to 250)
  2. through the filter alone, N concurrent senders: p50/p99 and messages/s
  3. through Postfix (submission to delivery at the sink), N concurrent: messages/s and each
     message's p50/p99 from the start of its submission to its arrival at the sink

Every message is checked (250, and delivered with X-Sanitas), so a failure is not measured
as speed.

Usage: backend/.venv/bin/python bench/bench_mail.py [--clients 4] [--messages 40]
"""

from __future__ import annotations

import argparse
import os
import shutil
import smtplib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND))  # the test helpers are the package `tests`
from tests.mail.mailkit import (
    Sink,
    free_port,
    message,
    samples,
    start_filter,
    stop_filter,
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def send(port: int, data: bytes) -> float:
    started = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
        refused = client.sendmail("alice@example.org", ["bob@example.net"], data)
    assert not refused
    return time.perf_counter() - started


def run_clients(port: int, messages: list[bytes], clients: int,
                starts: dict[bytes, float] | None = None) -> tuple[list[float], float]:
    """Send `messages` over `clients` connections at once; `starts` gets each message's
    submission start (perf_counter) keyed by its Subject line."""
    latencies: list[float] = []
    lock = threading.Lock()
    queue = list(messages)
    errors: list[BaseException] = []

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                data = queue.pop()
                if starts is not None:
                    starts[subject_of(data)] = time.perf_counter()
            try:
                seconds = send(port, data)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                return
            with lock:
                latencies.append(seconds)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return latencies, time.perf_counter() - started


def subject_of(data: bytes) -> bytes:
    start = data.index(b"\nSubject: ") + 10 if not data.startswith(b"Subject: ") else 9
    return data[start:data.index(b"\n", start)].strip()


class Arrivals(threading.Thread):
    """Notes when each message reaches the sink (by its Subject line), polling every 5 ms."""

    def __init__(self, sink: Sink) -> None:
        super().__init__(daemon=True)
        self.sink = sink
        self.times: dict[bytes, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        seen = 0
        while not self.done.is_set():
            messages = self.sink.handler.messages
            while seen < len(messages):
                self.times.setdefault(subject_of(messages[seen].data), time.perf_counter())
                seen += 1
            time.sleep(0.005)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--messages", type=int, default=40)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-mail-"))
    files = samples(folder / "samples")
    three = {k: files[k] for k in ("macro.docm", "photo.jpg", "script.pdf")}
    batch = [message(three, subject=f"bench {i}") for i in range(args.messages)]
    try:
        with Sink() as sink:
            mail = start_filter(folder / "data", sink.port,
                                mail_workers=os.cpu_count() or 2)
            try:
                send(mail.port, message(three, subject="warm-up"))
                sequential = [send(mail.port, message(three, subject=f"sequential {i}"))
                              for i in range(10)]
                print(f"filter alone, sequential (10 messages, 3 attachments): "
                      f"p50 {statistics.median(sequential) * 1000:.0f} ms, "
                      f"p99 {percentile(sequential, 0.99) * 1000:.0f} ms")
                sink.handler.messages.clear()
                latencies, elapsed = run_clients(mail.port, batch, args.clients)
                delivered = sink.handler.wait(len(batch), 60)
                assert len(delivered) == len(batch)
                assert all(b"X-Sanitas: sanitized" in m.data for m in delivered)
                print(f"filter alone, {args.clients} concurrent senders ({len(batch)} messages): "
                      f"{len(batch) / elapsed:.2f} messages/s, "
                      f"p50 {statistics.median(latencies) * 1000:.0f} ms, "
                      f"p99 {percentile(latencies, 0.99) * 1000:.0f} ms")
            finally:
                stop_filter(mail)
            through_postfix(folder, batch, args.clients)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def through_postfix(folder: Path, batch: list[bytes], clients: int) -> None:
    if os.geteuid() != 0 or not Path("/usr/sbin/postfix").exists():
        print("through Postfix: skipped (needs root and Debian's postfix)")
        return
    from tests.mail.postfixkit import start_postfix

    root = Path(tempfile.mkdtemp(prefix="sanitas-postfix-"))
    root.chmod(0o755)
    filter_port, sink_port = free_port(), free_port()
    with Sink(sink_port) as sink:
        postfix = start_postfix(root / "postfix", smtp_port=free_port(),
                                reinject_port=free_port(), filter_port=filter_port,
                                sink_port=sink_port)
        mail = start_filter(folder / "data-postfix", postfix.reinject_port, port=filter_port,
                            mail_workers=os.cpu_count() or 2)
        arrivals = Arrivals(sink)
        arrivals.start()
        try:
            starts: dict[bytes, float] = {}
            started = time.perf_counter()
            run_clients(postfix.smtp_port, batch, clients, starts)
            delivered = sink.handler.wait(len(batch), 600)
            elapsed = time.perf_counter() - started
            time.sleep(0.05)  # the last arrival noted
            arrivals.done.set()
            assert len(delivered) == len(batch), f"{len(delivered)} of {len(batch)} delivered"
            latencies = [arrivals.times[subject] - start for subject, start in starts.items()
                         if subject in arrivals.times]
            assert len(latencies) == len(batch), "a message arrived under another subject"
            print(f"through Postfix, {clients} concurrent senders ({len(batch)} messages, "
                  f"submission to delivery): {len(batch) / elapsed:.2f} messages/s, "
                  f"p50 {statistics.median(latencies) * 1000:.0f} ms, "
                  f"p99 {percentile(latencies, 0.99) * 1000:.0f} ms")
        finally:
            arrivals.done.set()
            stop_filter(mail)
            postfix.stop()
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
