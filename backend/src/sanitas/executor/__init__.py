"""Job executors. `start_background_services` is called by the API process on start-up and
returns the callables that stop what it started.

The API talks to `app.state.executor` (LocalExecutor or CeleryExecutor): submit(job_id,
priority) after an upload is committed, kick() after a resume, workers() and healthy()."""

from __future__ import annotations

import logging
from collections.abc import Callable

from sanitas.health import register_health_check

log = logging.getLogger(__name__)


def make_executor(settings, factory, storage):
    if settings.executor == "celery":
        from sanitas.executor.celery_app import CeleryExecutor

        return CeleryExecutor(settings, factory, storage)
    from sanitas.executor.local import LocalExecutor

    return LocalExecutor(settings, factory, storage)


def _executor_up(app) -> bool:
    executor = getattr(app.state, "executor", None)
    if executor is None:  # this process runs no executor (tests, or background disabled)
        return not getattr(app.state, "executor_expected", False)
    return executor.healthy()


def _storage_up(app) -> bool:
    from sanitas.storage import make_storage

    storage = getattr(app.state, "storage", None) or make_storage(app.state.settings)
    return storage.healthy()


register_health_check("storage", _storage_up)
register_health_check("executor", _executor_up)


def start_background_services(app) -> list[Callable[[], None]]:
    from sanitas.storage import make_storage

    settings = app.state.settings
    if getattr(app.state, "storage", None) is None:
        app.state.storage = make_storage(settings)
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
