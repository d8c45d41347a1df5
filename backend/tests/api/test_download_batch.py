"""POST /api/process/download-batch: the caller's own COMPLETED, unexpired files as one
streamed ZIP, each counted as a download, all or nothing."""

from __future__ import annotations

import io
import os
import tracemalloc
import zipfile

import httpx
import pytest
from sqlalchemy import select

from sanitas.files.batch import unique_names
from sanitas.models import File
from tests.factories import add_file, auth_headers, make_user
from tests.live_server import app_server

URL = "/api/process/download-batch"


def _counts(db_session, files) -> list[int]:
    db_session.expire_all()
    ids = [f.id for f in files]
    by_id = dict(db_session.execute(select(File.id, File.download_count)
                                    .where(File.id.in_(ids))).all())
    return [by_id[i] for i in ids]


def test_zip_of_the_callers_files_with_unique_names(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    files = [add_file(db_session, settings, user, status="COMPLETED", name=name,
                      sanitized=f"%PDF-1.4 body {n}".encode())
             for n, name in enumerate(["report.pdf", "report.pdf", "REPORT.pdf", "notes.txt",
                                       "a/b\\c\u202e.pdf"])]
    answer = api.post(URL, headers=h, json={"fileIds": [f.id for f in files] + [files[0].id]})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/zip"
    assert answer.headers["content-disposition"].startswith('attachment; filename="sanitas-')
    assert answer.headers["cache-control"] == "private, no-store"
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    assert archive.testzip() is None
    assert archive.namelist() == ["sanitized_report.pdf", "sanitized_report (2).pdf",
                                  "sanitized_REPORT (3).pdf", "sanitized_notes.txt",
                                  "c.pdf"]
    for n, name in enumerate(archive.namelist()):
        assert archive.read(name) == f"%PDF-1.4 body {n}".encode()
        assert archive.getinfo(name).compress_type == zipfile.ZIP_STORED
    # One download each (the repeated id once), like the single download counts.
    assert _counts(db_session, files) == [1, 1, 1, 1, 1]
    api.post(URL, headers=h, json={"fileIds": [files[3].id]})
    assert _counts(db_session, files) == [1, 1, 1, 2, 1]
    single = api.get(f"/api/process/download/{files[3].id}", headers=h)
    assert single.status_code == 200 and _counts(db_session, files)[3] == 3


def test_another_users_file_refuses_the_whole_request(api, settings, db_session):
    owner, other = make_user(db_session), make_user(db_session)
    admin = make_user(db_session, role="ADMIN")
    mine = add_file(db_session, settings, owner, status="COMPLETED")
    theirs = add_file(db_session, settings, other, status="COMPLETED",
                      sanitized=b"%PDF-1.4 someone else's secret")
    for caller in (owner, admin):  # owner only: an admin's session is no exception
        answer = api.post(URL, headers=auth_headers(settings, db_session, caller),
                          json={"fileIds": [mine.id, theirs.id, "no-such-id"]})
        assert answer.status_code == 404, answer.text
        body = answer.json()
        assert body["error"] == "not_found" and body["success"] is False
        assert theirs.id in body["message"] and "no-such-id" in body["message"]
        assert b"secret" not in answer.content
    assert _counts(db_session, [mine, theirs]) == [0, 0]  # nothing counted


def test_not_ready_and_expired_are_named(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    done = add_file(db_session, settings, user, status="COMPLETED")
    pending = add_file(db_session, settings, user, status="PENDING")
    failed = add_file(db_session, settings, user, status="FAILED")
    expired = add_file(db_session, settings, user, status="COMPLETED", expired=True)
    answer = api.post(URL, headers=h, json={"fileIds": [done.id, pending.id, failed.id]})
    assert (answer.status_code, answer.json()["error"]) == (409, "not_ready")
    assert pending.id in answer.json()["message"] and failed.id in answer.json()["message"]
    assert done.id not in answer.json()["message"]
    answer = api.post(URL, headers=h, json={"fileIds": [done.id, expired.id, pending.id]})
    assert (answer.status_code, answer.json()["error"]) == (410, "expired")
    assert expired.id in answer.json()["message"]
    assert _counts(db_session, [done]) == [0]


def test_bad_bodies_and_too_many_ids_are_422(api, settings, db_session):
    settings.download_batch_max_files = 3
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    files = [add_file(db_session, settings, user, status="COMPLETED") for _ in range(4)]
    answer = api.post(URL, headers=h, json={"fileIds": [f.id for f in files]})
    assert (answer.status_code, answer.json()["error"]) == (422, "too_many_files")
    assert "At most 3 files" in answer.json()["message"]
    assert _counts(db_session, files) == [0, 0, 0, 0]
    # Repeats count once: three distinct ids are within the limit.
    ids = [f.id for f in files[:3]]
    assert api.post(URL, headers=h, json={"fileIds": ids + ids}).status_code == 200
    for body in ({"fileIds": []}, {}, {"fileIds": "x"}, {"fileIds": ["x" * 65]},
                 {"fileIds": [""]}, {"fileIds": [1]}, {"fileIds": ["a\u0000b"]}):
        answer = api.post(URL, headers=h, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["error"] == "validation_error"
    assert api.post(URL, json={"fileIds": ids}).status_code == 401


def test_many_files_stream_in_bounded_memory(settings, db_session, tmp_path):
    """The archive (48 MB here) is passed on as it is read: the server's peak memory while it
    streams stays far below the archive's size."""
    settings.download_batch_max_files = 200
    settings.user_concurrency = 0
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    big = [add_file(db_session, settings, user, status="COMPLETED", name=f"scan{n}.pdf",
                    sanitized=os.urandom(3 * 1024 * 1024)) for n in range(16)]
    small = [add_file(db_session, settings, user, status="COMPLETED", name="page.pdf",
                      sanitized=b"%PDF-1.4 small") for _ in range(134)]
    target = tmp_path / "all.zip"
    with app_server(settings) as port:
        tracemalloc.start()
        try:
            with httpx.stream("POST", f"http://127.0.0.1:{port}{URL}", headers=h,
                              json={"fileIds": [f.id for f in big + small]},
                              timeout=60) as answer, open(target, "wb") as out:
                assert answer.status_code == 200
                for chunk in answer.iter_raw():
                    out.write(chunk)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert target.stat().st_size > 48 * 1024 * 1024
    assert peak < 12 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB while streaming"
    with zipfile.ZipFile(target) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
    assert len(names) == 150 and len(set(names)) == 150
    assert names[16:19] == ["sanitized_page.pdf", "sanitized_page (2).pdf",
                            "sanitized_page (3).pdf"]
    assert set(_counts(db_session, big + small)) == {1}


@pytest.mark.parametrize(("names", "expected"), [
    (["a.pdf", "A.PDF", "a.pdf"], ["a.pdf", "A (2).PDF", "a (3).pdf"]),
    (["a.pdf", "a (2).pdf", "a.pdf"], ["a.pdf", "a (2).pdf", "a (3).pdf"]),
    ([".hidden", ".hidden", "noext", "noext"], [".hidden", ".hidden (2)", "noext",
                                                "noext (2)"]),
    (["../../etc/passwd", "..", "x\u200b\u202ey.txt"], ["passwd", "file", "xy.txt"]),
    (["n" * 251 + ".pdf"] * 2, ["n" * 251 + ".pdf", "n" * 247 + " (2).pdf"]),
])
def test_unique_names(names, expected):
    assert unique_names(names) == expected
