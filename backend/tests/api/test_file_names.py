"""File names: invisible format characters (bidirectional overrides and isolates, LRM/RLM,
zero-width spaces...) never reach the stored name, the download's name or its
Content-Disposition; the download is named by the engine's one naming rule."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from sanitas.db import make_sessionmaker
from sanitas.engine import safe_output_name, strip_invisible
from sanitas.files import naming
from sanitas.files.multipart import clean_filename
from sanitas.files.routes import content_disposition
from sanitas.models import File, Job
from sanitas.processing import run
from sanitas.storage import make_storage
from tests.factories import add_file, auth_headers, make_user, pdf_bytes

RLO_NAME = "invoice\u202efdp.exe.pdf"  # shows as "invoicefdp.exe.pdf" read backwards
INVISIBLE = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # embeddings, overrides
             "\u2066", "\u2067", "\u2068", "\u2069",  # isolates
             "\u200e", "\u200f", "\u061c",  # LRM, RLM, ALM
             "\u200b", "\u2060", "\ufeff", "\u00ad",  # zero-width space, word joiner, BOM, SHY
             "\u2028", "\u2029", "\U000e0041"]  # line/paragraph separators, a tag character


def _visible(text: str) -> bool:
    return not any(c in text for c in INVISIBLE)


@pytest.mark.parametrize("char", INVISIBLE)
def test_invisible_characters_are_stripped_everywhere(char):
    raw = f"re{char}port{char}.pdf"
    assert clean_filename(raw) == "report.pdf"
    assert safe_output_name(raw, "pdf") == "report.pdf"
    header = content_disposition(raw)
    assert header == "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"


def test_joiners_of_emoji_and_scripts_are_kept():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467.txt"  # one emoji glyph
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.pdf"  # ZWNJ is orthography
    for name in (family, persian):
        assert clean_filename(name) == name
        assert strip_invisible(name) == name


def test_override_name_unit_level():
    assert clean_filename(RLO_NAME) == "invoicefdp.exe.pdf"
    assert safe_output_name(RLO_NAME, "pdf") == "invoicefdp.exe.pdf"
    assert naming.sanitized_name_for(RLO_NAME, "pdf") == "sanitized_invoicefdp.exe.pdf"
    header = content_disposition("sanitized_" + RLO_NAME)
    assert _visible(unquote(header)) and "%E2%80%AE" not in header


@pytest.mark.parametrize("name,kind", [
    ("Plan (final).pdf", "pdf"), ("a:b*c?.docx", "docx"), ("  .hidden", "txt"),
    ("x" * 300 + ".pdf", "pdf"), ("no-extension", "png"), ("..\\..\\evil.pdf", "pdf"),
    ("multi.part.name.tar", "zip"), ("r\u00e9sum\u00e9 \u5c65\u6b74\u66f8.xlsx", "xlsx"),
])
def test_download_name_is_the_engines_name(name, kind):
    assert naming.sanitized_name_for(name, kind) == "sanitized_" + safe_output_name(name, kind)


def test_uploaded_override_name_is_stored_and_served_without_it(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    answer = api.post("/api/upload/single", headers=h,
                      files={"file": (RLO_NAME, pdf_bytes(), "application/pdf")})
    assert answer.status_code == 201, answer.text
    item = answer.json()["data"]
    assert item["originalName"] == "invoicefdp.exe.pdf"
    status = api.get(f"/api/process/status/{item['fileId']}", headers=h).json()["data"]
    assert status["file"]["originalName"] == "invoicefdp.exe.pdf"
    db_session.expire_all()
    assert db_session.get(File, item["fileId"]).original_name == "invoicefdp.exe.pdf"
    history = api.get(f"/api/users/{user.id}/files", headers=h).json()["data"]["files"]
    assert [f["originalName"] for f in history] == ["invoicefdp.exe.pdf"]


def test_content_disposition_of_a_name_stored_before_the_fix(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    file = add_file(db_session, settings, user, status="COMPLETED", name=RLO_NAME)
    assert file.sanitized_name == "sanitized_" + RLO_NAME  # an old row keeps its override
    answer = api.get(f"/api/process/download/{file.id}", headers=h)
    assert answer.status_code == 200
    disposition = answer.headers["content-disposition"]
    assert disposition == ("attachment; filename=\"sanitized_invoicefdp.exe.pdf\"; "
                           "filename*=UTF-8''sanitized_invoicefdp.exe.pdf")


def test_processed_file_is_named_by_the_engine(api, settings, db_session):
    """Upload, then the job (real engine and sandbox): the download's name is 'sanitized_'
    plus the engine's output name, with no override, in the status and the header."""
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    name = "Q3\u2067 report\u2069 \u200fdraft.pdf"
    item = api.post("/api/upload/single", headers=h,
                    files={"file": (name, pdf_bytes(), "application/pdf")}).json()["data"]
    db_session.expire_all()
    job = db_session.query(Job).filter(Job.file_id == item["fileId"]).one()
    outcome = run.run_job(job.id, factory=make_sessionmaker(db_session.get_bind()),
                           settings=settings, storage=make_storage(settings))
    assert outcome == "completed"
    status = api.get(f"/api/process/status/{item['fileId']}", headers=h).json()["data"]
    assert status["file"]["sanitizedName"] == "sanitized_Q3 report draft.pdf"
    assert status["file"]["sanitizedName"] == "sanitized_" + safe_output_name(name, "pdf")
    answer = api.get(f"/api/process/download/{item['fileId']}", headers=h)
    assert answer.status_code == 200
    assert answer.headers["content-disposition"] == (
        "attachment; filename=\"sanitized_Q3 report draft.pdf\"; "
        "filename*=UTF-8''sanitized_Q3%20report%20draft.pdf")
