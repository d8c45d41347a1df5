"""Multipart fuzzing of the upload calls (hypothesis): malformed boundaries, part headers,
file names and bodies are answered with a clear refusal or accepted, never a server error,
and leave no temporary file behind.

`SANITAS_FUZZ_EXAMPLES` raises the number of generated bodies (`make fuzz` sets it high)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import EXE, TEXT, auth_headers, make_user, png_bytes

EXAMPLES = max(10, int(os.environ.get("SANITAS_FUZZ_EXAMPLES", "300")) // 6)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

BOUNDARIES = st.sampled_from([b"XyZ", b"----WebKitFormBoundary7MA4YWxkTrZu0gW", b"a" * 70,
                              b"a" * 200, b"", b"with space", b"\"quoted\"", b"--", b"\xff\xfe"])
NAMES = st.one_of(
    st.sampled_from(["report.pdf", "", "..", "../../etc/passwd", "a\"b.txt", "x\u202etxt.exe",
                     "con.txt", "a" * 600 + ".txt", "naïve résumé.txt", "nul\x00.txt",
                     "semi;colon.txt", "new\r\nline.txt", "tab\t.txt"]),
    st.text(max_size=40))
CONTENTS = st.one_of(st.sampled_from([TEXT, EXE, png_bytes(), b"", b"%PDF-1.7\n",
                                      b"<!--a-->" * 40 + b"x"]),
                     st.binary(max_size=512))
FIELDS = st.sampled_from(["file", "files", "mode", "", "file\x00", "FILE", "policyId",
                         "password", "policy\x00Id"])
# Values of the plain fields (mode, policyId, password): NUL bytes are refused with 422.
MODES = st.sampled_from([b"basic", b"advanced", b"custom", b"", b"\xff" * 10, b"b" * 5000,
                         b"a\x00b", b"\x00", b"basic\x00"])


@st.composite
def multipart_bodies(draw) -> tuple[bytes, bytes]:
    boundary = draw(BOUNDARIES)
    newline = draw(st.sampled_from([b"\r\n", b"\n"]))
    body = b""
    for _ in range(draw(st.integers(0, 3))):
        field = draw(FIELDS)
        headers = [b'Content-Disposition: form-data; name="' + field.encode("utf-8", "replace")
                   + b'"']
        if field in ("file", "files", "FILE") or draw(st.booleans()):
            name = draw(NAMES).encode("utf-8", "surrogateescape")
            headers[0] += b'; filename="' + name + b'"'
            if draw(st.booleans()):
                headers.append(b"Content-Type: " + draw(st.sampled_from(
                    [b"application/pdf", b"text/plain", b"x" * 300, b""])))
            content = draw(CONTENTS)
        else:
            content = draw(MODES)
        if draw(st.integers(0, 9)) == 0:
            headers.append(b"X-Junk: " + b"j" * draw(st.integers(0, 20000)))
        body += b"--" + boundary + newline + newline.join(headers) + newline + newline
        body += content + newline
    ending = draw(st.sampled_from([b"--" + boundary + b"--" + newline, b"--" + boundary,
                                   b"", b"--" + boundary + b"-", b"garbage"]))
    body += ending
    if draw(st.integers(0, 4)) == 0:  # cut anywhere
        body = body[:draw(st.integers(0, len(body)))]
    header_boundary = draw(st.sampled_from([boundary, boundary, b"other", b""]))
    content_type = b"multipart/form-data; boundary=" + header_boundary
    if draw(st.integers(0, 9)) == 0:
        content_type = draw(st.sampled_from([b"multipart/form-data", b"application/json",
                                             b"multipart/mixed; boundary=" + boundary]))
    return content_type, body


@pytest.fixture
def uploader(settings, db_session) -> dict[str, str]:
    """One ENTERPRISE user (no monthly quota) for all of a test's examples."""
    return auth_headers(settings, db_session, make_user(db_session, role="ENTERPRISE"))


@FUZZ
@given(case=multipart_bodies(), path=st.sampled_from(["/api/upload/single",
                                                      "/api/upload/multiple"]))
def test_fuzzed_multipart_is_never_a_server_error(api, settings, uploader, case, path):
    content_type, body = case
    answer = api.post(path, content=body,
                      headers={**uploader, "Content-Type": content_type})
    # 404: a policyId that names no policy.
    assert answer.status_code in (201, 400, 403, 404, 413, 415, 422), (answer.status_code,
                                                                       answer.text[:300])
    payload = answer.json()
    assert payload["success"] is (answer.status_code == 201)
    if answer.status_code != 201:
        assert payload["message"] and payload["error"]
        assert "Traceback" not in payload["message"]
    uploads = settings.data_dir / "tmp" / "uploads"
    leftovers = [p.name for p in uploads.rglob("*") if p.is_file()] if uploads.exists() else []
    assert leftovers == [], leftovers
