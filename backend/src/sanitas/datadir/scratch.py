"""Scratch space under the data directory, and the sweep that removes what a crash left.

- `$DATA_DIR/tmp/jobs/job-*/`: a job's work folder (the unsanitized original as `input`, the
  sandbox's output in `out/`), one per run of a job.
- `$DATA_DIR/tmp/uploads/upload-*`: an upload's files while the request is read and stored.

Whoever uses one holds an exclusive `flock` on it (the folder's or the file's descriptor)
until it is removed; the kernel drops the lock when the process dies, however it dies. The
sweep (at the start of `sanitas serve` and `sanitas worker`, and with every expiry sweep)
removes only entries whose lock it can take, and none younger than `GRACE_SECONDS` (the
moment between creating an entry and locking it). Several processes may share the folders
(API processes, the executor, Celery workers on one machine): each one's live entries are
safe from the others' sweeps.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from sanitas.config import Settings

log = logging.getLogger(__name__)

GRACE_SECONDS = 5.0
# Work folders of versions that kept them in the system temp dir (no lock): only old ones.
LEGACY_PREFIX = "sanitas-job-"
LEGACY_MIN_AGE_SECONDS = 24 * 3600.0


def jobs_dir(settings: Settings) -> Path:
    return settings.data_dir / "tmp" / "jobs"


def uploads_dir(settings: Settings) -> Path:
    return settings.data_dir / "tmp" / "uploads"


def hold(fd: int) -> int:
    """Lock the file or folder open at `fd` as in use; returns a duplicate descriptor that
    keeps the lock after `fd` is closed (close it once the entry is removed)."""
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return os.dup(fd)


class JobScratch:
    """A locked work folder for one run of a job; `close()` removes it."""

    def __init__(self, settings: Settings, job_id: str) -> None:
        base = jobs_dir(settings)
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = Path(tempfile.mkdtemp(prefix=f"job-{job_id[:8]}-", dir=base))
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            self._lock = hold(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1



def _remove_if_abandoned(path: Path, now: float, grace: float) -> bool:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    if now - st.st_mtime < grace:
        return False
    is_dir = stat.S_ISDIR(st.st_mode)
    if not is_dir and not stat.S_ISREG(st.st_mode):  # nothing of ours: a stray link, a fifo
        path.unlink(missing_ok=True)
        return True
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | (os.O_DIRECTORY if is_dir else 0))
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # in use
        if is_dir:
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)


def sweep(settings: Settings, *, grace: float = GRACE_SECONDS, legacy: bool = False) -> int:
    """Remove job folders and upload files no process holds. `legacy` also removes old
    `/tmp/sanitas-job-*` folders of earlier versions. Returns how many were removed."""
    now = time.time()
    removed = 0
    for base in (jobs_dir(settings), uploads_dir(settings)):
        try:
            entries = [Path(e.path) for e in os.scandir(base)]
        except FileNotFoundError:
            continue
        except OSError:
            log.warning("scratch: cannot list %s", base, exc_info=True)
            continue
        for path in entries:
            try:
                removed += _remove_if_abandoned(path, now, grace)
            except OSError:
                log.warning("scratch: cannot remove %s", path, exc_info=True)
    if legacy:
        removed += _sweep_legacy(now)
    if removed:
        log.info("scratch: removed %d leftover job folder(s) or upload file(s)", removed)
    return removed


def _sweep_legacy(now: float) -> int:
    removed = 0
    try:
        entries = [e for e in os.scandir(tempfile.gettempdir())
                   if e.name.startswith(LEGACY_PREFIX)]
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False) and \
                    now - entry.stat(follow_symlinks=False).st_mtime >= LEGACY_MIN_AGE_SECONDS:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed
