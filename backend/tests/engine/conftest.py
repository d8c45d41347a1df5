"""Engine test fixtures: the generated corpus (once per session) and an output folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.corpus import write_corpus


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture
def out_dir(tmp_path) -> Path:
    path = tmp_path / "out"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def every_finding_kind_is_declared():
    """Every engine test doubles as a check of the finding-kind registry (engine/kinds.py):
    a kind recorded during the test that is not declared there fails it."""
    from sanitas.engine.kinds import UNDECLARED

    before = set(UNDECLARED)
    yield
    new = UNDECLARED - before
    assert not new, f"finding kinds recorded but not declared in engine/kinds.py: {sorted(new)}"
