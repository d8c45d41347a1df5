"""The status call explains waiting: `job.ahead` (queued jobs an executor would start before
this one, in the claim order: priority, then accounts taking turns, then created time) and
`queuePaused`."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from sanitas.db import utcnow
from sanitas.models import Job
from sanitas.models import job as job_facts
from sanitas.processing import queue
from tests.factories import add_file_and_job, auth_headers, make_user


def _status(api, headers, file_id):
    answer = api.get(f"/api/process/status/{file_id}", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def test_ahead_counts_jobs_claimed_first_and_paused_flag(api, settings, db_session):
    owner = make_user(db_session)
    other = make_user(db_session)
    h = auth_headers(settings, db_session, owner)
    base = utcnow() - timedelta(minutes=10)
    at = lambda minutes: base + timedelta(minutes=minutes)  # noqa: E731

    mine, _ = add_file_and_job(db_session, settings, owner, created_at=at(5))
    # Claimed before mine: a newer one at high priority, and another account's oldest job
    # at the same priority (its first turn, as mine is my first; older than mine).
    add_file_and_job(db_session, settings, other, created_at=at(1))
    add_file_and_job(db_session, settings, other, created_at=at(8),
                     priority=job_facts.HIGH_PRIORITY)
    # Not ahead: that account's further jobs (a stale active one older than mine, its second
    # turn; a newer one), a third account's job running with a live heartbeat, finished ones,
    # and one backing off until later.
    _, stale = add_file_and_job(db_session, settings, other, status="PROCESSING",
                                created_at=at(3))
    db_session.execute(update(Job).where(Job.id == stale.id).values(
        heartbeat_at=utcnow() - timedelta(hours=1)))
    add_file_and_job(db_session, settings, other, created_at=at(6))
    _, stale_newer = add_file_and_job(db_session, settings, other, status="PROCESSING",
                                      created_at=at(9))
    db_session.execute(update(Job).where(Job.id == stale_newer.id).values(
        heartbeat_at=utcnow() - timedelta(hours=1)))
    _, running = add_file_and_job(db_session, settings, make_user(db_session),
                                  status="PROCESSING", created_at=at(0))
    db_session.execute(update(Job).where(Job.id == running.id).values(heartbeat_at=utcnow()))
    add_file_and_job(db_session, settings, other, status="COMPLETED", created_at=at(0))
    add_file_and_job(db_session, settings, other, status="FAILED", created_at=at(0))
    _, later = add_file_and_job(db_session, settings, other, created_at=at(2))
    db_session.execute(update(Job).where(Job.id == later.id).values(
        run_after=utcnow() + timedelta(hours=1)))
    db_session.commit()

    data = _status(api, h, mine.id)
    assert data["job"]["state"] == "waiting"
    assert data["job"]["ahead"] == 2
    assert data["queuePaused"] is False

    # The order the executor really claims in agrees with the count.
    order = [job_id for job_id, _ in queue.find_runnable(db_session, settings, 100)]
    mine_job = db_session.query(Job).filter(Job.file_id == mine.id).one()
    assert order.index(mine_job.id) == 2

    admin_h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    assert api.post("/api/process/queue/pause", headers=admin_h).status_code == 200
    data = _status(api, h, mine.id)
    assert data["queuePaused"] is True and data["job"]["ahead"] == 2
    assert api.post("/api/process/queue/resume", headers=admin_h).status_code == 200
    assert _status(api, h, mine.id)["queuePaused"] is False


def test_ahead_only_while_waiting_and_ties_by_id(api, settings, db_session):
    owner = make_user(db_session)
    h = auth_headers(settings, db_session, owner)
    same = utcnow() - timedelta(minutes=1)
    first, first_job = add_file_and_job(db_session, settings, owner, created_at=same)
    second, second_job = add_file_and_job(db_session, settings, owner, created_at=same)
    low, high = sorted([(first.id, first_job.id), (second.id, second_job.id)],
                       key=lambda pair: pair[1])
    assert _status(api, h, low[0])["job"]["ahead"] == 0
    assert _status(api, h, high[0])["job"]["ahead"] == 1

    done, _ = add_file_and_job(db_session, settings, owner, status="COMPLETED")
    running, _ = add_file_and_job(db_session, settings, owner, status="PROCESSING")
    assert _status(api, h, done.id)["job"]["ahead"] is None
    assert _status(api, h, running.id)["job"]["ahead"] is None


def test_openapi_documents_the_fields(api):
    schemas = api.get("/api/openapi.json").json()["components"]["schemas"]
    status = next(v for k, v in schemas.items() if k.startswith("FileStatusData"))
    assert "queuePaused" in status["properties"] and "queuePaused" in status["required"]
    job = next(v for k, v in schemas.items() if k.startswith("JobOut"))
    assert "ahead" in job["properties"]
