"""Untrusted XML never makes the engine open a file: a DOCTYPE naming a local path (here a
FIFO nobody writes to, so a read would block forever) is not followed by any family."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


@pytest.mark.parametrize("family", ["svg", "ooxml_part", "xml", "verify"])
def test_a_doctype_naming_a_local_file_is_not_opened(family, tmp_path):
    fifo = tmp_path / "blocking.dtd"
    os.mkfifo(fifo)
    document = (f'<?xml version="1.0"?><!DOCTYPE svg SYSTEM "{fifo}">'
                '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>')
    code = textwrap.dedent(f"""
        from pathlib import Path
        from sanitas.engine.report import Context, Rejected
        data = {document.encode()!r}
        family = {family!r}
        try:
            if family == "svg":
                from sanitas.engine.svg import sanitize_svg_bytes
                sanitize_svg_bytes(data, Context())
            elif family == "ooxml_part":
                from sanitas.engine.xmlsafe import parse_xml
                parse_xml(data, "part.xml")
            elif family == "xml":
                from sanitas.engine.text import parse_untrusted_xml
                parse_untrusted_xml(data, "file.xml", lambda kind, what: None)
            else:
                from sanitas.engine import verify
                verify._parse(data, "output")
        except Rejected:
            pass  # refusing is fine; opening the FIFO is not
        except Exception as exc:
            if type(exc).__name__ != "Invalid":
                raise
        print("done")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "done"
