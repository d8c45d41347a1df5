from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sanitas.main import create_app


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings)) as c:
        yield c
