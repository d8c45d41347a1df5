"""The embedded executor: a bounded thread pool inside `sanitas serve`.

The database is the queue. A scheduler thread wakes when an upload is committed (notify) or
every `executor_poll_interval_seconds`, and starts as many runnable jobs (waiting and due, or
active with a stale heartbeat: a crash or restart) as there are free workers, high priority
first. Pause is a row, so it holds across processes. The expiry sweep (files and reports)
runs on the same thread every `expiry_sweep_interval_seconds`. Webhook deliveries are sent by
a thread of their own (sanitas/webhooks/sender.py), started and stopped with the executor.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from sanitas.config import Settings
from sanitas.datadir import scratch
from sanitas.processing import queue, run, sweeps
from sanitas.reports.service import expire_reports
from sanitas.storage import Storage

log = logging.getLogger(__name__)
_thread_state = threading.local()


class LocalExecutor:
    name = "local"

    def __init__(self, settings: Settings, factory: sessionmaker[Session],
                 storage: Storage) -> None:
        self.settings, self.factory, self.storage = settings, factory, storage
        self.size = max(1, settings.executor_workers)
        self.express = settings.executor_express_workers
        self.pool = ThreadPoolExecutor(max_workers=self.size + self.express,
                                       thread_name_prefix="sanitas-job")
        self.inflight: set[str] = set()  # the jobs the workers run
        self.express_inflight: set[str] = set()  # those the express workers run
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="sanitas-scheduler", daemon=True)
        self.last_sweep = 0.0
        self.orphans = sweeps.OrphanSweeper()
        from sanitas.webhooks.sender import WebhookSender

        self.webhooks = WebhookSender(settings, factory)

    # -- the interface the API uses -------------------------------------------------------
    def start(self) -> None:
        if self.settings.sandbox == "bwrap":
            from sanitas.sandbox import bwrap

            # The thread that starts every sandbox (their parent-death signal follows it, so
            # the short-lived prestart thread below must not start them itself): from here,
            # before any job thread lowers its priority, so it is not niced itself.
            bwrap.ensure_starter()
        self.thread.start()
        self.webhooks.start()
        threading.Thread(target=_prestart_sandboxes, args=(self.settings,), daemon=True,
                         name="sanitas-sandbox-prestart").start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=10)
        self.webhooks.stop()
        # Running jobs finish (their rows are also safe if the process dies instead).
        self.pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, job_id: str, priority: int = 0) -> None:
        self.wake.set()

    def kick(self) -> None:
        self.wake.set()

    def workers(self) -> int:
        return self.size if self.thread.is_alive() else 0

    def healthy(self) -> bool:
        return self.thread.is_alive()

    # -- the scheduler ----------------------------------------------------------------------
    def _loop(self) -> None:
        while not self.stopping.is_set():
            try:
                self._maybe_sweep()
                self._dispatch()
            except Exception:
                log.exception("executor scheduling failed; retrying")
            self.wake.wait(self.settings.executor_poll_interval_seconds)
            self.wake.clear()

    def _maybe_sweep(self) -> None:
        now = time.monotonic()
        if now - self.last_sweep >= self.settings.expiry_sweep_interval_seconds:
            self.last_sweep = now
            # The first pass runs at start: work folders and upload files a crash left behind.
            scratch.sweep(self.settings)
            n = sweeps.expire_files(self.factory, self.storage)
            if n:
                log.info("expired %d file(s)", n)
            n = expire_reports(self.factory, self.storage)
            if n:
                log.info("expired %d report(s)", n)
            self.orphans.maybe_run(self.factory, self.storage)

    def _dispatch(self) -> None:
        """Start what the free workers can take: any job for the workers, then for the express
        workers the small quick jobs still waiting (`queue.find_runnable(express=True)`), in
        the fair order both times."""
        with self.lock:
            free = self.size - len(self.inflight)
            free_express = self.express - len(self.express_inflight)
            busy = self.inflight | self.express_inflight
        if free <= 0 and free_express <= 0:
            return
        with self.factory() as s:
            if queue.is_paused(s):
                return
            runnable = (queue.find_runnable(s, self.settings, free, exclude=busy)
                        if free > 0 else [])
            busy |= {job_id for job_id, _ in runnable}
            express = (queue.find_runnable(s, self.settings, free_express, exclude=busy,
                                           workers=self.express, express=True)
                       if free_express > 0 else [])
        for lane, jobs in ((self.inflight, runnable), (self.express_inflight, express)):
            for job_id, _priority in jobs:
                with self.lock:
                    lane.add(job_id)
                self.pool.submit(self._run, job_id, lane)

    def _lower_priority(self) -> None:
        """Run jobs (and the sandboxes they start, which inherit it) at a lower CPU priority
        than the API threads, so status calls stay fast while every worker is busy."""
        if self.settings.executor_nice <= 0 or getattr(_thread_state, "niced", False):
            return
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(),
                           min(19, self.settings.executor_nice))
        except (OSError, AttributeError):
            log.debug("could not lower the job thread's priority", exc_info=True)
        _thread_state.niced = True

    def _run(self, job_id: str, lane: set[str]) -> None:
        self._lower_priority()
        try:
            run.run_job(job_id, factory=self.factory, settings=self.settings,
                         storage=self.storage)  # logs its outcome
        except Exception:
            log.exception("job %s: unexpected error", job_id)
        finally:
            with self.lock:
                lane.discard(job_id)
            self.wake.set()  # a worker is free: look for the next job


def _prestart_sandboxes(settings: Settings) -> None:
    """Start the sandbox's spare processes now, so the first jobs do not pay for it (they are
    started by the sandbox's own long-lived thread, and outlive this one)."""
    try:
        from sanitas.sandbox import bwrap

        if settings.sandbox == "bwrap":
            bwrap.prestart(settings)
    except Exception:
        log.warning("could not pre-start sandboxes", exc_info=True)


# -- several API processes: the executor in the supervising process ------------------------------
def wake_socket_path(settings: Settings) -> Path:
    """Where the local executor of `sanitas serve --workers N` listens for wake-ups."""
    return settings.data_dir / "run" / "executor.sock"


WAKE, PING = b"w", b"p"


class WakeListener:
    """Receives the API processes' wake-ups (a datagram per upload or resume) on a Unix socket
    in the data dir and wakes the executor's scheduler."""

    def __init__(self, settings: Settings, executor: LocalExecutor) -> None:
        import socket

        self.path = wake_socket_path(settings)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path.unlink(missing_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.path))
        self.executor = executor
        self.thread = threading.Thread(target=self._loop, name="sanitas-wake", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _loop(self) -> None:
        while True:
            try:
                message = self.sock.recv(16)
            except OSError:
                return  # closed
            if message.startswith(WAKE):
                self.executor.wake.set()

    def stop(self) -> None:
        self.sock.close()
        self.path.unlink(missing_ok=True)


class LocalExecutorClient:
    """The local executor as an API process of `sanitas serve --workers N` sees it: it runs in
    the supervising process, and this only wakes it (the database is the queue)."""

    name = "local"

    def __init__(self, settings: Settings) -> None:
        import socket

        self.settings = settings
        self.path = str(wake_socket_path(settings))
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)

    def start(self) -> None:
        """Nothing to start: the supervisor's executor runs the jobs."""

    def stop(self) -> None:
        self.sock.close()

    def _send(self, message: bytes) -> bool:
        try:
            self.sock.sendto(message, self.path)
            return True
        except BlockingIOError:
            return True  # its queue is full: a wake-up is pending anyway
        except OSError:
            return False  # nobody listens: the supervisor and its executor are gone

    def submit(self, job_id: str, priority: int = 0) -> None:
        if not self._send(WAKE):
            log.warning("the executor did not answer a wake-up; job %s waits for its next "
                        "scan", job_id)

    def kick(self) -> None:
        self._send(WAKE)

    def workers(self) -> int:
        return max(1, self.settings.executor_workers) if self.healthy() else 0

    def healthy(self) -> bool:
        return self._send(PING)
