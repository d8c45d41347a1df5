"""Regression: truncated PDFs through the real service (upload, the embedded executor, the
bubblewrap sandbox, download). Each ends COMPLETED with an output that pikepdf (without any
recovery) and PDFium both open with the same page count, or FAILED with a sentence: never
COMPLETED with an output nobody can read."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium

from tests.api.polling import wait_for
from tests.engine.corpus import hostile_pdf, save_pdf
from tests.factories import auth_headers, make_user

CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b")


def truncated_pdfs(tmp_path: Path) -> dict[str, bytes]:
    data = save_pdf(hostile_pdf(), tmp_path / "source.pdf").read_bytes()
    content = data.index(b"BT /F1 28 Tf")  # page 1's content stream
    xref = data.rindex(b"\nxref\n") + 1
    trailer = data.rindex(b"trailer")
    cuts = {"early": len(data) // 5, "content-stream": content + 300,
            "middle": len(data) // 2, "xref-table": xref + 60,
            "trailer": trailer + 25, "startxref": data.rindex(b"startxref") + 5}
    return {f"cut-{label}.pdf": data[:cut] for label, cut in cuts.items()}


def both_parsers_open(pdf_data: bytes) -> int:
    with pikepdf.open(io.BytesIO(pdf_data)) as pdf:
        pages = len(pdf.pages)
        pdf.save(io.BytesIO())
        assert pdf.get_warnings() == [], "pikepdf needed recovery to read the output"
    document = pdfium.PdfDocument(pdf_data)
    try:
        assert len(document) == pages, "PDFium and pikepdf disagree on the page count"
        for index in range(pages):
            document[index].render(scale=0.1).close()
    finally:
        document.close()
    return pages


def test_truncated_pdfs_complete_readable_or_fail_with_a_reason(live, settings,
                                                                db_session, tmp_path):
    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    files = truncated_pdfs(tmp_path)
    answer = live.post("/api/upload/multiple", headers=h,
                       files=[("files", (name, data, "application/pdf"))
                              for name, data in files.items()])
    assert answer.status_code == 201, answer.text
    outcomes = {}
    for item in answer.json()["data"]:
        name = item["originalName"]
        data = wait_for(live, h, item["fileId"])
        file = data["file"]
        if file["status"] == "FAILED":
            message = file["errorMessage"] or ""
            assert message.strip() and not CLASS_NAME.search(message), (name, message)
            assert live.get(f"/api/process/download/{item['fileId']}",
                            headers=h).status_code == 409
            outcomes[name] = "failed"
            continue
        assert file["status"] == "COMPLETED", (name, file)
        download = live.get(f"/api/process/download/{item['fileId']}", headers=h)
        assert download.status_code == 200
        try:
            pages = both_parsers_open(download.content)
        except Exception as exc:
            raise AssertionError(f"{name}: COMPLETED with an unreadable output: {exc!r}") from exc
        assert pages >= 1
        kinds = {f["kind"] for f in file["report"]["findings"]}
        assert "repaired" in kinds, (name, kinds)  # the user is told
        outcomes[name] = f"completed ({pages} pages)"
    assert len(outcomes) == len(files), outcomes
    # A cut before the page objects leaves nothing to rebuild; the later cuts are repaired.
    assert outcomes["cut-early.pdf"] == "failed", outcomes
    assert sum(o.startswith("completed") for o in outcomes.values()) >= 4, outcomes
