"""The verdict over HTTP (issue 20): the status call, the history and its filter, the one-call
sanitize's headers and a file.completed webhook payload say the same word, counts and
sentence the engine's report gives; rows from before verdicts derive it from their findings."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from sanitas.models import File, WebhookDelivery
from tests.api.polling import wait_for
from tests.engine.corpus import encrypted_pdf, zip_bytes
from tests.engine.corpus_office import hostile_docm
from tests.factories import EXE, add_file, auth_headers, make_user, png_bytes

ZIP_WITH_TOOL = zip_bytes({"tool.exe": EXE, "pic.png": png_bytes()})
DROPPED = {"threats": 0, "hiddenData": 0, "filesDropped": 1, "contentDropped": 0,
           "textLayerDropped": False, "droppedFiles": ["tool.exe"], "encryptedHeld": 0,
           "encryptedPassed": 0}
BROKEN_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog"  # refused in the sandbox: damaged


@pytest.fixture
def pro(settings, db_session):
    user = make_user(db_session, role="USER")
    return user, auth_headers(settings, db_session, user)


def _upload(live, headers, name, data) -> str:
    answer = live.post("/api/upload/single", headers=headers, files={"file": (name, data)})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["fileId"]


def test_status_history_filter_and_webhook(live, db_session, pro, tmp_path):
    user, headers = pro
    locked = encrypted_pdf(tmp_path / "locked.pdf").read_bytes()  # held back: not inspected
    hook = live.post("/api/webhooks", headers=headers, json={
        "url": "http://93.184.215.14/hooks/sanitas", "events": ["file.completed"]})
    assert hook.status_code == 201, hook.text
    ids = {name: _upload(live, headers, name, data) for name, data in [
        ("bundle.zip", ZIP_WITH_TOOL), ("macro.docm", hostile_docm()),
        ("plain.png", png_bytes()), ("locked.pdf", locked), ("broken.pdf", BROKEN_PDF)]}
    files = {name: wait_for(live, headers, file_id)["file"] for name, file_id in ids.items()}

    bundle = files["bundle.zip"]
    assert bundle["verdict"] == "partial"
    assert bundle["verdictSummary"] == "1 file dropped: tool.exe"
    assert bundle["verdictCounts"] == DROPPED
    assert bundle["report"]["verdict"] == "partial"  # stored with the report
    macro = files["macro.docm"]
    assert macro["verdict"] == "cleaned" and macro["verdictCounts"]["threats"] > 0
    assert macro["verdictSummary"].startswith(f"{macro['verdictCounts']['threats']} threats")
    assert (files["plain.png"]["verdict"], files["plain.png"]["verdictSummary"]) == \
        ("clean", "Nothing found")
    refused = files["broken.pdf"]
    assert refused["status"] == "FAILED" and refused["verdict"] == "refused"
    assert refused["verdictSummary"] == f"Refused: {refused['errorMessage']}"
    assert refused["verdictCounts"] is None
    held = files["locked.pdf"]  # no copy, but not "refused": it was never inspected
    assert (held["status"], held["errorCode"], held["verdict"]) == ("FAILED", "encrypted",
                                                                   "encrypted")
    assert held["verdictSummary"] == ("Not inspected: encrypted (1 item held back): "
                                      f"{held['errorMessage']}")
    assert held["verdictCounts"]["encryptedHeld"] == 1
    stored = {f.original_name: f.verdict for f in db_session.scalars(
        select(File).where(File.user_id == user.id))}
    assert stored == {"bundle.zip": "partial", "macro.docm": "cleaned", "plain.png": "clean",
                      "locked.pdf": "encrypted", "broken.pdf": "refused"}

    def history(query=""):
        answer = live.get(f"/api/users/{user.id}/files?{query}", headers=headers)
        assert answer.status_code == 200, answer.text
        return {f["originalName"]: (f["verdict"], f["verdictSummary"])
                for f in answer.json()["data"]["files"]}

    assert history()["bundle.zip"] == ("partial", "1 file dropped: tool.exe")
    for verdict, name in [("partial", "bundle.zip"), ("cleaned", "macro.docm"),
                          ("clean", "plain.png"), ("refused", "broken.pdf"),
                          ("encrypted", "locked.pdf")]:
        assert list(history(f"verdict={verdict}")) == [name], verdict
    assert history("verdict=refused&status=COMPLETED") == {}
    assert list(history("verdict=encrypted&status=FAILED")) == ["locked.pdf"]
    totals = live.get("/api/usage/stats", headers=headers).json()["data"]["verdicts"]
    assert totals == {"clean": 1, "cleaned": 1, "partial": 1, "encrypted": 1, "refused": 1}
    bad = live.get(f"/api/users/{user.id}/files?verdict=dirty", headers=headers)
    assert bad.status_code == 422

    # The file.completed events carry the status call's file, verdict included.
    payloads = {d.payload["data"]["file"]["originalName"]: d.payload["data"]["file"]
                for d in db_session.scalars(select(WebhookDelivery))}
    assert payloads["bundle.zip"]["verdict"] == "partial"
    assert payloads["bundle.zip"]["verdictSummary"] == "1 file dropped: tool.exe"
    assert payloads["bundle.zip"]["verdictCounts"] == DROPPED
    assert payloads["plain.png"]["verdict"] == "clean"


def test_one_call_sanitize_headers(live, pro, tmp_path):
    headers = pro[1]
    key = live.post("/api/keys", headers=headers,
                    json={"name": "sync", "scopes": ["files:write", "files:read"]})
    api_key = {"X-API-Key": key.json()["data"]["secret"]}
    answer = live.post("/api/v1/sanitize?wait=60", headers=api_key,
                       files={"file": ("bundle.zip", ZIP_WITH_TOOL)})
    assert answer.status_code == 200, answer.text[:300]
    assert answer.headers["x-sanitas-verdict"] == "partial"
    assert answer.headers["x-sanitas-verdict-counts"] == (
        "threats=0; hiddenData=0; filesDropped=1; contentDropped=0; textLayerDropped=0; "
        "encryptedHeld=0; encryptedPassed=0")
    summary = json.loads(answer.headers["x-sanitas-report"])
    assert summary["verdict"] == "partial"
    assert summary["verdictSummary"] == "1 file dropped: tool.exe"
    assert summary["verdictCounts"] == DROPPED

    refused = live.post("/api/v1/sanitize?wait=60", headers=api_key,
                        files={"file": ("locked.pdf",
                                        encrypted_pdf(tmp_path / "l.pdf").read_bytes())})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == "encrypted"
    assert refused.headers["x-sanitas-verdict"] == "encrypted"
    assert "encryptedHeld=1" in refused.headers["x-sanitas-verdict-counts"]
    broken = live.post("/api/v1/sanitize?wait=60", headers=api_key,
                       files={"file": ("broken.pdf", BROKEN_PDF)})
    assert broken.status_code == 422, broken.text
    assert broken.headers["x-sanitas-verdict"] == "refused"


def test_rows_from_before_verdicts(api, settings, db_session, pro):
    """A finished row without a verdict (stored before it existed) derives it from its
    report's findings; unfinished files have none; a FAILED one is refused with its reason."""
    user, headers = pro
    old = add_file(db_session, settings, user, status="COMPLETED", name="old.pdf")
    old.report = {"findings": [
        {"kind": "javascript", "location": "page 1", "action": "removed", "detail": ""},
        {"kind": "embedded_file", "location": "document names /EmbeddedFiles",
         "action": "removed", "detail": "run.exe removed: an executable"}]}
    failed = add_file(db_session, settings, user, status="FAILED", name="bad.pdf")
    failed.error_message = "The PDF is damaged."
    pending = add_file(db_session, settings, user, status="PENDING", name="new.pdf")
    db_session.commit()
    assert old.verdict is None

    def status(file):
        answer = api.get(f"/api/process/status/{file.id}", headers=headers)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]["file"]

    got = status(old)
    assert (got["verdict"], got["verdictSummary"]) == (
        "partial", "1 threat removed, 1 file dropped: run.exe")
    assert got["verdictCounts"]["droppedFiles"] == ["run.exe"]
    assert (status(failed)["verdict"], status(failed)["verdictSummary"]) == (
        "refused", "Refused: The PDF is damaged.")
    assert status(pending)["verdict"] is None and status(pending)["verdictSummary"] is None


def test_the_migration_fills_the_verdict_of_finished_files(db_url, settings, db_session):
    """Rows stored before the column: finished files get the verdict of their report, FAILED
    files `refused`, an ICAP transaction that passed unchanged and unfinished files none."""
    from alembic import command

    from sanitas.db import make_engine
    from sanitas.migrate import alembic_config

    user = make_user(db_session)
    dropped = add_file(db_session, settings, user, status="COMPLETED", name="a.zip")
    dropped.report = {"findings": [{"kind": "archive_member", "location": "tool.exe",
                                    "action": "removed", "detail": "an executable"}]}
    cleaned = add_file(db_session, settings, user, status="COMPLETED", name="b.pdf")
    passed = add_file(db_session, settings, user, status="COMPLETED", name="c.bin")
    passed.report = {"findings": [], "icap": {"outcome": "passed"}}
    failed = add_file(db_session, settings, user, status="FAILED", name="d.pdf")
    pending = add_file(db_session, settings, user, status="PENDING", name="e.pdf")
    db_session.commit()
    ids = {f.id: f.original_name for f in (dropped, cleaned, passed, failed, pending)}
    config = alembic_config(db_url)
    command.downgrade(config, "f7b9d1e3a5c7")
    try:
        command.upgrade(config, "a8c0e2f4b6d8")
        engine = make_engine(db_url)
        try:
            with engine.connect() as conn:
                rows = dict(conn.execute(select(File.id, File.verdict)).all())
        finally:
            engine.dispose()
    finally:
        command.upgrade(config, "head")
    assert {ids[i]: v for i, v in rows.items()} == {
        "a.zip": "partial", "b.pdf": "cleaned", "c.bin": None, "d.pdf": "refused",
        "e.pdf": None}


def test_dashboard_counts_files_by_verdict(api, settings, db_session, pro):
    user, headers = pro
    for name, status, word in [("a.zip", "COMPLETED", "partial"), ("b.pdf", "COMPLETED",
                                                                    "cleaned"),
                               ("c.png", "COMPLETED", "clean"), ("d.png", "COMPLETED", "clean"),
                               ("e.pdf", "FAILED", None), ("f.pdf", "PENDING", None),
                               ("g.pdf", "FAILED", "encrypted"),  # held back
                               ("h.pdf", "COMPLETED", "encrypted")]:  # passed
        file = add_file(db_session, settings, user, status=status, name=name)
        file.verdict = word
    add_file(db_session, settings, make_user(db_session), status="FAILED", name="other.pdf")
    db_session.commit()
    answer = api.get("/api/usage/stats", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["verdicts"] == {"clean": 2, "cleaned": 1, "partial": 1,
                                                 "encrypted": 2, "refused": 1}


def test_a_policy_that_passes_encrypted_content(live, settings, db_session, tmp_path):
    """`encryptedContent: pass`: the upload and the one-call API deliver the encrypted file
    byte for byte, COMPLETED with the verdict `encrypted` (never clean), and say so."""
    boss = make_user(db_session, role="ENTERPRISE")
    headers = auth_headers(settings, db_session, boss)
    made = live.post("/api/policies", headers=headers, json={
        "name": "deliver encrypted mail and files", "rules": {"encryptedContent": "pass"}})
    assert made.status_code == 201, made.text
    policy = made.json()["data"]
    assert policy["rules"]["encryptedContent"] == "pass"
    basic = live.get("/api/policies/basic", headers=headers).json()["data"]
    assert basic["rules"]["encryptedContent"] == "hold"
    bad = live.post("/api/policies", headers=headers, json={
        "name": "x", "rules": {"encryptedContent": "keep"}})
    assert bad.status_code == 422 and "encryptedContent" in bad.text

    locked = encrypted_pdf(tmp_path / "locked.pdf").read_bytes()
    answer = live.post("/api/upload/single", headers=headers, data={"policyId": policy["id"]},
                       files={"file": ("locked.pdf", locked)})
    assert answer.status_code == 201, answer.text
    got = wait_for(live, headers, answer.json()["data"]["fileId"])["file"]
    assert (got["status"], got["verdict"]) == ("COMPLETED", "encrypted"), got["errorMessage"]
    assert (got["status"], got["verdict"]) == ("COMPLETED", "encrypted")
    assert got["verdictSummary"] == "Not inspected: encrypted (1 item delivered unchanged)"
    assert got["verdictCounts"]["encryptedPassed"] == 1
    assert [(f["kind"], f["action"]) for f in got["report"]["findings"]] == [
        ("encrypted_content", "kept")]
    download = live.get(f"/api/process/download/{got['id']}", headers=headers)
    assert download.status_code == 200 and download.content == locked

    key = live.post("/api/keys", headers=headers,
                    json={"name": "sync", "scopes": ["files:write", "files:read"]})
    api_key = {"X-API-Key": key.json()["data"]["secret"]}
    now = live.post("/api/v1/sanitize?wait=60", headers=api_key,
                    data={"policyId": policy["id"]}, files={"file": ("locked.pdf", locked)})
    assert now.status_code == 200, now.text[:300]
    assert now.content == locked
    assert now.headers["x-sanitas-verdict"] == "encrypted"
    assert now.headers["x-sanitas-verdict-counts"].endswith(
        "encryptedHeld=0; encryptedPassed=1")
