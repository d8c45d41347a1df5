"""Sessions, tokens and emailed links beyond the happy paths of test_auth.py."""

from __future__ import annotations

from datetime import timedelta

import jwt
from sqlalchemy import select

from sanitas.auth.tokens import create_access_token
from sanitas.db import utcnow
from sanitas.models import AuthSession, File
from tests.factories import DEFAULT_PASSWORD, auth_headers, make_user
from tests.outbox import outbox_links, token_of


def login(client, email, password=DEFAULT_PASSWORD):
    answer = client.post("/api/auth/login", json={"email": email, "password": password})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def bearer(data) -> dict[str, str]:
    return {"Authorization": f"Bearer {data['tokens']['accessToken']}"}


def profile(client, headers):
    return client.get("/api/auth/profile", headers=headers)


def test_invalid_expired_and_wrong_purpose_verification_tokens(client, db_session, settings):
    for token in ("nonsense", "x" * 43):
        answer = client.post("/api/auth/verify-email", json={"token": token})
        assert answer.status_code == 400
        assert answer.json()["message"] == "This verification link is invalid or has expired."
    assert client.post("/api/auth/verify-email", json={"token": ""}).status_code == 422
    # A password-reset token is not a verification token.
    make_user(db_session, email="mix@example.com", verified=False)
    client.post("/api/auth/forgot-password", json={"email": "mix@example.com"})
    reset_token = token_of(outbox_links(settings, "/reset-password")[0])
    assert client.post("/api/auth/verify-email", json={"token": reset_token}).status_code == 400
    # Expired.
    settings.email_verification_ttl_hours = 0
    client.post("/api/auth/register", json={"email": "late@example.com", "password": "secret1"})
    late = token_of(outbox_links(settings, "/verify-email")[-1])
    assert client.post("/api/auth/verify-email", json={"token": late}).status_code == 400


def test_resend_verification_sends_a_new_working_link(client, settings):
    registered = client.post("/api/auth/register", json={"email": "again@example.com",
                                                         "password": "secret1"}).json()["data"]
    assert client.post("/api/auth/resend-verification").status_code == 401
    resent = client.post("/api/auth/resend-verification", headers=bearer(registered))
    assert resent.status_code == 200
    assert resent.json()["message"] == "A new verification email has been sent."
    links = outbox_links(settings, "/verify-email")
    assert len(links) == 2 and links[0] != links[1]
    verified = client.post("/api/auth/verify-email", json={"token": token_of(links[1])})
    assert verified.status_code == 200 and verified.json()["data"]["isEmailVerified"] is True
    done = client.post("/api/auth/resend-verification", headers=bearer(registered))
    assert done.json()["message"] == "Your email address is already verified."
    assert len(outbox_links(settings, "/verify-email")) == 2


def test_password_reset_ends_every_session(client, db_session, settings):
    make_user(db_session, email="lost@example.com")
    phone, laptop = login(client, "lost@example.com"), login(client, "lost@example.com")
    client.post("/api/auth/forgot-password", json={"email": "lost@example.com"})
    token = token_of(outbox_links(settings, "/reset-password")[0])
    assert client.post("/api/auth/reset-password",
                       json={"token": token, "password": "fresh-password"}).status_code == 200
    for device in (phone, laptop):
        assert profile(client, bearer(device)).status_code == 401
        assert client.post("/api/auth/refresh", json={
            "refreshToken": device["tokens"]["refreshToken"]}).status_code == 401


def test_expired_refresh_token_is_refused(client, db_session):
    make_user(db_session, email="old@example.com")
    data = login(client, "old@example.com")
    db_session.execute(AuthSession.__table__.update().values(
        expires_at=utcnow() - timedelta(seconds=1)))
    db_session.commit()
    answer = client.post("/api/auth/refresh",
                         json={"refreshToken": data["tokens"]["refreshToken"]})
    assert answer.status_code == 401 and answer.json()["message"] == "Token refresh failed"


def test_expired_forged_and_wrong_kind_access_tokens_are_refused(client, db_session, settings):
    user = make_user(db_session)
    good = auth_headers(settings, db_session, user)
    assert profile(client, good).status_code == 200
    settings.access_token_ttl_seconds = -60
    family = db_session.scalar(select(AuthSession.family_id))
    expired = create_access_token(settings, user.id, family)
    assert profile(client, {"Authorization": f"Bearer {expired}"}).status_code == 401
    forged = jwt.encode({"sub": user.id, "sid": family, "type": "access",
                         "exp": utcnow() + timedelta(hours=1)}, "another-key-" * 4,
                        algorithm="HS256")
    assert profile(client, {"Authorization": f"Bearer {forged}"}).status_code == 401
    unsigned = jwt.encode({"sub": user.id, "sid": family, "type": "access",
                           "exp": utcnow() + timedelta(hours=1)}, None, algorithm="none")
    assert profile(client, {"Authorization": f"Bearer {unsigned}"}).status_code == 401
    assert profile(client, {"Authorization": "Bearer not.a.jwt"}).status_code == 401
    answer = profile(client, {"Authorization": "Basic abc"})
    assert answer.status_code == 401 and answer.json()["success"] is False


def test_rotation_keeps_the_session_and_counts_live_sessions(client, db_session):
    user = make_user(db_session, email="count@example.com")
    first = login(client, "count@example.com")
    second = login(client, "count@example.com")
    assert second["user"]["sessionCount"] == 2
    rotated = client.post("/api/auth/refresh",
                          json={"refreshToken": first["tokens"]["refreshToken"]}).json()["data"]
    assert rotated["user"]["sessionCount"] == 2  # rotation is not a new session
    assert profile(client, bearer(rotated)).status_code == 200
    assert profile(client, bearer(first)).status_code == 200  # same family, still live
    assert client.post("/api/auth/logout", headers=bearer(second)).status_code == 200
    assert profile(client, bearer(rotated)).json()["data"]["sessionCount"] == 1
    db_session.add(File(user_id=user.id, original_name="a.pdf", original_size=10,
                        expires_at=utcnow() + timedelta(hours=24)))
    db_session.commit()
    assert profile(client, bearer(rotated)).json()["data"]["fileCount"] == 1


def test_logout_with_only_the_refresh_token(client, db_session):
    make_user(db_session, email="out@example.com")
    data = login(client, "out@example.com")
    answer = client.post("/api/auth/logout",
                         json={"refreshToken": data["tokens"]["refreshToken"]})
    assert answer.status_code == 200 and answer.json()["message"] == "Logged out successfully"
    assert profile(client, bearer(data)).status_code == 401
    assert client.post("/api/auth/logout", json={"refreshToken": "unknown"}).status_code == 401


def test_a_deactivated_accounts_live_tokens_are_refused(client, db_session):
    """One check on every signed-in call: the account active and the token's session family
    live; a deactivated account's token stops working at once, and another's does not."""
    user = make_user(db_session, email="gone@example.com")
    make_user(db_session, email="stays@example.com")
    gone, stays = login(client, "gone@example.com"), login(client, "stays@example.com")
    assert profile(client, bearer(gone)).status_code == 200
    user.is_active = False
    db_session.commit()
    assert profile(client, bearer(gone)).status_code == 401
    assert profile(client, bearer(stays)).status_code == 200


def test_profile_updates_cannot_touch_role_email_or_flags(client, db_session, settings):
    user = make_user(db_session, email="me@example.com", verified=False)
    headers = auth_headers(settings, db_session, user)
    sneaky = {"role": "ADMIN", "email": "ceo@example.com", "isActive": True,
              "isEmailVerified": True, "firstName": "Me"}
    for path in ("/api/auth/profile", "/api/users/profile"):
        answer = client.put(path, json=sneaky, headers=headers)
        assert answer.status_code == 200
        data = answer.json()["data"]
        assert (data["role"], data["email"], data["isEmailVerified"], data["firstName"]) == \
            ("USER", "me@example.com", False, "Me")
    too_long = client.put("/api/auth/profile", json={"firstName": "x" * 101}, headers=headers)
    assert too_long.status_code == 422 and too_long.json()["success"] is False
    bad = client.put("/api/users/profile", json={"username": "a b"}, headers=headers)
    assert bad.status_code == 422
    cleared = client.put("/api/users/profile", json={"firstName": ""}, headers=headers)
    assert cleared.json()["data"]["firstName"] is None


def test_password_change_needs_a_session_and_all_fields(client, db_session, settings):
    user = make_user(db_session)
    headers = auth_headers(settings, db_session, user)
    assert client.put("/api/auth/password", json={"currentPassword": DEFAULT_PASSWORD,
                                                  "newPassword": "long-enough"}).status_code == 401
    missing = client.put("/api/auth/password", json={"newPassword": "long-enough"},
                         headers=headers)
    assert missing.status_code == 422
    wrong = client.put("/api/auth/password", headers=headers,
                       json={"currentPassword": "nope", "newPassword": "long-enough"})
    assert wrong.json() == {"success": False, "message": "Current password is incorrect",
                            "error": "wrong_password"}


def test_every_auth_users_contact_route_documents_its_answer(client):
    spec = client.get("/api/openapi.json").json()
    checked = 0
    for path, methods in spec["paths"].items():
        if not path.startswith(("/api/auth", "/api/users", "/api/contact")) \
                or path.endswith("/files"):  # file history belongs to the files module
            continue
        for method, op in methods.items():
            success = {code: r for code, r in op["responses"].items() if code.startswith("2")}
            if path in ("/api/auth/google", "/api/auth/google/callback"):
                assert "302" in op["responses"], path
                continue
            assert success, (method, path)
            for answer in success.values():
                schema = answer["content"]["application/json"]["schema"]
                assert "$ref" in schema, (method, path, schema)
            checked += 1
    assert checked >= 15


def test_a_used_reset_link_retires_the_others_and_verifies_the_address(client, db_session,
                                                                        settings):
    make_user(db_session, email="twice@example.com", verified=False)
    for _ in range(2):
        client.post("/api/auth/forgot-password", json={"email": "twice@example.com"})
    first, second = (token_of(link) for link in outbox_links(settings, "/reset-password"))
    assert client.post("/api/auth/reset-password",
                       json={"token": second, "password": "password-two"}).status_code == 200
    stale = client.post("/api/auth/reset-password",
                        json={"token": first, "password": "password-one"})
    assert stale.status_code == 400
    assert stale.json()["message"] == "This password reset link is invalid or has expired."
    data = login(client, "twice@example.com", "password-two")
    assert data["user"]["isEmailVerified"] is True


def test_a_password_change_retires_outstanding_reset_links(client, db_session, settings):
    """A reset link mailed before the change (perhaps to a mailbox an attacker reads) must
    not undo it; verification links keep working."""
    user = make_user(db_session, email="changer@example.com", verified=False)
    client.post("/api/auth/forgot-password", json={"email": "changer@example.com"})
    reset = token_of(outbox_links(settings, "/reset-password")[0])
    registered = login(client, "changer@example.com")
    assert client.post("/api/auth/resend-verification",
                       headers=bearer(registered)).status_code == 200
    verify = token_of(outbox_links(settings, "/verify-email")[0])
    changed = client.put("/api/auth/password", headers=auth_headers(settings, db_session, user),
                         json={"currentPassword": DEFAULT_PASSWORD,
                               "newPassword": "changed-password"})
    assert changed.status_code == 200
    stale = client.post("/api/auth/reset-password",
                        json={"token": reset, "password": "attacker-password"})
    assert stale.status_code == 400
    assert stale.json()["message"] == "This password reset link is invalid or has expired."
    assert login(client, "changer@example.com", "changed-password")
    assert client.post("/api/auth/verify-email", json={"token": verify}).status_code == 200
    # A link asked for after the change works as usual.
    client.post("/api/auth/forgot-password", json={"email": "changer@example.com"})
    fresh = token_of(outbox_links(settings, "/reset-password")[-1])
    assert client.post("/api/auth/reset-password",
                       json={"token": fresh, "password": "newest-password"}).status_code == 200
