"""What passes unchanged (issue 19): a body the engine cannot read passes only when no signal
points to a type the engine handles, an archive, markup or an executable: the declared
Content-Type, the Content-Disposition name (filename and filename*), the URL path, magic
bytes after leading junk and a ZIP's end record at the end. Driven by c-icap-client, with a
preview (the default) and without."""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import pytest

from tests.icap.icapkit import (
    BOUNDARY,
    Answer,
    Icap,
    client,
    form_body,
    form_part,
    start_icap,
    stop_icap,
)

JUNK = bytes(range(16))  # binary: the engine's sniff cannot name it
SCRIPT_PAGE = b"<html><body><script>document.title='pwned'</script></body></html>"
PREVIEWS = [(), ("-nopreview",)]


def _respmod(icap: Icap, tmp_path: Path, data: bytes, *args: str,
             url: str = "http://files.example/download") -> Answer:
    body = tmp_path / "body"
    body.write_bytes(data)
    return client(icap.port, "sanitize", "-resp", url, *args, body=body, out=tmp_path / "out")


def _blocked(answer: Answer, code: str) -> str:
    assert answer.status == 200, answer.text
    assert "HTTP/1.1 403 Forbidden" in answer.text, answer.text
    assert answer.header("X-Sanitas-Code") == code, answer.text
    return (answer.body or b"").decode()


def _exe_zip() -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("setup.exe", b"MZ" + bytes(510))
    return data.getvalue()


@pytest.mark.parametrize("extra", PREVIEWS)
def test_junk_then_html_served_as_html_is_blocked(icap: Icap, tmp_path, extra):
    """The issue's first case: a browser renders text/html whatever bytes come first."""
    answer = _respmod(icap, tmp_path, b"\x80\x81\x82\x00" + SCRIPT_PAGE, *extra,
                      "-rhx", "Content-Type: text/html")
    page = _blocked(answer, "type_mismatch")
    assert "Content-Type text/html" in page and "markup" in page


@pytest.mark.parametrize("extra", PREVIEWS)
def test_zip_holding_an_exe_behind_junk_is_blocked(icap: Icap, tmp_path, extra):
    """The issue's second case: unzip and zipfile open a ZIP behind 16 junk bytes."""
    data = JUNK + _exe_zip()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:  # it does open
        assert archive.namelist() == ["setup.exe"]
    page = _blocked(_respmod(icap, tmp_path, data, *extra), "unsupported_archive")
    assert "ZIP archive" in page


@pytest.mark.parametrize("extra", PREVIEWS)
def test_zip_after_more_junk_than_the_sniff_reads_is_found_by_its_end_record(
        icap: Icap, tmp_path, extra):
    """100 KiB of junk first: only the end of central directory, at the end, shows the ZIP."""
    data = bytes(range(256)) * 400 + _exe_zip()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["setup.exe"]
    _blocked(_respmod(icap, tmp_path, data, *extra), "unsupported_archive")


def test_declared_html_with_a_binary_looking_start_is_blocked(icap: Icap, tmp_path):
    """No junk: the page itself in UTF-16 without a byte order mark, which the engine's sniff
    reads as binary data and a browser renders under charset=utf-16le."""
    data = SCRIPT_PAGE.decode().encode("utf-16-le")
    answer = _respmod(icap, tmp_path, data, "-rhx", "Content-Type: text/html; charset=utf-16le")
    _blocked(answer, "type_mismatch")


@pytest.mark.parametrize("disposition", [
    'attachment; filename="evil.html"',
    "attachment; filename=\"notes.bin\"; filename*=UTF-8''evil%2Ehtml"])
def test_polyglot_named_html_by_content_disposition_is_blocked(icap: Icap, tmp_path,
                                                                disposition):
    """A font-like binary start with a page after it, saved by the browser as evil.html
    (filename* wins over filename in browsers)."""
    data = b"wOF2\x00\x01\x00\x00" + bytes(range(64)) + SCRIPT_PAGE
    answer = _respmod(icap, tmp_path, data, "-rhx",
                      "Content-Type: application/octet-stream", "-rhx",
                      f"Content-Disposition: {disposition}")
    page = _blocked(answer, "type_mismatch")
    assert "evil.html" in page


@pytest.mark.parametrize("path", ["/static/app.js", "/get/setup.exe", "/x/launch.hta"])
def test_url_path_naming_a_script_or_program_blocks_an_unreadable_body(icap: Icap, tmp_path,
                                                                        path):
    """The Content-Disposition name is harmless; the URL's is not: both count."""
    answer = _respmod(icap, tmp_path, JUNK * 64, "-rhx",
                      "Content-Disposition: attachment; filename=\"data.bin\"",
                      url=f"http://files.example{path}")
    page = _blocked(answer, "executable")
    assert "URL path" in page


def test_true_unknown_binary_still_passes_unchanged(icap: Icap, tmp_path):
    """No signal at all (octet-stream, a name of no known type, no magic anywhere): it passes
    as SANITAS_ICAP_UNSUPPORTED_ACTION says (pass by default), once all of it was seen."""
    data = bytes(range(256)) * 400
    headers = ("-rhx", "Content-Type: application/octet-stream",
               "-rhx", "Content-Disposition: attachment; filename=\"data.bin\"")
    for extra in PREVIEWS:
        answer = _respmod(icap, tmp_path, data, *extra, *headers,
                          url="http://files.example/files/data.bin")
        assert answer.status == 204, answer.text
        assert answer.header("X-Sanitas") == "passed; unsupported_type"
    echoed = _respmod(icap, tmp_path, data, "-nopreview", "-no204", *headers)
    assert echoed.status == 200 and echoed.body == data, echoed.text


def test_text_served_as_html_goes_out_as_the_engines_text(icap: Icap, tmp_path):
    """Plain text (the engine's kind) with a script tag further down, served as text/html:
    clean as text, but a browser would render it as a page. The engine's copy replaces it,
    typed text/plain, instead of the original passing with 204."""
    data = b"Release notes\nSee below.\n<script>document.title='pwned'</script>\n"
    answer = _respmod(icap, tmp_path, data, "-rhx", "Content-Type: text/html",
                      url="http://files.example/notes")
    assert answer.status == 200, answer.text
    assert (answer.header("Content-Type") or "").startswith("text/plain"), answer.text
    assert (answer.header("X-Sanitas") or "").startswith("sanitized"), answer.text


def test_form_part_named_html_with_junk_first_blocks_the_upload(icap: Icap, tmp_path):
    """A form's file part is judged by its own Content-Type and filename the same way."""
    form = form_body(form_part("title", b"notes"),
                     form_part("file", JUNK + SCRIPT_PAGE, "evil.html",
                               "application/octet-stream"))
    (tmp_path / "form").write_bytes(form)
    answer = client(icap.port, "sanitize", "-req", "http://upload.example/forms/submit",
                    "-method", "POST", "-hx",
                    f"Content-Type: multipart/form-data; boundary={BOUNDARY}",
                    body=tmp_path / "form", out=tmp_path / "out")
    page = _blocked(answer, "type_mismatch")
    assert "evil.html" in page


def test_gzip_encoded_body_is_judged_after_decoding(icap: Icap, tmp_path):
    answer = _respmod(icap, tmp_path, gzip.compress(JUNK + _exe_zip()),
                      "-rhx", "Content-Encoding: gzip")
    _blocked(answer, "unsupported_archive")


def test_unsupported_action_block_still_blocks_the_true_unknown(tmp_path):
    """SANITAS_ICAP_UNSUPPORTED_ACTION=block keeps its meaning for bodies nothing points at."""
    server = start_icap(tmp_path / "strict", icap_unsupported_action="block")
    try:
        for extra in PREVIEWS:
            answer = _respmod(server, tmp_path, bytes(range(256)) * 40, *extra,
                              "-rhx", "Content-Type: application/octet-stream")
            page = _blocked(answer, "unsupported_type")
            assert "not recognised" in page
    finally:
        stop_icap(server)
