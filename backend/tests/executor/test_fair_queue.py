"""The fair queue (issue 30): executors take jobs in priority order and, within a priority,
accounts take turns (an account with jobs running waits behind one without); while others'
jobs wait, no account gets more than `executor_max_share` of the workers; the status call's
`ahead` counts in the same order. On SQLite and PostgreSQL, through the real local executor
too: one account's slow files do not hold every worker while another's small file waits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from sanitas.db import utcnow
from sanitas.models import Job
from sanitas.models import job as job_facts
from sanitas.processing import queue
from tests.factories import add_file_and_job, make_user


def _at(minutes: float):
    return utcnow() - timedelta(minutes=30) + timedelta(minutes=minutes)


def _jobs(db_session, settings, user, *minutes: float, **options) -> list[str]:
    return [add_file_and_job(db_session, settings, user, created_at=_at(m), **options)[1].id
            for m in minutes]


def _running(db_session, settings, user) -> str:
    _, job = add_file_and_job(db_session, settings, user, status="PROCESSING",
                              created_at=_at(0))
    db_session.execute(update(Job).where(Job.id == job.id).values(heartbeat_at=utcnow()))
    db_session.commit()
    return job.id


def _order(db_session, settings, limit: int = 100, **kwargs) -> list[str]:
    return [job_id for job_id, _ in queue.find_runnable(db_session, settings, limit, **kwargs)]


def test_accounts_take_turns_and_ahead_counts_in_that_order(settings, db_session):
    a, b, c = (make_user(db_session) for _ in range(3))
    a1, a2, a3, a4 = _jobs(db_session, settings, a, 1, 2, 3, 4)  # a burst, oldest
    (b1,) = _jobs(db_session, settings, b, 5)
    c1, c2 = _jobs(db_session, settings, c, 6, 7)
    (urgent,) = _jobs(db_session, settings, c, 9, priority=job_facts.HIGH_PRIORITY)
    order = _order(db_session, settings)
    assert order == [urgent, a1, b1, c1, a2, c2, a3, a4]
    for place, job_id in enumerate(order):
        job = db_session.get(Job, job_id)
        assert job_facts.jobs_ahead(db_session, settings.job_heartbeat_timeout_seconds,
                                    job) == place


def test_an_account_being_served_waits_behind_one_that_is_not(settings, db_session):
    a, b = make_user(db_session), make_user(db_session)
    _running(db_session, settings, a)
    a1, a2 = _jobs(db_session, settings, a, 1, 2)
    (b1,) = _jobs(db_session, settings, b, 10)  # newer, but b has nothing running
    assert _order(db_session, settings) == [b1, a1, a2]


def _serve_one(db_session, settings) -> str:
    """What one worker does: claim the fair order's head (run.claim, which records the
    account's turn) and finish it before taking the next."""
    from sanitas.db import make_sessionmaker
    from sanitas.processing import run

    head, _ = queue.find_runnable(db_session, settings, 1)[0]
    outcome, _file, _job = run.claim(make_sessionmaker(db_session.get_bind()), settings, head,
                                     run.worker_id())
    assert outcome is None
    db_session.execute(update(Job).where(Job.id == head).values(state="completed"))
    db_session.commit()
    return head


def test_one_worker_serves_accounts_in_turn(settings, db_session):
    """With one worker nothing of anyone's runs when it picks the next job, so every account's
    turns restart at one: the account served least recently goes first (the age order alone
    served a's whole burst before b's first file)."""
    settings = settings.model_copy(update={"executor_workers": 1})
    a, b, c = (make_user(db_session) for _ in range(3))
    a1, a2, a3 = _jobs(db_session, settings, a, 1, 2, 3)
    b1, b2 = _jobs(db_session, settings, b, 4, 5)
    served = [_serve_one(db_session, settings), _serve_one(db_session, settings)]
    (c1,) = _jobs(db_session, settings, c, 6)  # a newcomer goes before the served accounts
    expected = [c1, a2, b2, a3]
    db_session.expire_all()
    for place, job_id in enumerate(expected):  # the status call's count says the same
        job = db_session.get(Job, job_id)
        assert job_facts.jobs_ahead(db_session, settings.job_heartbeat_timeout_seconds,
                                    job) == place, (place, job_id)
    served += [_serve_one(db_session, settings) for _ in range(4)]
    assert served == [a1, b1, *expected]


@pytest.fixture
def two_workers(settings):
    return settings.model_copy(update={"executor_workers": 2, "executor_max_share": 0.5})


def test_no_account_takes_more_than_its_share_while_others_wait(two_workers, db_session):
    settings = two_workers
    a, b, c = (make_user(db_session) for _ in range(3))
    _running(db_session, settings, a)  # a holds its share (one of two workers)
    a1, a2 = _jobs(db_session, settings, a, 1, 2)
    (b1,) = _jobs(db_session, settings, b, 3)
    # One worker free: b, not a's older job.
    assert _order(db_session, settings, limit=1) == [b1]
    # b's job handed to a worker (not claimed yet) counts as b's: c's job next, not a's.
    (c1,) = _jobs(db_session, settings, c, 4)
    assert _order(db_session, settings, limit=1, exclude={b1}) == [c1]
    # Nobody else waiting: a gets the free workers (none idles while jobs wait).
    assert _order(db_session, settings, limit=2, exclude={b1, c1}) == [a1, a2]


def test_the_share_is_at_least_one_worker(settings, db_session):
    settings = settings.model_copy(update={"executor_workers": 3, "executor_max_share": 0.2})
    a, b = make_user(db_session), make_user(db_session)
    a1, a2 = _jobs(db_session, settings, a, 1, 2)
    (b1,) = _jobs(db_session, settings, b, 3)
    assert _order(db_session, settings, limit=2) == [a1, b1]
    assert _order(db_session, settings, limit=3) == [a1, b1, a2]


def _executed(settings, db_session, job_ids: list[str]) -> dict[str, Job]:
    """The jobs after the real local executor ran them all (each completed)."""
    import time

    from sanitas.db import make_sessionmaker
    from sanitas.processing.local import LocalExecutor
    from sanitas.storage import make_storage

    executor = LocalExecutor(settings, make_sessionmaker(db_session.get_bind()),
                             make_storage(settings))
    executor.start()
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            db_session.expire_all()
            jobs = {j: db_session.get(Job, j) for j in job_ids}
            if all(job.state in ("completed", "failed") for job in jobs.values()):
                break
            time.sleep(0.3)
        else:
            pytest.fail("the jobs did not finish")
    finally:
        executor.stop()
    assert all(job.state == "completed" for job in jobs.values()), \
        {j: (job.state, job.error) for j, job in jobs.items()}
    return jobs


def test_one_accounts_slow_files_do_not_hold_every_worker(settings, db_session):
    """The real local executor with two workers (no express worker): account A queues three
    slow files (advanced mode, 40 pages each), then B a small text file. B's job starts as
    soon as a worker is free, before A's third file (oldest first would have made it wait for
    all three)."""
    from tests.executor.jobkit import slow_pdf

    settings = settings.model_copy(update={"executor_workers": 2, "executor_max_share": 0.5,
                                           "executor_poll_interval_seconds": 0.2,
                                           "executor_express_workers": 0})
    a, b = make_user(db_session), make_user(db_session)
    slow = [add_file_and_job(db_session, settings, a, content=slow_pdf(seed), mode="advanced",
                             created_at=_at(seed))[1].id for seed in (1, 2, 3)]
    _, small = add_file_and_job(db_session, settings, b, content=b"five\n", name="n.txt",
                                kind="txt", created_at=_at(10))
    jobs = _executed(settings, db_session, [*slow, small.id])
    started = {j: job.started_at for j, job in jobs.items()}
    assert started[small.id] < started[slow[2]], started
    assert jobs[small.id].finished_at <= started[slow[2]] + timedelta(seconds=5)


def test_express_workers_take_only_small_quick_jobs(settings, db_session):
    """An express worker's jobs: a basic clean of a file of at most executor_express_max_bytes
    whose kind is cleaned without LibreOffice (as the upload's sniff named it), in the fair
    order. Not advanced mode, not a legacy Office file, not a large or unnamed one."""
    settings = settings.model_copy(update={"executor_express_max_bytes": 1000})
    a, b = make_user(db_session), make_user(db_session)

    def job(user, minute: float, **options) -> str:
        return _jobs(db_session, settings, user, minute, **options)[0]

    text = job(a, 1, kind="txt", content=b"note\n")
    job(a, 2, kind="txt", content=b"note\n", mode="advanced")
    job(a, 3, kind="doc", content=b"x" * 500)  # LibreOffice converts it
    job(a, 4, kind="txt", content=b"x" * 1001)  # over the size
    job(a, 5, kind=None, content=b"x" * 10)  # the sniff could not tell
    docx = job(a, 6, kind="docx", content=b"x" * 900)  # cleaned as a package: quick
    pdf = job(b, 7, kind="pdf", content=b"%PDF-1.4 x")
    assert "doc" not in queue.express_kinds() and "rtf" not in queue.express_kinds()
    assert _order(db_session, settings, express=True) == [text, pdf, docx]
    assert _order(db_session, settings, limit=1, express=True, exclude={text}) == [pdf]


def test_a_small_file_does_not_wait_for_the_workers_with_an_express_worker(settings,
                                                                           db_session):
    """The real local executor, one worker and one express worker: account A's two slow files
    (advanced mode, 40 pages each) queue first, then B's small text file. The express worker
    takes B's file at once and it is done while A's first file still runs; the express worker
    never takes A's second slow file, which waits for the worker."""
    from tests.executor.jobkit import slow_pdf

    settings = settings.model_copy(update={"executor_workers": 1, "executor_express_workers": 1,
                                           "executor_poll_interval_seconds": 0.2})
    a, b = make_user(db_session), make_user(db_session)
    slow = [add_file_and_job(db_session, settings, a, content=slow_pdf(seed), mode="advanced",
                             created_at=_at(seed))[1].id for seed in (1, 2)]
    _, small = add_file_and_job(db_session, settings, b, content=b"five\n", name="n.txt",
                                kind="txt", created_at=_at(10))
    jobs = _executed(settings, db_session, [*slow, small.id])
    first, second = (jobs[j] for j in slow)
    assert jobs[small.id].finished_at < first.finished_at, (jobs[small.id].finished_at, first)
    assert second.started_at >= first.finished_at  # the worker's, after the first
