"""Both storage backends through the same interface: the local directory and S3 (boto3)
against moto's S3-compatible server on loopback (`s3_endpoint`, tests/conftest.py)."""

from __future__ import annotations

import socket

import pytest

from sanitas.config import Settings
from sanitas.storage import BlobNotFound, StorageError, make_storage


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=["local", "s3"])
def storage(request, tmp_path):
    if request.param == "local":
        settings = Settings(data_dir=tmp_path / "data", database_url="sqlite://")
    else:
        endpoint = request.getfixturevalue("s3_endpoint")
        settings = Settings(data_dir=tmp_path / "data", database_url="sqlite://", storage="s3",
                            s3_endpoint_url=endpoint, s3_bucket=f"b{tmp_path.name[-20:]}".lower()
                            .replace("_", "-"), s3_access_key_id="test",
                            s3_secret_access_key="test", s3_prefix="tenant/a",
                            s3_create_bucket=True)
    return make_storage(settings)


def test_put_get_stream_size_delete(storage, tmp_path):
    payload = bytes(range(256)) * 5000  # > one chunk
    src = tmp_path / "src.bin"
    src.write_bytes(payload)
    assert storage.put_file("originals/f1", src) == len(payload)
    assert src.exists()  # copied, not moved
    assert storage.exists("originals/f1") and storage.size("originals/f1") == len(payload)
    assert b"".join(storage.iter_chunks("originals/f1", 10_000)) == payload
    dest = tmp_path / "dest.bin"
    storage.get_to_path("originals/f1", dest)
    assert dest.read_bytes() == payload
    # replacing a key keeps one blob
    src.write_bytes(b"second version")
    storage.put_file("originals/f1", src, move=True)
    assert not src.exists()
    assert b"".join(storage.iter_chunks("originals/f1")) == b"second version"
    storage.put_file("sanitized/f1", dest)
    assert storage.keys() == ["originals/f1", "sanitized/f1"]
    assert storage.keys("sanitized/") == ["sanitized/f1"]
    storage.delete("originals/f1")
    storage.delete("originals/f1")  # missing is fine
    assert not storage.exists("originals/f1")
    assert storage.keys() == ["sanitized/f1"]
    assert storage.healthy()


def test_missing_blob(storage, tmp_path):
    with pytest.raises(BlobNotFound):
        storage.get_to_path("originals/nope", tmp_path / "x")
    with pytest.raises(BlobNotFound):
        list(storage.iter_chunks("originals/nope"))
    with pytest.raises(BlobNotFound):
        storage.size("originals/nope")
    assert not storage.exists("originals/nope")


def test_local_refuses_keys_outside_its_root(tmp_path):
    storage = make_storage(Settings(data_dir=tmp_path / "data", database_url="sqlite://"))
    src = tmp_path / "s"
    src.write_bytes(b"x")
    for key in ("../escape", "/etc/passwd", "a/../../b", ""):
        with pytest.raises(StorageError):
            storage.put_file(key, src)
    assert not (tmp_path / "escape").exists()


def test_s3_unreachable_is_unhealthy(tmp_path):
    settings = Settings(data_dir=tmp_path, database_url="sqlite://", storage="s3",
                        s3_endpoint_url=f"http://127.0.0.1:{_free_port()}",
                        s3_access_key_id="x", s3_secret_access_key="y")
    assert make_storage(settings).healthy() is False


def test_service_end_to_end_on_s3(settings, db_session, s3_endpoint):
    """Upload, process, download and expire with blobs in S3 (moto server)."""
    import time

    from fastapi.testclient import TestClient
    from sqlalchemy import update

    from sanitas.db import make_sessionmaker, utcnow
    from sanitas.main import create_app
    from sanitas.models import File
    from sanitas.processing.sweeps import expire_files
    from tests.factories import auth_headers, make_user

    settings.storage = "s3"
    settings.s3_endpoint_url = s3_endpoint
    settings.s3_bucket = f"e2e-{settings.data_dir.parent.name[-12:]}".lower().replace("_", "-")
    settings.s3_access_key_id = settings.s3_secret_access_key = "test"
    settings.s3_create_bucket = True
    settings.executor_poll_interval_seconds = 0.2
    h = auth_headers(settings, db_session, make_user(db_session))
    with TestClient(create_app(settings)) as client:
        assert client.get("/health").json()["data"]["storage"] == "up"
        item = client.post("/api/upload/single", headers=h,
                           files={"file": ("notes.txt", b"plain notes\n")}).json()["data"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            data = client.get(f"/api/process/status/{item['fileId']}",
                              headers=h).json()["data"]
            if data["file"]["status"] in ("COMPLETED", "FAILED"):
                break
            time.sleep(0.1)
        assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
        download = client.get(f"/api/process/download/{item['fileId']}", headers=h)
        assert download.status_code == 200 and b"plain notes" in download.content
        storage = client.app.state.storage
        assert storage.name == "s3"
        assert storage.keys() == [f"originals/{item['fileId']}", f"sanitized/{item['fileId']}"]
        assert settings.files_dir.exists() is False or not any(settings.files_dir.rglob("*"))
        db_session.execute(update(File).values(expires_at=utcnow()))
        db_session.commit()
        assert expire_files(make_sessionmaker(db_session.get_bind()), storage) == 1
        assert storage.keys() == []
        assert client.get(f"/api/process/download/{item['fileId']}", headers=h).status_code == 410
