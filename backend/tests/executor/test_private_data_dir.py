"""The data directory is private: `sanitas migrate` and `sanitas serve`, started with a lax
umask against a fresh data directory, leave it 0700 and the database, its WAL, the outbox's
mail, blobs and scratch 0600 (directories 0700); an existing open data directory is
tightened, and the log says so. The sandbox still processes files (it gets descriptors)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import httpx

from sanitas.config import Settings
from sanitas.datadir import prepare_data_dir
from tests.executor.jobkit import BIN, stop, wait_http, wait_until
from tests.factories import pdf_bytes
from tests.live_server import free_port

SECRET = "test-secret-key-that-is-long-enough-0123456789"


def _env(data_dir: Path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANITAS_")}
    env.update({"SANITAS_DATA_DIR": str(data_dir), "SANITAS_SECRET_KEY": SECRET,
                "SANITAS_LOG_LEVEL": "WARNING", "SANITAS_EXECUTOR_WORKERS": "1",
                "SANITAS_EXECUTOR_POLL_INTERVAL_SECONDS": "0.3"})
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _lax(args: list[str]) -> list[str]:
    """`sanitas ARGS` started with umask 022, as a shell or service manager commonly does."""
    return ["/bin/sh", "-c", 'umask 022 && exec "$@"', "sh", str(BIN / "sanitas"), *args]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(_lax(args), env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _open_paths(root: Path) -> list[str]:
    """Paths under `root` (itself included) that another account could read or enter."""
    paths = [root, *root.rglob("*")]
    return sorted(f"{p.relative_to(root.parent)} {oct(_mode(p))}" for p in paths
                  if _mode(p) & 0o077)


def test_fresh_data_dir_and_everything_in_it_are_private(tmp_path):
    data = tmp_path / "fresh" / "data"
    env = _env(data)
    done = _run(["migrate"], env)
    assert done.returncode == 0, done.stderr
    assert _mode(data) == 0o700
    assert _mode(data / "sanitas.db") == 0o600

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "serve.log", "ab")  # noqa: SIM115 (kept open for the child)
    server = subprocess.Popen(_lax(["serve", "--port", str(port)]), env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(f"{base}/health")
        answer = httpx.post(f"{base}/api/auth/register", timeout=30,
                            json={"email": "ada@example.com", "password": "secret12"})
        assert answer.status_code == 201, answer.text
        token = answer.json()["data"]["tokens"]["accessToken"]
        mails = wait_until(lambda: list((data / "outbox").glob("*.eml")), 10, "the mail")
        assert [_mode(m) for m in mails] == [0o600]
        assert _mode(data / "outbox") == 0o700
        wal = data / "sanitas.db-wal"
        assert wal.exists() and _mode(wal) == 0o600
        assert _mode(data / "sanitas.db-shm") == 0o600

        upload = httpx.post(f"{base}/api/upload/single", timeout=60,
                            headers={"Authorization": f"Bearer {token}"},
                            files={"file": ("plan.pdf", pdf_bytes())})
        assert upload.status_code == 201, upload.text
        file_id = upload.json()["data"]["fileId"]

        def finished():
            status = httpx.get(f"{base}/api/process/status/{file_id}", timeout=30,
                               headers={"Authorization": f"Bearer {token}"}).json()["data"]
            return status if status["file"]["status"] in ("COMPLETED", "FAILED") else None

        status = wait_until(finished, 120, "the job to finish", 0.3)
        # the sandbox (an unprivileged uid when run as root) still reads and writes its file
        assert status["file"]["status"] == "COMPLETED", status["file"]["errorMessage"]
        assert (data / "files" / "sanitized" / file_id).exists()
        assert _open_paths(data) == []
    finally:
        stop(server)
        log.close()


def test_an_open_data_dir_is_tightened_and_logged(tmp_path):
    data = tmp_path / "data"
    (data / "outbox").mkdir(parents=True)
    os.chmod(data, 0o755)  # noqa: S103 - the open directory the test expects tightened
    os.chmod(data / "outbox", 0o755)  # noqa: S103 - the open directory the test expects tightened
    (data / "outbox" / "old.eml").write_text("reset link")
    (data / "secret_key").write_text("x" * 48)
    for path in (data / "outbox" / "old.eml", data / "secret_key"):
        os.chmod(path, 0o644)
    done = _run(["migrate"], _env(data, SANITAS_LOG_LEVEL="INFO"))
    assert done.returncode == 0, done.stderr
    assert _open_paths(data) == []
    assert "now private" in done.stderr and str(data) in done.stderr
    # nothing left to tighten: nothing said
    again = _run(["migrate"], _env(data, SANITAS_LOG_LEVEL="INFO"))
    assert again.returncode == 0 and "now private" not in again.stderr


def test_prepare_data_dir_unit(tmp_path, caplog):
    data = tmp_path / "a" / "data"
    settings = Settings(data_dir=data, secret_key=SECRET)
    prepare_data_dir(settings)
    assert _mode(data) == 0o700 and _mode(data / "sanitas.db") == 0o600
    for name in ("sanitas.db", "sanitas.db-wal"):
        (data / name).touch()
        os.chmod(data / name, 0o664)
    prepare_data_dir(settings)
    assert _mode(data / "sanitas.db") == _mode(data / "sanitas.db-wal") == 0o600
    assert "sanitas.db-wal" in caplog.text


def test_a_data_dir_that_cannot_be_tightened_is_reported_not_fatal(tmp_path, caplog,
                                                                    monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)  # noqa: S103 - the open directory the test expects tightened

    def refuse(path, mode):
        raise PermissionError(1, "Operation not permitted", str(path))

    monkeypatch.setattr(os, "chmod", refuse)
    prepare_data_dir(Settings(data_dir=data, secret_key=SECRET))  # no exception
    assert "could not be made private" in caplog.text and str(data) in caplog.text
