"""`sanitas icap` driven by Debian's c-icap-client: OPTIONS, RESPMOD and REQMOD, with and
without preview and Allow: 204, refused files, policies, encodings, size limits, auditing."""

from __future__ import annotations

import io
import zipfile

from PIL import Image
from sqlalchemy import select

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.models import File, FileStatus, User
from tests.factories import stored_policy
from tests.icap.icapkit import Icap, client, start_icap, stop_icap

GPS_IFD = 0x8825


def _zip_names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.namelist()


def _check_sanitized_docm(body: bytes | None) -> None:
    assert body is not None and body[:2] == b"PK"
    names = _zip_names(body)
    assert "word/document.xml" in names
    assert not any("vbaproject" in n.lower() for n in names), names


def test_options_advertise_methods_preview_204_and_istag(icap: Icap):
    basic = client(icap.port, "sanitize")
    assert basic.status == 200, basic.text
    assert set(basic.header("Methods").replace(" ", "").split(",")) == {"RESPMOD", "REQMOD"}
    assert basic.header("Allow") == "204"
    assert basic.header("Preview") == str(64 * 1024)
    istag = basic.header("ISTag")
    assert istag and istag.startswith('"') and istag.endswith('"') and len(istag) <= 32
    assert client(icap.port, "sanitize").header("ISTag") == istag  # stable
    advanced = client(icap.port, "sanitize-advanced")
    assert advanced.status == 200 and advanced.header("ISTag") != istag
    assert client(icap.port, "sanitize?policyId=advanced").header("ISTag") not in (istag, None)


def test_respmod_macro_document_comes_back_without_its_macros(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://files.example/macro.docm",
                    body=samples["macro.docm"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    _check_sanitized_docm(answer.body)
    assert answer.header("Content-Length") == str(len(answer.body or b""))
    assert answer.header("Content-Type") == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert 'filename="macro.docx"' in (answer.header("Content-Disposition") or "")
    assert (answer.header("X-Sanitas") or "").startswith("sanitized")


def test_respmod_photo_loses_its_gps_exif(icap: Icap, samples, tmp_path):
    original = Image.open(samples["photo.jpg"])
    assert original.getexif().get_ifd(GPS_IFD)  # the sample does carry a location
    answer = client(icap.port, "sanitize", "-resp", "http://files.example/photo.jpg",
                    body=samples["photo.jpg"], out=tmp_path / "out", timeout=60)
    assert answer.status == 200, answer.text
    assert answer.body is not None and b"EVIL" not in answer.body
    image = Image.open(io.BytesIO(answer.body))
    assert image.format == "JPEG"
    assert not image.getexif().get_ifd(GPS_IFD)
    assert answer.header("Content-Type") == "image/jpeg"


def test_clean_file_is_204_with_preview_and_without(icap: Icap, samples, tmp_path):
    with_preview = client(icap.port, "sanitize", "-resp", "http://x/clean.png",
                          body=samples["clean.png"], out=tmp_path / "a")
    assert with_preview.status == 204, with_preview.text
    no_preview = client(icap.port, "sanitize", "-resp", "http://x/clean.png", "-nopreview",
                        body=samples["clean.png"], out=tmp_path / "b")
    assert no_preview.status == 204, no_preview.text
    # -no204 allows 204 only in answer to a preview: the whole file fitted in it (ieof).
    in_preview = client(icap.port, "sanitize", "-resp", "http://x/clean.png", "-no204",
                        body=samples["clean.png"], out=tmp_path / "c")
    assert in_preview.status == 204, in_preview.text


def test_clean_file_echoed_unchanged_when_204_is_not_allowed(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/clean.png", "-nopreview",
                    "-no204", body=samples["clean.png"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    assert answer.body == samples["clean.png"].read_bytes()
    assert answer.header("X-Sanitas") == "clean"


def test_sanitized_without_preview_and_without_204(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/macro.docm", "-nopreview",
                    "-no204", body=samples["macro.docm"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    _check_sanitized_docm(answer.body)


def test_reqmod_upload_is_sanitized(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-req", "http://upload.example/in/macro.docm",
                    "-method", "POST", body=samples["macro.docm"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    assert "POST http://upload.example/in/macro.docm" in answer.text
    _check_sanitized_docm(answer.body)
    assert answer.header("Content-Length") == str(len(answer.body or b""))


def test_reqmod_clean_upload_passes(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-req", "http://upload.example/in/clean.png",
                    "-method", "PUT", body=samples["clean.png"], out=tmp_path / "out")
    assert answer.status == 204, answer.text


def test_executable_gets_a_block_page(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/tool.exe",
                    body=samples["tool.exe"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    assert "HTTP/1.1 403 Forbidden" in answer.text
    assert answer.header("X-Sanitas-Code") == "executable"
    page = (answer.body or b"").decode()
    assert page.startswith("<!DOCTYPE html>") and "not accepted" in page


def test_file_the_sandbox_refuses_gets_a_block_page_with_the_reason(icap: Icap, samples,
                                                                     tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/broken.pdf", "-nopreview",
                    body=samples["broken.pdf"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    assert "HTTP/1.1 403 Forbidden" in answer.text
    assert answer.header("X-Sanitas-Code") == "damaged"
    assert "damaged" in (answer.body or b"").decode().lower()


def test_unsupported_type_passes_through(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/font.woff2",
                    body=samples["font.woff2"], out=tmp_path / "a")
    assert answer.status == 204, answer.text
    assert "unsupported_type" in (answer.header("X-Sanitas") or "")
    echoed = client(icap.port, "sanitize", "-resp", "http://x/font.woff2", "-nopreview",
                    "-no204", body=samples["font.woff2"], out=tmp_path / "b")
    assert echoed.status == 200 and echoed.body == samples["font.woff2"].read_bytes()


def test_unknown_policy_is_an_icap_error_naming_it(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize?policyId=no-such-policy", "-resp", "http://x/a.docm",
                    body=samples["macro.docm"], out=tmp_path / "out")
    assert answer.status == 400, answer.text
    assert "unknown_policy" in answer.header("X-Sanitas-Error")
    assert "no-such-policy" in answer.header("X-Sanitas-Error")
    assert client(icap.port, "nowhere").status == 404


def test_advanced_service_and_policy_rebuild_as_pdf(icap: Icap, samples, tmp_path):
    for service in ("sanitize-advanced", "sanitize?policyId=advanced"):
        answer = client(icap.port, service, "-resp", "http://x/macro.docm",
                        body=samples["macro.docm"], out=tmp_path / "out", timeout=120)
        assert answer.status == 200, answer.text
        assert answer.header("Content-Type") == "application/pdf"
        assert (answer.body or b"").startswith(b"%PDF-")
        assert 'filename="macro.pdf"' in (answer.header("Content-Disposition") or "")
    # A clean picture is rebuilt from its pixels too in advanced mode: never "clean" there.
    answer = client(icap.port, "sanitize-advanced", "-resp", "http://x/clean.png",
                    body=samples["clean.png"], out=tmp_path / "png")
    assert answer.status == 200, answer.text
    assert (answer.header("X-Sanitas") or "").startswith("sanitized")


def test_gzip_body_is_decoded_and_sent_back_plain(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/macro.docm",
                    "-rhx", "Content-Encoding: gzip", body=samples["macro.docm.gz"],
                    out=tmp_path / "out")
    assert answer.status == 200, answer.text
    _check_sanitized_docm(answer.body)
    assert "Content-Encoding" not in answer.text.split("RESPMOD HEADERS")[-1]


def test_other_encodings_are_blocked_by_default(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://x/macro.docm",
                    "-rhx", "Content-Encoding: br", body=samples["macro.docm"],
                    out=tmp_path / "out")
    assert answer.header("X-Sanitas-Code") == "undecodable", answer.text


def test_oversize_pass_and_block(tmp_path, samples):
    big, small_size = samples["macro.docm"].stat().st_size, samples["photo.jpg"].stat().st_size
    assert small_size < big
    limit = (small_size + big) // 2
    passing = start_icap(tmp_path / "pass", icap_max_body_bytes=limit,
                         icap_oversize_action="pass")
    blocking = start_icap(tmp_path / "block", icap_max_body_bytes=limit)
    try:
        answer = client(passing.port, "sanitize", "-resp", "http://x/macro.docm",
                        body=samples["macro.docm"], out=tmp_path / "a")
        assert answer.status == 204 and "too_large" in answer.header("X-Sanitas"), answer.text
        # Without preview and 204 the body streams back as it came (past the limit).
        echoed = client(passing.port, "sanitize", "-resp", "http://x/macro.docm",
                        "-nopreview", "-no204", body=samples["macro.docm"],
                        out=tmp_path / "b")
        assert echoed.status == 200 and echoed.body == samples["macro.docm"].read_bytes()
        # A small file under the limit is still sanitized by the same server.
        small = client(passing.port, "sanitize", "-resp", "http://x/photo.jpg",
                       body=samples["photo.jpg"], out=tmp_path / "c")
        assert small.status == 200 and (small.header("X-Sanitas") or "").startswith(
            "sanitized")
        for extra in ((), ("-nopreview",)):
            blocked = client(blocking.port, "sanitize", "-resp", "http://x/macro.docm",
                             *extra, body=samples["macro.docm"], out=tmp_path / "d")
            assert blocked.header("X-Sanitas-Code") == "too_large", blocked.text
            assert "larger than" in (blocked.body or b"").decode()
    finally:
        stop_icap(passing)
        stop_icap(blocking)


def test_audit_records_each_transaction_for_the_service_account(tmp_path, samples):
    server = start_icap(tmp_path / "audit", icap_audit="1")
    try:
        assert client(server.port, "sanitize", "-resp", "http://x/macro.docm",
                      body=samples["macro.docm"], out=tmp_path / "a").status == 200
        assert client(server.port, "sanitize", "-resp", "http://x/tool.exe",
                      body=samples["tool.exe"], out=tmp_path / "b").status == 200
        assert client(server.port, "sanitize", "-resp", "http://x/clean.png",
                      body=samples["clean.png"], out=tmp_path / "c").status == 204
    finally:
        stop_icap(server)
    settings = Settings(data_dir=tmp_path / "audit")
    engine = make_engine(str(settings.database_url))
    try:
        with make_sessionmaker(engine)() as session:
            user = session.scalar(select(User).where(User.email == "icap@sanitas.local"))
            assert user is not None and user.role == "ENTERPRISE" and user.password_hash is None
            files = {f.original_name: f for f in session.scalars(
                select(File).where(File.user_id == user.id))}
    finally:
        engine.dispose()
    assert set(files) == {"macro.docm", "tool.exe", "clean.png"}
    docm = files["macro.docm"]
    assert docm.status == FileStatus.COMPLETED and docm.report["icap"]["outcome"] == "sanitized"
    assert any(f["kind"] for f in docm.report["findings"])
    assert docm.sha256_original and docm.original_key is None and docm.is_expired
    assert docm.policy_id == "basic"
    assert files["tool.exe"].status == FileStatus.FAILED
    assert files["tool.exe"].error_code == "executable"
    assert files["clean.png"].report["icap"]["outcome"] == "clean"
    stored = [p for p in (tmp_path / "audit" / "files").rglob("*") if p.is_file()] \
        if (tmp_path / "audit" / "files").exists() else []
    assert stored == []  # no bytes kept


def test_nothing_is_recorded_without_audit(icap: Icap, samples, tmp_path):
    client(icap.port, "sanitize", "-resp", "http://x/macro.docm", body=samples["macro.docm"],
           out=tmp_path / "out")
    settings = Settings(data_dir=icap.data_dir)
    engine = make_engine(str(settings.database_url))
    try:
        with make_sessionmaker(engine)() as session:
            assert session.scalars(select(File)).all() == []
            assert session.scalars(select(User)).all() == []
    finally:
        engine.dispose()
    leftovers = list((icap.data_dir / "tmp" / "jobs").iterdir())
    assert leftovers == []


def test_stored_organisation_policy_by_id(tmp_path, samples):
    """A policyId naming an organisation-wide policy: its rules apply (here: macros refused,
    so the document is blocked instead of cleaned)."""
    data = tmp_path / "policy"
    policy_id = stored_policy(data, "No macros", macros="refuse")
    server = start_icap(data)
    try:
        answer = client(server.port, f"sanitize?policyId={policy_id}", "-resp",
                        "http://x/macro.docm", body=samples["macro.docm"], out=tmp_path / "o")
        assert answer.header("X-Sanitas-Code") == "refused_macros", answer.text
        assert "macro" in (answer.body or b"").decode().lower()
        clean = client(server.port, f"sanitize?policyId={policy_id}", "-resp",
                       "http://x/clean.png", body=samples["clean.png"], out=tmp_path / "p")
        assert clean.status == 204
    finally:
        stop_icap(server)
