"""Admin file management (/api/admin/files): every user's files with filters, sort and pages,
one file's report, deleting a file with its blobs, re-queueing a FAILED file, admins only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from sanitas.db import utcnow
from sanitas.models import File, Job
from tests.api.polling import wait_for
from tests.factories import add_file, auth_headers, make_user, pdf_bytes

BASE = "/api/admin/files"


def _admin(settings, db_session):
    return auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))


def _names(answer) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [f["originalName"] for f in answer.json()["data"]["files"]]


def _fail(db_session, file: File, message="The file could not be sanitized.",
          code="damaged") -> None:
    file.error_message, file.error_code = message, code
    file.processing_completed_at = utcnow()
    db_session.commit()


@pytest.fixture
def population(settings, db_session):
    """Two owners, files in every status, two types, uploaded over three days."""
    ada = make_user(db_session, email="ada@example.org")
    bob = make_user(db_session, email="bob_smith@example.com")
    now = utcnow()
    files = {
        "a-done.pdf": add_file(db_session, settings, ada, status="COMPLETED", name="a-done.pdf",
                               created_at=now - timedelta(days=2)),
        "a-failed.pdf": add_file(db_session, settings, ada, status="FAILED",
                                 name="a-failed.pdf", created_at=now - timedelta(days=1)),
        "a-pending.png": add_file(db_session, settings, ada, status="PENDING",
                                  name="a-pending.png", created_at=now - timedelta(hours=1)),
        "b-failed.png": add_file(db_session, settings, bob, status="FAILED",
                                 name="b-failed.png", created_at=now - timedelta(minutes=5)),
    }
    for name in ("a-pending.png", "b-failed.png"):
        files[name].detected_type = "png"
    for file in files.values():  # none has expired yet
        file.expires_at = now + timedelta(hours=24)
    db_session.commit()
    _fail(db_session, files["a-failed.pdf"])
    return {"ada": ada, "bob": bob, "now": now, **files}


def test_lists_every_users_files_newest_first_with_owner_and_without_report(
        api, settings, db_session, population):
    h = _admin(settings, db_session)
    answer = api.get(BASE, headers=h)
    assert _names(answer) == ["b-failed.png", "a-pending.png", "a-failed.pdf", "a-done.pdf"]
    data = answer.json()["data"]
    first = data["files"][0]
    assert first["userEmail"] == "bob_smith@example.com"
    assert first["userId"] == population["bob"].id
    assert first["detectedType"] == "png" and first["status"] == "FAILED"
    assert all("report" not in f for f in data["files"])
    assert data["types"] == ["pdf", "png"]
    assert data["pagination"] == {"page": 1, "limit": 20, "total": 4, "pages": 1,
                                  "hasPrev": False, "hasNext": False}


def test_filters_by_user_status_type_and_dates(api, settings, db_session, population):
    h = _admin(settings, db_session)
    ada, now = population["ada"], population["now"]
    assert _names(api.get(BASE, headers=h, params={"userId": ada.id})) == [
        "a-pending.png", "a-failed.pdf", "a-done.pdf"]
    assert _names(api.get(BASE, headers=h, params={"user": "BOB_"})) == ["b-failed.png"]
    # LIKE wildcards in the search are literal characters
    assert _names(api.get(BASE, headers=h, params={"user": "b%"})) == []
    assert _names(api.get(BASE, headers=h, params={"user": "ada_"})) == []
    assert _names(api.get(BASE, headers=h, params={"status": "FAILED"})) == [
        "b-failed.png", "a-failed.pdf"]
    assert _names(api.get(BASE, headers=h, params={"status": "FAILED", "user": "ada"})) == [
        "a-failed.pdf"]
    assert _names(api.get(BASE, headers=h, params={"type": "png"})) == [
        "b-failed.png", "a-pending.png"]
    window = {"createdFrom": (now - timedelta(days=1, minutes=1)).isoformat(),
              "createdBefore": (now - timedelta(minutes=30)).isoformat()}
    assert _names(api.get(BASE, headers=h, params=window)) == ["a-pending.png", "a-failed.pdf"]
    # a date without a zone is UTC
    naive = (now - timedelta(hours=2)).replace(tzinfo=None).isoformat()
    assert _names(api.get(BASE, headers=h, params={"createdFrom": naive})) == [
        "b-failed.png", "a-pending.png"]
    assert _names(api.get(BASE, headers=h, params={"userId": "no-such-user"})) == []
    assert api.get(BASE, headers=h, params={"status": "LOST"}).status_code == 422
    assert api.get(BASE, headers=h, params={"createdFrom": "yesterday"}).status_code == 422


def test_sorts_and_pages(api, settings, db_session, population):
    h = _admin(settings, db_session)
    assert _names(api.get(BASE, headers=h, params={"sortBy": "originalName",
                                                   "sortOrder": "asc"})) == [
        "a-done.pdf", "a-failed.pdf", "a-pending.png", "b-failed.png"]
    by_owner = _names(api.get(BASE, headers=h, params={"sortBy": "userEmail",
                                                       "sortOrder": "desc"}))
    assert by_owner[0] == "b-failed.png"
    page2 = api.get(BASE, headers=h, params={"limit": 3, "page": 2})
    assert _names(page2) == ["a-done.pdf"]
    assert page2.json()["data"]["pagination"] == {"page": 2, "limit": 3, "total": 4,
                                                  "pages": 2, "hasPrev": True,
                                                  "hasNext": False}
    assert api.get(BASE, headers=h, params={"limit": 101}).status_code == 422
    assert api.get(BASE, headers=h, params={"sortBy": "password"}).status_code == 422


def test_details_carry_the_report_the_error_and_the_job(api, settings, db_session,
                                                        population):
    h = _admin(settings, db_session)
    answer = api.get(f"{BASE}/{population['a-done.pdf'].id}", headers=h)
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert data["file"]["report"]["findings"][0]["kind"] == "javascript"
    assert data["file"]["userEmail"] == "ada@example.org"
    assert data["job"]["state"] == "completed"
    failed = api.get(f"{BASE}/{population['a-failed.pdf'].id}", headers=h).json()["data"]
    assert (failed["file"]["errorMessage"], failed["file"]["errorCode"]) == (
        "The file could not be sanitized.", "damaged")
    assert failed["file"]["report"] is None and failed["job"]["state"] == "failed"
    missing = api.get(f"{BASE}/00000000-0000-0000-0000-000000000000", headers=h)
    assert missing.status_code == 404
    assert missing.json() == {"success": False, "message": "File not found",
                              "error": "not_found"}


def test_delete_removes_both_blobs_the_job_and_the_row(api, settings, db_session, storage,
                                                       population):
    h = _admin(settings, db_session)
    done = population["a-done.pdf"]
    done_id, keys = done.id, {done.original_key, done.sanitized_key}
    assert keys <= set(storage.keys())
    answer = api.delete(f"{BASE}/{done_id}", headers=h)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"id": done_id}
    assert not keys & set(storage.keys())
    db_session.expunge(done)
    assert db_session.get(File, done_id) is None
    assert db_session.scalar(select(Job).where(Job.file_id == done_id)) is None
    assert api.get(f"{BASE}/{done_id}", headers=h).status_code == 404
    assert api.delete(f"{BASE}/{done_id}", headers=h).status_code == 404
    # the other files stay, blobs and all
    others = [population[n] for n in ("a-failed.pdf", "a-pending.png", "b-failed.png")]
    assert {f.original_key for f in others} <= set(storage.keys())
    assert api.get(BASE, headers=h).json()["data"]["pagination"]["total"] == 3


def test_delete_of_an_expired_file_and_refusal_while_processing(api, settings, db_session,
                                                                storage):
    h = _admin(settings, db_session)
    owner = make_user(db_session)
    gone = add_file(db_session, settings, owner, status="COMPLETED", expired=True)
    assert api.delete(f"{BASE}/{gone.id}", headers=h).status_code == 200
    busy = add_file(db_session, settings, owner, status="PROCESSING")
    answer = api.delete(f"{BASE}/{busy.id}", headers=h)
    assert answer.status_code == 409 and answer.json()["error"] == "file_processing"
    db_session.expire_all()
    assert db_session.get(File, busy.id) is not None
    stored = storage.keys()
    assert busy.original_key in stored
    assert db_session.scalar(select(Job.state).where(Job.file_id == busy.id)) == "active"


def test_requeue_puts_a_failed_file_back_to_pending(api, settings, db_session, population):
    h = _admin(settings, db_session)
    failed = population["a-failed.pdf"]
    answer = api.post(f"{BASE}/{failed.id}/requeue", headers=h)
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["file"]["status"] == "PENDING"
    assert data["file"]["errorMessage"] is None and data["file"]["errorCode"] is None
    assert (data["job"]["state"], data["job"]["attempts"], data["job"]["progress"]) == (
        "waiting", 0, 0)
    db_session.expire_all()
    assert db_session.scalars(select(Job).where(Job.file_id == failed.id)).one().id == \
        data["job"]["id"]
    again = api.post(f"{BASE}/{failed.id}/requeue", headers=h)
    assert again.status_code == 409 and again.json()["error"] == "not_failed"


def test_requeue_after_the_job_record_was_cleared_makes_a_new_job(api, settings, db_session,
                                                                  population):
    h = _admin(settings, db_session)
    assert api.post("/api/process/queue/clear-failed", headers=h).status_code == 200
    failed = population["b-failed.png"]
    data = api.post(f"{BASE}/{failed.id}/requeue", headers=h).json()["data"]
    assert data["file"]["status"] == "PENDING" and data["job"]["state"] == "waiting"


def test_requeue_is_refused_unless_failed_with_its_original(api, settings, db_session,
                                                            storage, population):
    h = _admin(settings, db_session)
    for name in ("a-done.pdf", "a-pending.png"):
        answer = api.post(f"{BASE}/{population[name].id}/requeue", headers=h)
        assert answer.status_code == 409 and answer.json()["error"] == "not_failed", name
    owner = population["ada"]
    expired = add_file(db_session, settings, owner, status="FAILED", expired=True)
    blob_gone = add_file(db_session, settings, owner, status="FAILED")
    storage.delete(blob_gone.original_key)
    for file in (expired, blob_gone):
        answer = api.post(f"{BASE}/{file.id}/requeue", headers=h)
        assert answer.status_code == 409 and answer.json()["error"] == "expired"
        db_session.expire_all()
        assert db_session.get(File, file.id).status == "FAILED"
    assert api.post(f"{BASE}/no-such-file/requeue", headers=h).status_code == 404


def test_a_requeued_file_is_processed_to_completed(live, settings, db_session):
    owner = make_user(db_session)
    file = add_file(db_session, settings, owner, status="FAILED", name="Quarterly.pdf",
                    content=pdf_bytes(20_000))
    _fail(db_session, file, "Processing failed because of a temporary server problem.",
          "infrastructure_error")
    h = _admin(settings, db_session)
    assert live.post(f"{BASE}/{file.id}/requeue", headers=h).status_code == 200
    data = wait_for(live, h, file.id)
    assert data["file"]["status"] == "COMPLETED", data["file"]["errorMessage"]
    assert data["file"]["errorCode"] is None and data["file"]["sanitizedSize"] > 0
    assert isinstance(data["file"]["report"]["findings"], list)
    assert (data["job"]["state"], data["job"]["attempts"]) == ("completed", 1)
    owner_h = auth_headers(settings, db_session, owner)
    download = live.get(f"/api/process/download/{file.id}", headers=owner_h)
    assert download.status_code == 200 and download.content.startswith(b"%PDF-")


@pytest.mark.parametrize("role", ["GUEST", "USER", "ENTERPRISE"])
def test_admins_only(api, settings, db_session, storage, role):
    owner = make_user(db_session)
    file = add_file(db_session, settings, owner, status="FAILED")
    h = auth_headers(settings, db_session, make_user(db_session, role=role))
    calls = [("GET", BASE), ("GET", f"{BASE}/{file.id}"), ("DELETE", f"{BASE}/{file.id}"),
             ("POST", f"{BASE}/{file.id}/requeue")]
    for method, path in calls:
        answer = api.request(method, path, headers=h)
        assert answer.status_code == 403, (method, path)
        assert answer.json()["error"] == "forbidden"
        anonymous = api.request(method, path)
        assert anonymous.status_code == 401 and anonymous.json()["error"] == "unauthorized"
    # and nothing happened
    db_session.expire_all()
    assert db_session.get(File, file.id).status == "FAILED"
    stored = storage.keys()
    assert file.original_key in stored
