from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sanitas.main import create_app
from sanitas.storage import make_storage


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture
def api(settings):
    """The app without the background executor: uploads stay PENDING."""
    with TestClient(create_app(settings, start_background=False)) as c:
        yield c


@pytest.fixture
def storage(settings):
    return make_storage(settings)


@pytest.fixture
def live(settings):
    """The app with the embedded executor running (tests.api.polling.wait_for waits for it)."""
    settings.executor_poll_interval_seconds = 0.2
    with TestClient(create_app(settings)) as c:
        yield c
