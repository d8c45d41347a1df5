"""Webhook deliveries from a real `sanitas serve` (its embedded executor and webhook sender)
to a loopback receiver that verifies every signature with the standardwebhooks library:
retries after the receiver fails twice, the payload's file object (the status call's), a
refused file's file.failed, the test event, and a delivery still pending when the server is
killed that is delivered after a restart; and a Celery worker's sender. Private addresses
are allowed for the receiver (SANITAS_WEBHOOK_ALLOW_PRIVATE=true) and back-off is scaled
down."""

from __future__ import annotations

import os

import httpx
import pytest
import redis
from fastapi.testclient import TestClient

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.main import create_app
from tests.databases import truncate_all
from tests.engine.corpus import encrypted_pdf
from tests.executor.jobkit import kill_hard, server_env, start, stop, wait_until
from tests.factories import TEXT, auth_headers, make_user
from tests.live_server import SECRET, free_port, start_server, stop_server
from tests.webhook_receiver import Receiver, running

WEBHOOK_ENV = {"SANITAS_WEBHOOK_ALLOW_PRIVATE": "true",
               "SANITAS_WEBHOOK_RETRY_BASE_SECONDS": "0.3",
               "SANITAS_WEBHOOK_POLL_INTERVAL_SECONDS": "0.2",
               "SANITAS_EXECUTOR_POLL_INTERVAL_SECONDS": "0.2"}


@pytest.fixture
def server(tmp_path, db_url):
    """`start()` runs `sanitas serve` on the test database (again after a stop)."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port = free_port()
    procs = []

    def start():
        procs.append(start_server(data_dir, port, {**WEBHOOK_ENV,
                                                   "SANITAS_DATABASE_URL": db_url}))
        return procs[-1]

    settings = Settings(data_dir=data_dir, database_url=db_url, secret_key=SECRET)
    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as session:
        headers = auth_headers(settings, session, make_user(session, role="USER"))
    engine.dispose()
    try:
        yield start, f"http://127.0.0.1:{port}", headers
    finally:
        for proc in procs:
            stop_server(proc)


def _deliveries(base, headers, hook_id):
    answer = httpx.get(f"{base}/api/webhooks/{hook_id}/deliveries", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _finished(base, headers, file_id):
    data = httpx.get(f"{base}/api/process/status/{file_id}", headers=headers,
                     timeout=10).json()["data"]
    return data if data["file"]["status"] in ("COMPLETED", "FAILED") else None


def test_signed_deliveries_with_retries(server, tmp_path):
    start, base, headers = server
    start()
    with running(Receiver(statuses=[500, 500])) as receiver:
        created = httpx.post(f"{base}/api/webhooks", headers=headers, timeout=10, json={
            "url": receiver.url, "events": ["file.completed", "file.failed"]})
        assert created.status_code == 201, created.text
        receiver.secret = created.json()["data"]["secret"]
        hook_id = created.json()["data"]["webhook"]["id"]

        # A file that is cleaned: the receiver fails twice, the third attempt is accepted.
        upload = httpx.post(f"{base}/api/upload/single", headers=headers, timeout=30,
                            files={"file": ("notes.txt", TEXT)})
        assert upload.status_code == 201, upload.text
        file_id = upload.json()["data"]["fileId"]
        status = wait_until(lambda: _finished(base, headers, file_id), 90, "processing", 0.2)
        assert status["file"]["status"] == "COMPLETED"
        got = receiver.wait_for("file.completed", 3, 60)
        assert len(got) == 3 and [r.answered for r in got] == [500, 500, 200]
        assert all(r.verified for r in got), "a signature the library did not accept"
        assert len({r.headers["webhook-id"] for r in got}) == 1  # one event, three attempts
        assert got[0].payload == got[2].payload
        payload = got[2].payload
        assert payload["type"] == "file.completed" and payload["timestamp"].endswith("Z")
        assert payload["data"]["file"] == status["file"]

        def succeeded():
            log = _deliveries(base, headers, hook_id)
            return log if log and log[0]["state"] == "succeeded" else None

        [delivery] = wait_until(succeeded, 30, "the delivery log to say succeeded")
        assert delivery["eventType"] == "file.completed"
        assert delivery["attempts"] == 3 and delivery["lastStatusCode"] == 200
        assert [a["statusCode"] for a in delivery["attemptLog"]] == [500, 500, 200]
        assert delivery["eventId"] == got[0].headers["webhook-id"]

        # A refused file: file.failed with its error code.
        locked = encrypted_pdf(tmp_path / "locked.pdf").read_bytes()
        upload = httpx.post(f"{base}/api/upload/single", headers=headers, timeout=30,
                            files={"file": ("locked.pdf", locked)})
        assert upload.status_code == 201, upload.text
        refused_id = upload.json()["data"]["fileId"]
        status = wait_until(lambda: _finished(base, headers, refused_id), 90, "processing",
                            0.2)
        assert status["file"]["status"] == "FAILED"
        [failed] = receiver.wait_for("file.failed", 1, 30)
        assert failed.verified and failed.answered == 200
        assert failed.payload["data"]["file"]["id"] == refused_id
        assert failed.payload["data"]["file"]["errorCode"] == "encrypted"
        assert failed.payload["data"]["file"] == status["file"]

        # The test event.
        test = httpx.post(f"{base}/api/webhooks/{hook_id}/test", headers=headers, timeout=10)
        assert test.status_code == 202, test.text
        [tested] = receiver.wait_for("webhook.test", 1, 30)
        assert tested.verified
        assert tested.headers["webhook-id"] == test.json()["data"]["eventId"]


def test_a_pending_delivery_survives_a_restart(server):
    start, base, headers = server
    proc = start()
    with running(Receiver(default=503)) as receiver:
        created = httpx.post(f"{base}/api/webhooks", headers=headers, timeout=10, json={
            "url": receiver.url, "events": ["file.completed"]}).json()["data"]
        receiver.secret = created["secret"]
        hook_id = created["webhook"]["id"]
        queued = httpx.post(f"{base}/api/webhooks/{hook_id}/test", headers=headers,
                            timeout=10).json()["data"]
        receiver.wait_for("webhook.test", 2, 30)  # two failed attempts...
        wait_until(lambda: _deliveries(base, headers, hook_id)[0]["attempts"] >= 2, 30,
                   "the second attempt to be recorded", 0.05)  # ...recorded: none under way
        kill_hard(proc)  # a crash, not a shutdown (the next attempt was due seconds later)
        tried = len(receiver.of_type("webhook.test"))
        receiver.default = 200

        start()
        got = receiver.wait_for("webhook.test", tried + 1, 60)
        assert got[-1].answered == 200 and all(r.verified for r in got)
        assert {r.headers["webhook-id"] for r in got} == {queued["eventId"]}

        def succeeded():
            log = _deliveries(base, headers, hook_id)
            return log[0] if log[0]["state"] == "succeeded" else None

        delivery = wait_until(succeeded, 30, "the delivery log to say succeeded")
        assert delivery["attempts"] == tried + 1
        assert [a["statusCode"] for a in delivery["attemptLog"]] == [503] * tried + [200]


# -- Celery: the worker's sender -------------------------------------------------------------------
@pytest.fixture
def celery_settings(tmp_path, pg_database_url):
    truncate_all(pg_database_url)
    broker = f"redis://127.0.0.1:6379/{2 + (os.getpid() + 7) % 14}"  # a database of our own
    redis.Redis.from_url(broker).flushdb()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    return Settings(data_dir=data_dir, database_url=pg_database_url, executor="celery",
                    broker_url=broker, secret_key=SECRET, executor_workers=1,
                    webhook_allow_private=True)


def test_a_celery_worker_delivers(celery_settings, tmp_path):
    """With the Celery executor the worker that runs the job also sends the webhook (the API
    process sends nothing): one failure, then the retry is accepted."""
    engine = make_engine(str(celery_settings.database_url))
    with make_sessionmaker(engine)() as session:
        headers = auth_headers(celery_settings, session, make_user(session, role="USER"))
    engine.dispose()
    env = server_env(celery_settings, SANITAS_EXECUTOR="celery",
                     SANITAS_BROKER_URL=celery_settings.broker_url,
                     SANITAS_EXECUTOR_WORKERS=1, **WEBHOOK_ENV)
    with running(Receiver(statuses=[500])) as receiver, \
            TestClient(create_app(celery_settings)) as client:
        created = client.post("/api/webhooks", headers=headers, json={
            "url": receiver.url, "events": ["file.completed"]}).json()["data"]
        receiver.secret = created["secret"]
        file_id = client.post("/api/upload/single", headers=headers,
                              files={"file": ("notes.txt", TEXT)}).json()["data"]["fileId"]
        worker = start(["worker", "--concurrency=1"], env, tmp_path / "worker.log")
        try:
            got = receiver.wait_for("file.completed", 2, 120)
        finally:
            stop(worker)
        assert [r.answered for r in got] == [500, 200] and all(r.verified for r in got)
        assert got[1].payload["data"]["file"]["id"] == file_id
        assert got[1].payload["data"]["file"]["status"] == "COMPLETED"
        log = client.get(f"/api/webhooks/{created['webhook']['id']}/deliveries",
                         headers=headers).json()["data"]
        assert log[0]["state"] == "succeeded" and log[0]["attempts"] == 2
