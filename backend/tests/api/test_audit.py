"""The audit log: each security-relevant action leaves exactly its row (written with the change
itself), admins list, filter, page and export it, nobody else reads it, and no row ever holds
a password or a token."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from sanitas.audit.service import record
from sanitas.db import utcnow
from sanitas.models import AuditEntry, File, Job, User
from sanitas.models.audit import AuditLogIsAppendOnly
from tests.api.test_google import oidc as oidc
from tests.api.test_google import one_time_code, sign_in_at_provider
from tests.api.test_google import provider as provider  # with oidc: fixtures, used by name
from tests.factories import DEFAULT_PASSWORD, add_file, auth_headers, make_user
from tests.outbox import outbox_links, token_of

IP = "testclient"  # the peer address Starlette's test client reports


def last_id(session) -> int:
    return session.scalar(select(func.max(AuditEntry.id))) or 0


def rows_since(session, mark: int) -> list[dict]:
    """The rows written after `mark`, oldest first, as plain dicts (without id and time)."""
    session.expire_all()
    rows = session.scalars(select(AuditEntry).where(AuditEntry.id > mark)
                           .order_by(AuditEntry.id)).all()
    return [{"action": r.action, "actor_id": r.actor_id, "actor_email": r.actor_email,
             "target_type": r.target_type, "target_id": r.target_id, "ip": r.ip,
             "detail": r.detail} for r in rows]


def row(action, actor=None, target=None, detail=None, ip=IP) -> dict:
    return {"action": action, "actor_id": actor.id if actor else None,
            "actor_email": actor.email if actor else None,
            "target_type": target[0] if target else None,
            "target_id": target[1] if target else None, "ip": ip, "detail": detail}


def test_sign_ins_failures_and_sign_outs(api, db_session):
    user = make_user(db_session, email="alice@example.com")
    mark = last_id(db_session)
    ok = api.post("/api/auth/login", json={"email": "Alice@Example.com",
                                           "password": DEFAULT_PASSWORD})
    assert ok.status_code == 200
    assert rows_since(db_session, mark) == [
        row("auth.sign_in", user, detail={"method": "password"})]

    mark = last_id(db_session)
    wrong = api.post("/api/auth/login", json={"email": "alice@example.com", "password": "nope"})
    assert wrong.status_code == 401
    assert rows_since(db_session, mark) == [
        row("auth.sign_in_failed", target=("user", user.id),
            detail={"method": "password", "reason": "invalid_credentials",
                    "email": "alice@example.com"})]

    mark = last_id(db_session)
    unknown = api.post("/api/auth/login", json={"email": "hunter2-typed-here@example.com",
                                                "password": "x"})
    assert unknown.status_code == 401
    # An address that names no account is not kept.
    assert rows_since(db_session, mark) == [
        row("auth.sign_in_failed", detail={"method": "password",
                                           "reason": "invalid_credentials", "email": None})]

    inactive = make_user(db_session, active=False)
    mark = last_id(db_session)
    refused = api.post("/api/auth/login", json={"email": inactive.email,
                                                "password": DEFAULT_PASSWORD})
    assert refused.status_code == 403
    assert rows_since(db_session, mark) == [
        row("auth.sign_in_failed", target=("user", inactive.id),
            detail={"method": "password", "reason": "account_inactive",
                    "email": inactive.email})]

    mark = last_id(db_session)
    access = ok.json()["data"]["tokens"]["accessToken"]
    out = api.post("/api/auth/logout", headers={"Authorization": f"Bearer {access}"})
    assert out.status_code == 200
    assert rows_since(db_session, mark) == [row("auth.sign_out", user)]


def test_password_change_and_reset(api, db_session, settings):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    mark = last_id(db_session)
    wrong = api.put("/api/auth/password", headers=h,
                    json={"currentPassword": "not it", "newPassword": "brand new pass"})
    assert wrong.status_code == 400
    assert rows_since(db_session, mark) == []  # nothing changed, nothing recorded
    done = api.put("/api/auth/password", headers=h,
                   json={"currentPassword": DEFAULT_PASSWORD, "newPassword": "brand new pass"})
    assert done.status_code == 200
    assert rows_since(db_session, mark) == [
        row("auth.password_changed", user, target=("user", user.id))]

    api.post("/api/auth/forgot-password", json={"email": user.email})
    token = token_of(outbox_links(settings, "/reset-password")[0])
    mark = last_id(db_session)
    reset = api.post("/api/auth/reset-password", json={"token": token,
                                                       "password": "another new one"})
    assert reset.status_code == 200
    assert rows_since(db_session, mark) == [
        row("auth.password_reset", user, target=("user", user.id),
            detail={"method": "emailed link"})]


def test_role_activation_and_quota_changes(api, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    h = auth_headers(settings, db_session, admin)
    user = make_user(db_session)
    mark = last_id(db_session)
    answer = api.put(f"/api/users/{user.id}", headers=h, json={"role": "ENTERPRISE"})
    assert answer.status_code == 200
    assert rows_since(db_session, mark) == [
        row("user.role_changed", admin, target=("user", user.id),
            detail={"email": user.email, "from": "USER", "to": "ENTERPRISE"})]

    mark = last_id(db_session)
    api.put(f"/api/users/{user.id}", headers=h, json={"isActive": False})
    api.put(f"/api/users/{user.id}", headers=h, json={"isActive": False})  # no change
    api.put(f"/api/users/{user.id}", headers=h, json={"isActive": True})
    assert rows_since(db_session, mark) == [
        row("user.deactivated", admin, target=("user", user.id), detail={"email": user.email}),
        row("user.activated", admin, target=("user", user.id), detail={"email": user.email})]

    mark = last_id(db_session)
    refused = api.put(f"/api/users/{admin.id}", headers=h, json={"role": "USER"})
    assert refused.status_code == 409  # the last admin: nothing changed, nothing recorded
    assert rows_since(db_session, mark) == []

    mark = last_id(db_session)
    reset = api.post(f"/api/usage/reset-quota/{user.id}", headers=h)
    assert reset.status_code == 200
    assert rows_since(db_session, mark) == [
        row("user.quota_reset", admin, target=("user", user.id), detail={"email": user.email})]


def test_queue_control(api, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    h = auth_headers(settings, db_session, admin)
    owner = make_user(db_session)
    for status in ("COMPLETED", "COMPLETED", "FAILED"):
        add_file(db_session, settings, owner, status=status)
    mark = last_id(db_session)
    assert api.post("/api/process/queue/pause", headers=h).status_code == 200
    assert api.post("/api/process/queue/resume", headers=h).status_code == 200
    assert api.post("/api/process/queue/clear-completed", headers=h).status_code == 200
    assert api.post("/api/process/queue/clear-failed", headers=h).status_code == 200
    assert rows_since(db_session, mark) == [
        row("queue.paused", admin), row("queue.resumed", admin),
        row("queue.cleared", admin, detail={"state": "completed", "cleared": 2}),
        row("queue.cleared", admin, detail={"state": "failed", "cleared": 1})]


def test_admin_file_deletion(api, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    h = auth_headers(settings, db_session, admin)
    owner = make_user(db_session)
    file = add_file(db_session, settings, owner, status="COMPLETED", name="q3.pdf")
    file_id = file.id
    busy = add_file(db_session, settings, owner, status="PROCESSING")
    mark = last_id(db_session)
    assert api.delete(f"/api/admin/files/{busy.id}", headers=h).status_code == 409
    assert api.delete(f"/api/admin/files/{file.id}", headers=h).status_code == 200
    assert rows_since(db_session, mark) == [
        row("file.deleted", admin, target=("file", file_id),
            detail={"name": "q3.pdf", "ownerId": owner.id, "ownerEmail": owner.email,
                    "status": "COMPLETED"})]
    db_session.expire_all()
    assert db_session.get(File, file_id) is None
    assert db_session.scalar(select(func.count()).select_from(Job)
                             .where(Job.file_id == file_id)) == 0


def test_google_sign_in_and_failures(api, oidc, db_session):
    mark = last_id(db_session)
    code = one_time_code(sign_in_at_provider(api))
    assert api.post("/api/auth/google/exchange", json={"code": code}).status_code == 200
    user = db_session.scalar(select(User).where(User.google_sub.is_not(None)))
    assert rows_since(db_session, mark) == [
        row("auth.sign_in", user, detail={"method": "google"})]

    mark = last_id(db_session)
    assert api.post("/api/auth/google/exchange", json={"code": code}).status_code == 400
    assert rows_since(db_session, mark) == [
        row("auth.sign_in_failed", detail={"method": "google", "reason": "invalid_token",
                                           "email": None})]

    mark = last_id(db_session)
    declined = api.get("/api/auth/google/callback?error=access_denied&state=x",
                       follow_redirects=False)
    assert declined.status_code == 302
    [failed] = rows_since(db_session, mark)
    assert failed["action"] == "auth.sign_in_failed" and failed["actor_id"] is None
    assert failed["detail"]["method"] == "google"


def test_only_admins_read_or_export(api, db_session, settings):
    for role in ("GUEST", "USER", "ENTERPRISE"):
        h = auth_headers(settings, db_session, make_user(db_session, role=role))
        for path in ("/api/audit", "/api/audit/export"):
            answer = api.get(path, headers=h)
            assert answer.status_code == 403, (role, path)
            assert answer.json()["error"] == "forbidden"
    assert api.get("/api/audit").status_code == 401
    assert api.get("/api/audit/export").status_code == 401


def _seed(db_session):
    """Rows of several actions, actors and times (written as the services write them)."""
    a = make_user(db_session, role="ADMIN", email="root@example.com")
    b = make_user(db_session, email="=cmd|' /C calc'!A0@example.com")
    now = utcnow()
    entries = []
    for _ in range(7):
        entries.append(record(db_session, action="auth.sign_in", actor=b, ip="10.0.0.2",
                              detail={"method": "password"}))
    for _ in range(3):
        entries.append(record(db_session, action="user.role_changed", actor=a, ip="10.0.0.1",
                              target=("user", b.id), detail={"from": "USER", "to": "ADMIN"}))
    entries.append(record(db_session, action="queue.paused", actor=a, ip="@SUM(1+1)"))
    for i, e in enumerate(entries):  # spread over days (set before the rows are written)
        e.created_at = now - timedelta(days=len(entries) - 1 - i, minutes=1)
    db_session.commit()
    return a, b, now


def test_filters_and_paging(api, db_session, settings):
    a, b, now = _seed(db_session)
    h = auth_headers(settings, db_session, a)
    page1 = api.get("/api/audit", headers=h, params={"limit": 4}).json()["data"]
    assert page1["pagination"] == {"page": 1, "limit": 4, "total": 11, "pages": 3,
                                   "hasPrev": False, "hasNext": True}
    ids = [e["id"] for e in page1["entries"]]
    assert ids == sorted(ids, reverse=True)  # newest first
    assert page1["entries"][0]["action"] == "queue.paused"
    page3 = api.get("/api/audit", headers=h, params={"limit": 4, "page": 3}).json()["data"]
    assert len(page3["entries"]) == 3 and page3["pagination"]["hasNext"] is False

    def total(**params) -> int:
        answer = api.get("/api/audit", headers=h, params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]["pagination"]["total"]

    assert total(action="auth.sign_in") == 7
    assert total(action="user.role_changed") == 3
    assert total(userId=a.id) == 4  # what the admin did
    assert total(userId=b.id) == 10  # what b did, and the changes done to b
    assert total(userId=b.id, action="user.role_changed") == 3
    since = (now - timedelta(days=2, minutes=30)).isoformat()
    assert total(**{"from": since}) == 3
    assert total(to=since) == 8
    assert total(**{"from": since, "to": (now - timedelta(minutes=30)).isoformat()}) == 2
    assert api.get("/api/audit", headers=h,
                   params={"action": "no.such"}).status_code == 422
    entry = api.get("/api/audit", headers=h,
                    params={"action": "user.role_changed", "limit": 1}).json()["data"]
    assert entry["entries"][0] | {"id": 0, "createdAt": ""} == {
        "id": 0, "createdAt": "", "action": "user.role_changed", "actorId": a.id,
        "actorEmail": "root@example.com", "targetType": "user", "targetId": b.id,
        "ip": "10.0.0.1", "detail": {"from": "USER", "to": "ADMIN"}}


def test_export_rows_equal_the_api_and_formulas_are_neutralised(api, db_session, settings):
    a, b, _ = _seed(db_session)
    h = auth_headers(settings, db_session, a)
    for params in ({}, {"action": "auth.sign_in"}, {"userId": b.id}):
        export = api.get("/api/audit/export", headers=h, params=params)
        assert export.status_code == 200
        assert export.headers["content-type"].startswith("text/csv")
        assert "attachment" in export.headers["content-disposition"]
        listed = api.get("/api/audit", headers=h,
                         params=params | {"limit": 200}).json()["data"]["entries"]
        rows = list(csv.DictReader(io.StringIO(export.text)))
        # The export is itself recorded, so the listing made after it includes that row.
        assert [int(r["id"]) for r in rows] == [e["id"] for e in listed]
        for r, e in zip(rows, listed, strict=True):
            assert r["action"] == e["action"]
            assert r["actor_id"] == (e["actorId"] or "")
            assert r["target_id"] == (e["targetId"] or "")
            assert r["time"] == e["createdAt"]
            if e["actorEmail"] and e["actorEmail"].startswith("="):
                assert r["actor_email"] == "'" + e["actorEmail"]
            else:
                assert r["actor_email"] == (e["actorEmail"] or "")
            if e["ip"] == "@SUM(1+1)":
                assert r["ip"] == "'@SUM(1+1)"
            assert (json.loads(r["detail"]) if r["detail"] else None) == e["detail"]
    exported = api.get("/api/audit", headers=h,
                       params={"action": "audit.exported"}).json()["data"]["entries"]
    assert len(exported) == 3 and exported[0]["actorId"] == a.id
    assert exported[0]["detail"]["userId"] == b.id


def test_export_streams_more_than_one_batch(api, db_session, settings, monkeypatch):
    from sanitas.audit import routes

    monkeypatch.setattr(routes, "EXPORT_BATCH", 4)
    a, _, _ = _seed(db_session)
    h = auth_headers(settings, db_session, a)
    rows = list(csv.DictReader(io.StringIO(
        api.get("/api/audit/export", headers=h).text)))
    assert len(rows) == 12  # 11 seeded and the export's own
    assert [int(r["id"]) for r in rows] == sorted((int(r["id"]) for r in rows), reverse=True)


def test_no_secret_ever_reaches_a_row(api, db_session, settings):
    """Every hooked flow, then a look at every stored row for the passwords and tokens used."""
    admin = make_user(db_session, role="ADMIN")
    ah = auth_headers(settings, db_session, admin)
    user = make_user(db_session, email="bob@example.com")
    secrets = {DEFAULT_PASSWORD, "wrong password 1", "fresh password 2", "reset password 3"}
    login = api.post("/api/auth/login", json={"email": user.email, "password": DEFAULT_PASSWORD})
    tokens = login.json()["data"]["tokens"]
    secrets |= {tokens["accessToken"], tokens["refreshToken"]}
    api.post("/api/auth/login", json={"email": user.email, "password": "wrong password 1"})
    h = {"Authorization": f"Bearer {tokens['accessToken']}"}
    api.put("/api/auth/password", headers=h,
            json={"currentPassword": DEFAULT_PASSWORD, "newPassword": "fresh password 2"})
    api.post("/api/auth/forgot-password", json={"email": user.email})
    token = token_of(outbox_links(settings, "/reset-password")[0])
    secrets.add(token)
    api.post("/api/auth/reset-password", json={"token": token, "password": "reset password 3"})
    api.put(f"/api/users/{user.id}", headers=ah, json={"role": "ADMIN"})
    again = api.post("/api/auth/login", json={"email": user.email,
                                              "password": "reset password 3"})
    secrets.add(again.json()["data"]["tokens"]["refreshToken"])
    api.post("/api/auth/logout", json={"refreshToken": again.json()["data"]["tokens"][
        "refreshToken"]})
    db_session.expire_all()
    stored = db_session.scalars(select(AuditEntry)).all()
    assert {r.action for r in stored} >= {"auth.sign_in", "auth.sign_in_failed",
                                          "auth.password_changed", "auth.password_reset",
                                          "user.role_changed", "auth.sign_out"}
    dump = json.dumps([[r.actor_email, r.target_id, r.ip, r.detail] for r in stored])
    hashes = [u.password_hash for u in db_session.scalars(select(User)) if u.password_hash]
    for secret in [*secrets, *hashes]:
        assert secret not in dump
    export = api.get("/api/audit/export", headers=ah).text
    for secret in [*secrets, *hashes]:
        assert secret not in export


def test_rows_are_append_only_and_details_refuse_secret_names(db_session):
    user = make_user(db_session)
    entry = record(db_session, action="auth.sign_in", actor=user, ip="1.2.3.4")
    db_session.commit()
    entry.ip = "5.6.7.8"
    with pytest.raises(AuditLogIsAppendOnly):
        db_session.commit()
    db_session.rollback()
    db_session.delete(entry)
    with pytest.raises(AuditLogIsAppendOnly):
        db_session.commit()
    db_session.rollback()
    for key in ("password", "newPassword", "refreshToken", "clientSecret", "passwordHash"):
        with pytest.raises(ValueError, match="secret"):
            record(db_session, action="auth.sign_in", actor=user, ip=None,
                   detail={key: "x"})
    db_session.rollback()
    db_session.expire_all()
    assert db_session.scalar(select(AuditEntry.ip).where(AuditEntry.id == entry.id)) == \
        "1.2.3.4"


def test_policy_changes(api, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    h = auth_headers(settings, db_session, admin)
    mark = last_id(db_session)
    created = api.post("/api/policies", headers=h, json={
        "name": "Org links", "rules": {"hyperlinks": "remove"}, "scope": "organisation"})
    assert created.status_code == 201, created.text
    pid = created.json()["data"]["id"]
    org = {"name": "Org links", "scope": "organisation", "version": 1}
    assert rows_since(db_session, mark) == [
        row("policy.created", admin, target=("policy", pid), detail=org)]

    mark = last_id(db_session)
    assert api.put(f"/api/policies/{pid}", headers=h, json={
        "name": "Org links v2", "rules": {"hyperlinks": "keep"},
        "scope": "organisation"}).status_code == 200
    copy = api.post(f"/api/policies/{pid}/duplicate", headers=h)
    assert copy.status_code == 201
    copy_id = copy.json()["data"]["id"]
    assert api.put("/api/policies/defaults", headers=h,
                   json={"USER": pid, "GUEST": "basic"}).status_code == 200  # GUEST: no change
    refused = api.delete(f"/api/policies/{pid}", headers=h)
    assert refused.status_code == 409  # the USER default: nothing deleted, nothing recorded
    assert api.put("/api/policies/defaults", headers=h, json={"USER": None}).status_code == 200
    assert api.delete(f"/api/policies/{pid}", headers=h).status_code == 200
    assert rows_since(db_session, mark) == [
        row("policy.updated", admin, target=("policy", pid),
            detail={"name": "Org links v2", "scope": "organisation", "version": 2}),
        row("policy.created", admin, target=("policy", copy_id),
            detail={"name": "Copy of Org links v2", "scope": "personal", "version": 1,
                    "duplicatedFrom": pid}),
        row("policy.default_changed", admin, target=("policy", pid),
            detail={"role": "USER", "from": "basic", "to": pid}),
        row("policy.default_changed", admin, target=("policy", "basic"),
            detail={"role": "USER", "from": pid, "to": "basic"}),
        row("policy.deleted", admin, target=("policy", pid),
            detail={"name": "Org links v2", "scope": "organisation", "version": 2})]
