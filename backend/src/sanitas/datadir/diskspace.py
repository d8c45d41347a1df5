"""Free space where the service writes: the data directory (uploads being received, job
scratch, the SQLite database) and, with local storage, the blobs' folder.

Below `SANITAS_MIN_FREE_BYTES` (or fewer than `MIN_FREE_INODES` free inodes) `/health` reports
`storage: degraded` (and answers 503, like any component not up) and uploads are refused with
507 before their body is read, so the database and running jobs keep the last of the room. A
write that fails anyway for want of space answers 507 too (errors.is_out_of_space).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sanitas.config import Settings

MIN_FREE_INODES = 1000


@dataclass(frozen=True)
class Room:
    path: Path
    free_bytes: int
    free_inodes: int | None  # None: the filesystem does not count inodes (btrfs, ...)


def room(path: Path | str) -> Room:
    """Free space on the filesystem of `path` (or of its nearest existing ancestor), as an
    unprivileged writer sees it."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    st = os.statvfs(p)
    return Room(p, st.f_bavail * st.f_frsize, st.f_favail if st.f_files else None)


def is_short(r: Room, min_free_bytes: int, incoming: int = 0) -> bool:
    if r.free_inodes is not None and r.free_inodes < MIN_FREE_INODES:
        return True
    return r.free_bytes - max(0, incoming) < max(0, min_free_bytes)


def watched_paths(settings: Settings) -> list[Path]:
    paths = [settings.data_dir]
    if settings.storage == "local":
        paths.append(settings.files_dir)
    from sanitas.datadir import sqlite_path

    db = sqlite_path(settings.database_url)
    if db is not None:
        paths.append(db.parent)
    return paths


def short_of_room(settings: Settings) -> list[Room]:
    """The watched filesystems below the minimum (one entry per filesystem)."""
    short: dict[int, Room] = {}
    for path in watched_paths(settings):
        r = room(path)
        if is_short(r, settings.min_free_bytes):
            short.setdefault(os.stat(r.path).st_dev, r)
    return list(short.values())
