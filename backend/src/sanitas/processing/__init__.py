"""Job executors. `start_background_services` is called by the API process on start-up and
returns the callables that stop what it started.

The API talks to `app.state.executor`, an `Executor` (the protocol is web/deps.py's, the one
thing the web side knows of processing): LocalExecutor, LocalExecutorClient or CeleryExecutor.

The package: run.py runs a job (claim, sandbox, store), outcome.py records how it ended (job
and file rows, webhook events), queue.py and routes.py are the queue and its admin calls,
sweeps.py the periodic clean-ups, local.py and celery_app.py the two executors."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sanitas.web.deps import Executor
from sanitas.web.health import register_health_check

if TYPE_CHECKING:
    from fastapi import FastAPI
    from sqlalchemy.orm import Session, sessionmaker

    from sanitas.config import Settings
    from sanitas.storage import Storage

__all__ = ["Executor", "executor_connections", "make_executor", "run_supervisor_executor",
           "start_background_services"]

log = logging.getLogger(__name__)


def executor_connections(settings: Settings) -> int:
    """Database connections the local executor may hold at once: each job thread, its
    heartbeat and its progress writes (the express workers' too), plus the scheduler and the
    periodic sweeps."""
    return 3 * (settings.executor_workers + settings.executor_express_workers) + 4


def make_executor(settings: Settings, factory: sessionmaker[Session],
                  storage: Storage) -> Executor:
    if settings.executor == "celery":
        from sanitas.processing.celery_app import CeleryExecutor

        return CeleryExecutor(settings, factory, storage)
    from sanitas.processing.local import LocalExecutor

    return LocalExecutor(settings, factory, storage)


def _executor_up(app: FastAPI) -> bool:
    executor: Executor | None = getattr(app.state, "executor", None)
    if executor is None:  # this process runs no executor (tests, or background disabled)
        return not getattr(app.state, "executor_expected", False)
    return executor.healthy()


_last_warning = [-3600.0]


def _storage_up(app: FastAPI) -> str:
    """down: the storage cannot be used; degraded: a filesystem the service writes to is short
    of free space (SANITAS_MIN_FREE_BYTES), so uploads are refused with 507."""
    from sanitas.datadir.diskspace import short_of_room
    from sanitas.storage import make_storage

    settings: Settings = app.state.settings
    storage: Storage = getattr(app.state, "storage", None) or make_storage(settings)
    if not storage.healthy():
        return "down"
    short = short_of_room(settings)
    if not short:
        return "up"
    if time.monotonic() - _last_warning[0] > 60:  # /health may be polled often
        _last_warning[0] = time.monotonic()
        log.warning("storage degraded: %s", "; ".join(
            f"{r.path} has {r.free_bytes // (1024 * 1024)} MB free" for r in short))
    return "degraded"


register_health_check("storage", _storage_up)
register_health_check("executor", _executor_up)


def start_background_services(app: FastAPI, *, executor_in_supervisor: bool = False
                              ) -> list[Callable[[], None]]:
    """Start this process's executor. With `executor_in_supervisor` (an API process of
    `sanitas serve --workers N`) the local executor runs in the supervising process, and this
    process only wakes it."""
    from sanitas.storage import make_storage

    settings = app.state.settings
    from sanitas.processing.sweeps import sweep_scratch

    sweep_scratch(settings, legacy=True)  # what a crash left (a live process's is locked)
    if getattr(app.state, "storage", None) is None:
        app.state.storage = make_storage(settings)
    executor: Executor
    if executor_in_supervisor and settings.executor == "local":
        from sanitas.processing.local import LocalExecutorClient

        executor = LocalExecutorClient(settings)
    else:
        executor = make_executor(settings, app.state.sessionmaker, app.state.storage)
    executor.start()
    app.state.executor = executor
    app.state.executor_expected = True
    log.info("executor %s started (%s workers)", executor.name,
             settings.executor_workers if executor.name == "local" else "remote")

    def stop() -> None:
        executor.stop()
        app.state.executor = None

    return [stop]


def run_supervisor_executor(settings: Settings) -> Callable[[], None]:
    """`sanitas serve --workers N`: the local executor (and its wake-up socket) in the
    supervising process, with its own connection pool. Returns its stop."""
    from sanitas.db import make_engine, make_sessionmaker
    from sanitas.processing.local import LocalExecutor, WakeListener
    from sanitas.storage import make_storage

    engine = make_engine(str(settings.database_url), pool_size=executor_connections(settings))
    executor = LocalExecutor(settings, make_sessionmaker(engine), make_storage(settings))
    listener = WakeListener(settings, executor)
    listener.start()
    executor.start()
    log.info("executor local started in the supervisor (%s workers)", settings.executor_workers)

    def stop() -> None:
        listener.stop()
        executor.stop()
        engine.dispose()

    return stop
