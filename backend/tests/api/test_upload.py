"""Uploads: limits per role, streaming size refusal, type by content, quotas, modes; nothing
left behind on refusal."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from sanitas.config import MB
from sanitas.db import make_sessionmaker, utcnow
from sanitas.models import File, Job
from sanitas.processing.sweeps import expire_files
from sanitas.storage import make_storage
from tests.factories import EXE, TEXT, add_file, auth_headers, make_user, pdf_bytes, png_bytes


def _counts(db_session):
    db_session.expire_all()
    return (db_session.scalar(select(func.count()).select_from(File)),
            db_session.scalar(select(func.count()).select_from(Job)))


def _leftovers(settings):
    """Blobs in storage and temporary upload files."""
    files = sorted(p.relative_to(settings.data_dir).as_posix()
                   for p in settings.data_dir.rglob("*") if p.is_file())
    return [f for f in files if f.startswith(("files/", "tmp/"))]


def test_upload_info_per_role(api, settings, db_session):
    expected = {"GUEST": (5, 10 * MB, ["basic"]), "USER": (10, 100 * MB, ["basic", "advanced"]),
                "ENTERPRISE": (50, 1024 * MB, ["basic", "advanced"]),
                "ADMIN": (50, 1024 * MB, ["basic", "advanced"])}
    for role, (max_files, max_size, modes) in expected.items():
        h = auth_headers(settings, db_session, make_user(db_session, role=role))
        answer = api.get("/api/upload/info", headers=h)
        assert answer.status_code == 200
        data = answer.json()["data"]
        assert answer.json()["success"] is True
        assert (data["maxFiles"], data["maxFileSize"], data["modes"]) == (max_files, max_size,
                                                                          modes)
        assert data["maxFileSizeMB"] == max_size / MB
        assert {"pdf", "docx", "png", "jpg", "xlsx"} <= set(data["supportedFormats"])
        assert all("." not in ext for ext in data["supportedFormats"])
    assert api.get("/api/upload/info").status_code == 401


def test_single_upload_stores_blob_and_pending_job(api, settings, db_session):
    user = make_user(db_session, role="USER")
    pdf = pdf_bytes()
    answer = api.post("/api/upload/single", headers=auth_headers(settings, db_session, user),
                      files={"file": ("Report 2024.pdf", pdf, "application/pdf")})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["success"] is True and body["message"]
    item = body["data"]
    assert set(item) == {"fileId", "originalName", "size", "status"}
    assert item["originalName"] == "Report 2024.pdf"
    assert item["size"] == len(pdf) and item["status"] == "PENDING"
    file = db_session.get(File, item["fileId"])
    assert file.user_id == user.id and file.detected_type == "pdf" and file.mode == "basic"
    assert file.expires_at - file.created_at == timedelta(hours=24)
    job = db_session.scalar(select(Job).where(Job.file_id == file.id))
    assert job.state == "waiting" and job.priority == 0
    assert _leftovers(settings) == [f"files/originals/{file.id}"]
    assert (settings.files_dir / "originals" / file.id).read_bytes() == pdf


def test_multiple_upload_and_high_priority_for_enterprise(api, settings, db_session):
    user = make_user(db_session, role="ENTERPRISE")
    answer = api.post("/api/upload/multiple", headers=auth_headers(settings, db_session, user),
                      files=[("files", ("a.png", png_bytes())), ("files", ("b.txt", TEXT)),
                             ("files", ("c.pdf", pdf_bytes()))], data={"mode": "advanced"})
    assert answer.status_code == 201, answer.text
    items = answer.json()["data"]
    assert [i["originalName"] for i in items] == ["a.png", "b.txt", "c.pdf"]
    db_session.expire_all()
    kinds = {db_session.get(File, i["fileId"]).detected_type for i in items}
    assert kinds == {"png", "txt", "pdf"}
    jobs = db_session.scalars(select(Job)).all()
    assert len(jobs) == 3 and {j.priority for j in jobs} == {10}
    assert {db_session.get(File, i["fileId"]).mode for i in items} == {"advanced"}


def test_type_is_decided_by_content_not_name(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    answer = api.post("/api/upload/single", headers=h, files={"file": ("invoice.pdf", EXE)})
    assert answer.status_code == 415
    assert answer.json()["success"] is False
    assert "invoice.pdf" in answer.json()["message"]
    assert "executable" in answer.json()["message"].lower()
    # a real PNG named .pdf is accepted as what it is
    answer = api.post("/api/upload/single", headers=h, files={"file": ("photo.pdf", png_bytes())})
    assert answer.status_code == 201
    assert db_session.get(File, answer.json()["data"]["fileId"]).detected_type == "png"


def test_one_bad_file_refuses_the_whole_batch_leaving_nothing(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    answer = api.post("/api/upload/multiple", headers=h,
                      files=[("files", ("ok.png", png_bytes())), ("files", ("bad.doc", EXE))])
    assert answer.status_code == 415
    assert _counts(db_session) == (0, 0)
    assert _leftovers(settings) == []


def test_too_large_is_413_and_leaves_nothing(api, settings, db_session):
    settings.plans["GUEST"].limits = settings.plans["GUEST"].limits.model_copy(
        update={"max_file_size": 50_000})
    h = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    big = pdf_bytes(200_000)
    assert len(big) > 50_000
    # Two files: the Content-Length alone does not reveal which one is too large.
    answer = api.post("/api/upload/multiple", headers=h,
                      files=[("files", ("small.png", png_bytes())), ("files", ("big.pdf", big))])
    assert answer.status_code == 413
    assert answer.json()["message"] == '"big.pdf" is larger than the 48 KB limit for your account.'
    assert _counts(db_session) == (0, 0)
    assert _leftovers(settings) == []


def test_content_length_beyond_any_allowance_is_refused_unread(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    answer = api.post("/api/upload/single", headers=h,
                      files={"file": ("huge.pdf", b"%PDF-1.4\n" + b"0" * (10 * MB + 10))})
    assert answer.status_code == 413
    assert "10 MB" in answer.json()["message"]
    assert _leftovers(settings) == []


def test_more_files_than_allowed(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    files = [("files", (f"f{i}.txt", TEXT)) for i in range(6)]
    answer = api.post("/api/upload/multiple", headers=h, files=files)
    assert answer.status_code == 400
    assert answer.json()["message"] == "Too many files: at most 5 per upload for your account."
    assert _counts(db_session) == (0, 0) and _leftovers(settings) == []
    answer = api.post("/api/upload/single", headers=h,
                      files=[("file", ("a.txt", TEXT)), ("file", ("b.txt", TEXT))])
    assert answer.status_code == 400
    assert "/api/upload/multiple" in answer.json()["message"]


def test_monthly_quota_and_admin_reset(api, settings, db_session):
    guest = make_user(db_session, role="GUEST")
    admin = make_user(db_session, role="ADMIN")
    h = auth_headers(settings, db_session, guest)
    # four this month, one last month (not counted)
    for _ in range(4):
        add_file(db_session, settings, guest)
    add_file(db_session, settings, guest, created_at=utcnow().replace(day=1) - timedelta(days=3))
    two = [("files", ("a.txt", TEXT)), ("files", ("b.txt", TEXT))]
    answer = api.post("/api/upload/multiple", headers=h, files=two)
    assert answer.status_code == 403
    assert answer.json()["message"] == ("Monthly upload quota exceeded: your account allows 5 "
                                        "uploads per month and you have 1 upload(s) left this "
                                        "month.")
    assert api.post("/api/upload/single", headers=h,
                    files={"file": ("a.txt", TEXT)}).status_code == 201
    answer = api.post("/api/upload/single", headers=h, files={"file": ("b.txt", TEXT)})
    assert answer.status_code == 403
    assert "no uploads are left this month" in answer.json()["message"]
    reset = api.post(f"/api/usage/reset-quota/{guest.id}",
                     headers=auth_headers(settings, db_session, admin))
    assert reset.status_code == 200
    assert api.post("/api/upload/multiple", headers=h, files=two).status_code == 201


def test_storage_quota_counts_live_blobs_only(api, settings, db_session):
    settings.plans["GUEST"].limits = settings.plans["GUEST"].limits.model_copy(
        update={"storage_quota": 10_000})
    guest = make_user(db_session, role="GUEST")
    h = auth_headers(settings, db_session, guest)
    add_file(db_session, settings, guest, content=b"x" * 6000)
    answer = api.post("/api/upload/single", headers=h, files={"file": ("a.txt", TEXT * 120)})
    assert answer.status_code == 403
    assert answer.json()["message"].startswith("Storage quota exceeded")
    # once the expiry sweep has deleted its blobs, the file no longer counts
    first = db_session.scalar(select(File))
    first.expires_at = utcnow() - timedelta(seconds=1)
    db_session.commit()
    assert expire_files(make_sessionmaker(db_session.get_bind()), make_storage(settings)) == 1
    assert api.post("/api/upload/single", headers=h,
                    files={"file": ("a.txt", TEXT * 120)}).status_code == 201


def test_modes_per_role(api, settings, db_session):
    guest_h = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    user_h = auth_headers(settings, db_session, make_user(db_session, role="USER"))
    answer = api.post("/api/upload/single", headers=guest_h, files={"file": ("a.txt", TEXT)},
                      data={"mode": "advanced"})
    assert answer.status_code == 403
    assert answer.json()["message"] == ("The 'advanced' mode is not available for your "
                                        "account; available: basic.")
    answer = api.post("/api/upload/single", headers=user_h, files={"file": ("a.txt", TEXT)},
                      data={"mode": "turbo"})
    assert answer.status_code == 400 and "Unknown processing mode" in answer.json()["message"]
    answer = api.post("/api/upload/single", headers=user_h, files={"file": ("a.txt", TEXT)},
                      data={"mode": "advanced"})
    assert answer.status_code == 201
    assert db_session.get(File, answer.json()["data"]["fileId"]).mode == "advanced"
    assert _counts(db_session) == (1, 1)


def test_malformed_requests(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    cases = [
        ({"files": {"file": ("empty.pdf", b"")}}, 400, '"empty.pdf" is empty.'),
        ({"data": {"mode": "basic"}, "files": {"other": ("a.txt", TEXT)}}, 400,
         "Unexpected file field 'other'; send files as 'file'."),
        ({"json": {"file": "x"}}, 400, "Expected a multipart/form-data upload."),
    ]
    for kwargs, status, message in cases:
        answer = api.post("/api/upload/single", headers=h, **kwargs)
        assert (answer.status_code, answer.json()["message"]) == (status, message)
    answer = api.post("/api/upload/single", headers=h, data={"mode": "basic"},
                      files={"x": ("", b"")})  # a form with no file at all
    assert answer.status_code == 400
    truncated = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                 b"Content-Type: text/plain\r\n\r\nhello")
    answer = api.post("/api/upload/single", headers={
        **h, "Content-Type": "multipart/form-data; boundary=XyZ"}, content=truncated)
    assert answer.status_code == 400
    assert _counts(db_session) == (0, 0) and _leftovers(settings) == []
    assert api.post("/api/upload/single", files={"file": ("a.txt", TEXT)}).status_code == 401


def test_hostile_names_are_cleaned(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    name = '../../etc/pa%22ss\x07wd é 中.txt'.encode()
    body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name
            + b"\"\r\nContent-Type: text/plain\r\n\r\n" + TEXT + b"\r\n--XyZ--\r\n")
    answer = api.post("/api/upload/single", content=body, headers={
        **h, "Content-Type": "multipart/form-data; boundary=XyZ"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"]["originalName"] == 'pa"sswd é 中.txt'
    answer = api.post("/api/upload/single", headers=h, files={"file": ("x" * 300 + ".txt", TEXT)})
    stored = answer.json()["data"]["originalName"]
    assert len(stored) == 255 and stored.endswith(".txt")


def test_limits_are_configurable(settings):
    # an unknown role gets the least: the Free (GUEST) plan
    assert settings.plans.plan("UNKNOWN-ROLE") is settings.plans["GUEST"]


def test_oversized_part_headers_are_refused(api, settings, db_session):
    h = {**auth_headers(settings, db_session, make_user(db_session)),
         "Content-Type": "multipart/form-data; boundary=XyZ"}
    long_header = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
                   + b"a" * 20_000 + b".txt\"\r\n\r\nhello\r\n--XyZ--\r\n")
    answer = api.post("/api/upload/single", headers=h, content=long_header)
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("Malformed multipart upload:")
    many = (b"--XyZ\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(40))
            + b"Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n"
            + b"hello\r\n--XyZ--\r\n")
    answer = api.post("/api/upload/single", headers=h, content=many)
    assert answer.status_code == 400
    assert _counts(db_session) == (0, 0) and _leftovers(settings) == []
