"""Byte scan of PDFs decompressed by qpdf's command line (never pikepdf, which the engine
itself uses to decide)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

# Names that mean active content or payloads in a PDF, as whole tokens.
PDF_DANGER = re.compile(rb"/(JavaScript|JS|AA|OpenAction|Launch|SubmitForm|ImportData|GoToR|GoToE|"
                        rb"RichMedia|RichMediaContent|EmbeddedFiles?|EF|FileAttachment|XFA|3D|"
                        rb"3DD|Movie|Sound|Rendition|Screen|PieceInfo|Metadata|PS)(?![A-Za-z0-9])")


def qpdf_expanded(path: Path) -> bytes:
    """The whole PDF decompressed by qpdf's command line (not pikepdf, which the engine uses)."""
    qpdf = shutil.which("qpdf")
    if qpdf is None:
        pytest.fail("qpdf is required for the PDF byte scan (apt-get install qpdf)")
    target = path.with_suffix(".qdf")
    proc = subprocess.run([qpdf, "--qdf", "--object-streams=disable", str(path), str(target)],
                          capture_output=True, check=False)
    assert proc.returncode in (0, 3), proc.stderr  # 3 = warnings
    return target.read_bytes()


def pdf_dangers(path: Path) -> set[bytes]:
    data = qpdf_expanded(path)
    found = {m.group(0) for m in PDF_DANGER.finditer(data)}
    if b"EVIL" in data:
        found.add(b"EVIL marker")
    return found
