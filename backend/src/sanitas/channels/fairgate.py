"""A fair slot gate (asyncio): at most `slots` holders at once, handed out between keys (the
client each request is for) in turns rather than first come, first served.

The rule, each time a slot is free and requests wait:
  1. the keys still under their share (`share` of the slots, rounded down, at least one) come
     first; of those, the key served least recently (a key holding and waiting for nothing is
     forgotten, so it counts as never served); keys equally placed go by when they began
     waiting;
  2. when every waiting key holds its share, the slot still goes to one of them in the same
     order: nothing idles while requests wait;
  3. a key's own requests are served in their order of arrival.
A slot being held is never taken back: the longest a newcomer waits for a slot is the time the
quickest running holder needs to finish.

Cancellation is safe: a waiter that is cancelled (or whose `unless` completes first) leaves the
queue; a slot handed to it at that very moment is passed on. `run` holds its slot until the
worker thread ends, even when the caller is cancelled meanwhile, so no more than `slots`
threads ever run. Memory is one small entry per key that holds or waits (the callers bound the
waiters: one request per connection, a bounded number of connections).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


def share_cap(share: float, slots: int) -> int:
    """How many of `slots` one key (an account, a client) may hold while others wait: `share`
    of them, rounded down, at least one. The job queue's rule too (processing/queue.py)."""
    return max(1, math.floor(share * max(1, slots)))


class Abandoned(Exception):
    """The waiter's `unless` completed before it got a slot: it left the queue."""


class FairGate:
    def __init__(self, slots: int, share: float) -> None:
        self.slots = max(1, slots)
        self.cap = share_cap(share, self.slots)  # a key's share while others wait
        self.busy = 0
        self._held: dict[Hashable, int] = {}
        # keys in the order they began waiting; each key's waiters in arrival order
        self._waiting: dict[Hashable, deque[asyncio.Future[None]]] = {}
        self._served: dict[Hashable, int] = {}  # the turn a key was last given a slot at
        self._turn = 0

    # -- what tests and logs look at ---------------------------------------------------------
    def held(self, key: Hashable) -> int:
        return self._held.get(key, 0)

    def waiting(self, key: Hashable | None = None) -> int:
        """Requests waiting for a slot (of `key`, or all)."""
        if key is not None:
            return sum(not f.done() for f in self._waiting.get(key, ()))
        return sum(not f.done() for queue in self._waiting.values() for f in queue)

    def known(self) -> int:
        """Keys the gate keeps anything about (bounded by the holders and waiters)."""
        return len(set(self._held) | set(self._waiting) | set(self._served))

    # -- taking and giving back --------------------------------------------------------------
    async def acquire(self, key: Hashable, unless: Awaitable[object] | None = None) -> None:
        """Wait for a slot for `key`. With `unless`: should it complete first, the request
        leaves the queue and Abandoned is raised (with no slot held)."""
        if unless is None or (self.busy < self.slots and not self._waiting):
            if asyncio.iscoroutine(unless):
                unless.close()  # a free slot: nothing to watch for
            await self._acquire(key)
            return
        waiting = asyncio.ensure_future(self._acquire(key))
        watch = asyncio.ensure_future(unless)
        try:
            await asyncio.wait((waiting, watch), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the caller was cancelled
            watch.cancel()
            self._abandon(key, waiting)
            raise
        watch.cancel()
        if watch.done() and not watch.cancelled():
            watch.exception()  # retrieved: whatever it ended with, the request leaves
        if waiting.done() and not waiting.cancelled() and waiting.exception() is None:
            return  # a slot (even if `unless` completed in the same turn)
        self._abandon(key, waiting)
        raise Abandoned

    def release(self, key: Hashable) -> None:
        held = self._held.get(key, 0)
        if held <= 0:
            raise RuntimeError(f"release of a slot {key!r} does not hold")
        self.busy -= 1
        if held == 1:
            del self._held[key]
            self._forget(key)
        else:
            self._held[key] = held - 1
        self._dispatch()

    @contextlib.asynccontextmanager
    async def slot(self, key: Hashable, unless: Awaitable[object] | None = None
                   ) -> AsyncIterator[None]:
        await self.acquire(key, unless)
        try:
            yield
        finally:
            self.release(key)

    async def run(self, key: Hashable, func: Callable[..., T], /, *args: Any,
                  unless: Awaitable[object] | None = None, **kwargs: Any) -> T:
        """`func(*args, **kwargs)` in a worker thread once `key` has a slot. The slot is given
        back when the thread ends, also when the caller is cancelled before (the thread
        cannot be stopped, so its slot stays taken until then)."""
        await self.acquire(key, unless)
        try:
            work = asyncio.ensure_future(asyncio.to_thread(func, *args, **kwargs))
        except BaseException:
            self.release(key)
            raise
        work.add_done_callback(functools.partial(self._work_done, key))
        return await asyncio.shield(work)

    # -- inside ------------------------------------------------------------------------------
    async def _acquire(self, key: Hashable) -> None:
        if self.busy < self.slots and not self._waiting:
            self._grant(key)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, deque()).append(future)
        self._dispatch()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(key)  # given a slot as it was cancelled: the next one's
            else:
                self._drop_waiter(key, future)
            raise

    def _abandon(self, key: Hashable, waiting: asyncio.Future[None]) -> None:
        if not waiting.done():
            waiting.cancel()  # _acquire leaves the queue, or passes a slot given meanwhile on
        elif not waiting.cancelled() and waiting.exception() is None:
            self.release(key)

    def _work_done(self, key: Hashable, work: asyncio.Future[Any]) -> None:
        if not work.cancelled():
            work.exception()  # retrieved: a caller cancelled meanwhile never reads it
        self.release(key)

    def _grant(self, key: Hashable) -> None:
        self.busy += 1
        self._held[key] = self._held.get(key, 0) + 1
        self._turn += 1
        self._served[key] = self._turn

    def _next_key(self) -> Hashable:
        keys = [k for k in self._waiting if self._held.get(k, 0) < self.cap] or \
            list(self._waiting)
        return min(keys, key=lambda k: self._served.get(k, 0))  # ties: first to wait

    def _dispatch(self) -> None:
        while self.busy < self.slots and self._waiting:
            key = self._next_key()
            queue = self._waiting[key]
            future = queue.popleft()
            if not queue:
                del self._waiting[key]
            if future.done():  # cancelled; its task has not run its handler yet
                self._forget(key)
                continue
            self._grant(key)
            future.set_result(None)

    def _drop_waiter(self, key: Hashable, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(key)
        if queue is not None:
            with contextlib.suppress(ValueError):
                queue.remove(future)
            if not queue:
                del self._waiting[key]
        self._forget(key)

    def _forget(self, key: Hashable) -> None:
        if key not in self._held and key not in self._waiting:
            self._served.pop(key, None)
