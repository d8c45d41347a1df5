"""A job on a full disk waits and tries again (an infrastructure fault) instead of failing the
file as if it were damaged: the sandbox's output cannot be written, or its work folder cannot
be made."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from sanitas.config import MB
from sanitas.datadir.diskspace import Room
from sanitas.db import make_sessionmaker
from sanitas.engine.report import Result
from sanitas.models import File, Job
from sanitas.processing import run
from sanitas.storage import make_storage
from tests.factories import add_file_and_job, make_user, pdf_bytes


def _run(settings, db_session, job):
    return run.run_job(job.id, factory=make_sessionmaker(db_session.get_bind()),
                        settings=settings, storage=make_storage(settings))


def _state(db_session, file, job):
    db_session.expire_all()
    return db_session.get(File, file.id).status, db_session.get(Job, job.id)


def test_rejection_while_the_disk_is_short_is_retried(settings, db_session, monkeypatch):
    from sanitas import sandbox
    from sanitas.datadir import diskspace

    user = make_user(db_session)
    file, job = add_file_and_job(db_session, settings, user, name="doc.pdf",
                                 content=b"%PDF-1.7\n" + b"x" * 5000)
    rejected = Result(input="doc.pdf", status="rejected",
                      reason="The file is damaged or uses features that cannot be made safe "
                             "(OSError).")
    monkeypatch.setattr(sandbox, "run_sanitizer", lambda *a, **k: rejected)
    monkeypatch.setattr(diskspace, "room", lambda path: Room(path, 4096, None))
    assert _run(settings, db_session, job) == "retry"
    status, job_row = _state(db_session, file, job)
    assert status == "PENDING" and job_row.state == "waiting" and "OSError" in job_row.error
    # with room on the disk the same rejection is the file's: it fails, once
    monkeypatch.setattr(diskspace, "room", lambda path: Room(path, 100 * 1024 * MB, None))
    job_row.run_after = None
    db_session.commit()
    assert _run(settings, db_session, job) == "failed"
    status, job_row = _state(db_session, file, job)
    assert status == "FAILED" and job_row.attempts == 2


def test_no_room_for_the_work_folder_is_retried(settings, db_session, monkeypatch):
    from sanitas.datadir import scratch

    user = make_user(db_session)
    file, job = add_file_and_job(db_session, settings, user, name="doc.pdf",
                                 content=b"%PDF-1.7\n" + b"x" * 5000)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(scratch.tempfile, "mkdtemp", full)
    assert _run(settings, db_session, job) == "retry"
    status, job_row = _state(db_session, file, job)
    assert status == "PENDING" and job_row.state == "waiting"


@pytest.fixture
def small_data_dir(settings):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root (or CAP_SYS_ADMIN) and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs",
                           str(settings.data_dir)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield settings.data_dir
    subprocess.run(["umount", "-l", str(settings.data_dir)], check=False)


def test_real_sandbox_output_on_a_full_disk_is_retried(settings, db_session, small_data_dir):
    """The original (1.1 MB) is stored and copied to the job's folder on a 3 MB disk: the
    sandbox cannot write the sanitized copy, and the job waits instead of failing the file."""
    settings.min_free_bytes = 0
    user = make_user(db_session)
    content = pdf_bytes(pages=2, side=(1000, 1000), quality=70)  # two noisy JPEG pages, 1.1 MB
    assert 1000 * 1024 < len(content) < 1400 * 1024
    file, job = add_file_and_job(db_session, settings, user, content=content)
    assert _run(settings, db_session, job) == "retry"
    status, job_row = _state(db_session, file, job)
    assert status == "PENDING" and job_row.state == "waiting", job_row.error
    assert list((small_data_dir / "tmp" / "jobs").iterdir()) == []
