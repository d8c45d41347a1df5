"""Answer shapes of the processing queue's admin calls (camelCase)."""

from __future__ import annotations

from sanitas.web.schemas import CamelModel


class QueueStats(CamelModel):
    waiting: int
    active: int
    completed: int
    failed: int
    paused: bool
    workers: int
    executor: str


class QueuePaused(CamelModel):
    paused: bool


class QueueCleared(CamelModel):
    cleared: int
