"""The daily rollup (file_rollup, issue 23) always equals the same figures computed from the
`files` rows, on both databases, after a random mix of the writes the service makes: uploads
on several days, jobs claimed, finished and failed, retries, admin re-queues and deletes, the
expiry sweep and an account deleted with its files; and the migration backfills it from rows
that existed before it."""

from __future__ import annotations

import random
from datetime import timedelta

from sqlalchemy import create_engine, delete, func, select, update
from sqlalchemy.orm import Session

from sanitas.db import make_sessionmaker, utcnow
from sanitas.files import admin_service
from sanitas.migrate import alembic_config
from sanitas.models import EVERYONE, File, FileRollup, User
from sanitas.processing import outcome as job_outcome
from sanitas.processing import run, sweeps
from sanitas.storage import make_storage
from tests.factories import add_file_and_job, make_user

KINDS = ("pdf", "png", "docx", "csv")


def _from_rows(session: Session) -> dict[tuple, tuple]:
    """(user or '*', day, status, verdict, code, type) -> (files, bytes in, bytes out, timed)
    computed from the rows, the way the rollup defines them."""
    out: dict[tuple, list[int]] = {}
    for f in session.scalars(select(File)):
        key = (f.status, f.verdict or "", f.error_code or "", f.detected_type or "")
        for who in (f.user_id, EVERYONE):
            sums = out.setdefault((who, f.created_at.date(), *key), [0, 0, 0, 0])
            sums[0] += 1
            sums[1] += f.original_size
            sums[2] += f.sanitized_size or 0
            sums[3] += f.processing_duration is not None
    return {k: tuple(v) for k, v in out.items()}


def _rollup(session: Session) -> dict[tuple, tuple]:
    rows = session.execute(select(FileRollup).where(FileRollup.files != 0)).scalars()
    return {(r.user_id, r.day, r.status, r.verdict, r.error_code, r.detected_type):
            (r.files, r.bytes_in, r.bytes_out, r.timed) for r in rows}


def _durations(session: Session) -> dict[str, float]:
    rows = session.execute(select(FileRollup.user_id, func.sum(FileRollup.duration_sum))
                           .group_by(FileRollup.user_id)).all()
    return {u: round(float(s or 0), 6) for u, s in rows if round(float(s or 0), 6)}


def _durations_from_rows(session: Session) -> dict[str, float]:
    rows = dict(session.execute(select(File.user_id, func.sum(
        func.coalesce(File.processing_duration, 0))).group_by(File.user_id)).all())
    total = sum(float(v or 0) for v in rows.values())
    out = {**{u: round(float(v or 0), 6) for u, v in rows.items()}, EVERYONE: round(total, 6)}
    return {u: v for u, v in out.items() if v}


def test_rollup_matches_the_rows_after_a_random_mix_of_writes(settings, db_session) -> None:
    rng = random.Random(23)
    factory = make_sessionmaker(db_session.get_bind())
    storage = make_storage(settings)
    users = [make_user(db_session, email=f"r{i}@example.com") for i in range(4)]
    now = utcnow()
    made = []
    for _ in range(60):
        created = now - timedelta(days=rng.randrange(0, 40), hours=rng.randrange(0, 24),
                                  minutes=rng.randrange(0, 60))
        file, job = add_file_and_job(
            db_session, settings, rng.choice(users), status=rng.choice(
                ("PENDING", "PENDING", "COMPLETED", "FAILED")),
            created_at=created, size=rng.randrange(1, 50_000), kind=rng.choice(KINDS),
            expired=rng.random() < 0.1)
        if rng.random() < 0.2:  # a type the engine never named
            file.detected_type = None
            db_session.commit()
        made.append((file.id, job.id))
    assert _rollup(db_session) == _from_rows(db_session)

    for file_id, job_id in made:
        status = db_session.scalar(select(File.status).where(File.id == file_id))
        if status != "PENDING" or rng.random() < 0.3:
            continue
        token = run.worker_id()
        outcome, _file, _job = run.claim(factory, settings, job_id, token)
        if outcome is not None:
            continue
        roll = rng.random()
        if roll < 0.4:
            job_outcome.finish(factory, job_id, token, job_values={"state": "completed"},
                         file_values={"status": "COMPLETED", "verdict": "cleaned",
                                      "sanitized_size": rng.randrange(1, 9_000),
                                      "processing_duration": round(rng.random() * 5, 3),
                                      "detected_type": rng.choice((*KINDS, None))})
        elif roll < 0.8:
            job_outcome.fail(factory, job_id, token, "refused", 0.0, code="encrypted",
                       detected_type="docx")
        else:
            job_outcome.retry_or_fail(factory, settings, job_id, token, 1, OSError("disk"), 0.0)
    db_session.expire_all()
    assert _rollup(db_session) == _from_rows(db_session)

    failed = db_session.scalars(select(File.id).where(File.status == "FAILED",
                                                      File.original_key.is_not(None),
                                                      File.expires_at > utcnow())).all()
    for file_id in failed[:3]:
        admin_service.requeue_file(db_session, settings, storage, file_id)
    for file_id in rng.sample([f for f, _ in made], 5):
        if db_session.get(File, file_id) is not None and \
                db_session.get(File, file_id).status != "PROCESSING":
            admin_service.delete_file(db_session, storage, file_id)
    db_session.execute(update(File).where(File.status == "PENDING").values(
        expires_at=now - timedelta(seconds=1)))
    db_session.commit()
    sweeps.expire_files(factory, storage)
    db_session.execute(delete(User).where(User.id == users[0].id))
    db_session.commit()
    db_session.expire_all()
    assert _rollup(db_session) == _from_rows(db_session)
    assert _durations(db_session) == _durations_from_rows(db_session)


def test_the_migration_backfills_the_rollup_from_existing_rows(settings, db_session,
                                                               db_url) -> None:
    from alembic import command

    user = make_user(db_session, email="before@example.com")
    for i in range(12):
        add_file_and_job(db_session, settings, user, status=("COMPLETED", "FAILED",
                                                             "PENDING")[i % 3],
                         created_at=utcnow() - timedelta(days=i, hours=i), size=100 + i,
                         kind=KINDS[i % 4])
    expected = _from_rows(db_session)
    db_session.close()
    cfg = alembic_config(db_url)
    command.downgrade(cfg, "a865aa90bf0e")
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:  # rows written while there was no rollup
            conn.execute(update(File).where(File.status == "PENDING").values(
                status="FAILED", error_code="expired"))
        command.upgrade(cfg, "head")
        with Session(engine) as session:
            assert (session.scalar(select(func.count()).select_from(FileRollup)) or 0) > 0
            assert _rollup(session) == _from_rows(session) != expected
    finally:
        engine.dispose()
