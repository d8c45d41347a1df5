"""Channels do not wait behind each other's backlog (issue 30): `sanitas serve` (the local
executor, two workers, the fair queue) and `sanitas icap` (two sandbox slots) on one data dir
and one PostgreSQL database, driven over HTTP and by Debian's c-icap-client.

(a) A web account's slow files fill the executor and its queue; an ICAP RESPMOD of a small
    text file is still answered promptly, while the web backlog is still there.
(b) Several ICAP requests with slow files are in flight (more than the ICAP slots); a web
    user's small upload still completes promptly, while they are still in flight.

"Promptly": within twice the same request's lone time (measured here first, on idle servers)
plus one slow job's lone duration (likewise measured), the time a fresh job may wait for a CPU
of a two-CPU test machine busy with the slow jobs.

(c) Within ICAP: one client's slow bodies fill both slots and wait for them; another
    client's small body takes the next free slot, ahead of the first client's backlog.

How it holds: ICAP does not use the job queue at all. `sanitas icap` sanitizes each body in
its own process (files/intake.sanitize_now, at most `icap_workers` bodies at a time, by
default SANITAS_EXECUTOR_WORKERS), so the web queue's turns neither delay nor protect ICAP
traffic: the channels are apart because their pools are, and the machine runs up to
executor_workers + icap_workers sandboxes at once. Within ICAP the slots are handed out by a
fair gate (channels/fairgate.py) in turns between the clients the proxy names (here
X-Client-IP), none given more than `executor_max_share` of them while another waits. The ICAP
service account is only the owner of the audit rows (icap_audit), never of a queued job."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from sanitas.db import make_engine, make_sessionmaker
from sanitas.models import File, Job, User
from tests.databases import truncate_all
from tests.executor.jobkit import slow_pdf, wait_until
from tests.icap.icapkit import Answer, Icap, client, start_icap, stop_icap
from tests.live_server import free_port, make_users, start_server, stop_server

pytestmark = pytest.mark.slow

SMALL = b"a short note for the fairness test\n" * 20
SERVICE_ACCOUNT = "icap-fair@sanitas.local"


@dataclass
class Servers:
    web: str  # the API's base URL
    icap: Icap
    data_dir: Path
    database_url: str


@pytest.fixture(scope="module")
def servers(tmp_path_factory, pg_database_url) -> Iterator[Servers]:
    truncate_all(pg_database_url)
    data_dir = tmp_path_factory.mktemp("fair-channels")
    port = free_port()
    serve = start_server(data_dir, port, {
        "SANITAS_DATABASE_URL": pg_database_url, "SANITAS_EXECUTOR_WORKERS": "2",
        "SANITAS_EXECUTOR_MAX_SHARE": "0.5", "SANITAS_EXECUTOR_POLL_INTERVAL_SECONDS": "0.2"})
    icap = None
    try:
        icap = start_icap(data_dir, database_url=pg_database_url, executor_workers=2,
                          icap_audit="true", icap_service_account=SERVICE_ACCOUNT,
                          icap_timeout_seconds=60)
        yield Servers(f"http://127.0.0.1:{port}", icap, data_dir, pg_database_url)
    finally:
        if icap is not None:
            stop_icap(icap)
        stop_server(serve)


@pytest.fixture
def session(servers):
    engine = make_engine(servers.database_url)
    with make_sessionmaker(engine)() as s:
        yield s
    engine.dispose()


def _user(servers: Servers) -> dict[str, str]:
    return make_users(servers.data_dir, 1, role="USER", database_url=servers.database_url)[0]


def _upload(servers: Servers, headers: dict[str, str], name: str, data: bytes,
            mode: str = "basic") -> str:
    answer = httpx.post(f"{servers.web}/api/upload/single", headers=headers,
                        data={"mode": mode}, files={"file": (name, data)}, timeout=60)
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["fileId"]


def _status(servers: Servers, headers: dict[str, str], file_id: str) -> dict:
    return httpx.get(f"{servers.web}/api/process/status/{file_id}", headers=headers,
                     timeout=30).json()["data"]


def _web_done(servers: Servers, headers: dict[str, str], file_id: str,
              timeout: float) -> dict:
    def done():
        data = _status(servers, headers, file_id)
        return data if data["file"]["status"] in ("COMPLETED", "FAILED") else None

    data = wait_until(done, timeout, f"web file {file_id} to finish", 0.05)
    assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
    return data


def _web_round(servers: Servers, headers: dict[str, str], name: str, data: bytes,
               mode: str = "basic", timeout: float = 120) -> float:
    """Seconds from the upload to the file COMPLETED."""
    began = time.monotonic()
    file_id = _upload(servers, headers, name, data, mode)
    _web_done(servers, headers, file_id, timeout)
    return time.monotonic() - began


def _icap(servers: Servers, out: Path, body: Path, service: str = "sanitize",
          url: str = "http://files.example/note.txt", timeout: float = 120,
          client_ip: str | None = None) -> tuple[Answer, float]:
    """One c-icap-client call; `client_ip`: the end user's address, sent as Squid's
    icap_send_client_ip does (X-Client-IP), which the server's fair gate keys on."""
    began = time.monotonic()
    extra = ("-x", f"X-Client-IP: {client_ip}") if client_ip is not None else ()
    answer = client(servers.icap.port, service, *extra, "-resp", url, body=body, out=out,
                    timeout=timeout)
    return answer, time.monotonic() - began


def _icap_small(servers: Servers, tmp_path: Path, tag: str,
                client_ip: str | None = None) -> float:
    body = tmp_path / f"{tag}.txt"
    body.write_bytes(SMALL)
    answer, took = _icap(servers, tmp_path / f"{tag}.out", body, client_ip=client_ip)
    # plain text with nothing to remove: 204, or 200 with the (same) text
    assert answer.status in (200, 204), answer.text
    return took


def _web_states(session, file_ids: list[str]) -> dict[str, str]:
    session.expire_all()
    return dict(session.execute(select(Job.file_id, Job.state)
                                .where(Job.file_id.in_(file_ids))).all())


def test_icap_is_not_held_behind_a_web_accounts_slow_backlog(servers, session, tmp_path):
    web = _user(servers)
    # lone times, idle servers (a first small ICAP call warms the server's sandboxes up)
    _icap_small(servers, tmp_path, "warm")
    lone_icap = min(_icap_small(servers, tmp_path, f"lone{i}") for i in range(2))
    lone_slow = _web_round(servers, web, "alone.pdf", slow_pdf(9), "advanced")

    backlog = [_upload(servers, web, f"slow{seed}.pdf", slow_pdf(seed), "advanced")
               for seed in (1, 2, 3, 4)]  # two run, two wait
    wait_until(lambda: list(_web_states(session, backlog).values()).count("active") == 2, 60,
               "the web account's slow files to fill both workers")
    loaded = _icap_small(servers, tmp_path, "loaded")
    states = _web_states(session, backlog)
    bound = 2 * lone_icap + lone_slow
    print(f"\nICAP small: lone {lone_icap:.2f} s, behind the web backlog {loaded:.2f} s "
          f"(bound {bound:.2f} s; a slow job alone {lone_slow:.2f} s); web jobs then: "
          f"{sorted(states.values())}")
    assert loaded <= bound, (loaded, lone_icap, lone_slow)
    # the ICAP answer did not wait for the backlog to drain
    assert sum(state in ("waiting", "active") for state in states.values()) >= 2, states

    # the ICAP transaction is the service account's (an audit row), not the web user's
    service = session.scalar(select(User.id).where(User.email == SERVICE_ACCOUNT))
    assert service is not None
    web_id = session.scalar(select(File.user_id).where(File.id == backlog[0]))
    assert service != web_id

    def audited():
        session.expire_all()
        return session.scalar(select(File).where(File.user_id == service,
                                                 File.original_name == "note.txt"))

    wait_until(audited, 30, "the ICAP audit row")
    for file_id in backlog:
        _web_done(servers, web, file_id, 180)


def test_web_upload_is_not_held_behind_icap_requests_in_flight(servers, tmp_path):
    web = _user(servers)
    _web_round(servers, web, "warm.txt", SMALL)
    lone_web = min(_web_round(servers, web, f"lone{i}.txt", SMALL) for i in range(2))
    slow_body = tmp_path / "long.pdf"
    slow_body.write_bytes(slow_pdf(7))
    answer, lone_slow = _icap(servers, tmp_path / "alone.out", slow_body, "sanitize-advanced",
                              "http://files.example/long.pdf")
    assert answer.status == 200, answer.text

    # four slow bodies at once: two in the ICAP slots, two waiting for one
    answers: dict[int, tuple[Answer, float]] = {}

    def send(i: int) -> None:
        answers[i] = _icap(servers, tmp_path / f"slow{i}.out", slow_body, "sanitize-advanced",
                           f"http://files.example/long{i}.pdf", timeout=240)

    threads = [threading.Thread(target=send, args=(i,), daemon=True) for i in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(min(2.0, lone_slow / 3))  # the bodies are sent and two are being sanitized
    assert not answers, "the ICAP requests finished before the web upload was sent"
    loaded = _web_round(servers, web, "loaded.txt", SMALL)
    in_flight = sum(thread.is_alive() for thread in threads)
    bound = 2 * lone_web + lone_slow
    print(f"\nweb small: lone {lone_web:.2f} s, beside ICAP's slow requests {loaded:.2f} s "
          f"(bound {bound:.2f} s; a slow ICAP body alone {lone_slow:.2f} s); ICAP requests "
          f"still in flight then: {in_flight}")
    assert loaded <= bound, (loaded, lone_web, lone_slow)
    assert in_flight >= 2  # the web file did not wait for the ICAP requests to end
    for thread in threads:
        thread.join(240)
    for i, (answer, _) in sorted(answers.items()):
        assert answer.status == 200, (i, answer.text[-2000:])
        assert answer.body is not None and answer.body.startswith(b"%PDF"), i
    assert len(answers) == 4


def test_small_icap_body_is_not_held_behind_slow_icap_bodies(servers, tmp_path):
    """Within the ICAP channel: one client (X-Client-IP 10.0.0.1) has six slow bodies in
    flight (two in the slots, four waiting), then another client (10.0.0.2) sends a small one.
    The fair gate gives it the next free slot, ahead of the first client's four: it is
    answered within twice its lone time after the first slow body's answer (a running body is
    not stopped for it, so that is the wait it may have), while at least four of the slow
    bodies are still in flight. First come, first served, as before the gate, made it wait for
    three rounds of slow bodies (about 4-11 s, against about 2 s for one)."""
    _icap_small(servers, tmp_path, "warm")
    lone_icap = min(_icap_small(servers, tmp_path, f"lone{i}", client_ip="10.0.0.2")
                    for i in range(2))
    slow_body = tmp_path / "long.pdf"
    slow_body.write_bytes(slow_pdf(8))
    answer, lone_slow = _icap(servers, tmp_path / "alone.out", slow_body, "sanitize-advanced",
                              "http://files.example/long.pdf")
    assert answer.status == 200, answer.text
    answers: dict[int, tuple[Answer, float]] = {}
    ended: dict[int, float] = {}

    def send(i: int) -> None:
        answers[i] = _icap(servers, tmp_path / f"slow{i}.out", slow_body, "sanitize-advanced",
                           f"http://files.example/long{i}.pdf", timeout=240,
                           client_ip="10.0.0.1")
        ended[i] = time.monotonic()

    threads = [threading.Thread(target=send, args=(i,), daemon=True) for i in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(min(2.0, lone_slow / 3))
    assert not answers, "the ICAP requests finished before the small body was sent"
    sent = time.monotonic()
    loaded = _icap_small(servers, tmp_path, "loaded", client_ip="10.0.0.2")
    in_flight = sum(thread.is_alive() for thread in threads)
    for thread in threads:
        thread.join(240)
    assert sorted(a.status for a, _ in answers.values()) == [200] * 6
    first_slot = min(ended.values()) - sent  # when the first slow body gave its slot back
    # One second more for what timing the clients adds (c-icap-client processes started and
    # reaped on a loaded machine); first come, first served took 10-11 s here, and the
    # in-flight count below tells the two orders apart without any allowance.
    bound = 2 * lone_icap + first_slot + 1.0
    print(f"\nICAP small: lone {lone_icap:.2f} s, behind another client's slow bodies "
          f"{loaded:.2f} s (bound {bound:.2f} s: the first slow answer came {first_slot:.2f} s "
          f"after it was sent; a slow body alone {lone_slow:.2f} s, the six took "
          f"{max(ended.values()) - sent:.2f} s); slow bodies still in flight then: {in_flight}")
    assert loaded <= bound, (loaded, lone_icap, first_slot)
    # it went ahead of the first client's backlog: the four waiting were still in flight
    # (first come, first served leaves only the last two)
    assert in_flight >= 4, in_flight
