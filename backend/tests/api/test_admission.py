"""Against the real `sanitas serve`: bursts of 200 simultaneous calls from one signed-in user are
answered (or refused with 429 at once) and never starve anybody else; the per-caller and the
database-slot limits (admission.py) on both databases."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx
import pytest

from sanitas.admission import DatabaseGate, Slot
from sanitas.errors import ApiError
from tests.factories import auth_headers, make_user
from tests.live_server import burst, free_port, start_server, stop_server

BURST = 200


@pytest.fixture
def served(settings):
    """`sanitas serve` on this test's database and data dir (no executor work is queued)."""
    port = free_port()
    proc = start_server(settings.data_dir, port, extra_env={
        "SANITAS_DATABASE_URL": str(settings.database_url),
        "SANITAS_SECRET_KEY": settings.secret_key})
    try:
        yield port
    finally:
        stop_server(proc)


async def _bursts_with_a_bystander(port: int, attacker: dict, other: dict, path: str):
    stop = asyncio.Event()
    other_calls: list[tuple[int, float]] = []

    async def bystander() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=other,
                                     timeout=10) as client:
            while not stop.is_set():
                started = time.perf_counter()
                answer = await client.get("/api/auth/profile")
                other_calls.append((answer.status_code, time.perf_counter() - started))
                await asyncio.sleep(0.05)

    watcher = asyncio.create_task(bystander())
    codes: Counter = Counter()
    for _ in range(2):
        got, _times = await burst(port, attacker, BURST, path, timeout=20)
        codes.update(got)
        await asyncio.sleep(1.0)
    stop.set()
    await watcher
    return codes, other_calls


@pytest.mark.parametrize("path", ["/api/auth/profile", "/api/usage/stats"])
def test_bursts_from_one_user_do_not_starve_another(served, settings, db_session, path):
    attacker = auth_headers(settings, db_session, make_user(db_session))
    other = auth_headers(settings, db_session, make_user(db_session))
    codes, other_calls = asyncio.run(_bursts_with_a_bystander(served, attacker, other, path))
    # Every call is answered: served, or refused at once by the per-user limit; none hangs.
    assert sum(codes.values()) == 2 * BURST
    assert set(codes) <= {"200", "429"}, codes
    assert codes["200"] >= settings.user_concurrency  # the limit lets that many through
    assert codes["429"] > 0
    # The other user is served, promptly, throughout.
    assert other_calls and {status for status, _ in other_calls} == {200}
    worst = max(seconds for _, seconds in other_calls)
    assert worst < 1.0, f"another user's call took {worst:.2f} s during the bursts"
    health = httpx.get(f"http://127.0.0.1:{served}/health", timeout=5)
    assert health.status_code == 200


def test_a_refused_call_says_why_and_when_to_retry(served, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))

    async def fire():
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{served}", headers=h,
                                     timeout=20, limits=httpx.Limits(max_connections=100)) as c:
            return await asyncio.gather(*(c.get("/api/auth/profile") for _ in range(100)))

    refused = [a for a in asyncio.run(fire()) if a.status_code == 429]
    assert refused, "100 simultaneous calls of one user were all let through"
    body = refused[0].json()
    assert body["success"] is False and body["error"] == "too_many_concurrent"
    assert refused[0].headers["retry-after"] == "1"


# -- the database gate, on its own -------------------------------------------------------------
def test_database_gate_waits_then_answers_busy_and_a_paused_slot_is_lent():
    async def scenario() -> None:
        gate = DatabaseGate(slots=1, wait_seconds=0.2)
        async with gate.slot() as held:
            assert isinstance(held, Slot)
            with pytest.raises(ApiError) as busy:  # the only slot is taken: 503 after waiting
                async with gate.slot():
                    pass
            assert busy.value.status_code == 503 and busy.value.error == "server_busy"
            async with held.paused(), gate.slot():  # lent out while the holder does slow work
                pass
        async with gate.slot():  # given back at the end
            pass

    asyncio.run(scenario())
