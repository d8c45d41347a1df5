"""The periodic sweeps every executor runs: files past their expiry, blobs no row names, and
the scratch folders a crash left."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session, sessionmaker

from sanitas.db import utcnow
from sanitas.engine.verdict import Verdict
from sanitas.models import File, FileStatus, Job, JobState
from sanitas.models.job import JobFailure
from sanitas.processing.outcome import queue_file_events, wake_webhook_senders
from sanitas.storage import Storage, StorageError, preview_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from sanitas.config import Settings

log = logging.getLogger(__name__)


def expire_files(factory: sessionmaker[Session], storage: Storage, *, batch: int = 200) -> int:
    """Delete both blobs of files past expiresAt and mark them expired (the row is kept for
    history). Blobs are deleted before the row is marked, so a crash leaves it to the next
    sweep rather than leaking a blob. Returns the number of files expired."""
    count = 0
    while True:
        before = count
        with factory() as s:
            # A file being processed expires at the next sweep, after its job has finished.
            files = s.scalars(select(File).where(File.is_expired.is_(False),
                                                 File.expires_at <= utcnow(),
                                                 File.status != FileStatus.PROCESSING)
                              .order_by(File.expires_at).limit(batch)).all()
            if not files:
                return count
            for f in files:
                try:
                    for key in (f.original_key, f.sanitized_key,
                                preview_key(f.id) if f.sanitized_key else None):
                        if key:
                            storage.delete(key)
                except StorageError:
                    log.warning("expiry: could not delete blobs of file %s", f.id, exc_info=True)
                    continue
                f.is_expired = True
                f.original_key = None
                f.sanitized_key = None
                if f.status in (FileStatus.PENDING, FileStatus.PROCESSING):
                    f.status, f.verdict = FileStatus.FAILED, Verdict.REFUSED
                    f.error_message = "The file expired before it could be processed."
                    f.error_code = JobFailure.EXPIRED
                count += 1
            expired_ids = [f.id for f in files if f.is_expired]
            s.execute(delete(Job).where(Job.state == JobState.WAITING,
                                        Job.file_id.in_(expired_ids)))
            s.execute(update(Job).where(Job.file_id.in_(expired_ids),
                                        Job.password_secret.is_not(None))
                      .values(password_secret=None).execution_options(synchronize_session=False))
            queued = queue_file_events(s, "file.expired", expired_ids)
            s.commit()
            if queued:
                wake_webhook_senders()
            if len(files) < batch or count == before:
                return count


class OrphanSweeper:
    """Removes blobs no file row names: what a crash leaves between storing a blob and
    committing its row (an upload's original, a job's sanitized copy). A blob is removed only
    once it has been seen orphaned for `min_age` seconds (an upload or a job may still be about
    to commit), and storage is listed at most every `interval` seconds (listing a large bucket
    is not free). Local storage's half-written `.put-*` files of that age go too."""

    PREFIXES = ("originals/", "sanitized/", "previews/")

    def __init__(self, interval: float = 3600.0, min_age: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self.min_age, self.clock = interval, min_age, clock
        self.first_seen: dict[str, float] = {}
        self.last_run: float | None = None

    def maybe_run(self, factory: sessionmaker[Session], storage: Storage) -> int:
        now = self.clock()
        if self.last_run is not None and now - self.last_run < self.interval:
            return 0
        self.last_run = now
        try:
            return self.run(factory, storage, now)
        except Exception:  # a listing or a query that fails is tried at the next interval
            log.warning("orphan blob sweep failed", exc_info=True)
            return 0

    def run(self, factory: sessionmaker[Session], storage: Storage, now: float) -> int:
        keys = [k for prefix in self.PREFIXES for k in storage.keys(prefix)]
        named: set[str] = set()
        with factory() as s:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                named.update(k for k in s.scalars(select(File.original_key).where(
                    File.original_key.in_(chunk))) if k)
                named.update(k for k in s.scalars(select(File.sanitized_key).where(
                    File.sanitized_key.in_(chunk))) if k)
                # a preview lives as long as the sanitized copy beside it
                named.update(preview_key(i) for i in s.scalars(select(File.id).where(
                    File.id.in_([k.removeprefix("previews/") for k in chunk
                                 if k.startswith("previews/")]),
                    File.sanitized_key.is_not(None))))
        orphans = set(keys) - named
        self.first_seen = {k: self.first_seen.get(k, now) for k in orphans}
        removed = 0
        for key, seen in list(self.first_seen.items()):
            if now - seen >= self.min_age:
                try:
                    storage.delete(key)
                    removed += 1
                    del self.first_seen[key]
                except StorageError:
                    log.warning("could not remove orphan blob %s", key, exc_info=True)
        sweep_partials = getattr(storage, "sweep_partials", None)
        if sweep_partials is not None:
            removed += sweep_partials(self.min_age)
        if removed:
            log.info("removed %d orphan blob(s) a crash left in storage", removed)
        return removed



def sweep_scratch(settings: Settings, *, legacy: bool = False) -> None:
    """Remove the scratch folders no live process holds (datadir/scratch.py)."""
    from sanitas.datadir import scratch

    try:
        scratch.sweep(settings, legacy=legacy)
    except Exception:  # never fatal: the next sweep tries again
        log.warning("could not sweep the scratch folders", exc_info=True)
