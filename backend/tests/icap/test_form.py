"""Form uploads (multipart/form-data) under REQMOD: each file part is sanitized in turn, the
fields pass as they are, the form comes back with the same boundary; a refused part blocks
the upload naming its file; malformed forms and forms past the bounds follow
SANITAS_ICAP_UNDECODABLE_ACTION. Driven by c-icap-client and, for the bounds, raw sockets."""

from __future__ import annotations

import gzip
import io
import socket
from pathlib import Path

from oletools.olevba import VBA_Parser
from PIL import Image
from sqlalchemy import select

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from sanitas.models import File, FileStatus, User
from tests.icap.icapkit import (
    BOUNDARY,
    Icap,
    client,
    form_body,
    form_part,
    form_parts,
    start_icap,
    stop_icap,
)

GPS_IFD = 0x8825
FORM_TYPE = f"Content-Type: multipart/form-data; boundary={BOUNDARY}"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TITLE = form_part("title", "Quarterly report \u2013 draft".encode())


def _post(port: int, body: Path, out: Path, *args: str, service: str = "sanitize"):
    return client(port, service, "-req", "http://upload.example/forms/submit", "-method",
                  "POST", "-hx", FORM_TYPE, *args, body=body, out=out)


def _hostile_form(samples) -> bytes:
    return form_body(
        TITLE,
        form_part("document", samples["macro.docm"].read_bytes(), "M\u00e4rz macro.docm",
                  "application/vnd.ms-word.document.macroEnabled.12"),
        form_part("photo", samples["photo.jpg"].read_bytes(), "photo.jpg", "image/jpeg"),
        form_part("extra", b"", "", "application/octet-stream"))  # an empty file input


def test_form_files_are_sanitized_and_fields_kept(icap: Icap, samples, tmp_path):
    sent = _hostile_form(samples)
    (tmp_path / "form").write_bytes(sent)
    answer = _post(icap.port, tmp_path / "form", tmp_path / "out")
    assert answer.status == 200, answer.text
    assert "POST http://upload.example/forms/submit" in answer.text
    assert (answer.header("X-Sanitas") or "").startswith("sanitized; parts=2"), answer.text
    body = answer.body or b""
    assert answer.header("Content-Length") == str(len(body))
    assert answer.header("Content-Type") == FORM_TYPE.split(": ", 1)[1]
    originals = form_parts(sent)
    title, document, photo, extra = form_parts(body)  # the same boundary, four parts
    assert title.raw == originals[0].raw and extra.raw == originals[3].raw
    # The macro document: a macro-free .docx under the new name (UTF-8, as browsers send
    # names) and type.
    assert document.filename == "M\u00e4rz macro.docx"
    assert document.headers["content-disposition"].startswith('form-data; name="document"')
    assert document.headers["content-type"] == DOCX
    assert document.data[:2] == b"PK" and document.data != originals[1].data
    assert VBA_Parser("macro.docm", data=originals[1].data).detect_vba_macros()
    assert not VBA_Parser("macro.docx", data=document.data).detect_vba_macros()
    # The photo: still photo.jpg, without its location.
    assert photo.filename == "photo.jpg" and photo.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(originals[2].data)).getexif().get_ifd(GPS_IFD)
    image = Image.open(io.BytesIO(photo.data))
    assert image.format == "JPEG" and not image.getexif().get_ifd(GPS_IFD)


def test_chunked_form_comes_back_with_a_length(icap: Icap, samples, tmp_path):
    (tmp_path / "form").write_bytes(_hostile_form(samples))
    answer = _post(icap.port, tmp_path / "form", tmp_path / "out", "-nopreview",
                   "-hx", "Transfer-Encoding: chunked")
    assert answer.status == 200, answer.text
    http_head = answer.text.split("POST http://upload.example", 1)[1]
    assert "Transfer-Encoding" not in http_head
    assert answer.header("Content-Length") == str(len(answer.body or b""))


def test_all_clean_form_is_204_or_echoed_unchanged(icap: Icap, samples, tmp_path):
    sent = form_body(TITLE,
                     form_part("picture", samples["clean.png"].read_bytes(), "clean.png",
                               "image/png"),
                     form_part("font", samples["font.woff2"].read_bytes(), "font.woff2",
                               "font/woff2"),  # a type the engine does not take: passes
                     form_part("extra", b"", "", "application/octet-stream"))
    (tmp_path / "form").write_bytes(sent)
    assert _post(icap.port, tmp_path / "form", tmp_path / "a").status == 204
    echoed = _post(icap.port, tmp_path / "form", tmp_path / "b", "-nopreview", "-no204")
    assert echoed.status == 200 and echoed.body == sent, echoed.text
    assert echoed.header("X-Sanitas") == "clean"


def test_a_refused_file_blocks_the_form_naming_it(icap: Icap, samples, tmp_path):
    for name, code in (("tool.exe", "executable"), ("broken.pdf", "damaged")):
        sent = form_body(TITLE,
                         form_part("picture", samples["clean.png"].read_bytes(), "clean.png"),
                         form_part("attachment", samples[name].read_bytes(), name,
                                   "application/octet-stream"))
        (tmp_path / "form").write_bytes(sent)
        answer = _post(icap.port, tmp_path / "form", tmp_path / "out")
        assert answer.status == 200, answer.text
        assert "HTTP/1.1 403 Forbidden" in answer.text
        assert answer.header("X-Sanitas-Code") == code
        page = (answer.body or b"").decode()
        assert f"&quot;{name}&quot;" in page and "blocked" in page, page


def test_malformed_forms_are_blocked_by_default_and_passed_with_the_setting(icap: Icap,
                                                                            samples, tmp_path):
    good = form_body(TITLE, form_part("photo", samples["photo.jpg"].read_bytes(),
                                      "photo.jpg", "image/jpeg"))
    (tmp_path / "truncated").write_bytes(good[:-200])
    (tmp_path / "garbage").write_bytes(b"this is not a form at all\r\n")
    cases = [("truncated", FORM_TYPE, "truncated"), ("garbage", FORM_TYPE, "malformed"),
             ("garbage", "Content-Type: multipart/form-data", "no boundary")]
    for name, content_type, words in cases:
        answer = client(icap.port, "sanitize", "-req", "http://upload.example/f", "-method",
                        "POST", "-hx", content_type, body=tmp_path / name,
                        out=tmp_path / "out")
        assert answer.header("X-Sanitas-Code") == "malformed_form", answer.text
        assert words in (answer.body or b"").decode(), answer.body
    # Other multipart types keep the old rule: not split, blocked as undecodable.
    mixed = client(icap.port, "sanitize", "-req", "http://upload.example/f", "-method", "POST",
                   "-hx", f"Content-Type: multipart/mixed; boundary={BOUNDARY}",
                   body=tmp_path / "garbage", out=tmp_path / "out")
    assert mixed.header("X-Sanitas-Code") == "multipart", mixed.text
    server = start_icap(tmp_path / "pass", icap_undecodable_action="pass")
    try:
        for name, content_type, _ in cases:
            passed = client(server.port, "sanitize", "-req", "http://upload.example/f",
                            "-method", "POST", "-hx", content_type, body=tmp_path / name,
                            out=tmp_path / "out")
            assert passed.status == 204, passed.text
            assert "malformed_form" in (passed.header("X-Sanitas") or "")
        echoed = client(server.port, "sanitize", "-req", "http://upload.example/f",
                        "-method", "POST", "-hx", FORM_TYPE, "-nopreview", "-no204",
                        body=tmp_path / "truncated", out=tmp_path / "out")
        assert echoed.status == 200 and echoed.body == good[:-200]
    finally:
        stop_icap(server)


def test_audit_has_one_row_per_file_part(tmp_path, samples):
    server = start_icap(tmp_path / "audit", icap_audit="1")
    try:
        (tmp_path / "form").write_bytes(_hostile_form(samples))
        assert _post(server.port, tmp_path / "form", tmp_path / "a").status == 200
        (tmp_path / "exe").write_bytes(form_body(
            TITLE, form_part("picture", samples["clean.png"].read_bytes(), "clean.png"),
            form_part("tool", samples["tool.exe"].read_bytes(), "tool.exe")))
        blocked = _post(server.port, tmp_path / "exe", tmp_path / "b")
        assert blocked.header("X-Sanitas-Code") == "executable", blocked.text
    finally:
        stop_icap(server)
    engine = make_engine(str(Settings(data_dir=tmp_path / "audit").database_url))
    try:
        with make_sessionmaker(engine)() as session:
            user = session.scalar(select(User).where(User.email == "icap@sanitas.local"))
            assert user is not None
            rows = session.scalars(select(File).where(File.user_id == user.id)
                                   .order_by(File.created_at)).all()
    finally:
        engine.dispose()
    by_name = {f.original_name: f for f in rows}
    assert sorted(f.original_name for f in rows) == [
        "M\u00e4rz macro.docm", "clean.png", "photo.jpg", "tool.exe"]  # no fields, no empty input
    docm = by_name["M\u00e4rz macro.docm"]
    assert docm.report["icap"]["outcome"] == "sanitized"
    assert docm.sanitized_name == "sanitized_M\u00e4rz macro.docx"
    assert docm.report["icap"]["url"] == "http://upload.example/forms/submit"
    assert docm.sha256_original and docm.original_size == samples["macro.docm"].stat().st_size
    assert by_name["photo.jpg"].report["icap"]["outcome"] == "sanitized"
    assert by_name["clean.png"].report["icap"]["outcome"] == "clean"
    assert by_name["tool.exe"].status == FileStatus.FAILED
    assert by_name["tool.exe"].error_code == "executable"


# -- bounds, over a raw socket -------------------------------------------------------------------
def _reqmod(body: bytes, content_type: str = FORM_TYPE.split(": ", 1)[1]) -> bytes:
    http = (f"POST /submit HTTP/1.1\r\nHost: upload.example\r\nContent-Type: {content_type}"
            f"\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    icap = (f"REQMOD icap://127.0.0.1/sanitize ICAP/1.0\r\nHost: 127.0.0.1\r\n"
            f"Allow: 204\r\nConnection: close\r\n"
            f"Encapsulated: req-hdr=0, req-body={len(http)}\r\n\r\n").encode()
    return icap + http + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"


def _exchange(icap: Icap, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", icap.port), timeout=60) as sock:
        sock.sendall(request)
        answer = b""
        while piece := sock.recv(65536):
            answer += piece
    return answer


def test_form_bounds_over_a_raw_socket(icap: Icap):
    field = form_part("n", b"1")
    at_limit = _exchange(icap, _reqmod(form_body(*[field] * 1000)))
    assert at_limit.startswith(b"ICAP/1.0 204"), at_limit[:300]  # fields only: nothing to do
    too_many = _exchange(icap, _reqmod(form_body(*[field] * 1001)))
    assert too_many.startswith(b"ICAP/1.0 200") and b"X-Sanitas-Code: too_many_parts" \
        in too_many, too_many[:600]
    assert b"more than 1000 parts" in too_many
    long_header = b"Content-Disposition: form-data; name=\"a\"\r\nX-Padding: " + \
        b"a" * 9000 + b"\r\n\r\nvalue"
    answer = _exchange(icap, _reqmod(form_body(long_header)))
    assert b"X-Sanitas-Code: malformed_form" in answer and b"header size" in answer
    many_headers = b"".join(b"X-H%d: v\r\n" % i for i in range(17)) + \
        b"Content-Disposition: form-data; name=\"a\"\r\n\r\nvalue"
    answer = _exchange(icap, _reqmod(form_body(many_headers)))
    assert b"X-Sanitas-Code: malformed_form" in answer and b"header count" in answer
    bad_boundary = _exchange(icap, _reqmod(b"x", "multipart/form-data; boundary=" + "b" * 71))
    assert b"X-Sanitas-Code: malformed_form" in bad_boundary
    assert b"boundary is not valid" in bad_boundary


def test_gzip_form_is_decoded_and_sent_back_plain(icap: Icap, samples, tmp_path):
    sent = _hostile_form(samples)
    (tmp_path / "form.gz").write_bytes(gzip.compress(sent))
    answer = _post(icap.port, tmp_path / "form.gz", tmp_path / "out", "-hx",
                   "Content-Encoding: gzip")
    assert answer.status == 200, answer.text
    assert "Content-Encoding" not in answer.text.split("POST http://upload.example", 1)[1]
    parts = form_parts(answer.body or b"")
    assert parts[0].raw == form_parts(sent)[0].raw
    assert parts[1].filename == "M\u00e4rz macro.docx"


def test_unsupported_part_blocks_the_form_when_the_setting_says_so(tmp_path, samples):
    server = start_icap(tmp_path / "strict", icap_unsupported_action="block")
    try:
        (tmp_path / "form").write_bytes(form_body(
            TITLE, form_part("font", samples["font.woff2"].read_bytes(), "font.woff2")))
        answer = _post(server.port, tmp_path / "form", tmp_path / "out")
        assert answer.header("X-Sanitas-Code") == "unsupported_type", answer.text
        assert "&quot;font.woff2&quot;" in (answer.body or b"").decode()
    finally:
        stop_icap(server)


def test_respmod_form_is_split_too_but_byteranges_are_not(icap: Icap, samples, tmp_path):
    (tmp_path / "form").write_bytes(_hostile_form(samples))
    answer = client(icap.port, "sanitize", "-resp", "http://files.example/form", "-rhx",
                    FORM_TYPE, body=tmp_path / "form", out=tmp_path / "out")
    assert answer.status == 200, answer.text
    assert (answer.header("X-Sanitas") or "").startswith("sanitized; parts=2")
    assert form_parts(answer.body or b"")[1].filename == "M\u00e4rz macro.docx"
    ranges = client(icap.port, "sanitize", "-resp", "http://files.example/form", "-rhx",
                    f"Content-Type: multipart/byteranges; boundary={BOUNDARY}",
                    body=tmp_path / "form", out=tmp_path / "out")
    assert ranges.header("X-Sanitas-Code") == "multipart", ranges.text
