"""Squid in front of a local web server, adapting through `sanitas icap`: what a browser would
download (a macro document, a photo with its location) and upload comes out sanitized."""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Iterator

import httpx
import pytest
from oletools.olevba import VBA_Parser
from PIL import Image

from tests.icap.icapkit import (
    Squid,
    WebServer,
    form_parts,
    start_icap,
    start_squid,
    stop_icap,
    stop_squid,
)

GPS_IFD = 0x8825


@pytest.fixture(scope="module")
def proxy(tmp_path_factory, samples) -> Iterator[tuple[Squid, WebServer]]:
    site = tmp_path_factory.mktemp("site")
    for name in ("macro.docm", "photo.jpg", "clean.png", "tool.exe"):
        shutil.copy(samples[name], site / name)
    web = WebServer(site)
    icap = start_icap(tmp_path_factory.mktemp("icap-squid"))
    squid = None
    try:
        squid = start_squid(icap.port)
        yield squid, web
    finally:
        if squid is not None:
            stop_squid(squid)
        stop_icap(icap)
        web.close()


def _get(squid: Squid, url: str) -> httpx.Response:
    with httpx.Client(proxy=squid.proxy, timeout=60, trust_env=False) as http:
        return http.get(url)


def test_macro_document_downloaded_through_squid_is_sanitized(proxy):
    squid, web = proxy
    response = _get(squid, web.url("macro.docm"))
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = archive.namelist()
    assert "word/document.xml" in names
    assert not any("vbaproject" in n.lower() for n in names), names
    assert response.headers["content-length"] == str(len(response.content))
    assert response.headers["x-sanitas"].startswith("sanitized")


def test_photo_downloaded_through_squid_has_no_gps(proxy):
    squid, web = proxy
    response = _get(squid, web.url("photo.jpg"))
    assert response.status_code == 200
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "JPEG"
    assert not image.getexif().get_ifd(GPS_IFD)
    assert b"EVIL" not in response.content


def test_clean_picture_comes_through_unchanged(proxy, samples):
    squid, web = proxy
    response = _get(squid, web.url("clean.png"))
    assert response.status_code == 200
    assert response.content == samples["clean.png"].read_bytes()


def test_executable_download_gets_the_block_page(proxy):
    squid, web = proxy
    response = _get(squid, web.url("tool.exe"))
    assert response.status_code == 403
    assert response.headers["x-sanitas-code"] == "executable"
    assert "blocked" in response.text


def test_upload_through_squid_reaches_the_server_sanitized(proxy, samples):
    squid, web = proxy
    with httpx.Client(proxy=squid.proxy, timeout=60, trust_env=False) as http:
        response = http.put(web.url("upload/macro.docm"),
                            content=samples["macro.docm"].read_bytes(),
                            headers={"Content-Type": "application/octet-stream"})
    assert response.status_code == 200
    received = response.content  # the web server echoes the body it was given
    with zipfile.ZipFile(io.BytesIO(received)) as archive:
        assert not any("vbaproject" in n.lower() for n in archive.namelist())
    assert response.headers["x-received-type"] == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document")


def test_form_upload_through_squid_reaches_the_server_sanitized(proxy, samples):
    """A browser-style POST of a form (a text field, a macro document, a photo): the web
    server receives the same form with the document macro-free and the photo without GPS."""
    squid, web = proxy
    with httpx.Client(proxy=squid.proxy, timeout=60, trust_env=False) as http:
        response = http.post(web.url("forms/submit"), data={"title": "Quarterly report"},
                             files=[("document", ("macro.docm",
                                                  samples["macro.docm"].read_bytes(),
                                                  "application/vnd.ms-word.document."
                                                  "macroEnabled.12")),
                                    ("photo", ("photo.jpg", samples["photo.jpg"].read_bytes(),
                                               "image/jpeg"))])
    # The web server echoes the form back as application/octet-stream: a body the engine
    # cannot read with a ZIP (the document) inside, which RESPMOD blocks on the way back.
    assert response.status_code == 403
    assert response.headers["x-sanitas-code"] == "unsupported_archive"
    received = [r for r in web.received if r.path == "/forms/submit"]
    assert len(received) == 1
    got = received[0]
    content_type = got.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    boundary = content_type.split("boundary=", 1)[1]
    assert got.headers["content-length"] == str(len(got.body))
    title, document, photo = form_parts(got.body, boundary)
    assert title.data == b"Quarterly report"
    assert document.filename == "macro.docx"
    assert not VBA_Parser("macro.docx", data=document.data).detect_vba_macros()
    image = Image.open(io.BytesIO(photo.data))
    assert image.format == "JPEG" and not image.getexif().get_ifd(GPS_IFD)
