"""A damaged PDF is repaired (and the repair reported) or refused with a sentence: never 'ok'
with an output that a reader cannot open. Every accepted output must open in pikepdf with no
recovery at all and in PDFium (a parser independent of qpdf) with the same page count."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium

from sanitas.engine import sanitize_file
from tests.engine.pdfscan import pdf_dangers

CUTS = 24
# An exception class name ("PdfError", "ValueError", ...) is not a reason a person can read.
CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b")


def cut_points(data: bytes, count: int = CUTS) -> list[int]:
    """`count` distinct lengths spread over the file, with some inside the structures a cut
    hurts most: the xref table, the trailer, startxref, %%EOF and the page content streams."""
    xref = data.rindex(b"\nxref\n") + 1
    trailer = data.rindex(b"trailer")
    startxref = data.rindex(b"startxref")
    eof = data.rindex(b"%%EOF")
    contents = [m.start() for m in re.finditer(rb"BT /F1 28 Tf", data)]  # page content streams
    assert len(contents) >= 2, "the corpus PDF should have two content streams"
    structural = [
        xref + 2,  # inside the keyword "xref"
        xref + 40,  # inside the first xref entries
        (xref + trailer) // 2,  # the middle of the xref table
        trailer - 5,  # the last xref entry
        trailer + 3,  # inside the keyword "trailer"
        trailer + 30,  # inside the trailer dictionary
        startxref + 4,  # inside "startxref"
        startxref + 12,  # inside the xref offset
        eof + 2,  # inside "%%EOF"
        contents[0] + 200,  # inside page 1's content stream
        contents[0] + 1500,
        contents[1] + 40,  # inside page 2's content stream
        contents[1] + 2000,
    ]
    points = set(structural)
    step = len(data) / (count - len(structural) + 1)
    spread = [int(step * (n + 1)) for n in range(count - len(structural))]
    for point in spread:
        while point in points:
            point += 1
        points.add(point)
    assert len(points) == count and all(0 < p < len(data) for p in points)
    return sorted(points)


def open_without_recovery(path: Path) -> int:
    """pikepdf opens the file with no warning (no reconstruction), walks the pages and
    re-saves it; returns the page count."""
    with pikepdf.open(path) as pdf:
        pages = len(pdf.pages)
        for page in pdf.pages:
            page.mediabox  # noqa: B018 - resolve every page
        buffer = io.BytesIO()
        pdf.save(buffer)
        warnings = pdf.get_warnings()
    assert warnings == [], warnings
    with pikepdf.open(io.BytesIO(buffer.getvalue())) as again:
        assert len(again.pages) == pages
        assert again.get_warnings() == []
    return pages


def pdfium_pages(path: Path) -> int:
    document = pdfium.PdfDocument(str(path))
    try:
        for index in range(len(document)):
            page = document[index]
            page.render(scale=0.1).close()
            page.close()
        return len(document)
    finally:
        document.close()


def test_truncated_pdf_is_repaired_or_refused(corpus, tmp_path, out_dir):
    original = corpus["hostile.pdf"]
    data = original.read_bytes()
    with pikepdf.open(original) as pdf:
        assert len(pdf.pages) >= 2
    outcomes: dict[int, str] = {}
    failures = []
    for cut in cut_points(data):
        path = tmp_path / f"cut-{cut}.pdf"
        path.write_bytes(data[:cut])
        result = sanitize_file(path, out_dir, original_name="hostile.pdf")
        if result.status == "rejected":
            reason = result.reason or ""
            if not reason.strip() or CLASS_NAME.search(reason):
                failures.append(f"cut {cut}: unreadable reason {reason!r}")
            outcomes[cut] = "rejected"
            continue
        output = Path(result.output)
        try:
            pages = open_without_recovery(output)
            assert pages >= 1
            assert pdfium_pages(output) == pages, "PDFium and pikepdf disagree on the pages"
            assert pdf_dangers(output) == set()
        except (AssertionError, pikepdf.PdfError, pdfium.PdfiumError) as exc:
            failures.append(f"cut {cut}: ok but the output is bad: {exc!r:.200}")
            outcomes[cut] = "ok, unreadable"
            continue
        if not any(f.kind == "repaired" and f.action == "converted" for f in result.findings):
            failures.append(f"cut {cut}: a repaired output without a 'repaired' finding")
        outcomes[cut] = "repaired"
        output.unlink()
    summary = {kind: sum(1 for o in outcomes.values() if o == kind)
               for kind in ("rejected", "repaired", "ok, unreadable")}
    assert not failures, f"{summary}\n" + "\n".join(failures)
    assert summary["repaired"] > 0, summary  # qpdf's reconstruction is actually used


def test_intact_pdf_reports_no_repair(corpus, out_dir):
    result = sanitize_file(corpus["clean.pdf"], out_dir)
    assert result.status == "ok"
    assert "repaired" not in {f.kind for f in result.findings}


def test_damaged_xref_is_repaired_and_reported(corpus, tmp_path, out_dir):
    """A wrong startxref offset (the file otherwise whole) is rebuilt by qpdf and reported."""
    data = corpus["clean.pdf"].read_bytes()
    offset = re.findall(rb"startxref\s+(\d+)", data)[-1]
    broken = tmp_path / "bad-xref.pdf"
    broken.write_bytes(data.replace(b"startxref\n" + offset, b"startxref\n" + b"9" * len(offset)))
    result = sanitize_file(broken, out_dir)
    assert result.status == "ok", result.reason
    repaired = [f for f in result.findings if f.kind == "repaired"]
    assert repaired and repaired[0].action == "converted" and repaired[0].detail
    assert open_without_recovery(Path(result.output)) == 3
    assert pdfium_pages(Path(result.output)) == 3


def test_an_output_that_needs_recovery_is_never_accepted(corpus, tmp_path):
    """The read-back itself: qpdf's own reconstructed-trailer output (an xref stream without
    /Size, what the engine used to return) and a cut output are refused with a sentence."""
    import pytest

    from sanitas.engine.pdf import check_output
    from sanitas.engine.report import Rejected

    data = corpus["hostile.pdf"].read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[:len(data) // 2])
    with pikepdf.open(cut) as pdf:
        assert "/Size" not in pdf.trailer
        pdf.save(tmp_path / "no-size.pdf", object_stream_mode=pikepdf.ObjectStreamMode.generate)
    good = tmp_path / "good.pdf"
    with pikepdf.open(corpus["hostile.pdf"]) as pdf:
        pdf.save(good, object_stream_mode=pikepdf.ObjectStreamMode.generate)
    check_output(good, 2)
    (tmp_path / "good-cut.pdf").write_bytes(good.read_bytes()[:-60])
    for name, pages in (("no-size.pdf", 2), ("good-cut.pdf", 2), ("good.pdf", 3)):
        with pytest.raises(Rejected) as refused:
            check_output(tmp_path / name, pages)
        assert not CLASS_NAME.search(refused.value.reason) and "PDF" in refused.value.reason
