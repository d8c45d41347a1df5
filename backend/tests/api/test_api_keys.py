"""API keys over HTTP: creating, listing and revoking them (own and, for admins, anyone's),
what a key may do (the file calls, by scope) and may not (account calls), the Free plan, expiry,
revocation and deactivation taking effect at once, the per-key rate limit (also across API
processes of a real `sanitas serve`), and the audit trail."""

from __future__ import annotations

import concurrent.futures
import hashlib
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select, text

from sanitas.db import utcnow
from sanitas.models import ApiKey, AuditEntry, User
from tests.api.polling import wait_for
from tests.executor.jobkit import server_env, start, stop, wait_http
from tests.factories import TEXT, auth_headers, make_user, pdf_bytes
from tests.live_server import free_port


def _create(client, headers, **body):
    answer = client.post("/api/keys", headers=headers, json={"name": "ci", **body})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


@pytest.fixture
def pro(settings, db_session):
    user = make_user(db_session, role="USER")
    return user, auth_headers(settings, db_session, user)


def test_create_list_and_the_secret_only_once(api, db_session, pro):
    headers = pro[1]
    data = _create(api, headers, name="  uploader  ")
    secret, key = data["secret"], data["key"]
    assert secret.startswith("sk_live_") and len(secret) == len("sk_live_") + 40
    assert secret[8:].isalnum()
    assert key["name"] == "uploader" and key["prefix"] == secret[:14]
    assert key["scopes"] == ["files:write", "files:read"]
    assert key["lastUsedAt"] is None and key["expiresAt"] is None
    listed = api.get("/api/keys", headers=headers).json()["data"]
    assert [k["id"] for k in listed] == [key["id"]]
    assert secret not in str(listed)
    # Only the hash is stored: no column of the row holds the secret.
    row = db_session.scalar(select(ApiKey).where(ApiKey.id == key["id"]))
    assert row.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    dump = db_session.execute(text("SELECT * FROM api_keys")).all()
    assert secret not in str(dump) and secret[14:] not in str(dump)
    # Two keys never share a secret.
    assert _create(api, headers)["secret"] != secret


@pytest.mark.parametrize(("body", "field"), [
    ({"name": ""}, "name"), ({"name": "x" * 101}, "name"),
    ({"name": "k", "scopes": ["admin"]}, "scopes"), ({"name": "k", "scopes": []}, "scopes"),
    ({"name": "k", "owner": "me"}, "owner"),
    ({"name": "k", "expiresAt": "not a date"}, "expiresAt"),
])
def test_validation(api, pro, body, field):
    answer = api.post("/api/keys", headers=pro[1], json=body)
    assert answer.status_code == 422, answer.text
    assert field in answer.json()["message"]


def test_expiry_must_be_in_the_future(api, pro):
    past = (utcnow() - timedelta(minutes=1)).isoformat()
    answer = api.post("/api/keys", headers=pro[1], json={"name": "k", "expiresAt": past})
    assert answer.status_code == 422 and "expiresAt" in answer.json()["message"]


def test_free_plan_has_no_keys(api, settings, db_session):
    guest = make_user(db_session, role="GUEST")
    answer = api.post("/api/keys", headers=auth_headers(settings, db_session, guest),
                      json={"name": "k"})
    assert answer.status_code == 403
    assert answer.json()["error"] == "plan_required" and "Pro plan" in answer.json()["message"]


@pytest.mark.parametrize("role", ["USER", "ENTERPRISE", "ADMIN"])
def test_paid_roles_have_keys(api, settings, db_session, role):
    user = make_user(db_session, role=role)
    _create(api, auth_headers(settings, db_session, user))


def test_a_key_works_on_the_file_calls(live, settings, db_session, pro):
    user, headers = pro
    secret = _create(live, headers)["secret"]
    for key_headers in ({"X-API-Key": secret}, {"Authorization": f"Bearer {secret}"}):
        upload = live.post("/api/upload/single", headers=key_headers,
                           files={"file": ("notes.txt", TEXT)})
        assert upload.status_code == 201, upload.text
        file_id = upload.json()["data"]["fileId"]
        assert wait_for(live, key_headers, file_id)["file"]["status"] == "COMPLETED"
        download = live.get(f"/api/process/download/{file_id}", headers=key_headers)
        assert download.status_code == 200 and b"Revenue" in download.content
    history = live.get(f"/api/users/{user.id}/files", headers={"X-API-Key": secret})
    assert history.status_code == 200 and history.json()["data"]["stats"]["total"] == 2
    assert live.get("/api/upload/info", headers={"X-API-Key": secret}).status_code == 200
    listed = live.get("/api/keys", headers=headers).json()["data"][0]
    assert listed["lastUsedAt"] is not None


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/auth/profile"), ("PUT", "/api/auth/password"), ("GET", "/api/keys"),
    ("POST", "/api/keys"), ("GET", "/api/users"), ("GET", "/api/policies"),
    ("GET", "/api/admin/files"),
])
def test_a_key_is_refused_on_account_calls(api, settings, db_session, method, path):
    admin = make_user(db_session, role="ADMIN")
    secret = _create(api, auth_headers(settings, db_session, admin))["secret"]
    for key_headers in ({"X-API-Key": secret}, {"Authorization": f"Bearer {secret}"}):
        answer = api.request(method, path, headers=key_headers, json={})
        assert answer.status_code == 401, (path, answer.text)
        assert answer.json()["error"] == "api_key_not_accepted"


def test_scopes(api, pro):
    headers = pro[1]
    reader = _create(api, headers, scopes=["files:read"])["secret"]
    writer = _create(api, headers, scopes=["files:write"])["secret"]
    refused = api.post("/api/upload/single", headers={"X-API-Key": reader},
                       files={"file": ("a.txt", TEXT)})
    assert refused.status_code == 403 and refused.json()["error"] == "insufficient_scope"
    assert "files:write" in refused.json()["message"]
    upload = api.post("/api/upload/single", headers={"X-API-Key": writer},
                      files={"file": ("a.txt", TEXT)})
    assert upload.status_code == 201
    file_id = upload.json()["data"]["fileId"]
    status = api.get(f"/api/process/status/{file_id}", headers={"X-API-Key": writer})
    assert status.status_code == 403 and status.json()["error"] == "insufficient_scope"
    assert api.get(f"/api/process/status/{file_id}",
                   headers={"X-API-Key": reader}).status_code == 200


def test_revoked_expired_unknown_deactivated_and_downgraded(api, db_session, pro):
    user, headers = pro
    keys = [_create(api, headers) for _ in range(3)]
    call = "/api/upload/info"
    assert api.get(call, headers={"X-API-Key": keys[0]["secret"]}).status_code == 200
    revoked = api.delete(f"/api/keys/{keys[0]['key']['id']}", headers=headers)
    assert revoked.status_code == 200 and revoked.json()["data"]["id"] == keys[0]["key"]["id"]
    answer = api.get(call, headers={"X-API-Key": keys[0]["secret"]})
    assert answer.status_code == 401 and answer.json()["error"] == "invalid_api_key"
    assert api.delete(f"/api/keys/{keys[0]['key']['id']}", headers=headers).status_code == 404
    assert [k["id"] for k in api.get("/api/keys", headers=headers).json()["data"]] == \
        [keys[2]["key"]["id"], keys[1]["key"]["id"]]
    unknown = api.get(call, headers={"X-API-Key": "sk_live_" + "A" * 40})
    assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_api_key"

    row = db_session.get(ApiKey, keys[1]["key"]["id"])
    row.expires_at = utcnow() - timedelta(seconds=1)
    db_session.commit()
    expired = api.get(call, headers={"X-API-Key": keys[1]["secret"]})
    assert expired.status_code == 401 and expired.json()["error"] == "api_key_expired"

    live_key = {"X-API-Key": keys[2]["secret"]}
    db_user = db_session.get(User, user.id)
    db_user.role = "GUEST"
    db_session.commit()
    downgraded = api.get(call, headers=live_key)
    assert downgraded.status_code == 403 and downgraded.json()["error"] == "plan_required"
    db_user.role, db_user.is_active = "USER", False
    db_session.commit()
    deactivated = api.get(call, headers=live_key)
    assert deactivated.status_code == 401
    assert deactivated.json()["error"] == "account_deactivated"
    db_user.is_active = True
    db_session.commit()
    assert api.get(call, headers=live_key).status_code == 200


def test_too_many_keys(api, pro):
    headers = pro[1]
    made = [_create(api, headers) for _ in range(25)]
    answer = api.post("/api/keys", headers=headers, json={"name": "one too many"})
    assert answer.status_code == 409 and answer.json()["error"] == "too_many_keys"
    api.delete(f"/api/keys/{made[0]['key']['id']}", headers=headers)
    assert api.post("/api/keys", headers=headers, json={"name": "room again"}).status_code == 201


def test_admins_list_and_revoke_anyones_keys(api, settings, db_session, pro):
    user, headers = pro
    key = _create(api, headers)
    admin = make_user(db_session, role="ADMIN")
    admin_headers = auth_headers(settings, db_session, admin)
    listed = api.get(f"/api/users/{user.id}/keys", headers=admin_headers)
    assert listed.status_code == 200 and [k["id"] for k in listed.json()["data"]] == \
        [key["key"]["id"]]
    assert api.get("/api/users/nobody/keys", headers=admin_headers).status_code == 404
    other = make_user(db_session, role="ENTERPRISE")
    other_headers = auth_headers(settings, db_session, other)
    assert api.get(f"/api/users/{user.id}/keys", headers=other_headers).status_code == 403
    assert api.delete(f"/api/keys/{key['key']['id']}", headers=other_headers).status_code == 404
    assert api.delete(f"/api/users/{other.id}/keys/{key['key']['id']}",
                      headers=admin_headers).status_code == 404  # not that user's key
    revoked = api.delete(f"/api/users/{user.id}/keys/{key['key']['id']}", headers=admin_headers)
    assert revoked.status_code == 200
    assert api.get("/api/upload/info", headers={"X-API-Key": key["secret"]}).status_code == 401
    rows = db_session.scalars(select(AuditEntry).where(AuditEntry.target_id == key["key"]["id"])
                              .order_by(AuditEntry.id)).all()
    assert [(r.action, r.actor_id) for r in rows] == [("api_key.created", user.id),
                                                      ("api_key.revoked", admin.id)]
    assert rows[0].detail["prefix"] == key["key"]["prefix"]
    assert key["secret"] not in str([r.detail for r in rows])


def test_rate_limit_per_key(api, settings, pro):
    settings.api_key_calls_per_minute = 3
    headers = pro[1]
    first, second = _create(api, headers)["secret"], _create(api, headers)["secret"]
    codes = [api.get("/api/upload/info", headers={"X-API-Key": first}).status_code
             for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = api.get("/api/upload/info", headers={"X-API-Key": first})
    assert limited.json()["error"] == "too_many_requests"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    # Per key: the other key of the same account is not limited.
    assert api.get("/api/upload/info", headers={"X-API-Key": second}).status_code == 200


@pytest.mark.slow
def test_rate_limit_holds_across_api_processes(settings, db_session, tmp_path):
    """Two API processes of a real server, many concurrent calls with one key: exactly the
    limit gets through."""
    user = make_user(db_session, role="ENTERPRISE")
    port = free_port()
    env = server_env(settings, SANITAS_PORT=port, SANITAS_API_WORKERS=2,
                     SANITAS_API_KEY_CALLS_PER_MINUTE=5)
    server = start(["serve"], env, tmp_path / "serve.log")
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/health")
        secret = httpx.post(f"{base}/api/keys", json={"name": "burst"}, timeout=30,
                            headers=auth_headers(settings, db_session, user)
                            ).json()["data"]["secret"]

        def call(_: int) -> int:
            return httpx.get(f"{base}/api/upload/info", headers={"X-API-Key": secret},
                             timeout=60).status_code

        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            codes = list(pool.map(call, range(12)))
        assert sorted(codes) == [200] * 5 + [429] * 7, codes
    finally:
        stop(server)


def test_openapi_declares_both_schemes(api):
    doc = api.get("/api/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    bearer = schemes["HTTPBearer"]
    assert bearer["type"] == "http" and bearer["scheme"] == "bearer"
    assert schemes["apiKey"] == {**schemes["apiKey"], "type": "apiKey", "in": "header",
                                 "name": "X-API-Key"}
    upload = doc["paths"]["/api/upload/single"]["post"]
    assert {"apiKey": []} in upload["security"] and {"HTTPBearer": []} in upload["security"]
    assert "403" in upload["responses"] and "429" in upload["responses"]
    profile = doc["paths"]["/api/auth/profile"]["get"]
    assert {"apiKey": []} not in profile.get("security", [])
    keys = doc["paths"]["/api/keys"]["post"]["responses"]
    assert {"201", "401", "403", "409", "422", "429"} <= set(keys)


def test_pdf_upload_with_a_key_counts_against_the_quota(api, settings, pro):
    headers = pro[1]
    settings.plans["USER"].limits = settings.plans["USER"].limits.model_copy(
        update={"uploads_per_month": 1})
    secret = _create(api, headers)["secret"]
    first = api.post("/api/upload/single", headers={"X-API-Key": secret},
                     files={"file": ("a.pdf", pdf_bytes())})
    assert first.status_code == 201
    second = api.post("/api/upload/single", headers={"X-API-Key": secret},
                      files={"file": ("b.pdf", pdf_bytes())})
    assert second.status_code == 403, second.text
