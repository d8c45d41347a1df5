"""What an API key may reach: its owner's files and nothing more, whatever the owner's role.
Admin powers (other accounts' files, the admin calls) need an admin's signed-in session, so a
leaked key of an admin cannot read, change or delete anybody else's things. Every API route is
looked at: a file call acts as the key's owner, every other call that needs a caller refuses
the key."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from sanitas.models import File
from sanitas.web.deps import get_current_user, get_optional_user
from sanitas.web.openapi import _calls, api_routes
from tests.factories import TEXT, add_file, auth_headers, make_user

MISSING = "00000000-0000-0000-0000-000000000000"


def _key(client, headers) -> str:
    answer = client.post("/api/keys", headers=headers, json={"name": "ci"})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["secret"]


def _key_headers(secret: str) -> list[dict[str, str]]:
    return [{"X-API-Key": secret}, {"Authorization": f"Bearer {secret}"}]


@pytest.fixture
def admin_and_other(api, settings, db_session):
    admin = make_user(db_session, role="ADMIN")
    other = make_user(db_session, role="USER")
    session_headers = auth_headers(settings, db_session, admin)
    return {"admin": admin, "other": other, "session": session_headers,
            "secret": _key(api, session_headers),
            "mine": add_file(db_session, settings, admin, status="COMPLETED",
                             sanitized=b"%PDF-1.4 the admin's own"),
            "theirs": add_file(db_session, settings, other, status="COMPLETED",
                               sanitized=b"%PDF-1.4 someone else's secret")}


def test_an_admins_key_reads_only_its_owners_files(api, admin_and_other):
    a = admin_and_other
    theirs, mine = a["theirs"], a["mine"]
    for headers in _key_headers(a["secret"]):
        # Another account's files and history: as if they did not exist.
        missing = api.get(f"/api/process/status/{MISSING}", headers=headers)
        assert missing.status_code == 404
        for path in (f"/api/process/status/{theirs.id}", f"/api/process/download/{theirs.id}"):
            answer = api.get(path, headers=headers)
            assert answer.status_code == 404, (path, answer.text)
            assert answer.json() == missing.json()
            assert b"secret" not in answer.content
        history = api.get(f"/api/users/{a['other'].id}/files", headers=headers)
        assert history.status_code == 404, history.text
        assert history.json() == {"success": False, "message": "User not found",
                                  "error": "not_found"}
        # The key's owner's own files: as for any owner.
        assert api.get(f"/api/process/status/{mine.id}", headers=headers).status_code == 200
        download = api.get(f"/api/process/download/{mine.id}", headers=headers)
        assert download.status_code == 200 and download.content == b"%PDF-1.4 the admin's own"
        own = api.get(f"/api/users/{a['admin'].id}/files", headers=headers)
        assert own.status_code == 200 and own.json()["data"]["stats"]["total"] == 1
    # The same admin signed in keeps the admin's powers.
    session = a["session"]
    assert api.get(f"/api/process/status/{theirs.id}", headers=session).status_code == 200
    assert api.get(f"/api/process/download/{theirs.id}", headers=session).content == \
        b"%PDF-1.4 someone else's secret"
    assert api.get(f"/api/users/{a['other'].id}/files", headers=session).status_code == 200


def _kind(route) -> str:
    calls = set(_calls(route.dependant))
    if get_current_user in calls:
        return "account"  # the admin calls are among these (require_admin needs it)
    if any(getattr(c, "__qualname__", "").startswith("_file_caller.") for c in calls):
        return "file"
    if get_optional_user in calls:
        return "optional"
    return "public"


def _fill(path: str, a: dict) -> str:
    other, theirs = a["other"], a["theirs"]
    return (path.replace("{file_id}", theirs.id).replace("{user_id}", other.id)
            .replace("{path}", "x").replace("{rest}", "x").replace("{name}", "x")
            .replace("{report_id}", MISSING).replace("{policy_id}", MISSING)
            .replace("{webhook_id}", MISSING).replace("{key_id}", MISSING))


def test_every_route_gives_an_admins_key_no_admin_power(api, db_session, admin_and_other):
    """The matrix over every API route, with an admin-owned key aimed at another account: the
    calls that take a caller either refuse the key (401 api_key_not_accepted, the admin calls
    included) or are file calls acting on the key's owner alone."""
    a = admin_and_other
    kinds: dict[str, list[str]] = {"account": [], "file": [], "optional": [], "public": []}
    for route in api_routes(api.app):
        kind = _kind(route)
        for method in sorted(route.methods or ()):
            kinds[kind].append(f"{method} {route.path_format}")
            if kind == "account":
                path = _fill(route.path_format, a)
                for headers in _key_headers(a["secret"]):
                    answer = api.request(method, path, headers=headers, json={})
                    assert answer.status_code == 401, (method, path, answer.text)
                    assert answer.json()["error"] == "api_key_not_accepted", (method, path)
    # The admin calls are reached by a key nowhere (they all sit behind a session).
    assert {"GET /api/admin/files", "GET /api/users", "POST /api/process/queue/pause",
            "GET /api/audit", "GET /api/usage/analytics", "PUT /api/users/{user_id}",
            "DELETE /api/admin/files/{file_id}", "GET /api/reports", "POST /api/webhooks",
            "GET /api/policies/{policy_id}"} <= set(kinds["account"])
    # The file calls, each looked at with another account's ids.
    assert sorted(kinds["file"]) == [
        "GET /api/process/download/{file_id}", "GET /api/process/preview/{file_id}",
        "GET /api/process/status/{file_id}",
        "GET /api/upload/info", "GET /api/users/{user_id}/files",
        "POST /api/process/download-batch", "POST /api/upload/multiple",
        "POST /api/upload/single", "POST /api/v1/sanitize"]
    for headers in _key_headers(a["secret"]):
        for path in (f"/api/process/download/{a['theirs'].id}",
                     f"/api/process/preview/{a['theirs'].id}",
                     f"/api/process/status/{a['theirs'].id}",
                     f"/api/users/{a['other'].id}/files"):
            assert api.get(path, headers=headers).status_code == 404, path
        batch = api.post("/api/process/download-batch", headers=headers,
                         json={"fileIds": [a["theirs"].id]})
        assert batch.status_code == 404 and b"secret" not in batch.content
        assert api.get("/api/upload/info", headers=headers).status_code == 200
        upload = api.post("/api/upload/single", headers=headers,
                          files={"file": ("a.txt", TEXT)})
        assert upload.status_code == 201, upload.text
        file = db_session.scalar(select(File).where(File.id == upload.json()["data"]["fileId"]))
        assert file is not None and file.user_id == a["admin"].id
    # Only the contact form takes an optional caller: a key there is nobody's (anonymous).
    assert kinds["optional"] == ["POST /api/contact"]
