"""GET /api/upload/info names the extensions refused whatever their content (executables and
scripts) with the reason, so the upload screen can say it before sending; an upload of such a
name is refused with that reason (415), and no refused name is also listed as supported."""

from __future__ import annotations

import pytest

from tests.factories import TEXT, auth_headers, make_user


def test_upload_info_lists_refused_names_with_their_reason(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session))
    info = api.get("/api/upload/info", headers=h).json()["data"]
    [refused] = info["refusedFormats"]
    assert refused["reason"] == "Executables and scripts are not accepted."
    assert {"exe", "ps1", "sh", "js", "bat"} <= set(refused["extensions"])
    assert refused["extensions"] == sorted(refused["extensions"])
    assert not set(refused["extensions"]) & set(info["supportedFormats"])


@pytest.mark.parametrize("ext", ["exe", "ps1", "sh"])
def test_a_listed_name_is_refused_by_the_upload(api, settings, db_session, ext):
    h = auth_headers(settings, db_session, make_user(db_session))
    listed = api.get("/api/upload/info", headers=h).json()["data"]["refusedFormats"][0]
    assert ext in listed["extensions"]
    # Harmless text content: the name alone is the reason.
    answer = api.post("/api/upload/single", headers=h, files={"file": (f"tool.{ext}", TEXT)})
    assert answer.status_code == 415, answer.text
    body = answer.json()
    assert body["error"] == "unsupported_type"
    assert "executables or scripts and are not accepted" in body["message"]
