"""Request ids and log lines (sanitas/logs.py): X-Request-ID answered, stored with the job it
creates and put on the job's log lines; JSON lines when asked."""

from __future__ import annotations

import json
import logging
import time

import pytest

from sanitas import logs
from sanitas.models import Job
from tests.api.polling import wait_for
from tests.factories import auth_headers, make_user, pdf_bytes


def test_every_answer_carries_a_request_id(api):
    given = api.get("/health", headers={"X-Request-ID": "trace-42.a:b_c"})
    assert given.headers["x-request-id"] == "trace-42.a:b_c"
    made = api.get("/api/no-such-call")
    assert made.status_code == 404 and len(made.headers["x-request-id"]) == 32
    for hostile in ("x" * 129, "bad id with spaces", "a;b", "a/b"):
        answer = api.get("/health", headers={"X-Request-ID": hostile})
        assert answer.headers["x-request-id"] != hostile  # replaced by a fresh one


def test_the_job_carries_the_calls_id_into_its_log_lines(live, settings, db_session, caplog):
    api = live
    caplog.set_level(logging.INFO, logger="sanitas")
    headers = auth_headers(settings, db_session, make_user(db_session))
    answer = api.post("/api/upload/single", files={"file": ("a.pdf", pdf_bytes())},
                      headers={**headers, "X-Request-ID": "upload-call-7"})
    assert answer.status_code == 201
    file_id = answer.json()["data"]["fileId"]
    status = wait_for(api, headers, file_id)
    assert status["file"]["status"] == "COMPLETED"
    job = db_session.query(Job).filter_by(file_id=file_id).one()
    assert job.request_id == "upload-call-7"
    deadline = time.monotonic() + 10  # the outcome line follows the status change
    while time.monotonic() < deadline and not any(
            getattr(r, "job_id", None) == job.id for r in caplog.records):
        time.sleep(0.05)
    (done,) = [r for r in caplog.records if getattr(r, "job_id", None) == job.id
               and r.getMessage().startswith(f"job {job.id}:")]
    assert done.request_id == "upload-call-7"  # logged by the job's thread, not the call's
    line = json.loads(logs.JsonFormatter().format(done))
    assert line["requestId"] == "upload-call-7" and line["jobId"] == job.id


@pytest.mark.parametrize(("env", "configured", "expected"), [
    ("production", None, "json"), ("development", None, "text"),
    ("production", "text", "text"), ("development", "json", "json")])
def test_log_format_defaults(env, configured, expected):
    assert logs.log_format(env, configured) == expected


def test_json_lines_hold_the_exception():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys
        record = logging.LogRecord("sanitas", logging.ERROR, __file__, 1, "failed %s", ("x",),
                                   sys.exc_info())
    line = json.loads(logs.JsonFormatter().format(record))
    assert line["message"] == "failed x" and "ValueError: boom" in line["exception"]
    assert line["level"] == "ERROR" and "requestId" not in line
