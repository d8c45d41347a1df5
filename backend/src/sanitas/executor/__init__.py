"""Job executors. `start_background_services` is called by the API process on start-up and
returns the callables that stop what it started."""

from __future__ import annotations

from collections.abc import Callable


def start_background_services(app) -> list[Callable[[], None]]:
    return []
