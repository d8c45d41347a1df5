"""The status call is a conditional GET: a strong ETag of what the answer shows, `Cache-Control:
private, no-cache`, and 304 with no body when If-None-Match names the current ETag; decided
after authorisation, and never for an answer that changed (progress, the end of the job, the
queue position, the pause flag)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from sanitas.db import utcnow
from sanitas.models import File, Job
from tests.factories import add_file_and_job, auth_headers, make_user


def _url(file_id: str) -> str:
    return f"/api/process/status/{file_id}"


def _get(api, headers, file_id, etag=None):
    extra = {"If-None-Match": etag} if etag is not None else {}
    return api.get(_url(file_id), headers={**headers, **extra})


def test_unchanged_status_is_304_without_a_body(api, settings, db_session):
    owner = make_user(db_session)
    h = auth_headers(settings, db_session, owner)
    done, _ = add_file_and_job(db_session, settings, owner, status="COMPLETED")

    first = _get(api, h, done.id)
    assert first.status_code == 200
    etag = first.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 10  # strong
    assert "no-cache" in first.headers["cache-control"]
    assert "private" in first.headers["cache-control"]

    again = _get(api, h, done.id, etag)
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag and "no-cache" in again.headers["cache-control"]
    # The header's other spellings: a list, the weak form (If-None-Match compares weakly), *.
    assert _get(api, h, done.id, f'"other", {etag}').status_code == 304
    assert _get(api, h, done.id, f"W/{etag}").status_code == 304
    assert _get(api, h, done.id, "*").status_code == 304
    # Another validator: the full answer, with the same ETag as before.
    full = _get(api, h, done.id, '"not-this-one"')
    assert full.status_code == 200 and full.headers["etag"] == etag
    assert full.json() == first.json()


def test_progress_and_the_end_of_the_job_change_the_etag(api, settings, db_session):
    owner = make_user(db_session)
    h = auth_headers(settings, db_session, owner)
    file, job = add_file_and_job(db_session, settings, owner)
    waiting = _get(api, h, file.id)
    assert waiting.json()["data"]["job"]["state"] == "waiting"
    etags = [waiting.headers["etag"]]

    # Claimed and running: state, start time and progress show.
    started = utcnow()
    db_session.execute(update(Job).where(Job.id == job.id).values(
        state="active", progress=10, started_at=started, heartbeat_at=started, attempts=1))
    db_session.execute(update(File).where(File.id == file.id).values(
        status="PROCESSING", processing_started_at=started))
    db_session.commit()
    running = _get(api, h, file.id, etags[-1])
    assert running.status_code == 200
    assert running.json()["data"]["job"]["progress"] == 10
    assert running.headers["etag"] not in etags
    etags.append(running.headers["etag"])

    # A heartbeat alone shows nothing: still 304.
    db_session.execute(update(Job).where(Job.id == job.id).values(
        heartbeat_at=utcnow() + timedelta(seconds=5)))
    db_session.commit()
    assert _get(api, h, file.id, etags[-1]).status_code == 304

    db_session.execute(update(Job).where(Job.id == job.id).values(progress=60))
    db_session.commit()
    more = _get(api, h, file.id, etags[-1])
    assert more.status_code == 200 and more.json()["data"]["job"]["progress"] == 60
    assert more.headers["etag"] not in etags
    etags.append(more.headers["etag"])

    finished = utcnow()
    db_session.execute(update(Job).where(Job.id == job.id).values(
        state="completed", progress=100, finished_at=finished))
    db_session.execute(update(File).where(File.id == file.id).values(
        status="COMPLETED", processing_completed_at=finished, sanitized_name="clean.pdf",
        sanitized_size=10, report={"findings": []}))
    db_session.commit()
    done = _get(api, h, file.id, etags[-1])
    assert done.status_code == 200
    assert done.json()["data"]["file"]["status"] == "COMPLETED"
    assert done.headers["etag"] not in etags
    assert _get(api, h, file.id, done.headers["etag"]).status_code == 304

    # A download shows in the answer (downloadCount): a new answer, not a 304.
    db_session.execute(update(File).where(File.id == file.id).values(download_count=1))
    db_session.commit()
    counted = _get(api, h, file.id, done.headers["etag"])
    assert counted.status_code == 200 and counted.json()["data"]["file"]["downloadCount"] == 1


def test_a_new_queue_position_is_a_new_answer(api, settings, db_session):
    owner = make_user(db_session)
    other = make_user(db_session)
    h = auth_headers(settings, db_session, owner)
    base = utcnow() - timedelta(minutes=5)
    _, first = add_file_and_job(db_session, settings, other, created_at=base)
    mine, _ = add_file_and_job(db_session, settings, owner, created_at=base + timedelta(minutes=1))

    before = _get(api, h, mine.id)
    assert before.json()["data"]["job"]["ahead"] == 1
    etag = before.headers["etag"]
    assert _get(api, h, mine.id, etag).status_code == 304

    # Only another account's job changed (it finished): mine moved up.
    db_session.execute(update(Job).where(Job.id == first.id).values(state="completed"))
    db_session.commit()
    moved = _get(api, h, mine.id, etag)
    assert moved.status_code == 200
    assert moved.json()["data"]["job"]["ahead"] == 0
    assert moved.headers["etag"] != etag

    # The pause flag is part of the answer too.
    admin_h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    assert api.post("/api/process/queue/pause", headers=admin_h).status_code == 200
    paused = _get(api, h, mine.id, moved.headers["etag"])
    assert paused.status_code == 200 and paused.json()["data"]["queuePaused"] is True


def test_another_account_gets_404_whatever_if_none_match(api, settings, db_session):
    owner = make_user(db_session)
    intruder = make_user(db_session)
    file, _ = add_file_and_job(db_session, settings, owner, status="COMPLETED")
    etag = _get(api, auth_headers(settings, db_session, owner), file.id).headers["etag"]

    h = auth_headers(settings, db_session, intruder)
    for tag in (etag, "*", f"W/{etag}"):
        answer = _get(api, h, file.id, tag)
        assert answer.status_code == 404, tag
        assert answer.json()["success"] is False
        assert "etag" not in answer.headers
    # Nor does a caller without credentials learn anything.
    assert api.get(_url(file.id), headers={"If-None-Match": etag}).status_code == 401
    assert _get(api, h, "no-such-file", "*").status_code == 404

    # An admin sees every file: the same answer, so the owner's ETag is current for them.
    admin_h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    assert _get(api, admin_h, file.id, etag).status_code == 304


def test_openapi_lists_the_304(api):
    route = api.get("/api/openapi.json").json()["paths"]["/api/process/status/{file_id}"]["get"]
    assert "304" in route["responses"]
    assert "ETag" in route["responses"]["200"].get("headers", {})
