"""The report worker: a thread in every API process that generates PENDING reports.

Reports are not run by the job executor: they read the database and write a blob, and never
touch uploaded bytes, so they need neither the sandbox nor a Celery worker. Running them in
the API process makes them work the same whichever executor (local or Celery) is configured.

The rows are the queue, as for jobs. A worker claims a report with a conditional UPDATE
(PENDING -> PROCESSING), so of several API processes exactly one generates it, and renews
`claimed_at` while it works. A report left PROCESSING by a process that died is claimed again
once `claimed_at` is older than the job heartbeat timeout; PENDING ones (a request the
process did not get to before a restart) are found by the first scan after start-up.

Generation is shared fairly between accounts: the next report is the oldest waiting one of
the account served least recently (whose latest claim is oldest; an account never served
first), so one account's burst does not make another account's single report wait behind
it. A report is deleted with its blob once it expires (service.expire_reports).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from fastapi import FastAPI
from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session, aliased, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.models.report import Report, ReportFormat, ReportStatus
from sanitas.reports.service import report_rows, scope_of
from sanitas.reports.writer import ReportTooLarge, write_csv, write_pdf
from sanitas.storage import Storage
from sanitas.web.schemas import iso

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
HEARTBEAT_SECONDS = 10.0
FAILED_MESSAGE = "The report could not be generated because of a server problem."


def report_key(report_id: str, fmt: str) -> str:
    return f"reports/{report_id}.{fmt}"


def _claimable(settings: Settings) -> ColumnElement[bool]:
    stale = utcnow() - timedelta(seconds=settings.job_heartbeat_timeout_seconds)
    return or_(Report.status == ReportStatus.PENDING,
               and_(Report.status == ReportStatus.PROCESSING, Report.claimed_at < stale))


def claim(factory: sessionmaker[Session], settings: Settings) -> str | None:
    """Take the next report waiting (or abandoned by a dead process): the oldest of the
    account served least recently, round-robin between accounts; None when none is."""
    served = aliased(Report)
    last_served = (select(func.max(served.claimed_at)).where(served.user_id == Report.user_id)
                   .correlate(Report).scalar_subquery())
    with factory() as s:
        ids = s.scalars(select(Report.id).where(_claimable(settings))
                        .order_by(last_served.is_not(None), last_served, Report.created_at,
                                  Report.id).limit(10)).all()
        for report_id in ids:
            taken = s.execute(update(Report).where(Report.id == report_id, _claimable(settings))
                              .values(status=ReportStatus.PROCESSING, claimed_at=utcnow(),
                                      attempts=Report.attempts + 1)
                              .execution_options(synchronize_session=False))
            s.commit()
            if rows_matched(taken) == 1:
                return report_id
    return None


def _set(factory: sessionmaker[Session], report_id: str, **values: object) -> bool:
    """Update the report if this worker still holds it (it is PROCESSING)."""
    with factory() as s:
        done = s.execute(update(Report).where(Report.id == report_id,
                                              Report.status == ReportStatus.PROCESSING)
                         .values(**values).execution_options(synchronize_session=False))
        s.commit()
        return rows_matched(done) == 1


class _Heartbeat:
    def __init__(self, factory: sessionmaker[Session], report_id: str) -> None:
        self.factory, self.report_id = factory, report_id
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True,
                                       name="sanitas-report-heartbeat")

    def _beat(self) -> None:
        while not self.stop.wait(HEARTBEAT_SECONDS):
            try:
                _set(self.factory, self.report_id, claimed_at=utcnow())
            except Exception:
                log.warning("report %s: heartbeat failed", self.report_id, exc_info=True)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


def generate(report_id: str, *, factory: sessionmaker[Session], settings: Settings,
             storage: Storage) -> str:
    """Write the claimed report to storage and mark it COMPLETED (or FAILED). Returns the
    outcome: "completed", "failed" or "retry"."""
    with factory() as s:
        report = s.get(Report, report_id)
        if report is None:
            return "failed"
        s.expunge(report)
    workdir = settings.data_dir / "tmp" / "reports"
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, name = tempfile.mkstemp(prefix=f"report-{report_id[:8]}-", dir=workdir)
    os.close(fd)
    path = Path(name)
    try:
        with _Heartbeat(factory, report_id), factory() as s:
            meta = {"period_from": iso(report.period_start) or "",
                    "period_to": iso(report.period_end) or "",
                    "scope": scope_of(report), "generated_at": iso(utcnow()) or ""}
            rows = report_rows(s, report)
            if report.format == ReportFormat.PDF:
                totals = write_pdf(path, rows, meta)
            else:
                totals = write_csv(path, rows, meta)
        key = report_key(report.id, report.format)
        size = storage.put_file(key, path, move=True)
    except ReportTooLarge as exc:
        _set(factory, report_id, status=ReportStatus.FAILED, error_message=str(exc),
             completed_at=utcnow())
        return "failed"
    except Exception:
        log.exception("report %s: generation failed (attempt %d)", report_id, report.attempts)
        if report.attempts < MAX_ATTEMPTS:
            _set(factory, report_id, status=ReportStatus.PENDING, claimed_at=None)
            return "retry"
        _set(factory, report_id, status=ReportStatus.FAILED, error_message=FAILED_MESSAGE,
             completed_at=utcnow())
        return "failed"
    finally:
        path.unlink(missing_ok=True)
    if not _set(factory, report_id, status=ReportStatus.COMPLETED, storage_key=key, size=size,
                file_count=totals.files, error_message=None, completed_at=utcnow()):
        with factory() as s:
            gone = s.get(Report, report_id) is None
        if gone:  # deleted meanwhile: its blob would be named by no row
            storage.delete(key)
        return "failed"
    return "completed"


class ReportWorker:
    """One thread: wakes when a report is requested here (kick) or every poll interval, and
    generates what it can claim, one report at a time."""

    def __init__(self, settings: Settings, factory: sessionmaker[Session],
                 storage: Storage) -> None:
        self.settings, self.factory, self.storage = settings, factory, storage
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="sanitas-reports", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=30)

    def kick(self) -> None:
        self.wake.set()

    def run_pending(self) -> int:
        """Generate every report that can be claimed now; returns how many were tried."""
        n = 0
        while not self.stopping.is_set() and (report_id := claim(self.factory, self.settings)):
            outcome = generate(report_id, factory=self.factory, settings=self.settings,
                               storage=self.storage)
            log.info("report %s: %s", report_id, outcome)
            n += 1
        return n

    def _loop(self) -> None:
        while not self.stopping.is_set():
            try:
                self.run_pending()
            except Exception:
                log.exception("report worker: scan failed; retrying")
            self.wake.wait(max(self.settings.executor_poll_interval_seconds, 1.0))
            self.wake.clear()


def start_report_worker(app: FastAPI) -> Callable[[], None]:
    """Start this process's report worker (its first scan picks up what a restart left);
    returns its stop."""
    from sanitas.storage import make_storage

    state = app.state
    if getattr(state, "storage", None) is None:
        state.storage = make_storage(state.settings)
    worker = ReportWorker(state.settings, state.sessionmaker, state.storage)
    worker.start()
    state.report_worker = worker

    def stop() -> None:
        worker.stop()
        state.report_worker = None

    return stop
