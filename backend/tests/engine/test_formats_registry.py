"""The format registry against the documentation: every declared extension and every refusal
code is explained on docs/formats.md, so the page cannot fall behind the table."""

from __future__ import annotations

import re
from pathlib import Path

from sanitas.engine import formats
from sanitas.engine.report import RejectionCode
from sanitas.models.job import JobFailure

DOC = Path(__file__).resolve().parents[3] / "docs" / "formats.md"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]+", text.lower()))


def test_every_extension_is_documented():
    table = DOC.read_text().split("## Advanced mode")[0]
    missing = {ext for kind in formats.KINDS.values() for ext in kind.extensions
               if ext not in _words(table)}
    assert not missing, f"docs/formats.md does not list {sorted(missing)}"


def test_every_failure_code_is_documented():
    text = DOC.read_text()
    codes = [c.value for c in RejectionCode] + [f.value for f in JobFailure]
    assert [c for c in codes if f"`{c}`" not in text] == []


def test_supported_extensions_come_from_the_registry():
    listed = formats.supported_extensions()
    assert listed == sorted(set(listed))
    assert {"pdf", "docx", "dotx", "ppsx", "ott", "zip"} <= set(listed)
