"""Advanced mode's values workbook made inside the real sandbox: openpyxl readable by the
sandbox uid and allowed by the seccomp filter, the .xlsx out accepted by the output check."""

from __future__ import annotations

from pathlib import Path

import openpyxl

from sanitas.sandbox import run_sanitizer
from tests.engine import corpus_office as corpus


def test_a_workbook_is_rebuilt_from_its_values_in_the_sandbox(sandbox_settings, tmp_path):
    source = tmp_path / "book.xlsm"
    source.write_bytes(corpus.hostile_xlsm())
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=sandbox_settings,
                           prewarm=False)
    assert result.status == "ok", result.reason
    assert result.output_type == "xlsx"
    sheet = openpyxl.load_workbook(Path(result.output))["Data"]
    assert sheet["B11"].value == 165 and sheet["B11"].data_type == "n"
    assert "values_rebuild" in {f.kind for f in result.findings}
