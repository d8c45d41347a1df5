"""Mail benchmark: a real `sanitas mail` on a temporary data dir re-injecting to an SMTP sink,
driven with smtplib the way Postfix's smtp client does (one connection per message), and,
when Postfix is installed and this runs as root, the same through a private Postfix
instance (tests/mail/postfixkit.py) with swaks-free submission by smtplib.

Figures (a message with three small attachments: a macro .docm, a GPS JPEG, a PDF with
JavaScript, plus an HTML body):
  1. through the filter alone, sequential: p50/p99 latency (end of DATA to 250)
  2. through the filter alone, N concurrent senders: p50/p99 and messages/s
  3. through Postfix (submission to delivery at the sink), N concurrent: messages/s

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


def run_clients(port: int, messages: list[bytes], clients: int) -> tuple[list[float], float]:
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
        try:
            started = time.perf_counter()
            run_clients(postfix.smtp_port, batch, clients)
            delivered = sink.handler.wait(len(batch), 600)
            elapsed = time.perf_counter() - started
            assert len(delivered) == len(batch), f"{len(delivered)} of {len(batch)} delivered"
            print(f"through Postfix, {clients} concurrent senders ({len(batch)} messages, "
                  f"submission to delivery): {len(batch) / elapsed:.2f} messages/s")
        finally:
            stop_filter(mail)
            postfix.stop()
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
