"""The distributed executor: job ids travel through a Redis-brokered Celery queue to
`sanitas worker` processes on any machine that shares the database and the storage.

- acks_late + reject on worker loss + prefetch 1: a message is acknowledged only after its job
  has finished, and each worker process holds one job at a time.
- Two queues, `sanitas-high` (ENTERPRISE, ADMIN) and `sanitas-normal`; workers poll them in
  sorted order, so high-priority jobs start first.
- The job rows stay the source of truth. A periodic `recover` task (and one at worker start)
  re-sends due waiting jobs when the broker queues are empty (a lost message) and active jobs
  whose heartbeat is stale (a killed worker); a duplicate message is harmless because the
  claim is atomic.
- A periodic `expire` task runs the expiry sweep (the worker runs the beat scheduler with
  `sanitas worker`, unless --no-beat).
- Each worker's main process runs a webhook sender thread (sanitas/webhooks/sender.py) from
  worker start to shutdown; deliveries are rows claimed atomically, so any number of workers
  may run one.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from celery import Celery, Task
from celery.signals import worker_ready, worker_shutdown
from kombu import Queue
from sqlalchemy import select

from sanitas.config import Settings, get_settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from sanitas.storage import Storage

log = logging.getLogger(__name__)

HIGH_QUEUE = "sanitas-high"
NORMAL_QUEUE = "sanitas-normal"
PROCESS_TASK = "sanitas.process_job"
EXPIRE_TASK = "sanitas.expire_files"
RECOVER_TASK = "sanitas.recover_jobs"


def queue_for(priority: int) -> str:
    return HIGH_QUEUE if priority > 0 else NORMAL_QUEUE


def make_celery(settings: Settings) -> Celery:
    app = Celery("sanitas", broker=settings.broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_default_queue=NORMAL_QUEUE,
        task_queues=[Queue(HIGH_QUEUE), Queue(NORMAL_QUEUE)],
        task_routes={EXPIRE_TASK: {"queue": HIGH_QUEUE}, RECOVER_TASK: {"queue": HIGH_QUEUE}},
        broker_transport_options={"queue_order_strategy": "sorted",
                                  "visibility_timeout": max(
                                      3600, settings.job_heartbeat_timeout_seconds * 4)},
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        beat_schedule={
            "expire-files": {"task": EXPIRE_TASK,
                             "schedule": float(settings.expiry_sweep_interval_seconds)},
            "recover-jobs": {"task": RECOVER_TASK,
                             "schedule": float(settings.celery_recover_interval_seconds)},
        },
        beat_schedule_filename=str(settings.data_dir / "celerybeat-schedule"),
    )

    @app.task(name=PROCESS_TASK, bind=True)
    def process_job(self: Task[[str], str], handed: str) -> str:
        from sanitas.processing.queue import claim_order
        from sanitas.processing.run import run_job

        rt = _runtime()
        with rt.factory() as s:
            candidates = claim_order(s, rt.settings, handed)
        outcome: str = "skipped"
        job_id = handed
        for job_id in candidates:
            # Another job runs on the handed one's message: the handed job gets a new one.
            passed = _resend_once(self.app, rt, handed) if job_id != handed else None
            outcome = run_job(job_id, factory=rt.factory, settings=rt.settings,
                              storage=rt.storage, on_claimed=passed)
            if outcome != "skipped":
                break
        if outcome == "retry":
            delay: float = rt.settings.job_retry_delay_seconds
            with rt.factory() as s:
                from sanitas.models import Job

                job = s.get(Job, job_id)
                if job is not None and job.run_after is not None:
                    from sanitas.db import utcnow

                    delay = max(0.0, (job.run_after - utcnow()).total_seconds())
                    queue = queue_for(job.priority)
                else:
                    queue = NORMAL_QUEUE
            self.app.send_task(PROCESS_TASK, args=[job_id], queue=queue, countdown=delay)
        log.info("job %s: %s", job_id, outcome)
        return outcome

    @app.task(name=EXPIRE_TASK)
    def expire_files() -> int:
        from sanitas.datadir import scratch
        from sanitas.processing import sweeps
        from sanitas.reports.service import expire_reports

        rt = _runtime()
        scratch.sweep(rt.settings)  # this machine's leftovers (a killed pool process's job)
        expired = sweeps.expire_files(rt.factory, rt.storage)
        expire_reports(rt.factory, rt.storage)
        rt.orphans.maybe_run(rt.factory, rt.storage)
        return expired

    @app.task(name=RECOVER_TASK, bind=True)
    def recover_jobs(self: Task[[], int]) -> int:
        rt = _runtime()
        return recover(self.app, rt.settings, rt.factory)

    return app


def _resend_once(app: Celery, rt: _Runtime, job_id: str) -> Callable[[], None]:
    """What a worker that claimed another job than the handed `job_id` does: send `job_id`'s
    message again (to its priority's queue), so the job keeps one; a failure to send is left
    to the recovery task, which re-sends runnable jobs when the queues are empty. Each message
    taken runs at most one job and leaves at most one, so the messages never outnumber the
    jobs and duplicates are harmless as before (a claim is atomic)."""
    def send() -> None:
        from sanitas.db import utcnow
        from sanitas.models import Job
        from sanitas.models.job import runnable_condition

        try:
            with rt.factory() as s:  # a job done meanwhile (a duplicate message) needs none
                priority = s.scalar(select(Job.priority).where(
                    Job.id == job_id,
                    runnable_condition(rt.settings.job_heartbeat_timeout_seconds, utcnow())))
            if priority is not None:
                app.send_task(PROCESS_TASK, args=[job_id], queue=queue_for(priority))
        except Exception:
            log.warning("could not send job %s to the broker again", job_id, exc_info=True)
    return send


def recover(app: Celery, settings: Settings, factory: sessionmaker[Session], *,
            force: bool = False) -> int:
    """Re-send runnable jobs whose message may be lost (all of them with force, e.g. after a
    resume). Returns how many were sent."""
    from sqlalchemy import select

    from sanitas.db import utcnow
    from sanitas.models import Job, JobState
    from sanitas.models.job import is_paused, runnable_condition

    with factory() as s:
        if is_paused(s):
            return 0
        now = utcnow()
        if force or broker_backlog(app) == 0:
            rows = s.execute(select(Job.id, Job.priority)
                             .where(runnable_condition(settings.job_heartbeat_timeout_seconds, now))
                             .order_by(Job.priority.desc(), Job.created_at)).all()
        else:  # messages are queued; only stale active jobs certainly need a new one
            from datetime import timedelta

            stale = now - timedelta(seconds=settings.job_heartbeat_timeout_seconds)
            rows = s.execute(select(Job.id, Job.priority).where(
                Job.state == JobState.ACTIVE, Job.heartbeat_at < stale)).all()
    for job_id, priority in rows:
        app.send_task(PROCESS_TASK, args=[job_id], queue=queue_for(priority))
    if rows:
        log.info("recovery: re-sent %d job(s)", len(rows))
    return len(rows)


class _DeclareOk(Protocol):
    message_count: int


class _QueueChannel(Protocol):
    def queue_declare(self, queue: str, passive: bool) -> _DeclareOk: ...


def broker_backlog(app: Celery) -> int:
    """Messages waiting in the two queues (not counting those held by workers)."""
    total = 0
    with app.connection_for_write() as conn:
        # Every broker's channel (kombu's virtual one for Redis, py-amqp's for RabbitMQ)
        # declares queues; the StdChannel base the stubs give default_channel does not say so.
        channel = cast("_QueueChannel", conn.default_channel)
        for name in (HIGH_QUEUE, NORMAL_QUEUE):
            try:
                total += channel.queue_declare(queue=name, passive=True).message_count
            except Exception:  # noqa: BLE001 (a queue not declared yet holds nothing)
                log.debug("queue %s not declared yet", name)
    return total


class _Runtime:
    def __init__(self) -> None:
        from sanitas.db import make_engine, make_sessionmaker
        from sanitas.processing.sweeps import OrphanSweeper
        from sanitas.storage import make_storage

        self.settings = get_settings()
        self.engine = make_engine(str(self.settings.database_url))
        self.factory = make_sessionmaker(self.engine)
        self.storage = make_storage(self.settings)
        self.orphans = OrphanSweeper()


_rt: _Runtime | None = None
_rt_pid: int | None = None
_rt_lock = threading.Lock()


def _runtime() -> _Runtime:
    """Per-process DB engine and storage (created after the prefork pool forks)."""
    global _rt, _rt_pid
    with _rt_lock:
        if _rt is None or _rt_pid != os.getpid():
            _rt, _rt_pid = _Runtime(), os.getpid()
        return _rt


@worker_ready.connect
def _recover_on_start(sender: Any = None, **_: object) -> None:
    """A restarted worker picks up what a killed one left behind, and removes the work
    folders it left on this machine."""
    from sanitas.datadir import scratch

    try:
        scratch.sweep(get_settings(), legacy=True)
    except Exception:
        log.warning("could not sweep the scratch folders", exc_info=True)
    try:
        app = sender.app
        app.send_task(RECOVER_TASK, queue=HIGH_QUEUE)
    except Exception:
        log.warning("could not schedule start-up recovery", exc_info=True)


_webhook_stop: list[Any] = []


@worker_ready.connect
def _start_webhook_sender(sender: Any = None, **_: object) -> None:
    """The worker's webhook sender: a thread in its main process, with its own connections
    (a pool process forked later does not reuse them)."""
    try:
        from sanitas.db import make_engine, make_sessionmaker
        from sanitas.webhooks.sender import WebhookSender

        settings = get_settings()
        engine = make_engine(str(settings.database_url), pool_size=6)
        os.register_at_fork(after_in_child=lambda: engine.dispose(close=False))
        webhooks = WebhookSender(settings, make_sessionmaker(engine))
        webhooks.start()
        _webhook_stop.append(webhooks.stop)
        log.info("webhook sender started")
    except Exception:
        log.exception("could not start the webhook sender")


@worker_shutdown.connect
def _stop_webhook_sender(**_: object) -> None:
    while _webhook_stop:
        try:
            _webhook_stop.pop()()
        except Exception:
            log.warning("stopping the webhook sender failed", exc_info=True)


class CeleryExecutor:
    """The API side: sends job ids; workers run them."""

    name = "celery"

    def __init__(self, settings: Settings, factory: sessionmaker[Session],
                 storage: Storage) -> None:
        self.settings, self.factory, self.storage = settings, factory, storage
        self.app = make_celery(settings)

    def start(self) -> None:
        """Nothing to start: the Celery workers run the jobs, in their own processes."""

    def stop(self) -> None:
        try:
            self.app.close()
        except Exception:
            log.debug("closing the Celery app failed", exc_info=True)

    def submit(self, job_id: str, priority: int = 0) -> None:
        try:
            self.app.send_task(PROCESS_TASK, args=[job_id], queue=queue_for(priority),
                               retry=True, retry_policy={"max_retries": 2,
                                                         "interval_start": 0.2})
        except Exception:  # the row is kept; the recovery task will send it
            log.warning("could not send job %s to the broker", job_id, exc_info=True)

    def kick(self) -> None:
        recover(self.app, self.settings, self.factory, force=True)

    def workers(self) -> int:
        try:
            return len(self.app.control.ping(timeout=0.5) or [])
        except Exception:  # noqa: BLE001 (broker down: no worker reachable)
            return 0

    def healthy(self) -> bool:
        try:
            with self.app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            return True
        except Exception:  # noqa: BLE001 (any failure means the broker is not usable)
            return False


def worker_app() -> Celery:
    """The app `sanitas worker` runs (settings from the environment)."""
    return make_celery(get_settings())
