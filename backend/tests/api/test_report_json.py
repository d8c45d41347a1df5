"""A report lists each file from its stored report's JSON text (reports.service._report_json:
orjson, the standard library for what orjson refuses), on both databases: the same
findings and verdict as the file's own status, whatever the stored document holds."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text

from sanitas.db import utcnow
from sanitas.models.report import Report
from sanitas.reports.service import _report_json, report_rows
from tests.factories import add_file, make_user


def test_reports_of_every_shape_are_listed(settings, db_session) -> None:
    user = make_user(db_session, email="shapes@example.com")
    shapes = {
        "stored verdict": {"findings": [{"kind": "javascript", "action": "removed",
                                         "location": "page 1", "detail": "naïve \u2028"}],
                           "verdict": "cleaned", "verdictSummary": "1 threat removed",
                           "verdictCounts": {"threats": 1}},
        "findings only": {"findings": [{"kind": "macro", "action": "removed",
                                        "location": "whole file",
                                        "detail": "and 4 more of this kind"}]},
        "json null": None,
        "big number": {"findings": [], "durationMs": 2 ** 70 + 1},
    }
    ids = {}
    for name, report in shapes.items():
        file = add_file(db_session, settings, user, status="COMPLETED")
        file.report = report
        ids[name] = file.id
    db_session.commit()
    now = utcnow()
    listed = {row.id: row for row in report_rows(db_session, Report(
        user_id=user.id, scope_user_id=user.id, period_start=now - timedelta(days=1),
        period_end=now + timedelta(minutes=1), format="csv"))}
    assert listed[ids["stored verdict"]].verdict_summary == "1 threat removed"
    assert listed[ids["stored verdict"]].findings == {"javascript": 1}
    assert listed[ids["findings only"]].findings == {"macro": 4}
    assert listed[ids["findings only"]].verdict == "cleaned"
    assert listed[ids["json null"]].findings == {}
    assert listed[ids["big number"]].verdict == "clean"


def test_a_document_orjson_refuses_is_read_by_the_standard_library(settings,
                                                                    db_session) -> None:
    assert _report_json(None) is None
    assert _report_json("null") is None
    assert _report_json('{"findings": [], "x": NaN}')["findings"] == []
    if db_session.get_bind().dialect.name != "sqlite":
        return  # PostgreSQL's json type refuses NaN; SQLite keeps whatever text it was given
    user = make_user(db_session, email="nan@example.com")
    file = add_file(db_session, settings, user, status="COMPLETED")
    db_session.commit()
    db_session.execute(text("UPDATE files SET report = :r WHERE id = :i"), {
        "r": '{"findings": [{"kind": "exif", "action": "removed", "location": "image 1", '
             '"detail": ""}], "ratio": NaN}', "i": file.id})
    db_session.commit()
    now = utcnow()
    rows = list(report_rows(db_session, Report(
        user_id=user.id, scope_user_id=user.id, period_start=now - timedelta(days=1),
        period_end=now + timedelta(minutes=1), format="csv")))
    assert [(r.id, dict(r.findings)) for r in rows] == [(file.id, {"exif": 1})]
