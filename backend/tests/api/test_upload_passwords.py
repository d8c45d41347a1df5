"""The upload's optional password: it opens an encrypted document in the sandboxed job, the
download is not encrypted, and the password is never in an answer, a log line or (once the job
has ended) the database; while the job waits it is stored sealed, never in clear."""

from __future__ import annotations

import io
import logging
import zipfile

import pytest
from sqlalchemy import select, text

from sanitas import sealing
from sanitas.db import make_sessionmaker
from sanitas.models import File, Job
from sanitas.processing import run, sweeps
from sanitas.storage import make_storage
from tests.api.polling import wait_for
from tests.engine.encrypted_samples import MARKER, aes_zip, encrypted_docx
from tests.factories import auth_headers, make_user

PASSWORD = "Upl0ad-Secret-Ünïcode-§42"


def _rows_text(session) -> str:
    """Every column of every file and job row, as the database holds it."""
    session.expire_all()
    rows = []
    for table in ("files", "jobs"):
        rows += [repr(tuple(r)) for r in session.execute(text(f"SELECT * FROM {table}"))]  # noqa: S608 - fixed table names
    return "\n".join(rows)


def test_the_password_is_sealed_in_the_job_row_until_the_job_runs(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    answer = api.post("/api/upload/multiple", headers=h, data={"password": PASSWORD},
                      files=[("files", ("a.docx", encrypted_docx(PASSWORD))),
                             ("files", ("b.zip", aes_zip({"x.txt": b"x\n"}, PASSWORD)))])
    assert answer.status_code == 201, answer.text
    assert PASSWORD not in answer.text
    assert PASSWORD not in _rows_text(db_session)
    sealed = db_session.scalars(select(Job).order_by(Job.created_at)).all()
    assert len(sealed) == 2
    assert len({j.password_secret for j in sealed}) == 2  # a fresh nonce per job
    for job in sealed:
        assert job.password_secret.startswith(sealing.PREFIX)
        assert sealing.unseal(settings, job.id, job.password_secret) == PASSWORD
        # bound to its job: copied to another row it does not open
        other = next(j for j in sealed if j.id != job.id)
        with pytest.raises(sealing.SecretUnavailable):
            sealing.unseal(settings, other.id, job.password_secret)
    for item in answer.json()["data"]:
        status = api.get(f"/api/process/status/{item['fileId']}", headers=h)
        assert PASSWORD not in status.text and "password" not in status.text.lower()


def test_an_upload_without_password_stores_none(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    answer = api.post("/api/upload/single", headers=h, data={"password": ""},
                      files={"file": ("notes.txt", b"plain notes\n")})
    assert answer.status_code == 201
    assert db_session.scalar(select(Job.password_secret)) is None


def test_an_overlong_password_is_refused_without_echo(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    long_password = "p" * 1025
    answer = api.post("/api/upload/single", headers=h, data={"password": long_password},
                      files={"file": ("notes.txt", b"plain notes\n")})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_password"
    assert long_password not in answer.text
    assert db_session.scalar(select(Job.id)) is None
    accepted = api.post("/api/upload/single", headers=h, data={"password": "é" * 1024},
                        files={"file": ("notes.txt", b"plain notes\n")})
    assert accepted.status_code == 201, accepted.text


def test_encrypted_upload_completes_unencrypted_and_leaves_no_password(live, settings,
                                                                       db_session, caplog):
    caplog.set_level(logging.DEBUG)
    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    answer = live.post("/api/upload/single", headers=h, data={"password": PASSWORD},
                       files={"file": ("Figures.docx", encrypted_docx(PASSWORD))})
    assert answer.status_code == 201, answer.text
    data = wait_for(live, h, answer.json()["data"]["fileId"])
    file = data["file"]
    assert file["status"] == "COMPLETED", file["errorMessage"]
    assert file["detectedType"] == "docx" and file["sanitizedName"] == "sanitized_Figures.docx"
    assert any(f["kind"] == "encryption" and "not encrypted" in f["detail"]
               for f in file["report"]["findings"])
    download = live.get(f"/api/process/download/{file['id']}", headers=h)
    assert download.status_code == 200
    assert download.content.startswith(b"PK\x03\x04")  # a plain package, not an OLE file
    with zipfile.ZipFile(io.BytesIO(download.content)) as zf:
        assert MARKER in zf.read("word/document.xml").decode()
    assert db_session.scalar(select(Job.password_secret)) is None
    assert PASSWORD not in _rows_text(db_session)
    assert PASSWORD not in caplog.text
    assert PASSWORD not in (data.__repr__() + download.headers.__repr__())


def test_a_wrong_password_fails_with_the_reason_and_is_wiped(live, settings,
                                                             db_session, caplog):
    caplog.set_level(logging.DEBUG)
    user = make_user(db_session, role="USER")
    h = auth_headers(settings, db_session, user)
    wrong = "Wrong-Password-§9"
    answer = live.post("/api/upload/single", headers=h, data={"password": wrong},
                       files={"file": ("bundle.zip", aes_zip({"a.txt": b"a\n"}, PASSWORD))})
    data = wait_for(live, h, answer.json()["data"]["fileId"])
    file = data["file"]
    assert file["status"] == "FAILED" and file["errorCode"] == "wrong_password"
    assert "password given does not open" in file["errorMessage"]
    assert data["job"]["attempts"] == 1  # the file's fault: never retried
    assert db_session.scalar(select(Job.password_secret)) is None
    assert wrong not in _rows_text(db_session) and wrong not in caplog.text
    without = live.post("/api/upload/single", headers=h,
                        files={"file": ("bundle.zip", aes_zip({"a.txt": b"a\n"}, PASSWORD))})
    data = wait_for(live, h, without.json()["data"]["fileId"])
    assert data["file"]["errorCode"] == "encrypted"
    assert "with the password" in data["file"]["errorMessage"]


def test_a_password_sealed_under_another_key_fails_the_job_with_a_reason(api, settings,
                                                                         db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    answer = api.post("/api/upload/single", headers=h, data={"password": PASSWORD},
                      files={"file": ("Figures.docx", encrypted_docx(PASSWORD))})
    file_id = answer.json()["data"]["fileId"]
    job = db_session.scalar(select(Job).where(Job.file_id == file_id))
    other = settings.model_copy(update={"secret_key": "another-secret-key-" + "x" * 40})
    outcome = run.run_job(job.id, factory=make_sessionmaker(db_session.get_bind()),
                           settings=other, storage=make_storage(settings))
    assert outcome == "failed"
    db_session.expire_all()
    file, job = db_session.get(File, file_id), db_session.get(Job, job.id)
    assert file.status == "FAILED" and "secret key" in file.error_message
    assert job.password_secret is None


def test_expiry_wipes_a_waiting_jobs_password(api, settings, db_session):
    from datetime import timedelta

    from sanitas.db import utcnow

    h = auth_headers(settings, db_session, make_user(db_session))
    answer = api.post("/api/upload/single", headers=h, data={"password": PASSWORD},
                      files={"file": ("Figures.docx", encrypted_docx(PASSWORD))})
    file_id = answer.json()["data"]["fileId"]
    file = db_session.get(File, file_id)
    file.expires_at = utcnow() - timedelta(minutes=1)
    job = db_session.scalar(select(Job).where(Job.file_id == file_id))
    job.state = "failed"  # e.g. cleared from the queue view but still a row
    job.password_secret = sealing.seal(settings, job.id, PASSWORD)
    db_session.commit()
    assert sweeps.expire_files(make_sessionmaker(db_session.get_bind()),
                             make_storage(settings)) == 1
    db_session.expire_all()
    assert db_session.scalar(select(Job.password_secret)) is None
