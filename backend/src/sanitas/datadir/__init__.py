"""The data directory is private to the service's account: the database and its WAL, the
outbox (mail with single-use links), the secret key, blobs and scratch.

`sanitas serve`, `worker`, `migrate` and `create-admin` call `private_files()` first: every
file they create is 0600 and every directory 0700, whatever umask they were started with.
`prepare_data_dir()` creates the directory 0700 and tightens one that an older version (or
an operator) left open, saying so in the log.

Where the data is: `SANITAS_DATA_DIR`, by default `./data` of the folder a command starts in
(`make run` starts `serve` in the repository root). `serve`, `worker`, `migrate` and `icap`
create what is missing there; `create-admin` acts on an installation one of them made, so it
first calls `migrate.missing_installation()` and refuses, creating nothing and naming the place it
looked, rather than filling a second, empty database in the wrong folder.

The sandbox is not affected: it runs as the unprivileged `sanitas-sandbox` uid but gets its
input and output as file descriptors opened by this process, so nothing under the data
directory (job scratch included) needs to be readable by it. What it does open by path is
the checkout's Python environment and source (read-only binds): bytecode written there under
this umask would be root-only, so these processes write none (scripts/install.sh compiles
it ahead, readable by all).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from pathlib import Path

from sanitas.config import Settings

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600


def private_files() -> None:
    """Files created from now on by this process (and its children) are private."""
    os.umask(PRIVATE_UMASK)
    sys.dont_write_bytecode = True


def sqlite_path(database_url: str | None) -> Path | None:
    """The database file of a `sqlite:///...` URL (None for other databases, or memory)."""
    url = str(database_url or "")
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///").split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def create_sqlite_file(database_url: str | None) -> None:
    """Create the SQLite file 0600 before SQLite does: its -wal, -shm and journal files take
    the database file's mode."""
    path = sqlite_path(database_url)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE))


def _tighten(path: Path, mode: int) -> bool:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode) or stat.S_IMODE(st.st_mode) & 0o077 == 0:
        return False
    try:
        os.chmod(path, mode)
    except PermissionError as exc:  # not ours: say so, and let the service start
        log.warning("data: %s is readable by other accounts and could not be made private "
                    "(%s); make it %o", path, exc.strerror, mode)
        return False
    return True


def prepare_data_dir(settings: Settings) -> None:
    """Create the data directory 0700 (and the SQLite file 0600); make an existing one, the
    database files, the outbox and the secret key private if they are not."""
    data_dir = settings.data_dir
    data_dir.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    tightened = [str(data_dir)] if _tighten(data_dir, DIR_MODE) else []
    db = sqlite_path(settings.database_url)
    if db is not None:
        create_sqlite_file(settings.database_url)
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = db.with_name(db.name + suffix)
            if _tighten(path, FILE_MODE):
                tightened.append(str(path))
    private = [data_dir / "secret_key"]
    if settings.outbox_dir.is_dir():
        if _tighten(settings.outbox_dir, DIR_MODE):
            tightened.append(str(settings.outbox_dir))
        private += list(settings.outbox_dir.glob("*.eml"))
    tightened += [str(p) for p in private if _tighten(p, FILE_MODE)]
    if tightened:
        log.warning("data: %d path(s) were readable by other accounts and are now private "
                    "to this one: %s", len(tightened), ", ".join(tightened[:10])
                    + (" ..." if len(tightened) > 10 else ""))
