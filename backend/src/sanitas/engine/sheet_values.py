"""Advanced mode for spreadsheets: a new workbook written from the cell values alone.

Printing a spreadsheet to pixels gives pages nobody can calculate with, and a sheet of business
data prints to hundreds or thousands of them (a 90,000-row ledger: about 1,700 pages and over a
minute of CPU). So advanced mode rebuilds a workbook instead: the basic clean runs first (the
report of what it removed, hidden sheets by the policy), then openpyxl reads each worksheet's
values (a formula's value as last calculated, never the formula) and writes them, with their
number formats, into a workbook it creates itself. Nothing of the original package crosses
over but typed values (text, numbers, dates, booleans, error codes), number format strings and
sheet names: no formulas, names, links, comments, charts, pictures, drawings, styles,
validation, conditional formats, pivot caches, or properties. A text value that starts like a
formula stays text.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine.report import Rejected, RejectionCode

if TYPE_CHECKING:
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    from sanitas.engine.report import Context

# Cell positions a rebuild walks, counting the empty ones between values (a sheet whose one
# value sits at XFD1048576 must not cost a billion steps): a real 90,000-row sheet of six
# columns is 540,000.
MAX_POSITIONS = 20_000_000
# Excel's own limit for a cell's text; a longer value is cut and the report says so.
MAX_TEXT = 32_767
# Parts of the package whose content the rebuild does not carry: counted for the report.
_DROPPED_PARTS = (("xl/charts/chart", "chart"), ("xl/media/", "picture"),
                  ("xl/comments", "comment part"), ("xl/pivotTables/", "pivot table"))
_FORMULA = re.compile(rb"<(?:\w+:)?f[ >/]")  # a formula element of a sheet part


def rebuild(src: Path, dst: Path, ctx: Context) -> str:
    """Write the values of the workbook `src` (an .xlsx the basic clean wrote) into a new
    workbook at `dst`; return its extension."""
    from openpyxl import Workbook, load_workbook
    from openpyxl.packaging.core import DocumentProperties
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    # A read-only sheet looks for its declared size when it is opened, which reads the whole
    # part when the size is missing (a third of the rebuild of a large sheet); the walk below
    # does not use it (it resets the size and goes by the cells), so the look is skipped.
    ReadOnlyWorksheet._get_size = lambda self: None  # type: ignore[attr-defined]
    formulas, dropped = _inventory(src)
    try:
        with warnings.catch_warnings():  # "no default style": the values do not need one
            warnings.simplefilter("ignore")
            book = load_workbook(src, read_only=True, data_only=True, keep_links=False,
                                 keep_vba=False, rich_text=False)
    except (KeyError, ValueError, TypeError, OSError, zipfile.BadZipFile) as exc:
        raise Rejected(f"The workbook cannot be read for its values ({type(exc).__name__}).",
                       RejectionCode.DAMAGED) from None
    out = Workbook(write_only=True)
    out.properties = DocumentProperties(creator=None, lastModifiedBy=None)
    walked = cells = cut = 0
    try:
        chartsheets, sheets = len(book.chartsheets), len(book.worksheets)
        for sheet in book.worksheets:
            # Hidden sheets are still here only where the policy keeps hidden content (the
            # basic clean removes them otherwise): they stay hidden.
            target = out.create_sheet(title=sheet.title)
            if sheet.sheet_state in ("hidden", "veryHidden"):
                target.sheet_state = "hidden"
            w, c, t = _copy_values(sheet, target, MAX_POSITIONS - walked)
            walked, cells, cut = walked + w, cells + c, cut + t
            ctx.progress(60 + min(30, 30 * walked // MAX_POSITIONS))
    finally:
        book.close()
    if not sheets:
        out.create_sheet(title="Sheet1")
    if all(sheet.sheet_state != "visible" for sheet in out.worksheets):
        out.worksheets[0].sheet_state = "visible"  # a workbook shows at least one sheet
    out.save(dst)
    _report(ctx, sheets, cells, formulas, cut, dropped, chartsheets)
    return "xlsx"


def _copy_values(sheet: ReadOnlyWorksheet, target: object, budget: int) -> tuple[int, int, int]:
    """Append `sheet`'s rows of values to the write-only `target`; (positions walked, cells
    written, texts cut). Rejected past `budget` positions."""
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    sheet.reset_dimensions()  # the declared dimension is the file's word: walk what is there
    walked = written = cut = 0
    for row in sheet.iter_rows():  # type: ignore[misc]  # the stubs type Worksheet's
        walked += max(1, len(row))
        if walked > budget:
            raise Rejected(f"The workbook has more than {MAX_POSITIONS:,} cell positions to "
                           "rebuild from values.", RejectionCode.TOO_COMPLEX)
        values: list[object] = []
        for cell in row:
            value = getattr(cell, "value", None)
            if value is None:
                values.append(None)
                continue
            if isinstance(value, str):
                value = ILLEGAL_CHARACTERS_RE.sub("", value)
                if len(value) > MAX_TEXT:
                    value, cut = value[:MAX_TEXT], cut + 1
            new = WriteOnlyCell(target, value=value)  # type: ignore[arg-type]
            if isinstance(value, str):
                new.data_type = "s"  # text that looks like a formula stays text
            number_format = cell.number_format
            if number_format and number_format != "General":
                new.number_format = str(number_format)[:255]
            values.append(new)
            written += 1
        target.append(values)  # type: ignore[attr-defined]
    return walked, written, cut


def _inventory(src: Path) -> tuple[int, dict[str, int]]:
    """(formula elements in the sheet parts, parts of each kind the rebuild leaves behind)."""
    formulas = 0
    dropped: dict[str, int] = {}
    with zipfile.ZipFile(src) as package:
        for info in package.infolist():
            name = info.filename
            if name.startswith("xl/worksheets/sheet") and name.endswith(".xml"):
                formulas += len(_FORMULA.findall(package.read(info)))
            for prefix, what in _DROPPED_PARTS:
                if name.startswith(prefix) and not name.endswith(".rels"):
                    dropped[what] = dropped.get(what, 0) + 1
    return formulas, dropped


def _report(ctx: Context, sheets: int, cells: int, formulas: int, cut: int,
            dropped: dict[str, int], chartsheets: int) -> None:
    """The `values_rebuild` finding, and one `chart`/`embedded_image` finding for the visible
    content the values do not carry (the verdict counts those as content dropped)."""
    from sanitas.engine.office_package import plural

    detail = (f"{plural(sheets, 'sheet')} and {plural(cells, 'cell')} written into a new "
              "workbook; kept: values, number formats and sheet names; not kept: formulas "
              "(their last calculated values stand), styles, names, links, comments and "
              "drawings")
    if formulas:
        detail += f"; {plural(formulas, 'formula')} replaced by the value last calculated"
    if cut:
        detail += f"; {plural(cut, 'text')} cut to {MAX_TEXT:,} characters"
    ctx.add("values_rebuild", "whole workbook", action="converted", detail=detail)
    charts = dropped.get("chart", 0) + chartsheets
    if charts:
        ctx.add("chart", "workbook", detail=f"{plural(charts, 'chart')} not carried into the "
                "workbook rebuilt from values")
    if dropped.get("picture"):
        ctx.add("embedded_image", "workbook", detail=f"{plural(dropped['picture'], 'picture')} "
                "not carried into the workbook rebuilt from values")
    if dropped.get("pivot table"):
        ctx.add("values_rebuild", "pivot tables", action="converted",
                detail=f"{plural(dropped['pivot table'], 'pivot table')} kept as the values "
                "it showed, without its cache")
