"""The charts' threats by kind, counted in the database (jsonb on PostgreSQL, json_each on
SQLite), equal what reading every report in Python counts, for reports of every odd shape a
JSON column can hold: findings that are not a list, items that are not objects, fields of the
wrong type, summary lines, long and non-ASCII kinds."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from sanitas.db import utcnow
from sanitas.models import User
from sanitas.usage import service
from sanitas.usage.schemas import ChartScope, Timeframe
from tests.factories import add_file, make_user

ODD_REPORTS: list[object] = [
    {"findings": {"kind": "javascript", "action": "removed"}},  # an object, not a list
    {"findings": ["text", 3, None, [1], True, {"kind": 5, "action": "removed"}]},
    {"findings": [{"kind": "macro", "action": "blocked", "location": "whole file",
                   "detail": "and 4 more of this kind"}]},
    {"findings": [{"kind": "more", "action": "removed", "location": "whole file",
                   "detail": "12 further findings not listed"}]},
    {"findings": [{"kind": "more", "action": "removed", "location": "page 1",
                   "detail": "12 further findings not listed"}]},  # not the whole file: 1
    {"findings": [{"kind": "x" * 150, "action": "converted"}]},  # the kind cut to 100
    {"findings": [{"kind": "gps", "action": "kept"}, {"kind": "gps", "action": ["removed"]},
                  {"kind": "gps"}]},
    {"findings": [{"kind": "ünïcode ✓", "action": "removed", "detail": "é\"quote\\",
                   "location": "page\n2"}]},
    {"findings": [{"kind": "javascript", "action": "removed", "detail": 7,
                   "location": "whole file"}]},
    {"findings": [{"kind": "javascript", "action": "removed", "location": "whole file",
                   "detail": "and 3 more of this kind\n"}]},
    {"findings": [{"kind": "javascript", "action": "removed", "detail": "x"}] * 3},
    {"findings": []},
    {"other": 1},
    [1, 2],
    "a string",
    None,
]


def python_count(reports: list[object]) -> Counter[str]:
    """Every report read in Python, each finding counted by the charts' own rule (only a
    string action can be a threat's: a list there made the old Python loop raise)."""
    threats: Counter[str] = Counter()
    for report in reports:
        findings = report.get("findings") if isinstance(report, dict) else None
        for finding in findings if isinstance(findings, list) else []:
            counted = service._threat_count(finding) if isinstance(finding, dict) \
                and isinstance(finding.get("action"), str) else None
            if counted:
                threats[counted[0]] += counted[1]
    return threats


def test_threats_counted_in_the_database_equal_the_python_reading(settings, db_session):
    admin = make_user(db_session, role="ADMIN")
    owner = make_user(db_session, role="USER")
    now = utcnow()
    for i, report in enumerate(ODD_REPORTS * 2):
        file = add_file(db_session, settings, owner, status="COMPLETED", kind="pdf",
                        created_at=now - timedelta(minutes=1 + i))
        file.report = report
    db_session.commit()
    want = python_count(ODD_REPORTS * 2)
    assert want["macro"] == 8 and want["more"] == 26 and want["x" * 100] == 2
    answer = service.charts(db_session, db_session.get(User, admin.id), Timeframe.DAY,
                            ChartScope.ALL)
    assert {t.kind: t.count for t in answer.threats_by_kind} == dict(want)
    # JSON null (the column's None) is no report; the other 30 are
    assert answer.threat_reports.matched == answer.threat_reports.read == 30
