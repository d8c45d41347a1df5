"""POST /api/v1/sanitize, the one call that takes a file and answers with the clean copy: within
`wait` the sanitized file with its report summary; past it a 202 with the status URL; a refused
file 422 with its rejection code; the file in the history and the quota like any upload."""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile

import pytest
from sqlalchemy import select

from sanitas.engine.report import RejectionCode
from sanitas.models import File
from tests.api.polling import wait_for
from tests.engine.corpus import encrypted_pdf
from tests.engine.corpus_office import clean_docx, hostile_docm
from tests.executor.jobkit import slow_pdf
from tests.factories import TEXT, auth_headers, make_user


@pytest.fixture
def key(live, settings, db_session):
    """An API key of a Pro (USER) account, as the header to send."""
    user = make_user(db_session, role="USER")
    answer = live.post("/api/keys", headers=auth_headers(settings, db_session, user),
                       json={"name": "sync", "scopes": ["files:write", "files:read"]})
    return user, {"X-API-Key": answer.json()["data"]["secret"]}


def test_the_clean_file_in_the_answer(live, db_session, key):
    user, headers = key
    answer = live.post("/api/v1/sanitize?wait=60", headers=headers,
                       files={"file": ("invoice.docm", hostile_docm())})
    assert answer.status_code == 200, answer.text[:300]
    assert answer.headers["content-type"] == "application/octet-stream"
    assert 'filename="sanitized_invoice.docx"' in answer.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(answer.content)) as package:
        names = package.namelist()
    assert "[Content_Types].xml" in names
    assert not any("vbaProject" in n or n.startswith("word/activeX") for n in names), names
    file_id = answer.headers["x-sanitas-file-id"]
    summary = json.loads(answer.headers["x-sanitas-report"])
    assert summary["fileId"] == file_id and summary["status"] == "COMPLETED"
    assert summary["findings"] > 0 and summary["actions"].get("removed", 0) > 0
    assert any("macro" in kind or "vba" in kind for kind in summary["kinds"]), summary
    assert summary["policy"] == {"id": "basic", "name": "basic", "version": 1} or \
        summary["policy"]["id"] == "basic"
    assert answer.headers["x-sanitas-report-url"] == f"/api/process/status/{file_id}"
    assert answer.headers["link"] == f'</api/process/status/{file_id}>; rel="report"'
    # The full report, the hashes and the history agree; the answer counted as a download.
    status = live.get(f"/api/process/status/{file_id}", headers=headers).json()["data"]["file"]
    assert status["sha256Sanitized"] == summary["sha256Sanitized"] is not None
    assert len(status["report"]["findings"]) == summary["findings"]
    assert status["downloadCount"] == 1
    history = live.get(f"/api/users/{user.id}/files", headers=headers).json()["data"]
    assert [f["id"] for f in history["files"]] == [file_id]


def test_past_wait_answers_202_with_the_status_url(live, key):
    headers = key[1]
    answer = live.post("/api/v1/sanitize?wait=0", headers=headers,
                       files={"file": ("notes.txt", TEXT)})
    assert answer.status_code == 202, answer.text
    data = answer.json()["data"]
    assert data["statusUrl"] == f"/api/process/status/{data['fileId']}" == \
        answer.headers["location"]
    assert data["downloadUrl"] == f"/api/process/download/{data['fileId']}"
    assert data["status"] in ("PENDING", "PROCESSING")
    assert wait_for(live, headers, data["fileId"])["file"]["status"] == "COMPLETED"
    assert live.get(data["downloadUrl"], headers=headers).content.startswith(b"Quarterly")


def test_a_refused_file_answers_422_with_its_code(live, key, tmp_path):
    headers = key[1]
    sample = encrypted_pdf(tmp_path / "locked.pdf").read_bytes()
    answer = live.post("/api/v1/sanitize", headers=headers,
                       files={"file": ("locked.pdf", sample)})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    file_id = answer.headers["x-sanitas-file-id"]
    stored = live.get(f"/api/process/status/{file_id}", headers=headers).json()["data"]["file"]
    assert stored["status"] == "FAILED"
    assert body["error"] == stored["errorCode"] and body["error"] in set(RejectionCode)
    assert body["message"] == stored["errorMessage"] and body["success"] is False


def test_policy_and_mode_fields(live, settings, db_session):
    boss = make_user(db_session, role="ENTERPRISE")
    session_headers = auth_headers(settings, db_session, boss)
    policy = live.post("/api/policies", headers=session_headers, json={
        "name": "no macros at all", "rules": {"macros": "refuse"}}).json()["data"]
    answer = live.post("/api/v1/sanitize", headers=session_headers,
                       data={"policyId": policy["id"]},
                       files={"file": ("invoice.docm", hostile_docm())})
    assert answer.status_code == 422 and answer.json()["error"] == "refused_macros"
    advanced = live.post("/api/v1/sanitize?wait=60", headers=session_headers,
                         data={"mode": "advanced"}, files={"file": ("notes.docx", clean_docx())})
    assert advanced.status_code == 200, advanced.text[:300]
    assert advanced.content.startswith(b"%PDF")
    assert json.loads(advanced.headers["x-sanitas-report"])["policy"]["id"] == "advanced"


@pytest.mark.parametrize("wait", ["-1", "61", "soon"])
def test_wait_is_bounded(live, key, db_session, wait):
    answer = live.post(f"/api/v1/sanitize?wait={wait}", headers=key[1],
                       files={"file": ("notes.txt", TEXT)})
    assert answer.status_code == 422 and "wait" in answer.json()["message"]
    assert db_session.scalars(select(File)).all() == []  # refused before anything is stored


def test_quota_and_authentication(live, settings, db_session, key):
    settings.plans["USER"].limits = settings.plans["USER"].limits.model_copy(
        update={"uploads_per_month": 1})
    headers = key[1]
    assert live.post("/api/v1/sanitize?wait=0", headers=headers,
                     files={"file": ("a.txt", TEXT)}).status_code == 202
    over = live.post("/api/v1/sanitize", headers=headers, files={"file": ("b.txt", TEXT)})
    assert over.status_code == 403, over.text
    assert live.post("/api/v1/sanitize", files={"file": ("c.txt", TEXT)}).status_code == 401


@pytest.fixture
def one_slot(settings):
    """One database slot per API process, and a short wait for it."""
    settings.api_concurrency, settings.api_queue_seconds = 1, 2.0


def test_waiting_holds_no_database_slot(one_slot, live, key):
    """While a call waits for a slow job, the API's only database slot serves other calls
    (held, they would queue for it and get 503 after 2 s)."""
    headers = key[1]
    results: dict[str, int] = {}

    def sync_call():
        results["sync"] = live.post("/api/v1/sanitize?wait=60", headers=headers, data={
            "mode": "advanced"}, files={"file": ("long.pdf", slow_pdf())}).status_code

    thread = threading.Thread(target=sync_call)
    thread.start()
    deadline = time.monotonic() + 30
    seen_processing = False
    while thread.is_alive() and time.monotonic() < deadline:
        answer = live.get("/api/upload/info", headers=headers)
        assert answer.status_code == 200, answer.text
        files = live.get(f"/api/users/{key[0].id}/files", headers=headers).json()["data"]
        seen_processing |= any(f["status"] == "PROCESSING" for f in files["files"])
        time.sleep(0.2)
    thread.join(90)
    assert seen_processing, "the sync call was never seen waiting for its job"
    assert results["sync"] == 200


def test_the_answer_comes_when_the_job_ends_not_at_the_next_look(live, key, monkeypatch):
    """The job runs in this process (the embedded executor), which tells the waiting call the
    moment it ends (files/finished.py): with the status looked at only every 30 s, a small
    file still comes back within the 10 s wait, not as a 202 after it."""
    from sanitas.files import routes

    monkeypatch.setattr(routes, "_POLL_FIRST", 30.0)
    monkeypatch.setattr(routes, "_POLL_MAX", 30.0)
    started = time.monotonic()
    answer = live.post("/api/v1/sanitize?wait=10", headers=key[1],
                       files={"file": ("notes.txt", TEXT)})
    assert answer.status_code == 200, answer.text[:300]
    assert answer.content.startswith(b"Quarterly")
    assert time.monotonic() - started < 10
