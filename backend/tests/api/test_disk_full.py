"""A full disk answers 507 `insufficient_storage` with a sentence, never a bare 500 or a reset
connection: an upload streamed into a full filesystem, a blob that does not fit in storage,
a SQLite database on a full disk, and (unit level) injected ENOSPC/EDQUOT, PostgreSQL's
disk_full and a full S3 bucket. /health reports storage degraded (503) below
SANITAS_MIN_FREE_BYTES, and uploads are refused before their body is read.

The real-filesystem tests mount a small tmpfs (root or CAP_SYS_ADMIN needed)."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from sanitas.config import MB, Settings
from sanitas.datadir.scratch import uploads_dir
from sanitas.main import create_app
from sanitas.models import File, Job
from sanitas.storage import StorageError, StorageFull
from sanitas.web.errors import INSUFFICIENT_STORAGE_MESSAGE, is_out_of_space
from tests.factories import auth_headers, make_user, pdf_bytes
from tests.live_server import app_server

FULL = {"success": False, "message": INSUFFICIENT_STORAGE_MESSAGE,
        "error": "insufficient_storage"}
SECRET = "test-secret-key-that-is-long-enough-0123456789"


@pytest.fixture
def tmpfs():
    """mount(path, size) puts a fresh tmpfs of `size` (e.g. "1m") on `path`."""
    mounted: list[Path] = []

    def mount(path: Path, size: str) -> Path:
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a small tmpfs needs root (or CAP_SYS_ADMIN) and mount(8)")
        path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700",
                               "tmpfs", str(path)], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(path)
        return path

    yield mount
    for path in reversed(mounted):
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path) -> Path:
    """Write a file until its filesystem is full; returns it (delete it to make room)."""
    filler = directory / "filler"
    # Unbuffered: a buffered file keeps the part of a write the disk had no room for and
    # raises ENOSPC again when it is closed (whether it does depends on how the free space
    # divides into writes: a larger database template made this fail).
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def big_pdf(size: int) -> bytes:
    """A PDF (by its first bytes, which is all an upload looks at) of `size` bytes."""
    head = pdf_bytes(20_000)
    return head + b"\n%" + b"x" * (size - len(head) - 2)


def _rows(db_session) -> tuple[int, int]:
    db_session.expire_all()
    return (db_session.scalar(select(func.count()).select_from(File)),
            db_session.scalar(select(func.count()).select_from(Job)))


def _files_under(path: Path) -> list[str]:
    return sorted(p.name for p in path.rglob("*") if p.is_file())


# -- real filesystems --------------------------------------------------------------------
def test_upload_streamed_into_a_full_disk_is_507(tmpfs, settings, db_session):
    tmpfs(settings.data_dir, "1m")
    settings.min_free_bytes = 0  # no early refusal: the write itself fails
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    with TestClient(create_app(settings, start_background=False)) as api:
        answer = api.post("/api/upload/single", headers=h,
                          files={"file": ("big.pdf", big_pdf(3 * MB))})
        assert answer.status_code == 507, answer.text
        assert answer.json() == FULL
        assert _rows(db_session) == (0, 0)
        assert _files_under(settings.data_dir) == []  # the partial temp file is gone
        # the room is back: a small upload goes through
        small = api.post("/api/upload/single", headers=h,
                         files={"file": ("small.pdf", pdf_bytes(20_000))})
        assert small.status_code == 201, small.text


def test_blob_that_does_not_fit_in_storage_is_507(tmpfs, settings, db_session):
    tmpfs(settings.files_dir, "1m")  # the uploads' temp dir has room, the blob store not
    settings.min_free_bytes = 0
    user = make_user(db_session)
    with TestClient(create_app(settings, start_background=False)) as api:
        answer = api.post("/api/upload/single",
                          headers=auth_headers(settings, db_session, user),
                          files={"file": ("big.pdf", big_pdf(2 * MB))})
    assert answer.status_code == 507, answer.text
    assert answer.json() == FULL
    assert _rows(db_session) == (0, 0)
    assert _files_under(settings.files_dir) == []  # no half blob, no .put- temp file
    assert _files_under(uploads_dir(settings)) == []


def test_sqlite_database_on_a_full_disk_is_507(tmpfs, tmp_path, sqlite_template):
    db_dir = tmpfs(tmp_path / "db", "2m")
    shutil.copy(sqlite_template, db_dir / "sanitas.db")
    settings = Settings(data_dir=tmp_path / "data", database_url=f"sqlite:///{db_dir}/sanitas.db",
                        secret_key=SECRET, public_url="http://testserver", min_free_bytes=0,
                        rate_limit_register_per_ip=1000)
    with TestClient(create_app(settings, start_background=False)) as api:
        assert api.get("/health").status_code == 200  # the WAL and shm files exist now
        filler = fill(db_dir)
        answers = []
        for n in range(40):
            answer = api.post("/api/auth/register", json={"email": f"u{n}@example.com",
                                                          "password": "secret12"})
            answers.append(answer.status_code)
            if answer.status_code != 201:
                break
        assert answers[-1] == 507, answers
        assert set(answers) <= {201, 507}
        assert answer.json() == FULL
        filler.unlink()
        again = api.post("/api/auth/register", json={"email": "after@example.com",
                                                     "password": "secret12"})
        assert again.status_code == 201, again.text


def test_health_degrades_and_uploads_are_refused_below_the_minimum(tmpfs, settings,
                                                                     db_session):
    tmpfs(settings.data_dir, "8m")
    settings.min_free_bytes = 4 * MB
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    with TestClient(create_app(settings, start_background=False)) as api:
        assert api.get("/health").status_code == 200
        # an upload that would leave less than the minimum is refused before it is read
        big = api.post("/api/upload/single", headers=h,
                       files={"file": ("big.pdf", big_pdf(5 * MB))})
        assert big.status_code == 507 and big.json() == FULL
        filler = settings.data_dir / "filler"
        filler.write_bytes(b"\0" * (5 * MB))
        health = api.get("/health")
        assert health.status_code == 503
        data = health.json()["data"]
        assert data["storage"] == "degraded" and data["database"] == "up"
        assert data["status"] == "degraded"
        assert health.json()["success"] is False
        small = api.post("/api/upload/single", headers=h,
                         files={"file": ("small.pdf", pdf_bytes(20_000))})
        assert small.status_code == 507 and small.json() == FULL
        assert _rows(db_session) == (0, 0)
        filler.unlink()
        assert api.get("/health").status_code == 200
        ok = api.post("/api/upload/single", headers=h,
                      files={"file": ("small.pdf", pdf_bytes(20_000))})
        assert ok.status_code == 201


def test_below_the_minimum_without_a_mount(api, settings, db_session):
    """The same contract where no small filesystem can be mounted: a minimum larger than
    any disk."""
    settings.min_free_bytes = 1 << 62
    answer = api.get("/health")
    assert answer.status_code == 503
    assert answer.json() == {"success": False, "message": "Service degraded", "data": {
        "status": "degraded", "database": "up", "storage": "degraded", "executor": "up"}}
    user = make_user(db_session)
    upload = api.post("/api/upload/single", headers=auth_headers(settings, db_session, user),
                      files={"file": ("a.pdf", pdf_bytes())})
    assert upload.status_code == 507 and upload.json() == FULL
    settings.min_free_bytes = 0  # off
    assert api.get("/health").status_code == 200


@pytest.fixture
def live_server(settings):
    with app_server(settings, http="h11") as port:
        yield f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "chunked"])
def test_real_server_answers_507_without_resetting_the_upload(tmpfs, settings, db_session,
                                                              live_server, announced):
    """Over a real connection the client gets the answer, not a reset, while it is still
    sending a body larger than the disk's room."""
    tmpfs(settings.data_dir, "1m")
    settings.min_free_bytes = 0
    user = make_user(db_session)
    body = big_pdf(6 * MB)
    boundary = "sanitasboundary"
    payload = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
               f"filename=\"big.pdf\"\r\nContent-Type: application/pdf\r\n\r\n").encode() \
        + body + f"\r\n--{boundary}--\r\n".encode()
    headers = {**auth_headers(settings, db_session, user),
               "Content-Type": f"multipart/form-data; boundary={boundary}"}

    def pieces():
        for i in range(0, len(payload), 64 * 1024):
            yield payload[i:i + 64 * 1024]

    content = payload if announced else pieces()
    answer = httpx.post(f"{live_server}/api/upload/single", headers=headers, content=content,
                        timeout=60)
    assert answer.status_code == 507
    assert answer.json() == FULL
    assert _rows(db_session) == (0, 0)


# -- injected faults -------------------------------------------------------------------------
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_injected_enospc_in_storage_is_507(api, settings, db_session, monkeypatch, code):
    from sanitas.storage.local import LocalStorage

    def full(self, key, src, *, move=False):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(LocalStorage, "put_file", full)
    user = make_user(db_session)
    answer = api.post("/api/upload/single", headers=auth_headers(settings, db_session, user),
                      files={"file": ("a.pdf", pdf_bytes())})
    assert answer.status_code == 507 and answer.json() == FULL
    assert _rows(db_session) == (0, 0)
    assert _files_under(uploads_dir(settings)) == []


def test_injected_enospc_while_streaming_is_507(api, settings, db_session, monkeypatch):
    from sanitas.files.multipart import _Reader

    real = _Reader.on_part_data

    def on_part_data(self, data, start, end):
        real(self, data, start, end)
        if self._current is not None and self._current.size > 1024:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_Reader, "on_part_data", on_part_data)
    user = make_user(db_session)
    answer = api.post("/api/upload/multiple", headers=auth_headers(settings, db_session, user),
                      files=[("files", ("a.pdf", pdf_bytes())), ("files", ("b.pdf", pdf_bytes()))])
    assert answer.status_code == 507 and answer.json() == FULL
    assert _files_under(uploads_dir(settings)) == []


def _sqlite_full() -> OperationalError:
    orig = sqlite3.OperationalError("database or disk is full")
    orig.sqlite_errorcode = 13
    return OperationalError("INSERT ...", {}, orig)


def _pg_full() -> OperationalError:
    import psycopg.errors

    return OperationalError("INSERT ...", {}, psycopg.errors.DiskFull(
        'could not extend file "base/16384/16385": No space left on device'))


@pytest.mark.parametrize("make_error", [_sqlite_full, _pg_full], ids=["sqlite", "postgresql"])
def test_injected_database_full_is_507(api, settings, db_session, monkeypatch, make_error):
    from sqlalchemy.orm import Session

    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)

    def commit(self):
        raise make_error()

    monkeypatch.setattr(Session, "commit", commit)
    answer = api.post("/api/upload/single", headers=h, files={"file": ("a.pdf", pdf_bytes())})
    assert answer.status_code == 507 and answer.json() == FULL


def test_other_os_errors_stay_500(api, settings, db_session, monkeypatch):
    from sanitas.storage.local import LocalStorage

    def broken(self, key, src, *, move=False):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(LocalStorage, "put_file", broken)
    user = make_user(db_session)
    answer = api.post("/api/upload/single", headers=auth_headers(settings, db_session, user),
                      files={"file": ("a.pdf", pdf_bytes())})
    assert answer.status_code == 500
    assert answer.json() == {"success": False, "message": "Internal server error",
                             "error": "internal_error"}


def test_out_of_space_recognised_through_wrapping():
    assert is_out_of_space(_sqlite_full()) and is_out_of_space(_pg_full())
    assert is_out_of_space(StorageFull("bucket full"))
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as inner:
            raise StorageError("put failed") from inner
    except StorageError as outer:
        assert is_out_of_space(outer)
    assert not is_out_of_space(OSError(errno.EACCES, "denied"))
    assert not is_out_of_space(StorageError("timeout"))
    assert not is_out_of_space(OperationalError("x", {}, sqlite3.OperationalError("locked")))


def test_a_full_s3_bucket_is_storage_full(tmp_path):
    from boto3.exceptions import S3UploadFailedError
    from botocore.exceptions import ClientError

    from sanitas.storage.s3 import S3Storage

    storage = S3Storage(Settings(data_dir=tmp_path, storage="s3", secret_key=SECRET,
                                 s3_endpoint_url="http://127.0.0.1:1", s3_access_key_id="k",
                                 s3_secret_access_key="s"))
    src = tmp_path / "blob"
    src.write_bytes(b"data")

    def full(*args, **kwargs):
        error = ClientError({"Error": {"Code": "XMinioStorageFull", "Message": "full"},
                             "ResponseMetadata": {"HTTPStatusCode": 507}}, "PutObject")
        try:
            raise error
        except ClientError as exc:
            raise S3UploadFailedError(f"Failed to upload: {exc}") from None

    storage.client.upload_file = full
    with pytest.raises(StorageFull):
        storage.put_file("originals/x", src)
