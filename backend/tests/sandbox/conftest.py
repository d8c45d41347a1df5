"""Sandbox fixtures: settings for the real bubblewrap sandbox, and the engine corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanitas.config import Settings
from tests.engine.corpus import write_corpus


@pytest.fixture
def sandbox_settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data", sandbox="bwrap", executor_workers=1,
                    secret_key="test-secret-key-that-is-long-enough-0123456789")


@pytest.fixture(scope="session")
def sandbox_corpus(tmp_path_factory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("sandbox-corpus"))

