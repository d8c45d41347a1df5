"""The operator's first run (README, top): `make run` serves from the repository root with its
data in ./data; `sanitas create-admin` must reach that installation or refuse, naming where it
looked, and the links in the verification mail must point where `serve` listens."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from sanitas import doctor
from sanitas.auth.google import redirect_uri
from sanitas.config import Settings
from tests.conftest import PG_ADMIN_URL, _worker
from tests.live_server import free_port, start_server, stop_server
from tests.outbox import outbox_links

SANITAS = Path(sys.executable).parent / "sanitas"
PASSWORD = "first-run-password-1"


def _sanitas(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real entry point, started in `cwd` with no SANITAS_* setting but `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SANITAS_")}
    return subprocess.run([str(SANITAS), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False, env={**clean, **env})


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_create_admin_finds_the_installation_serve_uses_or_refuses_naming_it(tmp_path):
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    checkout.mkdir()
    elsewhere.mkdir()
    assert _sanitas(checkout, "migrate").returncode == 0  # what `make run` does first, in ./data
    database = checkout / "data" / "sanitas.db"

    lost = _sanitas(elsewhere, "create-admin", "admin@example.com", "--password", PASSWORD)
    assert lost.returncode == 2 and "Created" not in lost.stdout
    assert f"there is no database at {elsewhere / 'data' / 'sanitas.db'}" in lost.stderr
    assert "SANITAS_DATA_DIR" in lost.stderr and "sanitas migrate" in lost.stderr
    assert _tree(elsewhere) == []  # no second, empty database (nor its folder)

    here = _sanitas(checkout, "create-admin", "admin@example.com", "--password", PASSWORD)
    assert here.returncode == 0, here.stderr
    assert here.stdout.strip() == "Created admin admin@example.com."
    with sqlite3.connect(database) as db:
        assert db.execute("select email, role from users").fetchall() == [
            ("admin@example.com", "ADMIN")]


def test_create_admin_refuses_a_database_that_was_never_migrated(tmp_path):
    """A SQLite file `serve` created but never migrated (it stopped at the sandbox check), and
    an empty PostgreSQL database: neither is an installation; the password is never shown."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sanitas.db").touch(mode=0o600)
    empty = _sanitas(tmp_path, "create-admin", "admin@example.com", "--password", PASSWORD)
    assert empty.returncode == 2
    assert f"the database sqlite:///{tmp_path / 'data' / 'sanitas.db'} has never been " \
           "migrated" in empty.stderr

    admin = make_url(PG_ADMIN_URL)
    name = f"sanitas_first_run_{_worker()}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        url = admin.set(database=name, password="pg-secret-never-shown")
        done = _sanitas(tmp_path, "create-admin", "admin@example.com", "--password", PASSWORD,
                        SANITAS_DATABASE_URL=url.render_as_string(hide_password=False))
        assert done.returncode == 2
        assert f"127.0.0.1:5432/{name} has never been migrated" in done.stderr, done.stderr
        assert "pg-secret-never-shown" not in done.stdout + done.stderr
        assert PASSWORD not in done.stdout + done.stderr
        with create_engine(admin.set(database=name)).connect() as conn:
            assert conn.execute(text("select count(*) from pg_tables where schemaname = "
                                     "'public'")).scalar() == 0
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def test_doctor_says_where_it_looked_creates_nothing_and_sees_links_miss_serve(tmp_path):
    """Run from a folder without the installation, and with SANITAS_PORT changed while
    SANITAS_PUBLIC_URL still names the old port."""
    done = _sanitas(tmp_path, "doctor", SANITAS_PORT="8310",
                    SANITAS_PUBLIC_URL="http://127.0.0.1:8000")
    assert done.returncode == 1
    assert ("WARN  public url  links in e-mails go to http://127.0.0.1:8000, but `sanitas serve` "
            "listens on 127.0.0.1:8310 (SANITAS_HOST, SANITAS_PORT)") in done.stdout
    assert f"FAIL  database    no database at {tmp_path / 'data' / 'sanitas.db'}" in done.stdout
    assert f"FAIL  storage     local: {tmp_path / 'data'} does not exist" in done.stdout
    assert "was started in, or with its SANITAS_DATA_DIR" in done.stdout
    assert _tree(tmp_path) == []


def test_the_verification_link_points_where_serve_listens(tmp_path):
    """`serve --port P` with no public URL set: the link in the mail goes to P (the option
    stands for SANITAS_PORT, which the environment here names as the old default)."""
    port = free_port()
    server = start_server(tmp_path, port, extra_env={"SANITAS_PORT": "8000"},
                          args=("--port", str(port)))
    try:
        answer = httpx.post(f"http://127.0.0.1:{port}/api/auth/register", timeout=30,
                            json={"email": "new@example.com", "password": PASSWORD})
        assert answer.status_code == 201, answer.text
        settings = Settings(data_dir=tmp_path)
        deadline = time.monotonic() + 30
        while not (links := outbox_links(settings, "/verify-email")):
            assert time.monotonic() < deadline, "no verification mail in the outbox"
            time.sleep(0.2)
    finally:
        stop_server(server)
    assert len(links) == 1 and links[0].startswith(f"http://127.0.0.1:{port}/verify-email?token=")


@pytest.mark.parametrize(("env", "public_url"), [
    ({"SANITAS_PORT": "8310"}, "http://127.0.0.1:8310"),
    ({"SANITAS_HOST": "localhost", "SANITAS_PORT": "9000"}, "http://localhost:9000"),
    ({"SANITAS_HOST": "0.0.0.0"}, "http://127.0.0.1:8000"),  # noqa: S104
    ({"SANITAS_HOST": "::", "SANITAS_PORT": "8310"}, "http://[::1]:8310"),
    ({"SANITAS_HOST": "::1"}, "http://[::1]:8000"),
    ({"SANITAS_PORT": "8310", "SANITAS_PUBLIC_URL": "https://sanitas.example.com"},
     "https://sanitas.example.com"),
])
def test_the_public_url_defaults_to_the_listen_address(tmp_path, monkeypatch, env, public_url):
    for name in ("SANITAS_HOST", "SANITAS_PORT", "SANITAS_PUBLIC_URL",
                 "SANITAS_GOOGLE_REDIRECT_URI"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings(data_dir=tmp_path)
    assert settings.public_url == public_url
    assert redirect_uri(settings) == f"{public_url}/api/auth/google/callback"


@pytest.mark.parametrize(("host", "port", "public_url", "status", "says"), [
    ("127.0.0.1", 8000, None, "ok", "http://127.0.0.1:8000"),
    ("127.0.0.1", 8310, None, "ok", "http://127.0.0.1:8310"),
    ("127.0.0.1", 8310, "http://127.0.0.1:8000", "warn", "listens on 127.0.0.1:8310"),
    ("127.0.0.1", 8310, "http://localhost:8000/", "warn", "listens on 127.0.0.1:8310"),
    ("10.1.2.3", 8000, "http://127.0.0.1:8000", "warn", "listens on 10.1.2.3:8000"),
    ("10.1.2.3", 8000, "http://10.1.2.3", "warn", "listens on 10.1.2.3:8000"),
    ("10.1.2.3", 8000, "http://10.1.2.3:8000", "ok", "http://10.1.2.3:8000"),
    ("0.0.0.0", 8000, None, "warn", "which only this machine opens"),  # noqa: S104
    ("0.0.0.0", 8000, "http://[::1]:8000", "warn", "which only this machine opens"),  # noqa: S104
    ("0.0.0.0", 8000, "http://sanitas.lan:8000", "ok", "http://sanitas.lan:8000"),  # noqa: S104
    # Another host name: a reverse proxy in front of `serve`, as docs/deploying.md has it.
    ("127.0.0.1", 8000, "https://sanitas.example.com", "ok", "https://sanitas.example.com"),
    ("127.0.0.1", 8000, "http://127.0.0.1:99999", "fail", "is not a URL"),
])
def test_doctor_checks_the_public_url_against_the_listen_address(tmp_path, monkeypatch, host,
                                                                 port, public_url, status, says):
    monkeypatch.delenv("SANITAS_PUBLIC_URL", raising=False)
    settings = Settings(data_dir=tmp_path, host=host, port=port,
                        **({"public_url": public_url} if public_url else {}))
    check = doctor._public_url(settings)
    assert (check.status, says in check.detail) == (status, True), check
