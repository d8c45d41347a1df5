"""Status and download of a file, and the processing itself through the embedded executor."""

from __future__ import annotations

import time
from datetime import timedelta
from urllib.parse import unquote

import pytest
from sqlalchemy import select

from sanitas.db import utcnow
from sanitas.files.routes import content_disposition
from sanitas.models import File, Job
from tests.api.polling import wait_for
from tests.factories import TEXT, add_file, auth_headers, make_user, pdf_bytes


def test_status_of_a_pending_upload(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    item = api.post("/api/upload/single", headers=h,
                    files={"file": ("notes.txt", TEXT)}).json()["data"]
    answer = api.get(f"/api/process/status/{item['fileId']}", headers=h)
    assert answer.status_code == 200
    data = answer.json()["data"]
    file, job = data["file"], data["job"]
    assert {"id", "originalName", "originalSize", "sanitizedName", "sanitizedSize", "status",
            "mode", "createdAt", "processingStartedAt", "processingCompletedAt",
            "processingDuration", "errorMessage", "errorCode", "expiresAt", "downloadCount",
            "compressionRatio", "isExpired", "report"} <= set(file)
    assert (file["id"], file["originalName"], file["originalSize"], file["status"]) == (
        item["fileId"], "notes.txt", len(TEXT), "PENDING")
    assert file["isExpired"] is False and file["downloadCount"] == 0
    assert file["createdAt"].endswith("Z")
    assert set(job) == {"id", "state", "progress", "attempts", "createdAt", "startedAt",
                        "finishedAt", "ahead"}
    assert (job["state"], job["progress"], job["attempts"]) == ("waiting", 0, 0)
    assert job["ahead"] == 0  # nothing else waits before it


def test_status_of_completed_file_and_cleared_job(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    file = add_file(db_session, settings, user, status="COMPLETED", content=b"a" * 100,
                    sanitized=b"b" * 50)
    data = api.get(f"/api/process/status/{file.id}", headers=h).json()["data"]
    assert data["file"]["status"] == "COMPLETED"
    assert data["file"]["compressionRatio"] == 0.5
    assert data["file"]["processingDuration"] == 2.0
    assert data["file"]["report"]["findings"][0]["kind"] == "javascript"
    assert data["job"]["progress"] == 100
    db_session.execute(Job.__table__.delete())
    db_session.commit()
    data = api.get(f"/api/process/status/{file.id}", headers=h).json()["data"]
    assert data["job"] is None and data["file"]["status"] == "COMPLETED"


def test_status_and_download_of_other_users_file_are_404(api, settings, db_session):
    owner, other = make_user(db_session), make_user(db_session)
    admin = make_user(db_session, role="ADMIN")
    file = add_file(db_session, settings, owner, status="COMPLETED")
    h_other = auth_headers(settings, db_session, other)
    for path in (f"/api/process/status/{file.id}", f"/api/process/download/{file.id}",
                 "/api/process/status/no-such-id", "/api/process/download/no-such-id"):
        answer = api.get(path, headers=h_other)
        assert answer.status_code == 404
        assert answer.json() == {"success": False, "message": "File not found",
                                 "error": "not_found"}
    h_admin = auth_headers(settings, db_session, admin)
    assert api.get(f"/api/process/status/{file.id}", headers=h_admin).status_code == 200
    assert api.get(f"/api/process/download/{file.id}", headers=h_admin).status_code == 200


def test_download_streams_and_counts(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    payload = bytes(range(256)) * 4000
    file = add_file(db_session, settings, user, status="COMPLETED", sanitized=payload)
    for n in (1, 2):
        answer = api.get(f"/api/process/download/{file.id}", headers=h)
        assert answer.status_code == 200
        assert answer.content == payload
        assert answer.headers["content-length"] == str(len(payload))
        assert answer.headers["content-disposition"] == (
            "attachment; filename=\"sanitized_report.pdf\"; "
            "filename*=UTF-8''sanitized_report.pdf")
        db_session.expire_all()
        assert db_session.get(File, file.id).download_count == n
    status = api.get(f"/api/process/status/{file.id}", headers=h).json()["data"]["file"]
    assert status["downloadCount"] == 2


@pytest.mark.parametrize("name", ['q"uo\\te.pdf', "line\r\nSet-Cookie: x=1.pdf",
                                  "résumé 履歴書.pdf", "💥.pdf", ";filename=evil.exe;.pdf"])
def test_content_disposition_is_safe_for_any_name(name):
    header = content_disposition(name)
    assert "\r" not in header and "\n" not in header
    fallback = header.split('filename="', 1)[1].split('"', 1)[0]
    assert all(32 <= ord(c) < 127 and c not in '"\\;' for c in fallback)
    assert fallback.endswith(".pdf")
    encoded = header.split("filename*=UTF-8''", 1)[1]
    assert all(c.isalnum() or c in "%-._~" for c in encoded)
    assert unquote(encoded) == name.replace("\r", "").replace("\n", "")
    assert header.count(";") == 2


def test_download_not_ready_expired_and_missing_blob(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    for status in ("PENDING", "PROCESSING", "FAILED"):
        file = add_file(db_session, settings, user, status=status)
        answer = api.get(f"/api/process/download/{file.id}", headers=h)
        assert answer.status_code == 409
        assert answer.json()["message"] == f"File is not ready for download (status {status})."
    expired = add_file(db_session, settings, user, status="COMPLETED", expired=True)
    answer = api.get(f"/api/process/download/{expired.id}", headers=h)
    assert answer.status_code == 410
    assert answer.json()["message"] == "File has expired and was deleted."
    # past expiresAt but not yet swept: already refused
    done = add_file(db_session, settings, user, status="COMPLETED")
    done.expires_at = utcnow() - timedelta(seconds=1)
    db_session.commit()
    assert api.get(f"/api/process/download/{done.id}", headers=h).status_code == 410
    status = api.get(f"/api/process/status/{done.id}", headers=h).json()["data"]["file"]
    assert status["isExpired"] is True


def test_upload_is_processed_and_downloadable(live, settings, db_session):
    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    pdf = pdf_bytes(30_000)
    item = live.post("/api/upload/single", headers=h,
                     files={"file": ("Quarterly report.pdf", pdf)}).json()["data"]
    data = wait_for(live, h, item["fileId"])
    file, job = data["file"], data["job"]
    assert file["status"] == "COMPLETED", file["errorMessage"]
    assert file["sanitizedName"] == "sanitized_Quarterly report.pdf"
    assert file["sanitizedSize"] > 0 and file["processingDuration"] > 0
    assert file["compressionRatio"] == round(file["sanitizedSize"] / len(pdf), 4)
    assert file["processingStartedAt"] <= file["processingCompletedAt"]
    assert isinstance(file["report"]["findings"], list)
    assert (job["state"], job["progress"], job["attempts"]) == ("completed", 100, 1)
    answer = live.get(f"/api/process/download/{item['fileId']}", headers=h)
    assert answer.status_code == 200 and answer.content.startswith(b"%PDF-")
    assert len(answer.content) == file["sanitizedSize"]
    assert "filename*=UTF-8''sanitized_Quarterly%20report.pdf" in \
        answer.headers["content-disposition"]


def test_a_file_the_engine_rejects_fails_once_with_a_reason(live, settings, db_session):
    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    # a PDF header on garbage passes detection but cannot be rebuilt
    broken = b"%PDF-1.7\n" + bytes(range(256)) * 20
    item = live.post("/api/upload/single", headers=h,
                     files={"file": ("broken.pdf", broken)}).json()["data"]
    data = wait_for(live, h, item["fileId"])
    assert data["file"]["status"] == "FAILED"
    assert data["file"]["errorMessage"] and data["file"]["errorCode"] == "damaged"
    assert data["job"]["state"] == "failed" and data["job"]["attempts"] == 1
    assert live.get(f"/api/process/download/{item['fileId']}", headers=h).status_code == 409
    db_session.expire_all()
    assert db_session.scalar(select(File.sanitized_key).where(File.id == item["fileId"])) is None


def _zip(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_upload_only_sniffs_and_the_sandbox_decides_a_containers_kind(live, settings,
                                                                       db_session):
    """The API process reads a bounded prefix: a ZIP is accepted as a provisional kind and
    the sandboxed job, which reads the structure, records what it really is."""
    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    types = (b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
             b'<Override PartName="/word/document.xml" ContentType="application/vnd.'
             b'openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
    docx = _zip({"[Content_Types].xml": types,
                 "word/document.xml": b'<w:document xmlns:w="http://schemas.openxmlformats.org/'
                                      b'wordprocessingml/2006/main"><w:body/></w:document>'})
    item = live.post("/api/upload/single", headers=h,
                     files={"file": ("upload.bin", docx)}).json()["data"]
    assert db_session.get(File, item["fileId"]).detected_type == "zip"  # provisional
    data = wait_for(live, h, item["fileId"])
    assert data["file"]["detectedType"] == "docx"
    db_session.expire_all()
    assert db_session.get(File, item["fileId"]).detected_type == "docx"


def test_an_encrypted_archive_is_refused_by_the_sandbox_with_its_reason(live, settings,
                                                                        db_session):
    import struct

    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    data = bytearray(_zip({"secret.txt": b"EVIL-secret"}))
    data[6:8] = struct.pack("<H", struct.unpack_from("<H", data, 6)[0] | 1)
    central = data.find(b"PK\x01\x02")
    data[central + 8:central + 10] = struct.pack(
        "<H", struct.unpack_from("<H", data, central + 8)[0] | 1)
    answer = live.post("/api/upload/single", headers=h,
                       files={"file": ("secret.zip", bytes(data))})
    assert answer.status_code == 201
    status = wait_for(live, h, answer.json()["data"]["fileId"])
    assert status["file"]["status"] == "FAILED"
    assert "encrypted" in status["file"]["errorMessage"]
    assert status["file"]["errorCode"] == "encrypted"
    assert status["file"]["detectedType"] == "zip"


def test_markup_that_once_froze_the_api_is_answered_at_once(api, settings, db_session):
    """330 bytes of comments used to backtrack exponentially in the API process."""
    h = auth_headers(settings, db_session, make_user(db_session))
    payload = b"<!--a-->" * 40 + b"x"
    started = time.monotonic()
    answer = api.post("/api/upload/single", headers=h, files={"file": ("notes", payload)})
    assert answer.status_code == 201, answer.text
    assert db_session.get(File, answer.json()["data"]["fileId"]).detected_type == "txt"
    assert api.get("/health").status_code == 200
    assert time.monotonic() - started < 20  # the old patterns needed hours for this input
