"""Sandboxes outlive the thread that asked for them. bubblewrap's --die-with-parent is
PR_SET_PDEATHSIG, which follows the thread that started the process, not the process: a
template or spare started from a short-lived thread (the executor's prestart thread) was killed
when that thread ended. Every sandbox is therefore started by one long-lived thread of the
sandbox package (bwrap._start_process)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from sanitas.sandbox import bwrap, forked, run_sanitizer

PDEATHSIG_GRACE = 1.0  # the signal is sent as the thread exits; this is plenty to see it land


def _in_short_lived_thread(work: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            box["error"] = exc

    thread = threading.Thread(target=run, name="short-lived")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _children() -> set[int]:
    """This process's live (not zombie) child processes."""
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != b"Z":
            found.add(int(entry.name))
    return found


def _nice_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[16])  # field 19: nice


@pytest.fixture
def clean(sandbox_settings):
    bwrap.shutdown_spares()
    before = _children()
    yield sandbox_settings
    bwrap.shutdown_spares()
    deadline = time.monotonic() + 5
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children() - before == set()  # nothing left behind after shutdown


def test_a_template_started_by_a_thread_that_ends_lives_on(clean, tmp_path):
    layout = bwrap._layout(clean, False)
    host = bwrap._cgroup_host(clean)
    template = _in_short_lived_thread(lambda: forked.template_for(layout, host))
    if template is None:
        pytest.fail("the sandbox template does not start on this machine")
    time.sleep(PDEATHSIG_GRACE)
    assert template.alive()
    text = tmp_path / "notes.txt"
    text.write_text("after the thread that started the template ended\n")
    forks = template.forks
    result = run_sanitizer(text, tmp_path / "out", mode="basic", settings=clean)
    assert result.status == "ok" and template.forks == forks + 1  # served by that template
    assert forked.template_for(layout, host) is template


def test_spares_prestarted_by_the_executor_thread_serve_the_first_job(clean, tmp_path):
    """processing/local.py starts the spares from its short-lived prestart thread."""
    from sanitas.processing.local import _prestart_sandboxes

    settings = clean.model_copy(update={"sandbox_prefork": False})

    def prestart() -> None:
        _prestart_sandboxes(settings)
        # Still here once bubblewrap is up (a thread that starts several spares is, for all
        # but the last): its parent-death signal is armed, and fires as this thread ends.
        assert all(box.wait_ready() for box in bwrap.spares())

    _in_short_lived_thread(prestart)
    (spare,) = bwrap.spares()
    time.sleep(PDEATHSIG_GRACE)
    assert spare.alive()
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    result = run_sanitizer(text, tmp_path / "out", mode="basic", settings=settings,
                           prewarm=False)
    assert result.status == "ok"
    assert not spare.alive() and bwrap.spares() == []  # the job took the prestarted spare


def test_a_sandbox_keeps_the_niceness_of_the_thread_that_asked(clean):
    """The executor's job threads run niced (SANITAS_EXECUTOR_NICE) and their sandboxes with
    them; the starting thread does not take on one requester's niceness for the next."""
    layout = bwrap._layout(clean, False)
    host = bwrap._cgroup_host(clean)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def niced() -> bwrap._Sandbox:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, base + 5))
        return bwrap._Sandbox(layout, bwrap._SPARE_LIMITS, host)

    lowered = _in_short_lived_thread(niced)
    plain = bwrap._Sandbox(layout, bwrap._SPARE_LIMITS, host)
    try:
        assert lowered.wait_ready() and plain.wait_ready()
        assert _nice_of(lowered.proc.pid) == min(19, base + 5)
        assert _nice_of(plain.proc.pid) == base
    finally:
        lowered.kill()
        plain.kill()


def test_a_forked_process_starts_its_own_starting_thread():
    """A Celery pool process is forked from a parent whose starting thread it does not have."""
    assert bwrap._start_process(["/bin/true"]).wait(10) == 0  # the parent's thread exists
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = bwrap._start_process(["/bin/true"]).wait(10)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
