"""A file's processing finished: told, in this process, to whoever waits for it.

The one-call API (`POST /api/v1/sanitize`) holds the request open until the file is done.
It looks at the file's status now and then (the only way to learn it from another process: a
Celery worker, `sanitas serve --workers N`'s supervisor); when the job runs in this process
(the embedded default), the executor also says so here the moment it ends, and the request
answers then instead of at its next look (up to half a second later, the whole of a small
file's processing time).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}


@contextlib.contextmanager
def watching(file_id: str) -> Iterator[asyncio.Event]:
    """An event set when `notify(file_id)` is called while the block runs (from any thread).
    Called on the event loop the block awaits on."""
    entry = (asyncio.get_running_loop(), asyncio.Event())
    with _lock:
        _waiting.setdefault(file_id, []).append(entry)
    try:
        yield entry[1]
    finally:
        with _lock:
            entries = _waiting.get(file_id, [])
            if entry in entries:
                entries.remove(entry)
            if not entries:
                _waiting.pop(file_id, None)


def notify(file_id: str) -> None:
    """The job of `file_id` ended (done, failed or put back to wait: the waiter reads the
    status itself)."""
    with _lock:
        entries = list(_waiting.get(file_id, ()))
    for loop, event in entries:
        with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits on it
            loop.call_soon_threadsafe(event.set)
