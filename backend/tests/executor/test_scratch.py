"""Job scratch and upload temp files live under the data dir and are swept: what a crash
left is removed (at start and with the expiry sweep), what a live process holds is not. A real
kill -9 and the restart's sweep are in test_local_recovery.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from fastapi.testclient import TestClient

from sanitas.datadir import scratch
from sanitas.db import make_sessionmaker
from sanitas.files import service
from sanitas.main import create_app
from sanitas.processing import run
from sanitas.processing.local import LocalExecutor
from sanitas.storage import make_storage
from tests.factories import add_file_and_job, auth_headers, make_user, pdf_bytes

OLD = time.time() - 3600


def _leftover_job_dir(settings, name="job-deadbeef-x") -> Path:
    """A work folder as a killed job leaves it: the original inside, nobody holding it."""
    path = scratch.jobs_dir(settings) / name
    (path / "out").mkdir(parents=True)
    (path / "input").write_bytes(b"%PDF-1.7 the unsanitized original")
    os.utime(path, (OLD, OLD))
    return path


def _leftover_upload(settings, name="upload-leftover") -> Path:
    path = scratch.uploads_dir(settings) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"half an upload")
    os.utime(path, (OLD, OLD))
    return path


def _holder(path: Path) -> subprocess.Popen:
    """Another process holding `path` as in use, as a running job or upload does."""
    code = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_sweep_removes_leftovers_and_keeps_live_and_young_entries(settings):
    dead_dir, dead_upload = _leftover_job_dir(settings), _leftover_upload(settings)
    live = scratch.JobScratch(settings, "live-job-id")  # held by this process
    (live.path / "input").write_bytes(b"in use")
    os.utime(live.path, (OLD, OLD))
    other_dir = _leftover_job_dir(settings, "job-other")  # held by another process
    other_upload = _leftover_upload(settings, "upload-other")
    holders = [_holder(other_dir), _holder(other_upload)]
    young = scratch.jobs_dir(settings) / "job-just-made"  # created, not locked yet
    young.mkdir()
    try:
        assert scratch.sweep(settings) == 2
        assert not dead_dir.exists() and not dead_upload.exists()
        assert (live.path / "input").exists() and other_dir.exists() and other_upload.exists()
        assert young.exists()
    finally:
        for proc in holders:
            proc.stdin.close()
            proc.wait(timeout=10)
    # the holders are gone (as after a crash): their entries go too; the live one stays
    assert scratch.sweep(settings) == 2
    assert not other_dir.exists() and not other_upload.exists()
    assert live.path.exists()
    live.close()
    assert not live.path.exists()


def test_a_running_job_keeps_its_folder_under_the_data_dir(settings, db_session,
                                                           monkeypatch):
    """The job's work folder is under $DATA_DIR/tmp/jobs, survives a sweep while the job
    runs (the sandbox is at work on it) and is gone afterwards."""
    from sanitas import sandbox

    user = make_user(db_session)
    _file, job = add_file_and_job(db_session, settings, user, content=pdf_bytes())
    seen = {}
    real = sandbox.run_sanitizer

    def run_and_sweep(input_path, output_dir, **kwargs):
        seen["workdir"] = Path(input_path).parent
        scratch.sweep(settings, grace=0)  # as another process's sweep would, mid-job
        seen["survived"] = Path(input_path).exists()
        return real(input_path, output_dir, **kwargs)

    monkeypatch.setattr(sandbox, "run_sanitizer", run_and_sweep)
    outcome = run.run_job(job.id, factory=make_sessionmaker(db_session.get_bind()),
                           settings=settings, storage=make_storage(settings))
    assert outcome == "completed"
    assert seen["workdir"].parent == scratch.jobs_dir(settings)
    assert seen["survived"] is True
    assert list(scratch.jobs_dir(settings).iterdir()) == []


def test_upload_files_are_held_until_stored(settings, db_session, monkeypatch):
    """A sweep while an upload is being stored leaves its temp file alone."""
    user = make_user(db_session)
    real = service.accept_upload
    swept = []

    def sweep_then_accept(session, settings_, storage, user_, received, mode, **options):
        swept.append(scratch.sweep(settings_, grace=0))
        assert all(r.path.exists() for r in received)
        assert all(r.path.parent == scratch.uploads_dir(settings_) for r in received)
        return real(session, settings_, storage, user_, received, mode, **options)

    monkeypatch.setattr(service, "accept_upload", sweep_then_accept)
    with TestClient(create_app(settings, start_background=False)) as api:
        answer = api.post("/api/upload/multiple",
                          headers=auth_headers(settings, db_session, user),
                          files=[("files", ("a.pdf", pdf_bytes())),
                                 ("files", ("b.pdf", pdf_bytes(seed=7)))])
    assert answer.status_code == 201, answer.text
    assert swept == [0]
    assert list(scratch.uploads_dir(settings).iterdir()) == []


def test_the_executor_sweeps_at_start_and_periodically(settings, db_session):
    dead = _leftover_job_dir(settings)
    with TestClient(create_app(settings)):  # start: the background services sweep
        assert not dead.exists()
    dead, upload = _leftover_job_dir(settings), _leftover_upload(settings)
    executor = LocalExecutor(settings, make_sessionmaker(db_session.get_bind()),
                             make_storage(settings))
    executor._maybe_sweep()  # the periodic expiry sweep
    assert not dead.exists() and not upload.exists()


def test_legacy_tmp_work_folders_are_removed_when_old(settings, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    old = tmp_path / "sanitas-job-12345678-abc"
    old.mkdir()
    (old / "input").write_bytes(b"original")
    os.utime(old, (time.time() - 2 * 24 * 3600,) * 2)
    recent = tmp_path / "sanitas-job-87654321-def"
    recent.mkdir()
    other = tmp_path / "unrelated"
    other.mkdir()
    os.utime(other, (time.time() - 2 * 24 * 3600,) * 2)
    assert scratch.sweep(settings, legacy=True) == 1
    assert not old.exists() and recent.exists() and other.exists()
