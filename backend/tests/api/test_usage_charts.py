"""The analytics charts (GET /api/usage/charts): every series recomputed here from the rows the
test created, on SQLite and PostgreSQL; who may ask for which scope; the row caps."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise

import pytest
from sqlalchemy import text

from sanitas.db import utcnow
from sanitas.engine.report import Context
from sanitas.usage import service
from tests.factories import add_file, auth_headers, make_user

# kind -> family, written out here rather than read from engine/formats.py
FAMILY = {"pdf": "pdf", "png": "image", "jpeg": "image", "docx": "ooxml", "xlsm": "ooxml",
          "html": "text", "zip": "archive", None: "unknown", "exe-ish": "unknown"}
REJECTIONS = {"executable", "encrypted", "bomb", "damaged", "time_limit"}


@dataclass
class Row:
    """What the test put in one file row."""

    owner: str
    age: timedelta
    status: str
    kind: str | None
    code: str | None = None
    duration: float | None = None
    findings: list[dict] | None = None
    created_at: datetime = field(init=False)


def finding(kind: str, action: str = "removed", location: str = "page 1",
            detail: str = "") -> dict:
    return {"kind": kind, "location": location, "action": action, "detail": detail}


def capped_findings() -> list[dict]:
    """A report as the engine closes it past its caps: 130 javascript findings become 100 and
    a summary line "and 30 more of this kind"."""
    ctx = Context()
    for n in range(130):
        ctx.add("javascript", f"page {n}")
    ctx.add("exif", "image 1", action="kept")
    return [{"kind": f.kind, "location": f.location, "action": f.action, "detail": f.detail}
            for f in ctx.closed_findings()]


def rows_for(ent: str, other: str) -> list[Row]:
    h, d = timedelta(hours=1), timedelta(days=1)
    return [
        Row(ent, 1 * h, "COMPLETED", "pdf", duration=1.0,
            findings=[finding("javascript"), finding("javascript", location="page 2"),
                      finding("embedded_file", "blocked"), finding("hyperlink", "kept")]),
        Row(ent, 3 * h, "COMPLETED", "pdf", duration=4.0, findings=capped_findings()),
        Row(ent, 5 * h, "COMPLETED", "docx", duration=7.5,
            findings=[finding("macro"), finding("document_metadata", "converted")]),
        Row(ent, 5 * h + timedelta(minutes=20), "FAILED", "xlsm", code="executable",
            duration=0.2),
        Row(ent, 2 * d + 2 * h, "COMPLETED", "png", duration=0.3, findings=[finding("exif")]),
        Row(ent, 2 * d + 3 * h, "FAILED", "zip", code="bomb", duration=0.1),
        Row(ent, 3 * d, "FAILED", "pdf", code="expired"),
        Row(ent, 4 * d, "PENDING", "html"),
        Row(ent, 10 * d, "COMPLETED", "pdf", duration=2.0,
            findings=[finding("javascript", "removed"), finding("more", "removed",
                                                                "whole file",
                                                                "7 further findings not listed")]),
        Row(ent, 12 * d, "FAILED", None, code="damaged", duration=0.05),
        Row(ent, 40 * d, "COMPLETED", "pdf", duration=99.0, findings=[finding("javascript")]),
        Row(other, 2 * h, "COMPLETED", "pdf", duration=3.0, findings=[finding("javascript")]),
        Row(other, 6 * h, "COMPLETED", "jpeg", duration=0.6,
            findings=[finding("exif"), finding("gps", "removed")]),
        Row(other, 7 * h, "PROCESSING", "docx"),
        Row(other, 8 * h, "FAILED", "exe-ish", code="executable", duration=0.01),
        Row(other, 1 * d + 5 * h, "FAILED", "pdf", code="encrypted", duration=0.4),
        Row(other, 6 * d, "COMPLETED", "pdf", duration=10.0, findings=[]),
        Row(other, 6 * d + h, "COMPLETED", "pdf", duration=5.0, findings=None),
        Row(other, 9 * d, "FAILED", "docx", code="internal_error", duration=3.0),
        Row(other, 20 * d, "COMPLETED", "docx", duration=12.0,
            findings=[finding("macro", "removed"), finding("ole_object", "blocked")]),
        Row(other, 29 * d, "FAILED", "pdf", code="time_limit", duration=60.0),
        Row(other, 31 * d, "FAILED", "pdf", code="time_limit", duration=60.0),
    ]


def create(db_session, settings, users: dict, rows: list[Row]) -> None:
    now = utcnow()
    for row in rows:
        row.created_at = now - row.age
        file = add_file(db_session, settings, users[row.owner], status=row.status,
                        kind=row.kind, created_at=row.created_at)
        file.error_code = row.code
        file.error_message = "refused" if row.code else None
        file.processing_duration = row.duration
        file.report = {"findings": row.findings} if row.findings is not None else None
    db_session.commit()


def percentile_cont(values: list[float], share: float) -> float:
    ordered = sorted(values)
    rank = share * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def threat_total(found: dict) -> int:
    """How many findings one report finding stands for, read from its text."""
    words = found["detail"].split()
    if found["detail"].startswith("and ") and found["detail"].endswith("more of this kind"):
        return int(words[1])
    if found["detail"].endswith("further findings not listed"):
        return int(words[0])
    return 1


def expected(rows: list[Row], window: timedelta, hourly: bool) -> dict:
    now = utcnow()
    kept = [r for r in rows if r.created_at >= now - window]
    buckets: dict[str, Counter] = defaultdict(Counter)
    for r in kept:
        key = r.created_at.strftime("%Y-%m-%dT%H" if hourly else "%Y-%m-%d")
        result = ("cleaned" if r.status == "COMPLETED" else
                  "inProgress" if r.status in ("PENDING", "PROCESSING") else
                  "rejected" if r.code in REJECTIONS else "failed")
        buckets[key][result] += 1
    threats: Counter = Counter()
    for r in kept:
        for f in r.findings or []:
            if f["action"] in ("removed", "converted", "blocked"):
                threats[f["kind"]] += threat_total(f)
    rejections = Counter(r.code for r in kept if r.status == "FAILED" and r.code in REJECTIONS)
    types = Counter(r.kind or "unknown" for r in kept)
    times: dict[str, list[float]] = defaultdict(list)
    for r in kept:
        if r.status == "COMPLETED" and r.duration is not None:
            times[FAMILY[r.kind]].append(r.duration)
    return {
        "buckets": buckets,
        "threats": sorted(threats.items(), key=lambda kv: (-kv[1], kv[0])),
        "rejections": sorted(rejections.items(), key=lambda kv: (-kv[1], kv[0])),
        "types": types,
        "timing": {fam: (len(v), round(percentile_cont(v, 0.5), 3),
                         round(percentile_cont(v, 0.95), 3)) for fam, v in times.items()},
        "reports": sum(1 for r in kept if r.findings is not None),
        "timed": sum(len(v) for v in times.values()),
        "total": len(kept),
    }


def check(answer: dict, want: dict, hourly: bool) -> None:
    assert answer["bucket"] == ("hour" if hourly else "day")
    points = answer["filesOverTime"]
    starts = [datetime.fromisoformat(p["start"].replace("Z", "+00:00")) for p in points]
    step = timedelta(hours=1) if hourly else timedelta(days=1)
    assert all(b - a == step for a, b in pairwise(starts))
    period_start = datetime.fromisoformat(answer["period"]["start"].replace("Z", "+00:00"))
    period_end = datetime.fromisoformat(answer["period"]["end"].replace("Z", "+00:00"))
    assert starts[0] <= period_start < starts[0] + step
    assert starts[-1] <= period_end < starts[-1] + step
    got = {p["start"][:13 if hourly else 10]: Counter(
        {k: p[k] for k in ("cleaned", "rejected", "failed", "inProgress") if p[k]})
        for p in points}
    assert {k: v for k, v in got.items() if v} == dict(want["buckets"])
    assert [(t["kind"], t["count"]) for t in answer["threatsByKind"]] == want["threats"]
    assert answer["threatReports"] == {"matched": want["reports"], "read": want["reports"],
                                       "limit": service.MAX_REPORTS, "capped": False}
    assert [(r["code"], r["count"]) for r in answer["rejectionsByCode"]] == want["rejections"]
    top = {t["type"]: t["count"] for t in answer["topTypes"]}
    assert top == dict(want["types"]) and answer["otherTypes"] == 0
    counts = [t["count"] for t in answer["topTypes"]]
    assert counts == sorted(counts, reverse=True)
    assert {t["family"]: (t["files"], t["median"], t["p95"])
            for t in answer["processingTime"]} == want["timing"]
    assert answer["timedFiles"]["matched"] == answer["timedFiles"]["read"] == want["timed"]
    assert sum(sum(c.values()) for c in want["buckets"].values()) == want["total"]


@pytest.fixture
def people(db_session):
    return {"admin": make_user(db_session, role="ADMIN"),
            "ent": make_user(db_session, role="ENTERPRISE"),
            "other": make_user(db_session, role="USER")}


def test_every_series_matches_the_rows(api, settings, db_session, people):
    rows = rows_for("ent", "other")
    create(db_session, settings, people, rows)
    h_admin = auth_headers(settings, db_session, people["admin"])
    h_ent = auth_headers(settings, db_session, people["ent"])
    for timeframe, window, hourly in (("day", timedelta(hours=24), True),
                                      ("week", timedelta(days=7), False),
                                      ("month", timedelta(days=30), False)):
        everyone = api.get(f"/api/usage/charts?timeframe={timeframe}&scope=all",
                           headers=h_admin)
        assert everyone.status_code == 200, everyone.text
        body = everyone.json()
        assert body["message"] == "Analytics charts"
        assert body["data"]["timeframe"] == timeframe and body["data"]["scope"] == "all"
        check(body["data"], expected(rows, window, hourly), hourly)
        own = api.get(f"/api/usage/charts?timeframe={timeframe}", headers=h_ent)
        assert own.status_code == 200, own.text
        assert own.json()["data"]["scope"] == "own"
        check(own.json()["data"], expected([r for r in rows if r.owner == "ent"], window,
                                           hourly), hourly)
    # the month's default; an admin's own files: none
    mine = api.get("/api/usage/charts", headers=h_admin).json()["data"]
    assert mine["timeframe"] == "month" and mine["topTypes"] == []
    assert sum(sum(p[k] for k in ("cleaned", "rejected", "failed", "inProgress"))
               for p in mine["filesOverTime"]) == 0


def test_the_capped_javascript_report_counts_what_it_summarises(api, settings, db_session,
                                                               people):
    create(db_session, settings, people, [Row("ent", timedelta(hours=2), "COMPLETED", "pdf",
                                              duration=1.0, findings=capped_findings())])
    data = api.get("/api/usage/charts?timeframe=day",
                   headers=auth_headers(settings, db_session, people["ent"])).json()["data"]
    assert data["threatsByKind"] == [{"kind": "javascript", "count": 130}]  # exif was kept


def test_percentiles_agree_with_postgresql(api, settings, db_session, people):
    durations = [0.25, 9.5, 1.0, 3.25, 2.0, 7.0, 0.5, 12.0, 4.5, 6.0, 30.0]
    rows = [Row("ent", timedelta(hours=1 + i), "COMPLETED", "pdf", duration=d, findings=[])
            for i, d in enumerate(durations)]
    create(db_session, settings, people, rows)
    data = api.get("/api/usage/charts?timeframe=day",
                   headers=auth_headers(settings, db_session, people["ent"])).json()["data"]
    [pdf] = data["processingTime"]
    assert (pdf["family"], pdf["files"]) == ("pdf", len(durations))
    assert pdf["median"] == round(percentile_cont(durations, 0.5), 3) == 4.5
    assert pdf["p95"] == round(percentile_cont(durations, 0.95), 3)
    if db_session.get_bind().dialect.name == "postgresql":
        median, p95 = db_session.execute(text(
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY processing_duration), "
            "percentile_cont(0.95) WITHIN GROUP (ORDER BY processing_duration) FROM files"
        )).one()
        assert (pdf["median"], pdf["p95"]) == (round(median, 3), round(p95, 3))


def test_reads_are_capped_and_the_answer_says_so(api, settings, db_session, people,
                                                 monkeypatch):
    rows = [Row("ent", timedelta(hours=1 + i), "COMPLETED", "pdf", duration=float(i + 1),
                findings=[finding(f"kind{i}")]) for i in range(5)]
    create(db_session, settings, people, rows)
    monkeypatch.setattr(service, "MAX_REPORTS", 2)
    monkeypatch.setattr(service, "MAX_DURATIONS", 3)
    data = api.get("/api/usage/charts?timeframe=day",
                   headers=auth_headers(settings, db_session, people["ent"])).json()["data"]
    assert data["threatReports"] == {"matched": 5, "read": 2, "limit": 2, "capped": True}
    # the newest reports are read: files 1 and 2 hours old
    assert {t["kind"] for t in data["threatsByKind"]} == {"kind0", "kind1"}
    assert data["timedFiles"] == {"matched": 5, "read": 3, "limit": 3, "capped": True}
    assert data["processingTime"][0]["files"] == 3
    assert data["processingTime"][0]["median"] == 2.0  # of 1, 2, 3 seconds
    # the counted series are not capped
    assert sum(p["cleaned"] for p in data["filesOverTime"]) == 5


def test_more_than_ten_types_keep_the_ten_most_frequent(api, settings, db_session, people):
    kinds = ["pdf", "png", "jpeg", "gif", "webp", "tiff", "bmp", "svg", "txt", "csv", "html",
             "docx"]
    rows = [Row("ent", timedelta(hours=1), "PENDING", kind) for kind in kinds]
    rows += [Row("ent", timedelta(hours=2), "PENDING", "pdf") for _ in range(3)]
    rows += [Row("ent", timedelta(hours=2), "PENDING", "zip") for _ in range(2)]
    create(db_session, settings, people, rows)
    data = api.get("/api/usage/charts?timeframe=week",
                   headers=auth_headers(settings, db_session, people["ent"])).json()["data"]
    top = [(t["type"], t["count"]) for t in data["topTypes"]]
    # pdf 4, zip 2, then the ones seen once by name
    assert top == [("pdf", 4), ("zip", 2), *[(k, 1) for k in sorted(kinds[1:])][:8]]
    assert data["topTypes"][0]["label"] == "PDF document"
    assert data["otherTypes"] == len(rows) - sum(n for _, n in top) == 3


@pytest.mark.parametrize(("role", "scope", "status"), [
    ("GUEST", "own", 403), ("USER", "own", 403), ("ENTERPRISE", "own", 200),
    ("ENTERPRISE", "all", 403), ("USER", "all", 403), ("ADMIN", "own", 200),
    ("ADMIN", "all", 200)])
def test_who_may_ask(api, settings, db_session, role, scope, status):
    caller = make_user(db_session, role=role)
    answer = api.get(f"/api/usage/charts?scope={scope}",
                     headers=auth_headers(settings, db_session, caller))
    assert answer.status_code == status, answer.text
    if status == 403:
        body = answer.json()
        # The plan comes first (no charts at all), then the admin-only scope.
        if role in ("GUEST", "USER"):
            assert body == {"success": False, "error": "plan_required", "message": (
                "Your plan does not include advanced analytics. It comes with the Enterprise "
                "plan.")}
        else:
            assert body["success"] is False and body["error"] == "forbidden"
            assert body["message"] == "Admin privileges are required for this action."


def test_bad_queries_and_no_token(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session, role="ADMIN"))
    assert api.get("/api/usage/charts?timeframe=year", headers=h).status_code == 422
    assert api.get("/api/usage/charts?scope=team", headers=h).status_code == 422
    answer = api.get("/api/usage/charts")
    assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"
