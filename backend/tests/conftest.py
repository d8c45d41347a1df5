"""Shared fixtures. API tests run once on SQLite and once on PostgreSQL (`db_url`); an S3
server on loopback (`s3_endpoint`) for the storage and Celery tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.migrate import upgrade_to_head
from tests.databases import PG_ADMIN_URL, fresh_pg_database, truncate_all


def _worker() -> str:
    # Unique per process: several test runs (and xdist workers) may share this server.
    return f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
    upgrade_to_head(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def pg_database_url() -> Iterator[str]:
    with ExitStack() as stack:
        try:
            url = stack.enter_context(fresh_pg_database(f"sanitas_test_{_worker()}"))
        except Exception as exc:  # noqa: BLE001 - never skip silently: PostgreSQL is part of the contract
            pytest.fail(f"PostgreSQL at {make_url(PG_ADMIN_URL).render_as_string()} is not "
                        f"reachable: {exc}")
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A migrated, empty database for one test, on each backend."""
    if request.param == "sqlite":
        path = tmp_path / "sanitas.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("pg_database_url")
    truncate_all(url)
    return url


@pytest.fixture
def settings(tmp_path, db_url) -> Settings:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    return Settings(data_dir=data_dir, database_url=db_url,
                    secret_key="test-secret-key-that-is-long-enough-0123456789",
                    public_url="http://testserver")


@pytest.fixture
def db_session(settings):
    engine = make_engine(str(settings.database_url))
    factory = make_sessionmaker(engine)
    with factory() as session:
        yield session
    engine.dispose()


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3-compatible server on a free loopback port, in a thread of this process (other
    processes, e.g. `sanitas worker`, reach it over HTTP); its URL. Any credentials work."""
    import socket

    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()
