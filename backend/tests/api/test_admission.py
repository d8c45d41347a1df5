"""Against the real `sanitas serve`: bursts of 200 simultaneous calls from one signed-in user are
answered (or refused with 429 at once) and never starve anybody else; the per-caller and the
database-slot limits (admission.py) on both databases."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter

import httpx
import pytest

from sanitas.web.admission import DatabaseGate, Slot
from sanitas.web.errors import ApiError
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
        # Another person is another address: the attacker's burst also fills its own address's
        # connection allowance (SANITAS_HTTP_CONNECTIONS_PER_ADDRESS), which is not under test.
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=other,
                                     timeout=10, transport=transport) as client:
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
    # Starving would hold the other user for the whole burst (many seconds); the bound leaves
    # room for a loaded machine without letting a wait behind the burst pass.
    times = sorted(seconds for _, seconds in other_calls)
    median = times[len(times) // 2]
    assert median < 0.5, f"another user's median call took {median:.2f} s"
    assert times[-1] < 2.5, f"another user's call took {times[-1]:.2f} s during the bursts"
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


# -- who a call is counted as: verified identities only --------------------------------------
LIMIT = 3  # SANITAS_USER_CONCURRENCY of the server below


@pytest.fixture
def served_small(settings):
    """`sanitas serve` allowing LIMIT calls at once per caller."""
    port = free_port()
    proc = start_server(settings.data_dir, port, extra_env={
        "SANITAS_DATABASE_URL": str(settings.database_url),
        "SANITAS_SECRET_KEY": settings.secret_key, "SANITAS_USER_CONCURRENCY": str(LIMIT)})
    try:
        yield port
    finally:
        stop_server(proc)


def random_key() -> str:
    return "sk_live_" + secrets.token_hex(20)


async def stall(port: int, headers: dict[str, str]) -> asyncio.StreamWriter:
    """A PUT /api/auth/profile whose body never comes: once the server answers `100 Continue`
    the route is waiting for the body, so the call is admitted and stays under way (holding
    no database slot) until the connection is closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = ["PUT /api/auth/profile HTTP/1.1", f"Host: 127.0.0.1:{port}",
             "Content-Type: application/json", "Content-Length: 100", "Expect: 100-continue"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), 20)
    assert status.startswith(b"HTTP/1.1 100"), status + await reader.read(400)
    return writer


async def stalls(port: int, headers: list[dict[str, str]]) -> list[asyncio.StreamWriter]:
    return [await stall(port, h) for h in headers]


async def close(writers: list[asyncio.StreamWriter]) -> None:
    for writer in writers:
        writer.close()
    await asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True)


async def until(client: httpx.AsyncClient, method: str, path: str, headers, status: int,
                seconds: float = 15) -> httpx.Response:
    """Repeat a call until it answers `status`, for at most `seconds` (closed connections end
    their calls on the server a moment later); the last answer."""
    deadline = time.monotonic() + seconds
    while True:
        answer = await client.request(method, path, headers=headers)
        if answer.status_code == status or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.1)


def _error(answer: httpx.Response) -> str:
    return answer.json().get("error") or str(answer.status_code)


def test_made_up_keys_buy_no_allowance_beside_a_token(served_small, settings, db_session):
    """A token with a new random X-API-Key on every call is still one user."""
    token = auth_headers(settings, db_session, make_user(db_session))

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{served_small}",
                                     timeout=20) as c:
            held = await stalls(served_small, [{**token, "X-API-Key": random_key()}
                                               for _ in range(LIMIT)])
            refused = await c.get("/api/auth/profile",
                                  headers={**token, "X-API-Key": random_key()})
            assert _error(refused) == "too_many_concurrent", refused.text
            assert refused.headers["retry-after"] == "1"
            await close(held)
            assert (await until(c, "GET", "/api/auth/profile", token, 200)).status_code == 200

    asyncio.run(scenario())


def test_unknown_keys_share_the_addresss_allowance(served_small, settings, db_session):
    token = auth_headers(settings, db_session, make_user(db_session))

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{served_small}",
                                     timeout=20) as c:
            held = await stalls(served_small, [{"X-API-Key": random_key()}
                                               for _ in range(LIMIT)])
            for headers in ({"X-API-Key": random_key()},
                            {"Authorization": f"Bearer {random_key()}"},
                            {"Authorization": "Bearer not-a-token"}, {}):
                refused = await c.get("/api/upload/info", headers=headers)
                assert _error(refused) == "too_many_concurrent", (headers, refused.text)
            # A signed-in user at the same address has an allowance of their own.
            assert (await c.get("/api/auth/profile", headers=token)).status_code == 200
            await close(held)

    asyncio.run(scenario())


def test_a_known_key_counts_as_its_owner_until_revoked(served_small, settings, db_session):
    owner = make_user(db_session, role="ENTERPRISE")
    token = auth_headers(settings, db_session, owner)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{served_small}",
                                     timeout=20) as c:
            created = (await c.post("/api/keys", headers=token, json={"name": "ci"})).json()
            key = {"X-API-Key": created["data"]["secret"]}
            assert (await c.get("/api/upload/info", headers=key)).status_code == 200  # known
            held = await stalls(served_small, [token] * LIMIT)
            refused = await c.get("/api/upload/info", headers=key)
            assert _error(refused) == "too_many_concurrent", refused.text
            await close(held)
            revoked = await until(c, "DELETE", f"/api/keys/{created['data']['key']['id']}",
                                  token, 200)
            assert revoked.status_code == 200
            # Revoked: counted by its address again, and refused for what it is.
            held = await stalls(served_small, [token] * LIMIT)
            assert _error(await c.get("/api/upload/info", headers=key)) == "invalid_api_key"
            await close(held)

    asyncio.run(scenario())
