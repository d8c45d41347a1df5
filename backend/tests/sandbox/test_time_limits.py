"""A job's wall clock (SandboxLimits.resolved): it grows with the file's size, LibreOffice's
share too for a single office document, within caps; archives and containers keep a flat share
for LibreOffice; LibreOffice's own timeout ends before the job's wall clock."""

from __future__ import annotations

import time
import zipfile

import pytest

from sanitas.engine import libreoffice
from sanitas.engine.policy import Mode
from sanitas.sandbox import bwrap
from sanitas.sandbox.bwrap import MB, SandboxLimits


def _wall(size: int, mode: Mode = Mode.BASIC, office: bool = True, *, ocr: bool = False,
          container: bool = False) -> float:
    wall = SandboxLimits().resolved(size, mode, office, ocr=ocr, container=container).wall_seconds
    assert wall is not None
    return wall


def _before(size: int, mode: Mode, office: bool) -> float:
    """The formula this replaced: a flat 90 s for LibreOffice."""
    return 30 + size / MB * (6 if mode is Mode.ADVANCED else 3) + (90 if office else 0)


def test_a_small_office_document_gets_far_less_than_the_flat_share():
    assert _before(MB, Mode.BASIC, True) == 123
    assert _wall(MB) == 30 + 3 + 30  # 63 s for a 1 MB docx in basic mode
    assert _wall(100 * 1024) < 55
    assert _wall(2 * MB) == 76  # the 2 MB RTF LibreOffice cannot finish: 76 s, not 126


def test_a_large_office_document_keeps_at_least_what_it_had():
    for mode in Mode:
        assert _wall(20 * MB, mode) >= _before(20 * MB, mode, True)
    assert _wall(20 * MB, Mode.BASIC) == 30 + 60 + 220
    assert _wall(20 * MB, Mode.ADVANCED) == 30 + 120 + 220


def test_the_office_share_is_capped():
    assert bwrap.office_seconds(28 * MB) == 300
    assert bwrap.office_seconds(500 * MB) == 300
    assert _wall(100 * MB) == 30 + 300 + 300
    assert _wall(2000 * MB, Mode.ADVANCED, ocr=True) == 1800  # the job's own cap holds


def test_archives_and_containers_keep_the_flat_share():
    for size in (10 * 1024, MB, 20 * MB, 100 * MB):
        assert _wall(size, container=True) == _before(size, Mode.BASIC, True)
        assert _wall(size, Mode.ADVANCED, container=True) == _before(size, Mode.ADVANCED, True)


def test_files_without_office_content_are_unchanged():
    for size in (0, MB, 50 * MB):
        assert _wall(size, office=False) == _before(size, Mode.BASIC, False)
        assert _wall(size, office=False, container=True) == _before(size, Mode.BASIC, False)
    assert _wall(MB, Mode.ADVANCED, office=False, ocr=True) == 30 + 6 + 600


def test_cpu_follows_the_wall_and_a_fixed_wall_is_kept():
    limits = SandboxLimits().resolved(MB, Mode.BASIC, True)
    assert limits.cpu_seconds == 63 + 5
    fixed = SandboxLimits(wall_seconds=0.5).resolved(20 * MB, Mode.BASIC, True)
    assert fixed.wall_seconds == 0.5


def test_the_sniff_tells_an_archive_from_an_office_document(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("word/document.xml", "<w/>")
    assert bwrap._needs_office(archive, "bundle.zip") == (True, True, True)
    # The same bytes named as a Word file: a single office document (basic: no LibreOffice)
    assert bwrap._needs_office(archive, "letter.docx") == (True, False, False)
    rtf = tmp_path / "a.rtf"
    rtf.write_bytes(b"{\\rtf1\\ansi hello}")
    assert bwrap._needs_office(rtf, "a.rtf") == (True, True, False)
    text = tmp_path / "a.txt"
    text.write_text("hello\n")
    assert bwrap._needs_office(text, "a.txt") == (False, False, False)


@pytest.fixture
def no_deadline():
    libreoffice.set_job_deadline(None)
    yield
    libreoffice.set_job_deadline(None)


def test_libreoffice_stops_before_the_jobs_wall_clock(no_deadline):
    assert libreoffice.conversion_timeout(2 * 10**6) == 96  # no job clock: as before
    libreoffice.set_job_deadline(76)
    timeout = libreoffice.conversion_timeout(2 * 10**6)
    assert 70 < timeout <= 76 - libreoffice.WALL_MARGIN
    libreoffice.set_job_deadline(500)
    assert libreoffice.conversion_timeout(2 * 10**6) == 96  # never longer than before
    libreoffice.set_job_deadline(3)
    assert libreoffice.conversion_timeout(0) == 1.0  # the job's clock stops it anyway
    libreoffice.set_job_deadline(60)
    time.sleep(0.2)  # the job's clock runs: what is left of it shrinks
    assert libreoffice.conversion_timeout(0) <= 60 - libreoffice.WALL_MARGIN - 0.2
