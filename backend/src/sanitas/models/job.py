from __future__ import annotations

import functools
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    ForeignKey,
    Integer,
    Select,
    String,
    Text,
    and_,
    bindparam,
    case,
    func,
    or_,
    select,
)
from sqlalchemy.orm import Mapped, Session, mapped_column
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.selectable import Subquery

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column
from sanitas.models.queue_state import AccountTurn, QueueState


class JobState(StrEnum):
    """Where a job is in the queue."""

    WAITING = "waiting"
    ACTIVE = "active"  # claimed by a worker
    COMPLETED = "completed"
    FAILED = "failed"


JOB_STATES = tuple(JobState)

HIGH_PRIORITY = 10  # a job of a plan with the high-priority capability
NORMAL_PRIORITY = 0


class JobFailure(StrEnum):
    """Why a job failed when the file itself was not refused (then the engine's
    RejectionCode says why): the file's `error_code`."""

    INTERRUPTED = "interrupted"  # the worker died on it too many times
    EXPIRED = "expired"  # the file expired (or its upload vanished) before it ran
    INFRASTRUCTURE = "infrastructure_error"  # retries exhausted on server faults
    INTERNAL = "internal_error"  # a bug


class Job(Base):
    """The processing of one file. Jobs are rows, so nothing is lost on a restart."""

    __tablename__ = "jobs"

    id: Mapped[str] = id_column()
    file_id: Mapped[str] = mapped_column(
        ForeignKey("files.id", ondelete="CASCADE"), unique=True, index=True
    )
    state: Mapped[str] = mapped_column(String(16), default=JobState.WAITING, index=True)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    progress: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker_id: Mapped[str | None] = mapped_column(String(128))
    heartbeat_at: Mapped[datetime | None]
    # Not started before this moment (a retry after an infrastructure fault backs off).
    run_after: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)
    # The password given with the upload, sealed (AES-GCM, key from the app's secret key) and
    # wiped when the job ends: see sealing.py. Never in an API answer or a log.
    password_secret: Mapped[str | None] = mapped_column(Text)
    # The API call that created the job (its X-Request-ID), on the job's log lines: logs.py.
    request_id: Mapped[str | None] = mapped_column(String(128))


# What the queue holds, read by the processing package (which claims jobs in this order) and by
# the file status answer (a waiting job's place in the queue): one definition for both.

def runnable_condition(heartbeat_timeout: float, now: datetime) -> ColumnElement[bool]:
    """Jobs an executor may start now: waiting and due, or active with a heartbeat older than
    `heartbeat_timeout` seconds (its worker died)."""
    return _runnable(now, now - timedelta(seconds=heartbeat_timeout))


def _runnable(now: datetime | BindParameter[datetime],
              stale: datetime | BindParameter[datetime]) -> ColumnElement[bool]:
    """`runnable_condition` at `now`, a heartbeat before `stale` being late: values, or the
    bound parameters of a statement built once."""
    return or_(
        and_(Job.state == JobState.WAITING, or_(Job.run_after.is_(None), Job.run_after <= now)),
        and_(Job.state == JobState.ACTIVE,
             or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < stale)),
    )


AHEAD_COUNT_CAP = 10_000  # jobs_ahead counts at most this many rows


def fair_order(only: ColumnElement[bool] | None = None) -> Subquery:
    """The runnable jobs in the order executors take them: high priority first; within a
    priority, accounts take turns. A job's `turn` is its place among its account's runnable
    jobs of that priority (oldest first) plus the jobs the account has running now (active,
    heartbeat fresh), so an account being served waits behind one that is not, and a burst
    of one account's uploads is interleaved with everyone else's instead of ahead of them.
    Equal turns go to the account least recently served first (`served_at`, NULL for one never
    served, which goes first: `AccountTurn`), so accounts alternate even when one worker
    serves them all (with nothing running between two jobs, every account's turns restart at
    one), then oldest first. Columns: id, priority, created_at, user_id, running, turn,
    served_at. (The order to take them in: `fair_order_by`.) `only`: a further condition on the
    jobs and their files (accounts' running jobs are counted whatever it says). Bound
    parameters, so that a caller builds its statement once: `now`, and `stale` (a heartbeat
    older is late: now less SANITAS_JOB_HEARTBEAT_TIMEOUT_SECONDS)."""
    from sanitas.models.file import File  # files name jobs' owners; models/file.py needs no job

    now: BindParameter[datetime] = bindparam("now")
    stale: BindParameter[datetime] = bindparam("stale")
    running = (select(File.user_id.label("user_id"), func.count().label("running"))
               .select_from(Job).join(File, File.id == Job.file_id)
               .where(Job.state == JobState.ACTIVE, Job.heartbeat_at >= stale)
               .group_by(File.user_id).subquery())
    held = func.coalesce(running.c.running, 0)
    place = func.row_number().over(partition_by=(Job.priority, File.user_id),
                                   order_by=(Job.created_at, Job.id))
    return (select(Job.id, Job.priority, Job.created_at, File.user_id,
                   held.label("running"), (place + held).label("turn"),
                   AccountTurn.served_at.label("served_at"))
            .select_from(Job).join(File, File.id == Job.file_id)
            .outerjoin(running, running.c.user_id == File.user_id)
            .outerjoin(AccountTurn, AccountTurn.user_id == File.user_id)
            .where(_runnable(now, stale), *(() if only is None else (only,)))
            .subquery("fair"))


def fair_order_by(fair: Subquery) -> tuple[ColumnElement[Any], ...]:
    """The order in which executors take `fair_order`'s rows."""
    return (fair.c.priority.desc(), fair.c.turn, fair.c.served_at.asc().nulls_first(),
            fair.c.created_at, fair.c.id)


@functools.cache
def _ahead_statement() -> Select:
    """The one query `jobs_ahead` makes, built once (a status poll then pays neither the
    statement's construction nor its cache key): per account (NULL for a job whose file row is
    gone), its runnable jobs above the polled job's priority, its runnable jobs at that
    priority other than the polled job, how many of those are older, its running jobs
    (active, heartbeat fresh) and when it was last served. `runnable_condition` spelled with
    bound parameters."""
    from sanitas.models.file import File  # files name jobs' owners; models/file.py needs no job

    now: BindParameter[datetime] = bindparam("now")
    stale: BindParameter[datetime] = bindparam("stale")
    priority: BindParameter[int] = bindparam("priority")
    created: BindParameter[datetime] = bindparam("created")
    job_id: BindParameter[str] = bindparam("job_id")
    runnable = _runnable(now, stale)
    same = and_(runnable, Job.priority == priority, Job.id != job_id)
    older = or_(Job.created_at < created, and_(Job.created_at == created, Job.id < job_id))

    def total(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    return (select(File.user_id, total(and_(runnable, Job.priority > priority)),
                   total(same), total(and_(same, older)),
                   total(and_(Job.state == JobState.ACTIVE, Job.heartbeat_at >= stale)),
                   func.max(AccountTurn.served_at))
            .select_from(Job).outerjoin(File, File.id == Job.file_id)
            .outerjoin(AccountTurn, AccountTurn.user_id == File.user_id)
            .where(Job.state.in_((JobState.WAITING, JobState.ACTIVE)))
            .group_by(File.user_id))



def jobs_ahead(session: Session, heartbeat_timeout: float, job: Job,
               owner: str | None = None) -> int:
    """How many runnable jobs an executor would claim before `job`, in the claim order
    (`fair_order`: priority, then turn, then created time, then id), without ranking the
    queue: one pass over the waiting and active jobs grouped by account. An account V with n
    runnable jobs at `job`'s priority and r running has turns r+1..r+n; those under `job`'s
    turn t are ahead, and the one at t is when V was served less recently than `job`'s
    account, or as recently and it is older (V's (t-r)-th oldest is older than `job` exactly
    when at least t-r of V's are). Every runnable job of a higher priority is
    ahead. `owner`: the account of `job`'s file when the caller has it (else it is looked
    up). (The executors' share limit may let a job pass another account's that is ahead
    here; the count is the order, not a promise.)"""
    from sanitas.models.file import File

    if owner is None:
        owner = session.scalar(select(File.user_id).where(File.id == job.file_id)) or ""
    now = utcnow()
    rows = session.execute(_ahead_statement(), {
        "now": now, "stale": now - timedelta(seconds=heartbeat_timeout),
        "priority": job.priority, "created": job.created_at, "job_id": job.id}).all()
    higher = sum(int(row[1]) for row in rows)
    # Jobs without a file row are claimed by no one (fair_order joins files): only a higher
    # priority's count includes them, as it always did.
    accounts = [(user, int(count), int(n_older), int(running), served)
                for user, _higher, count, n_older, running, served in rows if user is not None]
    running = {user: held for user, _n, _o, held, _s in accounts}
    mine = next((n_older for user, _n, n_older, _r, _s in accounts if user == owner), 0)
    my_served = next((served for user, *_, served in accounts if user == owner), None)
    turn = mine + 1 + running.get(owner, 0)
    ahead = min(higher, AHEAD_COUNT_CAP) + mine
    for user, count, n_older, held, served in accounts:
        if user == owner:
            continue
        ahead += min(count, max(0, turn - 1 - held))
        place = turn - held  # the place of this account's job at `job`'s turn, if any
        if 1 <= place <= count and _served_before(served, my_served, n_older >= place):
            ahead += 1
    return min(ahead, AHEAD_COUNT_CAP)


def _served_before(theirs: datetime | None, mine: datetime | None, older: bool) -> bool:
    """Whether another account's job at the same turn goes first: its account was served less
    recently (never served goes first), or as recently and the job is `older`."""
    if theirs == mine:
        return older
    if theirs is None or mine is None:
        return theirs is None
    return theirs < mine


def is_paused(session: Session) -> bool:
    """Whether an admin paused the queue (no job starts until it is resumed)."""
    return bool(session.scalar(select(QueueState.paused).where(QueueState.id == 1)))
