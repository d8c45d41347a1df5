"""The fair slot gate ICAP and the mail filter share (channels/fairgate.py): slots go between
keys in turns (least recently served first), a key holding its share gets no more while
another key waits, nothing idles when only one key waits, and a waiter that is cancelled or
abandons leaves the queue without losing a slot."""

from __future__ import annotations

import asyncio
import threading

import pytest

from sanitas.channels.fairgate import Abandoned, FairGate
from sanitas.icap.protocol import IcapRequest
from sanitas.icap.server import client_key


class Holders:
    """Tasks that each take a slot for a key, note it, and keep it until told to let go."""

    def __init__(self, gate: FairGate) -> None:
        self.gate = gate
        self.order: list[str] = []  # names, in the order they got a slot
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.done: dict[str, asyncio.Event] = {}

    def start(self, name: str) -> None:
        """`name` is key + number: "a1" waits with key "a"."""
        self.done[name] = asyncio.Event()
        self.tasks[name] = asyncio.create_task(self._hold(name))

    async def _hold(self, name: str) -> None:
        async with self.gate.slot(name[0]):
            self.order.append(name)
            await self.done[name].wait()

    async def finish(self, name: str) -> None:
        self.done[name].set()
        await self.tasks[name]
        await settle()


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_slots_go_round_robin_least_recently_served_key_first():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        h = Holders(gate)
        h.start("x0")
        await settle()
        for name in ("a1", "a2", "a3", "b1", "b2", "c1"):  # a's burst came first
            h.start(name)
        await settle()
        assert gate.waiting() == 6 and gate.waiting("a") == 3
        for name in ("x0", "a1", "b1", "c1", "a2", "b2", "a3"):
            assert h.order[-1] == name
            await h.finish(name)
        assert h.order == ["x0", "a1", "b1", "c1", "a2", "b2", "a3"]
        assert gate.busy == 0 and gate.known() == 0

    asyncio.run(scenario())


def test_a_key_holding_its_share_gets_no_more_while_another_waits():
    async def scenario() -> None:
        gate = FairGate(4, 0.5)
        assert gate.cap == 2
        h = Holders(gate)
        for i in range(4):  # alone: it may take every slot
            h.start(f"a{i}")
        await settle()
        assert gate.held("a") == 4
        for i in range(4, 8):
            h.start(f"a{i}")
        h.start("b0")
        h.start("b1")
        h.start("b2")
        await settle()
        await h.finish("a0")  # b is under its share: b0
        assert (gate.held("a"), gate.held("b")) == (3, 1)
        await h.finish("a1")  # b served more recently, but a holds its share: b1
        assert (gate.held("a"), gate.held("b")) == (2, 2)
        await h.finish("a2")  # a under its share again, b at it: a4
        assert (gate.held("a"), gate.held("b")) == (2, 2)
        await h.finish("b0")  # b under its share again, a at it: b2
        assert (gate.held("a"), gate.held("b")) == (2, 2)
        assert h.order[-3:] == ["b1", "a4", "b2"]
        # b has nobody waiting: a may go past its share, no slot idles
        await h.finish("b1")
        await h.finish("b2")
        assert (gate.held("a"), gate.held("b"), gate.busy) == (4, 0, 4)
        for name in ("a3", "a4", "a5", "a6", "a7"):
            await h.finish(name)
        assert gate.busy == 0 and gate.known() == 0

    asyncio.run(scenario())


def test_share_rounds_down_but_is_at_least_one():
    assert FairGate(2, 0.5).cap == 1
    assert FairGate(3, 0.5).cap == 1
    assert FairGate(1, 0.5).cap == 1
    assert FairGate(8, 0.3).cap == 2
    assert FairGate(0, 0.5).slots == 1


def test_a_cancelled_waiter_leaves_the_queue():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        h = Holders(gate)
        h.start("x0")
        h.start("a1")
        h.start("b1")
        await settle()
        assert gate.waiting() == 2
        h.tasks["a1"].cancel()  # the client went away while waiting
        await settle()
        assert h.tasks["a1"].cancelled()
        assert gate.waiting() == 1 and gate.waiting("a") == 0 and gate.known() == 2
        await h.finish("x0")
        assert h.order == ["x0", "b1"]
        await h.finish("b1")
        assert gate.busy == 0 and gate.known() == 0

    asyncio.run(scenario())


def test_a_slot_given_to_a_waiter_cancelled_at_that_moment_is_passed_on():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        await gate.acquire("x")
        h = Holders(gate)
        h.start("a1")
        h.start("b1")
        await settle()
        gate.release("x")  # hands the slot to a1's future at once...
        assert gate.held("a") == 1
        h.tasks["a1"].cancel()  # ...and a1 is cancelled before it ran again
        with pytest.raises(asyncio.CancelledError):
            await h.tasks["a1"]
        await settle()
        assert h.order == ["b1"] and gate.held("a") == 0 and gate.busy == 1
        await h.finish("b1")
        assert gate.busy == 0 and gate.known() == 0

    asyncio.run(scenario())


def test_a_cancelled_holder_gives_its_slot_back():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        h = Holders(gate)
        h.start("a1")
        h.start("b1")
        await settle()
        h.tasks["a1"].cancel()
        await settle()
        assert h.order == ["a1", "b1"] and gate.busy == 1
        await h.finish("b1")
        assert gate.busy == 0

    asyncio.run(scenario())


def test_unless_abandons_the_wait():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        await gate.acquire("x")
        gone = asyncio.Event()
        waiting = asyncio.create_task(gate.acquire("a", unless=gone.wait()))
        await settle()
        assert gate.waiting("a") == 1
        gone.set()
        with pytest.raises(Abandoned):
            await waiting
        await settle()
        assert gate.waiting() == 0 and gate.held("a") == 0
        gate.release("x")
        assert gate.busy == 0 and gate.known() == 0
        # with a slot free, `unless` is not even waited for
        never = asyncio.Event()
        await asyncio.wait_for(gate.acquire("a", unless=never.wait()), 1)
        gate.release("a")

    asyncio.run(scenario())


def test_a_caller_cancelled_while_watching_unless_leaves_no_slot_behind():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        await gate.acquire("x")
        waiting = asyncio.create_task(gate.acquire("a", unless=asyncio.Event().wait()))
        await settle()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await settle()
        assert gate.waiting() == 0
        gate.release("x")
        assert gate.busy == 0 and gate.known() == 0

    asyncio.run(scenario())


def test_run_keeps_the_slot_until_the_thread_ends_even_if_the_caller_is_cancelled():
    async def scenario() -> None:
        gate = FairGate(1, 1.0)
        started, go_on = threading.Event(), threading.Event()

        def work(value: int) -> int:
            started.set()
            go_on.wait(10)
            return value * 2

        caller = asyncio.create_task(gate.run("a", work, 21))
        await asyncio.to_thread(started.wait, 10)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert gate.busy == 1  # the thread still runs: its slot is still taken
        other = asyncio.create_task(gate.run("b", work, 2))
        await settle()
        assert gate.waiting("b") == 1
        go_on.set()
        assert await asyncio.wait_for(other, 10) == 4
        assert gate.busy == 0 and gate.known() == 0

        def fail() -> None:
            raise ValueError("the sandbox failed")

        with pytest.raises(ValueError):
            await gate.run("a", fail)
        assert gate.busy == 0

    asyncio.run(scenario())


def test_memory_is_only_what_holds_or_waits():
    async def scenario() -> None:
        gate = FairGate(2, 0.5)
        for i in range(200):
            async with gate.slot(f"client{i}"):
                pass
        assert gate.known() == 0

    asyncio.run(scenario())


def _request(**headers: str) -> IcapRequest:
    return IcapRequest("RESPMOD", "icap://h/sanitize", "/sanitize", {}, headers, [])


def test_icap_client_key_is_the_user_or_address_the_proxy_names():
    peer = ("192.0.2.7", 40000)
    assert client_key(_request(**{"x-authenticated-user": "YWxpY2U=",
                                  "x-client-ip": "10.0.0.5"}), peer) == "user:YWxpY2U="
    assert client_key(_request(**{"x-client-ip": "10.0.0.5"}), peer) == "ip:10.0.0.5"
    assert client_key(_request(**{"x-client-ip": " "}), peer) == "peer:192.0.2.7"
    assert client_key(_request(), None) == "peer:"
    assert len(client_key(_request(**{"x-client-ip": "1" * 5000}), peer)) < 210
