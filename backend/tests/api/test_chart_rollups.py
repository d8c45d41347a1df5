"""The charts' daily rollups (report_rollup, threat_rollup, duration_rollup; issue 23) always
hold what the `files` rows say, on both databases: after a random mix of the writes the
service makes (uploads on several days, jobs finished with reports of every shape, failures,
admin re-queues and deletes, a report rewritten or cleared, a row moved to another day, an
account deleted with its files), and after the migration backfills them from rows written
before it."""

from __future__ import annotations

import json
import random
import struct
from collections import Counter
from datetime import timedelta

from sqlalchemy import create_engine, delete, select, update
from sqlalchemy.orm import Session

from sanitas.db import make_sessionmaker, utcnow
from sanitas.files import admin_service
from sanitas.migrate import alembic_config
from sanitas.models import EVERYONE, DurationRollup, File, ReportRollup, ThreatRollup, User
from sanitas.processing import outcome as job_outcome
from sanitas.processing import run
from sanitas.storage import make_storage
from sanitas.usage.service import _threat_count
from tests.factories import add_file_and_job, make_user

KINDS = ("pdf", "png", "docx", "csv")


def _report(rng: random.Random) -> object:
    """A report of one of the shapes stored in files.report, odd ones included."""
    findings: list[object] = []
    for _ in range(rng.randrange(0, 6)):
        kind = rng.choice(("javascript", "macro", "exif", "more", "k" * 120, "ümlaut"))
        action = rng.choice(("removed", "converted", "blocked", "kept", ["removed"], None))
        location, detail = rng.choice((
            ("page 1", ""), ("whole file", f"and {rng.randrange(1, 90)} more of this kind"),
            ("whole file", f"{rng.randrange(1, 9)} further findings not listed"),
            ("page 2", "and 5 more of this kind"), ("whole file", "Author removed"),
            ("whole file", 7), ("whole file", "and " + "9" * 80 + " more of this kind")))
        findings.append({"kind": kind, "action": action, "location": location,
                         "detail": detail})
    findings += rng.choice(([], ["a string finding"], [{"action": "removed"}],
                            [{"kind": 3, "action": "removed"}]))
    return rng.choice(({"findings": findings}, {"findings": findings, "verdict": "cleaned"},
                       {"findings": "not a list"}, {}, None))


def _expected(session: Session) -> tuple[dict, dict, dict]:
    """(reports per (who, day), threat findings per (who, day, kind, detail), everyone's
    sorted durations per (day, type)) computed from the rows as the rollups define them."""
    reports: Counter = Counter()
    threats: Counter = Counter()
    durations: dict[tuple, list[float]] = {}
    for f in session.scalars(select(File)):
        day = f.created_at.date()
        if f.status == "COMPLETED" and f.processing_duration is not None:
            durations.setdefault((day, f.detected_type or ""), []).append(
                f.processing_duration)
        for who in (f.user_id, EVERYONE):
            if f.report is None:
                continue
            reports[(who, day)] += 1
            items = f.report.get("findings") if isinstance(f.report, dict) else None
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and not isinstance(item.get("action"), list) and \
                        _threat_count(item):
                    detail = item.get("detail")
                    summary = item.get("location") == "whole file" and isinstance(detail, str) \
                        and len(detail) <= 64 and (
                            (detail.startswith("and ") and detail.endswith(" more of this kind"))
                            or detail.endswith(" further findings not listed"))
                    threats[(who, day, item["kind"][:100], detail if summary else "")] += 1
    return (dict(reports), dict(threats),
            {k: sorted(v) for k, v in durations.items()})


def _rolled_up(session: Session) -> tuple[dict, dict, dict]:
    reports = {(r.user_id, r.day): r.reports for r in session.scalars(select(ReportRollup))
               if r.reports}
    threats = {(r.user_id, r.day, r.kind, r.detail): r.findings
               for r in session.scalars(select(ThreatRollup)) if r.findings}
    durations = {}
    for r in session.scalars(select(DurationRollup)):
        values = json.loads(r.durations) if isinstance(r.durations, str) else [
            v for (v,) in struct.iter_unpack(">d", r.durations)]  # packed on PostgreSQL
        if values:
            durations[(r.day, r.detected_type)] = sorted(values)
    return reports, threats, durations


def _check(session: Session) -> None:
    session.expire_all()
    assert _rolled_up(session) == _expected(session)


def test_the_rollups_match_the_rows_after_a_random_mix_of_writes(settings, db_session) -> None:
    rng = random.Random(2310)
    factory = make_sessionmaker(db_session.get_bind())
    storage = make_storage(settings)
    users = [make_user(db_session, email=f"c{i}@example.com") for i in range(4)]
    # Whole UTC days before today's, so that the files fall on the same days whatever the
    # time the test runs at; few of them, so that a day and type hold many files.
    midnight = utcnow().replace(hour=0, minute=0, second=0, microsecond=0)
    made = []
    for _ in range(80):
        created = midnight - timedelta(days=rng.randrange(1, 7)) + timedelta(
            hours=rng.randrange(0, 24), minutes=rng.randrange(0, 60))
        file, job = add_file_and_job(
            db_session, settings, rng.choice(users),
            status=rng.choice(("PENDING", "PENDING", "COMPLETED", "FAILED")),
            created_at=created, kind=rng.choice(KINDS))
        if file.status == "COMPLETED":
            file.report = _report(rng)
            file.processing_duration = rng.choice((None, round(rng.random() * 4, 3), 1.5))
        if rng.random() < 0.2:
            file.detected_type = None
        db_session.commit()
        made.append((file.id, job.id))
    _check(db_session)

    for file_id, job_id in made:  # jobs finished by the executor's own calls
        if db_session.scalar(select(File.status).where(File.id == file_id)) != "PENDING":
            continue
        token = run.worker_id()
        if run.claim(factory, settings, job_id, token)[0] is not None:
            continue
        if rng.random() < 0.6:
            job_outcome.finish(factory, job_id, token, job_values={"state": "completed"},
                               file_values={"status": "COMPLETED", "verdict": "cleaned",
                                            "report": _report(rng),
                                            "processing_duration": rng.choice(
                                                (1.5, round(rng.random() * 5, 3))),
                                            "detected_type": rng.choice((*KINDS, None))})
        else:
            job_outcome.fail(factory, job_id, token, "refused", 0.0, code="encrypted")
    _check(db_session)
    assert max(len(v) for v in _rolled_up(db_session)[2].values()) > 2, \
        "no day and type with many files"

    completed = db_session.scalars(select(File).where(File.status == "COMPLETED")).all()
    for file in rng.sample(completed, 6):  # reports rewritten, cleared, moved, failed later
        change = rng.randrange(4)
        if change == 0:
            file.report = _report(rng)
        elif change == 1:
            file.report = None
        elif change == 2:
            file.created_at -= timedelta(days=3)
        else:
            file.status, file.processing_duration = "FAILED", 2.5
    db_session.commit()
    db_session.execute(update(File).where(File.detected_type == "csv").values(
        processing_duration=File.processing_duration + 1))  # one statement, many rows
    db_session.commit()
    _check(db_session)

    failed = db_session.scalars(select(File.id).where(File.status == "FAILED",
                                                      File.original_key.is_not(None),
                                                      File.expires_at > utcnow())).all()
    for file_id in failed[:3]:
        admin_service.requeue_file(db_session, settings, storage, file_id)
    for file_id in rng.sample([f for f, _ in made], 6):
        file = db_session.get(File, file_id)
        if file is not None and file.status != "PROCESSING":
            admin_service.delete_file(db_session, storage, file_id)
    db_session.execute(delete(User).where(User.id == users[0].id))
    db_session.commit()
    _check(db_session)
    assert _rolled_up(db_session)[1], "the mix wrote no threat at all"


def test_the_migration_backfills_the_rollups_from_existing_rows(settings, db_session,
                                                                db_url) -> None:
    from alembic import command

    rng = random.Random(7)
    user = make_user(db_session, email="before@example.com")
    for i in range(15):
        file, _ = add_file_and_job(db_session, settings, user, status="COMPLETED",
                                   created_at=utcnow() - timedelta(days=i % 5, hours=i),
                                   kind=KINDS[i % 4])
        file.report = _report(rng)
        file.processing_duration = round(rng.random() * 3, 3)
    db_session.commit()
    db_session.close()
    cfg = alembic_config(db_url)
    command.downgrade(cfg, "a0c2e4f6b8d1")
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:  # rows written while there were no rollups
            conn.execute(update(File).values(processing_duration=File.processing_duration * 2))
        command.upgrade(cfg, "head")
        with Session(engine) as session:
            rolled = _rolled_up(session)
            assert rolled == _expected(session)
            assert all(rolled), "the backfill left a rollup empty"
    finally:
        engine.dispose()
