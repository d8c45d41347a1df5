"""Writing a report's rows as CSV or PDF (reportlab: its platypus layout, and its own chart
module for the findings chart)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from sanitas.audit.service import neutralise
from sanitas.reports.service import FileRow, Totals
from sanitas.web.schemas import iso

CSV_COLUMNS = ("file_id", "uploaded_at", "name", "user_email", "detected_type", "size_bytes",
               "sha256_original", "sha256_sanitized", "policy_id", "policy_name",
               "policy_version", "result", "error_code", "findings_total", "findings_by_kind",
               "verdict", "verdict_summary")
PDF_MAX_FILES = 20_000  # a longer table belongs in the CSV form


class ReportTooLarge(Exception):
    pass


def kinds_text(findings: dict[str, int]) -> str:
    """`javascript=2; macro=1`: the counts by kind, kinds in name order."""
    return "; ".join(f"{kind}={n}" for kind, n in sorted(findings.items()))


def _csv_cells(row: FileRow) -> tuple[str, ...]:
    """The row's cells in CSV_COLUMNS order. The cells people write (names, addresses, kinds,
    policies, verdict text) are neutralised; those this code writes in a fixed form (the time,
    numbers, hex hashes, the status word) never start as a formula."""
    n = _neutralised
    return (n(row.id), iso(row.uploaded_at) or "", n(row.name), n(row.user_email),
            n(row.detected_type or ""), str(row.size), row.sha256_original or "",
            row.sha256_sanitized or "", n(row.policy_id), n(row.policy_name),
            str(row.policy_version), row.result, n(row.error_code or ""),
            str(sum(row.findings.values())), n(kinds_text(row.findings)), n(row.verdict),
            n(row.verdict_summary))


def _neutralised(cell: str) -> str:
    """neutralise(cell), without its work for a cell that starts with an ASCII letter or
    digit (most names and addresses): no formula starts so, and there are no spaces or
    quotes to look past."""
    if cell and cell[0] in _PLAIN_START:
        return cell
    return neutralise(cell)


_PLAIN_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def summary(meta: dict[str, str], totals: Totals) -> list[tuple[str, str]]:
    """The summary lines: the period, scope and time of the report, then the totals."""
    lines = list(meta.items())
    lines += [("files", str(totals.files)), ("completed", str(totals.completed)),
              ("failed", str(totals.failed)),
              *((f"verdict:{word}", str(n)) for word, n in totals.verdicts.items()),
              ("findings_total", str(sum(totals.findings.values())))]
    lines += [(f"findings:{kind}", str(n)) for kind, n in sorted(totals.findings.items())]
    return lines


def write_csv(path: Path, rows: Iterable[FileRow], meta: dict[str, str]) -> Totals:
    """One line per file under a header line; then an empty line and the summary as
    `item,value` lines. Every cell a spreadsheet would run as a formula is neutralised (file
    names are chosen by whoever uploads)."""
    totals = Totals()
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, lineterminator="\r\n")
        out.writerow(CSV_COLUMNS)
        write = out.writerow
        for row in rows:
            totals.add(row)
            write(_csv_cells(row))
        out.writerow([])
        out.writerow(["item", "value"])
        for item, value in summary(meta, totals):
            out.writerow([neutralise(item), neutralise(value)])
    return totals


# -- PDF ----------------------------------------------------------------------------------------

_FONT_FILES = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
               "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
               "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")


def _fonts() -> tuple[str, str, str]:
    """Regular, bold and monospaced font names: DejaVu when installed (names in any script),
    else the PDF standard fonts (Latin-1 only)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    names = ("SanitasSans", "SanitasSans-Bold", "SanitasMono")
    if all(n in pdfmetrics.getRegisteredFontNames() for n in names):
        return names
    if all(Path(p).is_file() for p in _FONT_FILES):
        for name, file in zip(names, _FONT_FILES, strict=True):
            pdfmetrics.registerFont(TTFont(name, file))
        return names
    return ("Helvetica", "Helvetica-Bold", "Courier")


def _chart(findings: dict[str, int], font: str) -> Any:
    """A bar chart of findings by kind (reportlab.graphics.charts)."""
    from reportlab.graphics.charts.barcharts import HorizontalBarChart
    from reportlab.graphics.shapes import Drawing, String
    from reportlab.lib import colors

    kinds = sorted(findings, key=lambda k: (-findings[k], k))[:15]
    height = 40 + 16 * max(1, len(kinds))
    drawing = Drawing(500, height)
    drawing.add(String(0, height - 12, "Findings by kind", fontName=font, fontSize=10))
    if not kinds:
        drawing.add(String(0, height - 30, "No findings in this period.", fontName=font,
                           fontSize=8))
        return drawing
    chart = HorizontalBarChart()
    chart.x, chart.y = 150, 10
    chart.width, chart.height = 330, height - 35
    chart.data = [[findings[k] for k in reversed(kinds)]]
    chart.categoryAxis.categoryNames = list(reversed(kinds))
    chart.categoryAxis.labels.fontName = font
    chart.categoryAxis.labels.fontSize = 7
    chart.valueAxis.labels.fontName = font
    chart.valueAxis.labels.fontSize = 7
    chart.valueAxis.valueMin = 0
    chart.bars[0].fillColor = colors.HexColor("#2563eb")
    chart.barLabelFormat = "%d"
    chart.barLabels.fontName = font
    chart.barLabels.fontSize = 7
    chart.barLabels.nudge = 8
    drawing.add(chart)
    return drawing


def write_pdf(path: Path, rows: Iterable[FileRow], meta: dict[str, str]) -> Totals:
    """A landscape A4 document: title and period, the totals, the chart, then one table row
    per file."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import mm
    from reportlab.platypus import (
        LongTable,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    regular, bold, mono = _fonts()
    title = ParagraphStyle("title", fontName=bold, fontSize=16, leading=20, spaceAfter=6)
    body = ParagraphStyle("body", fontName=regular, fontSize=9, leading=12)
    cell = ParagraphStyle("cell", fontName=regular, fontSize=6.5, leading=8)
    head = ParagraphStyle("head", parent=cell, fontName=bold)
    hashes = ParagraphStyle("hash", parent=cell, fontName=mono, fontSize=4.6, leading=6)

    totals = Totals()
    table_rows: list[list[Any]] = [[Paragraph(h, head) for h in (
        "Uploaded (UTC)", "Name", "User", "Type", "Size (bytes)",
        "SHA-256 original / sanitized", "Policy", "Result", "Error", "Findings")]]
    for n, row in enumerate(rows, start=1):
        if n > PDF_MAX_FILES:
            raise ReportTooLarge(f"More than {PDF_MAX_FILES} files in this period and scope: "
                                 "ask for the CSV form or a shorter period.")
        totals.add(row)
        table_rows.append([
            Paragraph(escape(f"{row.uploaded_at:%Y-%m-%d %H:%M:%S}"), cell),
            Paragraph(escape(row.name), cell), Paragraph(escape(row.user_email), cell),
            Paragraph(escape(row.detected_type or ""), cell), Paragraph(str(row.size), cell),
            Paragraph(f"{row.sha256_original or '-'}<br/>{row.sha256_sanitized or '-'}",
                      hashes),
            Paragraph(escape(f"{row.policy_name} v{row.policy_version}"), cell),
            Paragraph(escape(row.result) + (f"<br/>{escape(row.verdict)}: "
                                            f"{escape(row.verdict_summary)}"
                                            if row.verdict else ""), cell),
            Paragraph(escape(row.error_code or ""), cell),
            Paragraph(escape(kinds_text(row.findings)), cell)])

    story: list[Any] = [
        Paragraph("Sanitas compliance report", title),
        Paragraph(escape(f"Period: {meta['period_from']} to {meta['period_to']} "
                         f"(end excluded) · Scope: {meta['scope']} · Generated: "
                         f"{meta['generated_at']}"), body),
        Spacer(1, 4 * mm)]
    summary_rows = [[Paragraph(escape(k), cell), Paragraph(escape(v), cell)]
                    for k, v in summary({}, totals)]
    story.append(Table(summary_rows, colWidths=[60 * mm, 30 * mm], hAlign="LEFT",
                       style=TableStyle([("GRID", (0, 0), (-1, -1), 0.25, colors.grey)])))
    story += [Spacer(1, 4 * mm), _chart(dict(totals.findings), regular), Spacer(1, 4 * mm)]
    if totals.files:
        widths = [52, 80, 76, 36, 44, 190, 70, 100, 48, 88]
        story.append(LongTable(table_rows, colWidths=widths, repeatRows=1, style=TableStyle([
            ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e5e7eb")),
            ("VALIGN", (0, 0), (-1, -1), "TOP")])))
    else:
        story.append(Paragraph("No files were uploaded in this period and scope.", body))

    doc = SimpleDocTemplate(str(path), pagesize=landscape(A4), leftMargin=10 * mm,
                            rightMargin=10 * mm, topMargin=10 * mm, bottomMargin=10 * mm,
                            title="Sanitas compliance report", author="Sanitas",
                            creator="Sanitas", invariant=1)
    doc.build(story)
    return totals
