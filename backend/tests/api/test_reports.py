"""Compliance reports: requested with 202, generated in the background by the report worker,
downloaded by their owner or an admin. The contents are recomputed here from the database,
independently of the report code: the CSV read with the csv module, the PDF's text read with
PDFium."""

from __future__ import annotations

import csv
import io
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pypdfium2 as pdfium
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from sanitas.main import create_app
from sanitas.models import AuditEntry, File, Report, User
from sanitas.processing.queue import set_paused
from sanitas.storage import make_storage
from tests.factories import add_file, auth_headers, make_user

DAY = datetime(2026, 3, 10, tzinfo=UTC)  # the period's days: 10 to 12 March 2026
BUILT_IN_NAMES = {"basic": "Basic", "advanced": "Advanced"}


def hexdigit(seed: str) -> str:
    return (seed.encode().hex() * 64)[:64]


def seed(db_session, settings, owner, other):
    """Files inside and outside the period, of two owners, in every result (the queue
    paused, so the running executor leaves the PENDING one as it is)."""
    set_paused(db_session, True)
    specs = [
        (owner, "COMPLETED", "=HYPERLINK(\"http://x\")report.pdf", DAY + timedelta(hours=1)),
        (owner, "FAILED", "macro.docm", DAY + timedelta(days=1, hours=2)),
        (owner, "PENDING", "later.txt", DAY + timedelta(days=2, hours=23, minutes=59)),
        (other, "COMPLETED", "photo.jpg", DAY + timedelta(days=1)),
        (owner, "COMPLETED", "before.pdf", DAY - timedelta(seconds=1)),  # outside
        (owner, "COMPLETED", "after.pdf", DAY + timedelta(days=3)),  # outside
    ]
    files = []
    for i, (user, status, name, created) in enumerate(specs):
        file = add_file(db_session, settings, user, status=status, name=name,
                        created_at=created, kind=("pdf", "docm", "txt", "jpeg")[i % 4])
        files.append(file)
    for file in files:  # in the past, but not expired: the expiry sweep leaves them alone
        file.expires_at = datetime.now(UTC) + timedelta(days=1)
    done, failed, _pending, photo, _, _ = files
    done.sha256_original, done.sha256_sanitized = hexdigit("a1"), hexdigit("b2")
    done.policy_id, done.policy_name, done.policy_version = (
        "6f1c0d3e-0000-4000-8000-000000000001", "Legal team", 3)
    done.report = {"findings": [
        {"kind": "javascript", "location": "page 1", "action": "removed", "detail": ""},
        {"kind": "javascript", "location": "page 2", "action": "removed", "detail": ""},
        {"kind": "javascript", "location": "whole file", "action": "removed",
         "detail": "and 3 more of this kind"},
        {"kind": "metadata", "location": "Info", "action": "removed", "detail": ""}]}
    failed.sha256_original = hexdigit("c3")
    failed.error_code, failed.error_message = "refused_macros", "Macros are refused."
    failed.mode = "advanced"
    photo.sha256_original, photo.sha256_sanitized = hexdigit("d4"), hexdigit("e5")
    photo.report = {"findings": [
        {"kind": "exif", "location": "APP1", "action": "removed", "detail": ""}]}
    db_session.commit()
    return files


def expected_rows(db_session, start, end, user_id=None):
    """The report's lines, recomputed from the files table."""
    db_session.expire_all()
    query = (select(File, User.email).join(User, User.id == File.user_id)
             .where(File.created_at >= start, File.created_at < end)
             .order_by(File.created_at, File.id))
    if user_id:
        query = query.where(File.user_id == user_id)
    rows = []
    for f, email in db_session.execute(query):
        kinds: Counter[str] = Counter()
        for item in (f.report or {}).get("findings", []):
            n = 1
            if item["detail"].startswith("and ") and item["detail"].endswith("of this kind"):
                n = int(item["detail"].split()[1])
            kinds[item["kind"]] += n
        rows.append({
            "file_id": f.id,
            "uploaded_at": f.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "name": f.original_name, "user_email": email,
            "detected_type": f.detected_type or "", "size_bytes": str(f.original_size),
            "sha256_original": f.sha256_original or "",
            "sha256_sanitized": f.sha256_sanitized or "",
            "policy_id": f.policy_id or f.mode,
            "policy_name": f.policy_name or BUILT_IN_NAMES[f.mode],
            "policy_version": str(f.policy_version or 1), "result": f.status,
            "error_code": f.error_code or "", "findings_total": str(sum(kinds.values())),
            "findings_by_kind": "; ".join(f"{k}={v}" for k, v in sorted(kinds.items())),
            "verdict": VERDICTS[f.original_name][0],
            "verdict_summary": VERDICTS[f.original_name][1]})
    return rows


# The verdict of each seeded file (engine/verdict.py), derived from its findings or status.
VERDICTS = {
    "=HYPERLINK(\"http://x\")report.pdf": (
        "cleaned", "5 threats removed, 1 item of hidden data removed"),
    "macro.docm": ("refused", "Refused: Macros are refused."),
    "later.txt": ("", ""),
    "photo.jpg": ("cleaned", "1 item of hidden data removed"),
    "before.pdf": ("cleaned", "1 threat removed"), "after.pdf": ("cleaned", "1 threat removed")}


def wait_ready(client, headers, report_id, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = client.get("/api/reports", headers=headers).json()["data"]["reports"]
        mine = [r for r in listed if r["id"] == report_id]
        if mine and mine[0]["status"] in ("COMPLETED", "FAILED"):
            return mine[0]
        time.sleep(0.1)
    raise AssertionError(f"report {report_id} not generated after {timeout}s")


def request_report(client, headers, **body):
    answer = client.post("/api/reports", headers=headers, json=body)
    assert answer.status_code == 202, answer.text
    report = answer.json()["data"]["report"]
    assert set(report) == {"id", "status"} and report["status"] == "PENDING"
    return report["id"]


def read_csv(text):
    """The file lines (as dicts) and the summary (item -> value) of a CSV report."""
    lines = list(csv.reader(io.StringIO(text)))
    blank = lines.index([])
    header, body = lines[0], lines[1:blank]
    assert lines[blank + 1] == ["item", "value"]
    return [dict(zip(header, line, strict=True)) for line in body], dict(lines[blank + 2:])


def neutralised(row):
    return {k: ("'" + v if v[:1] in ("=", "+", "-", "@") else v) for k, v in row.items()}


def pdf_text(content: bytes) -> str:
    pdf = pdfium.PdfDocument(content)
    try:
        return "\n".join(page.get_textpage().get_text_range() for page in pdf)
    finally:
        pdf.close()


def test_own_csv_report_lists_every_file_of_the_period(live, db_session, settings):
    owner, other = (make_user(db_session, role="ENTERPRISE") for _ in range(2))
    seed(db_session, settings, owner, other)
    h = auth_headers(settings, db_session, owner)
    report_id = request_report(live, h, **{"from": "2026-03-10", "to": "2026-03-12",
                                           "format": "csv"})
    done = wait_ready(live, h, report_id)
    assert done["status"] == "COMPLETED" and done["fileCount"] == 3
    assert done["scope"] == "own" and done["format"] == "csv"
    assert done["periodStart"] == "2026-03-10T00:00:00Z"
    assert done["periodEnd"] == "2026-03-13T00:00:00Z"
    download = live.get(f"/api/reports/{report_id}/download", headers=h)
    assert download.status_code == 200
    assert download.headers["content-type"].startswith("text/csv")
    assert 'filename="sanitas-report-20260310-20260312.csv"' in \
        download.headers["content-disposition"]
    rows, summary = read_csv(download.content.decode("utf-8"))
    expected = expected_rows(db_session, DAY, DAY + timedelta(days=3), owner.id)
    assert rows == [neutralised(r) for r in expected]
    assert rows[0]["name"].startswith("'=HYPERLINK")  # a formula is text in a spreadsheet
    assert rows[0]["findings_by_kind"] == "javascript=5; metadata=1"
    assert rows[0]["policy_name"] == "Legal team" and rows[0]["policy_version"] == "3"
    assert rows[1]["policy_id"] == "advanced" and rows[1]["error_code"] == "refused_macros"
    assert summary == {
        "period_from": "2026-03-10T00:00:00Z", "period_to": "2026-03-13T00:00:00Z",
        "scope": "own", "generated_at": summary["generated_at"], "files": "3",
        "completed": "1", "failed": "1", "verdict:clean": "0", "verdict:cleaned": "1",
        "verdict:partial": "0", "verdict:encrypted": "0", "verdict:refused": "1",
        "findings_total": "6", "findings:javascript": "5",
        "findings:metadata": "1"}
    # Kept through the Storage protocol, under its own prefix.
    assert make_storage(settings).keys("reports/") == [f"reports/{report_id}.csv"]


def test_admin_pdf_report_of_everyone_has_the_table_totals_and_chart(live, db_session,
                                                                        settings):
    owner, other = (make_user(db_session, role="ENTERPRISE") for _ in range(2))
    seed(db_session, settings, owner, other)
    admin = make_user(db_session, role="ADMIN")
    h = auth_headers(settings, db_session, admin)
    report_id = request_report(live, h, **{"from": "2026-03-10T00:00:00Z",
                                           "to": "2026-03-13T00:00:00Z",
                                           "format": "pdf", "scope": "all"})
    done = wait_ready(live, h, report_id)
    assert done["status"] == "COMPLETED" and done["fileCount"] == 4 and done["scope"] == "all"
    download = live.get(f"/api/reports/{report_id}/download", headers=h)
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/pdf"
    assert download.content.startswith(b"%PDF-")
    text = pdf_text(download.content)
    flat = "".join(text.split())
    expected = expected_rows(db_session, DAY, DAY + timedelta(days=3))
    assert len(expected) == 4
    for row in expected:
        for column in ("name", "user_email", "detected_type", "size_bytes", "result",
                       "error_code", "sha256_original", "sha256_sanitized",
                       "findings_by_kind", "verdict_summary"):
            assert "".join(row[column].split()) in flat, (column, row[column])
        assert "".join(f"{row['policy_name']} v{row['policy_version']}".split()) in flat
    for outside in ("before.pdf", "after.pdf"):
        assert outside not in flat
    # Totals, and the chart's title and bar labels (drawn by reportlab's chart module).
    assert "Findingsbykind" in flat
    for item, value in (("files", 4), ("completed", 2), ("failed", 1), ("findings_total", 7),
                        ("verdict:cleaned", 2), ("verdict:refused", 1),
                        ("findings:javascript", 5), ("findings:exif", 1)):
        assert f"{item}{value}" in flat, item
    assert "Scope:all" in flat
    # Someone else's files: the request is in the audit log.
    db_session.expire_all()
    audit = db_session.scalars(select(AuditEntry).where(
        AuditEntry.action == "report.requested")).all()
    assert [(a.actor_id, a.target_id, a.detail["scope"]) for a in audit] == [
        (admin.id, report_id, "all")]


def test_admin_report_of_one_user(live, db_session, settings):
    owner, other = (make_user(db_session, role="ENTERPRISE") for _ in range(2))
    seed(db_session, settings, owner, other)
    h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    report_id = request_report(live, h, **{"from": "2026-03-01", "to": "2026-03-31",
                                           "format": "csv", "scope": other.id})
    assert wait_ready(live, h, report_id)["scope"] == other.id
    rows, summary = read_csv(live.get(f"/api/reports/{report_id}/download",
                                      headers=h).text)
    assert rows == [neutralised(r) for r in expected_rows(
        db_session, datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC),
        other.id)]
    assert [r["name"] for r in rows] == ["photo.jpg"]
    assert summary["files"] == "1" and summary["findings:exif"] == "1"


def test_a_report_across_an_empty_period(live, db_session, settings):
    user = make_user(db_session, role="ENTERPRISE")
    add_file(db_session, settings, user, status="COMPLETED", created_at=DAY)
    h = auth_headers(settings, db_session, user)
    csv_id = request_report(live, h, **{"from": "2025-01-01", "to": "2025-01-31",
                                        "format": "csv"})
    pdf_id = request_report(live, h, **{"from": "2025-01-01", "to": "2025-01-31",
                                        "format": "pdf"})
    assert wait_ready(live, h, csv_id)["fileCount"] == 0
    assert wait_ready(live, h, pdf_id)["fileCount"] == 0
    rows, summary = read_csv(live.get(f"/api/reports/{csv_id}/download", headers=h).text)
    assert rows == []
    assert (summary["files"], summary["completed"], summary["failed"],
            summary["findings_total"]) == ("0", "0", "0", "0")
    flat = "".join(pdf_text(live.get(f"/api/reports/{pdf_id}/download",
                                     headers=h).content).split())
    assert "Nofileswereuploadedinthisperiodandscope." in flat
    assert "Nofindingsinthisperiod." in flat and "files0" in flat


def test_permissions_per_role(api, db_session, settings):
    """Without a worker (`api`): reports stay PENDING, so downloads answer 409."""
    owner = make_user(db_session, role="ENTERPRISE")
    other = make_user(db_session, role="ENTERPRISE")
    admin = make_user(db_session, role="ADMIN")
    oh, xh, ah = (auth_headers(settings, db_session, u) for u in (owner, other, admin))
    period = {"from": "2026-03-01", "to": "2026-03-31", "format": "csv"}
    for role in ("GUEST", "USER"):  # compliance reports are the Enterprise plan's (SPEC 9)
        h = auth_headers(settings, db_session, make_user(db_session, role=role))
        for scope in ("own", "all", owner.id):
            answer = api.post("/api/reports", headers=h, json=period | {"scope": scope})
            assert answer.status_code == 403, (role, scope)
            assert answer.json()["error"] == "plan_required"
        assert api.get("/api/reports", headers=h).json()["error"] == "plan_required"
    h = auth_headers(settings, db_session, make_user(db_session, role="ENTERPRISE"))
    for scope in ("all", owner.id):
        answer = api.post("/api/reports", headers=h, json=period | {"scope": scope})
        assert answer.status_code == 403, scope
        assert answer.json()["error"] == "forbidden"
    assert api.post("/api/reports", headers=h, json=period).status_code == 202
    assert api.post("/api/reports", json=period).status_code == 401
    assert api.post("/api/reports", headers=ah,
                    json=period | {"scope": "no-such-user"}).status_code == 404
    assert api.post("/api/reports", headers=oh,
                    json=period | {"to": "2026-02-01"}).status_code == 422
    assert api.post("/api/reports", headers=oh,
                    json=period | {"format": "xlsx"}).status_code == 422
    assert api.post("/api/reports", headers=oh,
                    json=period | {"extra": 1}).status_code == 422

    mine = request_report(api, oh, **period)
    own_by_id = request_report(api, oh, **period | {"scope": owner.id})  # the same as own
    admins = request_report(api, ah, **period | {"scope": owner.id})
    listed = api.get("/api/reports", headers=oh).json()["data"]
    assert {r["id"] for r in listed["reports"]} == {mine, own_by_id}
    assert all(r["scope"] == "own" for r in listed["reports"])
    assert listed["pagination"]["total"] == 2
    assert {r["id"] for r in api.get("/api/reports", headers=xh).json()["data"]["reports"]} \
        .isdisjoint({mine, own_by_id, admins})
    everyone = api.get("/api/reports", headers=ah, params={"limit": 100}).json()["data"]
    assert {mine, own_by_id, admins} <= {r["id"] for r in everyone["reports"]}

    assert api.get(f"/api/reports/{mine}/download", headers=xh).status_code == 404
    assert api.get(f"/api/reports/{admins}/download", headers=oh).status_code == 404
    assert api.get("/api/reports/nope/download", headers=oh).status_code == 404
    for h, report_id in ((oh, mine), (ah, mine)):
        pending = api.get(f"/api/reports/{report_id}/download", headers=h)
        assert pending.status_code == 409 and pending.json()["error"] == "report_not_ready"


def test_reports_waiting_at_a_restart_are_generated(db_session, settings):
    """PENDING reports (and one a dead process left PROCESSING) are picked up at start-up."""
    user = make_user(db_session, role="ENTERPRISE")
    add_file(db_session, settings, user, status="COMPLETED", created_at=DAY)
    h = auth_headers(settings, db_session, user)
    with TestClient(create_app(settings, start_background=False)) as api:
        waiting = request_report(api, h, **{"from": "2026-03-10", "to": "2026-03-10",
                                            "format": "csv"})
        abandoned = request_report(api, h, **{"from": "2026-03-10", "to": "2026-03-10",
                                              "format": "pdf"})
    db_session.execute(update(Report).where(Report.id == abandoned).values(
        status="PROCESSING", attempts=1,
        claimed_at=datetime.now(UTC) - timedelta(seconds=settings.job_heartbeat_timeout_seconds
                                                 + 5)))
    db_session.commit()
    settings.executor_poll_interval_seconds = 0.2
    with TestClient(create_app(settings)) as live:
        assert wait_ready(live, h, waiting)["status"] == "COMPLETED"
        assert wait_ready(live, h, abandoned)["status"] == "COMPLETED"
        rows, _ = read_csv(live.get(f"/api/reports/{waiting}/download", headers=h).text)
        assert len(rows) == 1
    db_session.expire_all()
    assert db_session.get(Report, abandoned).attempts == 2


@pytest.mark.parametrize("executor", ["local", "celery"])
def test_both_executors_produce_reports(executor, db_session, settings):
    """The worker runs in the API process whichever executor runs the jobs (a Celery
    executor needs no reachable broker to start: it only sends job ids)."""
    settings.executor = executor
    settings.broker_url = "redis://127.0.0.1:1/0"
    settings.executor_poll_interval_seconds = 0.2
    user = make_user(db_session, role="ENTERPRISE")
    h = auth_headers(settings, db_session, user)
    with TestClient(create_app(settings)) as live:
        report_id = request_report(live, h, **{"from": "2026-03-10", "to": "2026-03-10",
                                               "format": "csv"})
        assert wait_ready(live, h, report_id)["status"] == "COMPLETED"


def test_reports_are_kept_in_s3_when_storage_is_s3(db_session, settings, s3_endpoint):
    settings.storage = "s3"
    settings.s3_endpoint_url = s3_endpoint
    settings.s3_bucket = f"rep-{settings.data_dir.parent.name[-12:]}".lower().replace("_", "-")
    settings.s3_access_key_id = settings.s3_secret_access_key = "test"
    settings.s3_create_bucket = True
    settings.executor_poll_interval_seconds = 0.2
    owner, other = (make_user(db_session, role="ENTERPRISE") for _ in range(2))
    seed(db_session, settings, owner, other)
    h = auth_headers(settings, db_session, owner)
    with TestClient(create_app(settings)) as live:
        report_id = request_report(live, h, **{"from": "2026-03-10", "to": "2026-03-12",
                                               "format": "csv"})
        assert wait_ready(live, h, report_id)["status"] == "COMPLETED"
        rows, _ = read_csv(live.get(f"/api/reports/{report_id}/download", headers=h).text)
    assert rows == [neutralised(r) for r in expected_rows(
        db_session, DAY, DAY + timedelta(days=3), owner.id)]
    assert make_storage(settings).keys("reports/") == [f"reports/{report_id}.csv"]


def test_a_file_held_back_encrypted_is_encrypted_in_the_report(db_session, settings):
    """Two FAILED files with the same message: the one held back encrypted reads `encrypted`
    in the report's rows, the other `refused` (the memo of outcomes is keyed by both)."""
    from sanitas.models.report import Report
    from sanitas.reports.service import report_rows

    owner = make_user(db_session, role="ENTERPRISE")
    message = "The PDF is password-protected (encrypted)."
    for name, code in [("locked.pdf", "encrypted"), ("odd.pdf", "damaged")]:
        file = add_file(db_session, settings, owner, status="FAILED", name=name,
                        created_at=DAY + timedelta(hours=1))
        file.error_code, file.error_message = code, message
    db_session.commit()
    report = Report(user_id=owner.id, scope_user_id=owner.id, period_start=DAY,
                    period_end=DAY + timedelta(days=1), format="csv")
    rows = {r.name: (r.verdict, r.verdict_summary) for r in report_rows(db_session, report)}
    assert rows == {"locked.pdf": ("encrypted", f"Not inspected: encrypted (1 item held back): "
                                                f"{message}"),
                    "odd.pdf": ("refused", f"Refused: {message}")}
