"""/api/auth/*: each call's success and each failure the README (Accounts and sign-in) and
docs/product-rules.md describe, on SQLite and PostgreSQL."""

from __future__ import annotations

import time

from tests.factories import DEFAULT_PASSWORD, auth_headers, make_user
from tests.outbox import outbox_links, token_of


def register(client, email="ada@example.com", password="secret1", **extra):
    return client.post("/api/auth/register", json={"email": email, "password": password, **extra})


def login(client, email, password=DEFAULT_PASSWORD):
    return client.post("/api/auth/login", json={"email": email, "password": password})


def bearer(answer) -> dict[str, str]:
    return {"Authorization": f"Bearer {answer.json()['data']['tokens']['accessToken']}"}


def test_register_answers_user_and_tokens_and_sends_verification(client, settings):
    answer = register(client, firstName="Ada", lastName="Lovelace", username="ada")
    assert answer.status_code == 201
    body = answer.json()
    assert body["success"] is True
    assert body["message"] == ("Registration successful! Please check your email to verify "
                               "your account.")
    user = body["data"]["user"]
    assert (user["email"], user["firstName"], user["role"]) == ("ada@example.com", "Ada", "USER")
    assert user["isEmailVerified"] is False
    assert "passwordHash" not in user and "password_hash" not in user
    tokens = body["data"]["tokens"]
    assert tokens["expiresIn"] == settings.access_token_ttl_seconds
    assert len(outbox_links(settings, "/verify-email")) == 1


def test_register_validates_on_the_server(client):
    bad_email = register(client, email="not-an-email")
    assert bad_email.status_code == 422
    assert bad_email.json() == {"success": False, "message": "Please enter a valid email address",
                                "error": "validation_error", "fields": [
                                    {"field": "email", "code": "invalid",
                                     "message": "Please enter a valid email address"}]}
    short = register(client, password="12345")
    assert short.status_code == 422 and short.json()["success"] is False
    assert short.json()["message"] == "Password must be at least 6 characters long"
    bad_name = register(client, username="no spaces!")
    assert bad_name.status_code == 422 and "Username" in bad_name.json()["message"]
    assert register(client, email="").status_code == 422
    assert register(client).status_code == 201
    dup = register(client, email="ADA@example.com")
    assert dup.status_code == 409
    assert dup.json()["message"] == "An account with this email already exists"
    assert register(client, email="b@example.com", username="x12").status_code == 201
    taken = register(client, email="c@example.com", username="X12")
    assert taken.status_code == 409 and taken.json()["message"] == "This username is already taken"


def test_verify_email_with_the_emailed_link_flips_the_flag_once(client, settings):
    answer = register(client)
    token = token_of(outbox_links(settings, "/verify-email")[0])
    verified = client.post("/api/auth/verify-email", json={"token": token})
    assert verified.status_code == 200 and verified.json()["data"]["isEmailVerified"] is True
    again = client.post("/api/auth/verify-email", json={"token": token})
    assert again.status_code == 400
    profile = client.get("/api/auth/profile", headers=bearer(answer))
    assert profile.json()["data"]["isEmailVerified"] is True


def test_login_success_and_failures(client, db_session):
    user = make_user(db_session, email="grace@example.com")
    ok = login(client, "Grace@Example.com ")
    assert ok.status_code == 200 and ok.json()["message"] == "Login successful!"
    assert ok.json()["data"]["user"]["lastLogin"] is not None
    wrong = login(client, user.email, "nope-nope")
    unknown = login(client, "nobody@example.com")
    for answer in (wrong, unknown):
        assert answer.status_code == 401
        assert answer.json() == {"success": False, "message": "Invalid email or password",
                                 "error": "invalid_credentials"}
    assert client.post("/api/auth/login", json={"email": "", "password": ""}).status_code == 422


def test_login_takes_the_same_time_whether_or_not_the_email_exists(client, db_session):
    make_user(db_session, email="known@example.com")

    def timed(email):
        start = time.perf_counter()
        login(client, email, "wrong-password")
        return time.perf_counter() - start

    known = min(timed("known@example.com") for _ in range(3))
    unknown = min(timed("unknown@example.com") for _ in range(3))
    # Both verify an argon2 hash; without the dummy hash 'unknown' would be ~100x faster.
    assert unknown > known * 0.5


def test_refresh_rotates_and_reuse_revokes_the_family(client, db_session):
    make_user(db_session, email="r@example.com")
    first = login(client, "r@example.com").json()["data"]["tokens"]
    rotated = client.post("/api/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert rotated.status_code == 200
    second = rotated.json()["data"]["tokens"]
    assert second["refreshToken"] != first["refreshToken"]
    assert rotated.json()["data"]["user"]["email"] == "r@example.com"
    # The spent token comes back: treat as stolen, revoke the whole family.
    reuse = client.post("/api/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert reuse.status_code == 401 and reuse.json()["message"] == "Token refresh failed"
    assert client.post("/api/auth/refresh",
                       json={"refreshToken": second["refreshToken"]}).status_code == 401
    headers = {"Authorization": f"Bearer {second['accessToken']}"}
    assert client.get("/api/auth/profile", headers=headers).status_code == 401


def test_refresh_with_garbage_is_401(client):
    answer = client.post("/api/auth/refresh", json={"refreshToken": "garbage"})
    assert answer.status_code == 401


def test_logout_revokes_the_session(client, db_session):
    make_user(db_session, email="l@example.com")
    answer = login(client, "l@example.com")
    refresh_token = answer.json()["data"]["tokens"]["refreshToken"]
    assert client.post("/api/auth/logout", headers=bearer(answer)).status_code == 200
    assert client.get("/api/auth/profile", headers=bearer(answer)).status_code == 401
    assert client.post("/api/auth/refresh",
                       json={"refreshToken": refresh_token}).status_code == 401
    assert client.post("/api/auth/logout").status_code == 401


def test_deactivated_user_cannot_login_or_refresh_and_live_tokens_stop(client, db_session,
                                                                       settings):
    admin = make_user(db_session, role="ADMIN")
    user = make_user(db_session, email="d@example.com")
    session_answer = login(client, "d@example.com")
    refresh_token = session_answer.json()["data"]["tokens"]["refreshToken"]
    off = client.put(f"/api/users/{user.id}", json={"isActive": False},
                     headers=auth_headers(settings, db_session, admin))
    assert off.status_code == 200 and off.json()["message"] == "User deactivated successfully"
    assert client.get("/api/auth/profile", headers=bearer(session_answer)).status_code == 401
    assert client.post("/api/auth/refresh",
                       json={"refreshToken": refresh_token}).status_code == 401
    denied = login(client, "d@example.com")
    assert denied.status_code == 403


def test_profile_read_and_update_sends_only_names(client, db_session, settings):
    user = make_user(db_session, first_name="Old", last_name="Name")
    headers = auth_headers(settings, db_session, user)
    assert client.get("/api/auth/profile").status_code == 401
    got = client.get("/api/auth/profile", headers=headers).json()["data"]
    assert (got["id"], got["firstName"], got["fileCount"], got["sessionCount"]) == \
        (user.id, "Old", 0, 1)
    updated = client.put("/api/auth/profile", json={"firstName": "New"}, headers=headers)
    assert updated.status_code == 200
    data = updated.json()["data"]
    assert (data["firstName"], data["lastName"], data["email"]) == ("New", "Name", user.email)
    # users/profile also takes a username
    other = make_user(db_session, username="taken")
    answer = client.put("/api/users/profile", json={"username": "taken"}, headers=headers)
    assert answer.status_code == 409 and other.username == "taken"
    answer = client.put("/api/users/profile", json={"username": "mine", "lastName": "L"},
                        headers=headers)
    assert answer.json()["message"] == "Profile updated successfully"
    assert (answer.json()["data"]["username"], answer.json()["data"]["lastName"]) == ("mine", "L")


def test_password_change_rules(client, db_session, settings):
    user = make_user(db_session, email="p@example.com")
    other_device = login(client, "p@example.com")
    headers = auth_headers(settings, db_session, user)
    wrong = client.put("/api/auth/password", headers=headers,
                       json={"currentPassword": "wrong", "newPassword": "long-enough"})
    assert wrong.status_code == 400
    short = client.put("/api/auth/password", headers=headers,
                       json={"currentPassword": DEFAULT_PASSWORD, "newPassword": "short"})
    assert short.status_code == 422
    assert short.json()["message"] == "New password must be at least 8 characters"
    good = client.put("/api/auth/password", headers=headers,
                      json={"currentPassword": DEFAULT_PASSWORD, "newPassword": "new-password"})
    assert good.status_code == 200 and good.json()["message"] == "Password updated successfully"
    assert client.get("/api/auth/profile", headers=headers).status_code == 200  # this session
    assert client.get("/api/auth/profile", headers=bearer(other_device)).status_code == 401
    assert login(client, "p@example.com").status_code == 401
    assert login(client, "p@example.com", "new-password").status_code == 200


def test_forgot_and_reset_password_with_a_single_use_link(client, db_session, settings):
    make_user(db_session, email="f@example.com")
    known = client.post("/api/auth/forgot-password", json={"email": "f@example.com"})
    unknown = client.post("/api/auth/forgot-password", json={"email": "zz@example.com"})
    assert known.status_code == unknown.status_code == 200
    assert known.json() == unknown.json()  # no account enumeration
    links = outbox_links(settings, "/reset-password")
    assert len(links) == 1
    token = token_of(links[0])
    short = client.post("/api/auth/reset-password", json={"token": token, "password": "short"})
    assert short.status_code == 422
    done = client.post("/api/auth/reset-password",
                       json={"token": token, "password": "brand-new-pw"})
    assert done.status_code == 200
    assert login(client, "f@example.com", "brand-new-pw").status_code == 200
    reused = client.post("/api/auth/reset-password",
                         json={"token": token, "password": "another-pw"})
    assert reused.status_code == 400


def test_expired_reset_link_is_refused(client, db_session, settings):
    settings.password_reset_ttl_minutes = 0
    make_user(db_session, email="e@example.com")
    client.post("/api/auth/forgot-password", json={"email": "e@example.com"})
    token = token_of(outbox_links(settings, "/reset-password")[0])
    answer = client.post("/api/auth/reset-password", json={"token": token, "password": "whatever1"})
    assert answer.status_code == 400
    assert "expired" in answer.json()["message"]


def test_login_is_rate_limited_per_account_with_retry_after(client, db_session, settings):
    settings.rate_limit_login_per_account = 3
    make_user(db_session, email="rl@example.com")
    for _ in range(3):
        assert login(client, "rl@example.com", "bad-password").status_code == 401
    limited = login(client, "rl@example.com")  # even the right password waits now
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    assert limited.json()["error"] == "too_many_requests"


def test_registration_and_reset_requests_are_rate_limited_per_ip(client, settings):
    settings.rate_limit_register_per_ip = 2
    settings.rate_limit_reset_per_ip = 2
    assert register(client, email="a1@example.com").status_code == 201
    assert register(client, email="a2@example.com").status_code == 201
    assert register(client, email="a3@example.com").status_code == 429
    for _ in range(2):
        client.post("/api/auth/forgot-password", json={"email": "a1@example.com"})
    assert client.post("/api/auth/forgot-password",
                       json={"email": "a1@example.com"}).status_code == 429
