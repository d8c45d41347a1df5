"""LibreOffice started ahead (engine/libreoffice.py, start_warm): the job's first conversion is
handed to the idle instance, gives the same result as a cold one, keeps the input filter (a
file is parsed only as the format it was detected as), and the instance serves that one
conversion only."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest

from sanitas.engine import libreoffice
from sanitas.engine.report import Context, Rejected
from tests.engine.fidelity import pdf_text

RTF = (rb"{\rtf1\ansi\deff0 {\fonttbl {\f0 Liberation Serif;}} "
       rb"\f0\fs24 Quarterly figures, warm.\par}")


def _group(pgid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(stat[2]) == pgid and stat[0] != b"Z":  # killed, not yet reaped: gone
                found.append(int(entry))
    return found


def _cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += int(stat[11]) + int(stat[12])
    return total


def _wait_idle(timeout: float = 60) -> None:
    """Until the warm instance has started: its processes stop using CPU for a second."""
    pgid = libreoffice.warm_pid()
    assert pgid is not None, "the warm instance did not start"
    deadline = time.monotonic() + timeout
    last = -1
    while time.monotonic() < deadline:
        ticks = _cpu_ticks(_group(pgid))
        if ticks == last and ticks > 0:
            return
        last = ticks
        time.sleep(1.0)
    pytest.fail("the warm LibreOffice kept busy for a minute")


def _gone(pgid: int, timeout: float = 10) -> bool:
    """The group's processes are gone (a SIGKILL is delivered, not instantly: poll)."""
    deadline = time.monotonic() + timeout
    while _group(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture
def warm(tmp_path):
    root = tmp_path / "lo-warm"
    assert libreoffice.start_warm(root)
    pgid = libreoffice.warm_pid()
    yield pgid
    if libreoffice.warm_pid() is not None:
        os.killpg(pgid, 9)
    libreoffice._warm = None
    libreoffice._warm_root = None


def test_the_first_conversion_is_the_warm_instances_and_the_same_as_cold(warm, tmp_path):
    src = tmp_path / "in.rtf"
    src.write_bytes(RTF)
    _wait_idle()
    hot = libreoffice.convert(src, Context(workdir=tmp_path / "job"), "pdf", "rtf")
    assert libreoffice.served_warm
    assert "Quarterly figures, warm." in pdf_text(hot)
    # It served one request: the instance is gone, and the next conversion starts cold with
    # the same hardened profile.
    assert libreoffice.warm_pid() is None and _gone(warm)
    again = libreoffice.convert(src, Context(workdir=tmp_path / "job2"), "pdf", "rtf")
    assert not libreoffice.served_warm
    assert pdf_text(again) == pdf_text(hot)


def test_the_input_filter_holds_for_a_handed_over_conversion(warm, tmp_path):
    """HTML with a remote image named .doc: the Word 97 filter refuses it; LibreOffice must not
    fall back to its HTML importer (which would fetch the image) in the warm instance either."""
    src = tmp_path / "input.doc"
    src.write_bytes(b'<html><body><h1>Hi</h1><img src="http://127.0.0.1:9/x.png"></body></html>')
    _wait_idle()
    with pytest.raises(Rejected):
        libreoffice.convert(src, Context(workdir=tmp_path / "job"), "pdf", "doc")
    assert libreoffice.warm_pid() is None and _gone(warm)


def test_the_waiting_instance_gets_the_jobs_limits(warm):
    _wait_idle()
    libreoffice.limit_warm({"memory_bytes": 3 << 30, "file_size_bytes": 64 << 20,
                            "cpu_seconds": 30})
    pids = _group(warm)
    assert pids
    for pid in pids:
        assert resource.prlimit(pid, resource.RLIMIT_AS) == (3 << 30, 3 << 30)
        assert resource.prlimit(pid, resource.RLIMIT_FSIZE) == (64 << 20, 64 << 20)
        soft, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
        assert 30 <= soft <= 60 and hard == soft + 1


def test_without_libreoffice_the_job_converts_cold(monkeypatch, tmp_path):
    monkeypatch.setattr(libreoffice, "SOFFICE_CANDIDATES", ("/nonexistent/soffice",))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert not libreoffice.start_warm(tmp_path / "lo-warm")
    assert libreoffice.warm_pid() is None
