"""Advanced mode's spreadsheets: a new workbook of the values alone (engine/sheet_values.py)."""

from __future__ import annotations

import datetime
import io
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.chart import BarChart, Reference

from sanitas.engine import formats, sanitize_file, sheet_values, verdict
from tests.engine import corpus_office as corpus


def _advanced(tmp_path: Path, name: str, data: bytes):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    result = sanitize_file(src, out, mode="advanced")
    assert result.status == "ok", result.reason
    return result, Path(result.output)


def _finding(result, kind):
    found = [f for f in result.findings if f.kind == kind]
    assert found, [f.kind for f in result.findings]
    return found[0]


def _all_cells(path: Path):
    book = openpyxl.load_workbook(path)  # formulas as written, not values
    return book, {(ws.title, c.coordinate): c for ws in book.worksheets
                  for row in ws.iter_rows() for c in row if c.value is not None}


def test_formulas_become_their_values_and_active_content_is_gone(tmp_path):
    result, out = _advanced(tmp_path, "book.xlsm", corpus.hostile_xlsm())
    assert out.suffix == ".xlsx"
    _book, cells = _all_cells(out)
    assert not any(c.data_type == "f" for c in cells.values())
    assert cells[("Data", "C3")].value == 18  # B3*2, as last calculated
    assert cells[("Data", "B11")].value == 165  # SUM(B1:B10)
    assert cells[("Data", "C12")].value == "cached"  # WEBSERVICE(...): its value, never the call
    assert cells[("Data", "B12")].value == 42  # an external reference's value
    with zipfile.ZipFile(out) as package:
        names = package.namelist()
        assert not [n for n in names if "vba" in n.lower() or "activeX" in n or "embeddings" in n
                    or "externalLink" in n or "drawings" in n or "comments" in n]
        sheet_xml = package.read("xl/worksheets/sheet1.xml")
        assert b"<f>" not in sheet_xml and b"hyperlink" not in sheet_xml
        assert b"openpyxl" not in package.read("docProps/core.xml")
    rebuilt = _finding(result, "values_rebuild")
    assert rebuilt.action == "converted"
    assert "formulas replaced by the value last calculated" in rebuilt.detail
    assert _finding(result, "macro").action == "removed"  # the basic clean's report stands


def _made_with_openpyxl() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Figures"
    sheet.append(["Month", "Amount", "Share", "When"])
    for month in range(1, 7):
        sheet.append([f"M{month}", month * 100.5, month / 21,
                      datetime.datetime(2026, month, 1)])
    for row in range(2, 8):
        sheet.cell(row, 3).number_format = "0.0%"
        sheet.cell(row, 4).number_format = "yyyy-mm-dd"
    formula_text = sheet.cell(9, 1, "=HYPERLINK(\"http://attacker.invalid\",\"x\")")
    formula_text.data_type = "s"  # text that starts like a formula
    sheet.cell(10, 1, "+cmd|' /c calc'!A0").data_type = "s"
    chart = BarChart()
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=7), titles_from_data=True)
    sheet.add_chart(chart, "F2")
    secret = book.create_sheet("Secret")
    secret["A1"] = "hidden figures"
    secret.sheet_state = "hidden"
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_values_formats_and_text_survive_charts_do_not(tmp_path):
    result, out = _advanced(tmp_path, "figures.xlsx", _made_with_openpyxl())
    book, cells = _all_cells(out)
    # hidden content is kept by default: the hidden sheet stays, hidden
    assert book.sheetnames == ["Figures", "Secret"]
    assert book["Secret"].sheet_state == "hidden"
    assert cells[("Figures", "B3")].value == 201.0
    assert cells[("Figures", "C3")].number_format == "0.0%"
    assert cells[("Figures", "D4")].value == datetime.datetime(2026, 3, 1)
    assert cells[("Figures", "D4")].number_format == "yyyy-mm-dd"
    for where in ("A9", "A10"):  # text stays text, however it starts
        assert cells[("Figures", where)].data_type == "s"
    assert cells[("Figures", "A9")].value.startswith("=HYPERLINK")
    assert not any(c.data_type == "f" for c in cells.values())
    assert book.worksheets[0]._charts == []
    chart = _finding(result, "chart")
    assert chart.action == "removed" and "1 chart not carried" in chart.detail
    outcome = verdict.of_findings([f.__dict__ for f in result.findings])
    assert outcome.verdict is verdict.Verdict.PARTIAL
    assert "1 part of the content dropped" in outcome.summary


def test_a_policy_removing_hidden_content_leaves_hidden_sheets_out(tmp_path):
    from sanitas.engine.policy import resolve

    src = tmp_path / "figures.xlsx"
    src.write_bytes(_made_with_openpyxl())
    (tmp_path / "out").mkdir()
    policy = resolve(None, "advanced").with_rules(hiddenContent="remove")
    result = sanitize_file(src, tmp_path / "out", policy=policy)
    assert result.status == "ok", result.reason
    book, _cells = _all_cells(Path(result.output))
    assert book.sheetnames == ["Figures"]
    assert "hidden_sheet" in {f.kind for f in result.findings}


def test_an_opendocument_sheet_becomes_an_xlsx_of_its_values(tmp_path):
    rows = "".join(
        "<table:table-row>" + "".join(
            f'<table:table-cell office:value-type="float" office:value="{r * 10 + c}"/>'
            for c in range(3)) + "</table:table-row>" for r in range(1, 41))
    data = corpus.odf(corpus.ODS, '<office:spreadsheet><table:table table:name="Data">'
                      f"{rows}</table:table></office:spreadsheet>")
    result, out = _advanced(tmp_path, "sheet.ods", data)
    assert out.suffix == ".xlsx"
    _book, cells = _all_cells(out)
    assert cells[("Data", "A1")].value == 10 and cells[("Data", "C40")].value == 402
    assert "40 rows" not in _finding(result, "values_rebuild").detail
    assert "120 cells" in _finding(result, "values_rebuild").detail


def test_a_sparse_sheet_past_the_walk_limit_is_refused(tmp_path, monkeypatch):
    rows = "".join(f'<row r="{r}"><c r="XFD{r}"><v>1</v></c></row>' for r in range(1, 4))
    data = corpus.xlsx([("Far", f"{corpus.R}/worksheet", "worksheets/sheet1.xml",
                         corpus._sheet(rows))])
    monkeypatch.setattr(sheet_values, "MAX_POSITIONS", 40_000)
    src = tmp_path / "far.xlsx"
    src.write_bytes(data)
    (tmp_path / "out").mkdir()
    result = sanitize_file(src, tmp_path / "out", mode="advanced")
    assert result.status == "rejected"
    assert result.code == "too_complex"
    assert "40,000 cell positions" in result.reason


@pytest.mark.parametrize("kind", sorted(formats.SPREADSHEET_KINDS))
def test_every_spreadsheet_kind_is_rebuilt_from_values_in_advanced_mode(kind):
    assert formats.advanced_of(kind) is formats.Advanced.SHEET_VALUES
    assert formats.allowed_outputs(kind, formats.Mode.ADVANCED) == {"xlsx"}
    assert formats.kind(kind).family in ("ooxml", "odf", "legacy_office")


def test_shared_strings_keep_their_declared_type_so_openpyxl_reads_the_text(tmp_path):
    """The basic clean writes content types as the package spelled them: openpyxl looks for
    "...sharedStrings+xml" exactly, and without it every shared text cell is unreadable."""
    shared = ('<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats'
              '.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>Quarterly total'
              "</t></si></sst>")
    sst_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
    rows = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1"><v>7</v></c></row>'
    data = corpus.xlsx([("Data", f"{corpus.R}/worksheet", "worksheets/sheet1.xml",
                         corpus._sheet(rows))],
                       wb_rels=[("rIdSst", f"{corpus.R}/sharedStrings", "sharedStrings.xml")],
                       parts={"xl/sharedStrings.xml": shared},
                       overrides={"/xl/sharedStrings.xml": sst_type})
    src = tmp_path / "shared.xlsx"
    src.write_bytes(data)
    for mode in ("basic", "advanced"):
        out = tmp_path / mode
        out.mkdir()
        result = sanitize_file(src, out, mode=mode)
        assert result.status == "ok", result.reason
        if mode == "basic":
            with zipfile.ZipFile(result.output) as package:
                assert sst_type.encode() in package.read("[Content_Types].xml")
        sheet = openpyxl.load_workbook(result.output)["Data"]
        assert sheet["A1"].value == "Quarterly total" and sheet["B1"].value == 7
