"""The ICAP worker slots with a real `sanitas icap` (one slot): a client that goes away while
its body waits for the slot leaves the queue (its body is never sanitized), and the slot goes
on serving the others. The order between clients is checked by test_fairgate.py (the gate
alone) and test_channel_fairness.py (six slow bodies against a small one)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.executor.jobkit import pdf_bytes, wait_until
from tests.icap.icapkit import Answer, Icap, client, read_head, start_icap, stop_icap

pytestmark = pytest.mark.slow

NOTE = b"a short note waiting for the slot\n" * 20


@pytest.fixture(scope="module")
def one_slot(tmp_path_factory) -> Iterator[Icap]:
    server = start_icap(tmp_path_factory.mktemp("icap-one-slot"), icap_workers=1,
                        icap_timeout_seconds=60)
    try:
        yield server
    finally:
        stop_icap(server)


def _respmod(body: bytes, client_ip: str) -> bytes:
    """A whole RESPMOD of a text body (no preview, Allow: 204) for the end user `client_ip`."""
    req = b"GET /note.txt HTTP/1.1\r\nHost: files.example\r\n\r\n"
    res = f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n" \
          "\r\n".encode()
    lines = ["RESPMOD icap://127.0.0.1/sanitize ICAP/1.0", "Host: 127.0.0.1",
             f"Encapsulated: req-hdr=0, res-hdr={len(req)}, res-body={len(req) + len(res)}",
             "Allow: 204", f"X-Client-IP: {client_ip}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + req + res + \
        b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"


def test_a_client_gone_while_waiting_leaves_the_queue(one_slot: Icap, tmp_path: Path):
    slow = tmp_path / "long.pdf"
    # 160 pages rebuilt as pictures: some seconds even on an idle machine (40 took about one)
    slow.write_bytes(pdf_bytes(pages=160, side=(300, 400), seed=6, quality=70))
    answers: list[Answer] = []

    def send_slow() -> None:
        answers.append(client(one_slot.port, "sanitize-advanced", "-x", "X-Client-IP: 10.0.1.1",
                              "-resp", "http://files.example/long.pdf", body=slow,
                              out=tmp_path / "long.out", timeout=240))

    slow_thread = threading.Thread(target=send_slow, daemon=True)
    slow_thread.start()
    wait_until(lambda: "icap" in _scratch_names(one_slot), 30, "the slow body in the slot",
               0.05)
    time.sleep(0.5)  # read, and in the sandbox
    before = one_slot.log.count("went away while waiting for a slot")
    with socket.create_connection(("127.0.0.1", one_slot.port), timeout=30) as sock:
        sock.sendall(_respmod(NOTE, "10.0.1.2"))
        time.sleep(0.5)  # the body is read and waits for the slot the slow body holds
        assert slow_thread.is_alive(), "the slow body ended before the other one waited"
    # closed while waiting: it leaves the queue within the server's poll (a quarter second)
    wait_until(lambda: one_slot.log.count("went away while waiting for a slot") > before, 10,
               "the server to notice the client left", 0.05)
    assert "(ip:10.0.1.2)" in one_slot.log
    assert slow_thread.is_alive(), "the gone client's wait lasted as long as the slow body"

    # the slot still serves: the slow body's answer, then another client's note
    slow_thread.join(240)
    assert answers and answers[0].status == 200, answers[0].text[-2000:] if answers else None
    with socket.create_connection(("127.0.0.1", one_slot.port), timeout=30) as sock:
        sock.sendall(_respmod(NOTE, "10.0.1.3"))
        head = read_head(sock)
    assert head.startswith((b"ICAP/1.0 204", b"ICAP/1.0 200")), head[:200]


def _scratch_names(icap: Icap) -> str:
    jobs = icap.data_dir / "tmp" / "jobs"
    return " ".join(p.name for p in jobs.iterdir()) if jobs.exists() else ""
