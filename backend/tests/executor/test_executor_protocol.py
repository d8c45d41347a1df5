"""Every executor the API may hold implements sanitas.processing.Executor, with the protocol's
parameters (a Protocol is structural: nothing else would notice a method going missing or
changing its signature until the route that calls it fails)."""

from __future__ import annotations

import inspect

import pytest

from sanitas.processing.celery_app import CeleryExecutor
from sanitas.processing.local import LocalExecutor, LocalExecutorClient
from sanitas.web.deps import Executor

MEMBERS = [name for name in ("start", "stop", "submit", "kick", "workers", "healthy")
           if callable(getattr(Executor, name, None))]


def test_the_protocol_lists_what_the_api_calls():
    assert MEMBERS == ["start", "stop", "submit", "kick", "workers", "healthy"]
    assert "name" in Executor.__annotations__


@pytest.mark.parametrize("cls", [LocalExecutor, LocalExecutorClient, CeleryExecutor])
def test_executor_implements_the_protocol(cls):
    assert isinstance(getattr(cls, "name", None), str), f"{cls.__name__} has no name"
    for member in MEMBERS:
        method = getattr(cls, member, None)
        assert callable(method), f"{cls.__name__}.{member} is missing"
        expected = inspect.signature(getattr(Executor, member))
        actual = inspect.signature(method)
        assert list(actual.parameters) == list(expected.parameters), (cls.__name__, member)
        for name, parameter in expected.parameters.items():
            assert actual.parameters[name].default == parameter.default, (
                cls.__name__, member, name)
