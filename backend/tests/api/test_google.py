"""Google sign-in (OpenID Connect) end to end, against a real OIDC provider on loopback."""

from __future__ import annotations

import unicodedata
from datetime import timedelta
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import pytest
from sqlalchemy import select, update

from sanitas.auth import google
from sanitas.db import utcnow
from sanitas.models import EmailToken, User
from tests.api.oidc_provider import CLIENT_ID, CLIENT_SECRET, LoopbackOIDC
from tests.factories import DEFAULT_PASSWORD, make_user


@pytest.fixture(scope="module")
def provider():
    p = LoopbackOIDC().start()
    yield p
    p.stop()


@pytest.fixture
def oidc(provider, settings):
    provider.reset()
    settings.google_client_id = CLIENT_ID
    settings.google_client_secret = CLIENT_SECRET
    settings.google_discovery_url = provider.discovery_url
    return provider


def sign_in_at_provider(client) -> httpx.Response:
    """What a browser does: our start URL → the provider → our callback (with the cookie)."""
    start = client.get("/api/auth/google", follow_redirects=False)
    assert start.status_code == 302, start.text
    assert "sanitas_oidc" in start.headers["set-cookie"]
    assert "HttpOnly" in start.headers["set-cookie"]
    at_provider = httpx.get(start.headers["location"], follow_redirects=False)
    assert at_provider.status_code == 302, at_provider.text
    callback = at_provider.headers["location"]
    assert callback.startswith("http://testserver/api/auth/google/callback?")
    return client.get(callback, follow_redirects=False)


def one_time_code(answer) -> str:
    assert answer.status_code == 302
    location = answer.headers["location"]
    assert location.startswith("/auth/callback?code="), location
    return parse_qs(urlsplit(location).query)["code"][0]


def login_error(answer) -> str:
    assert answer.status_code == 302
    location = answer.headers["location"]
    assert location.startswith("/login?error="), location
    return unquote(location.split("error=", 1)[1])


def test_not_configured_redirects_to_login_with_a_readable_message(client):
    answer = client.get("/api/auth/google", follow_redirects=False)
    assert answer.status_code == 302
    assert answer.headers["location"] == "/login?error=Google%20sign-in%20is%20not%20configured"
    callback = client.get("/api/auth/google/callback?code=x&state=y", follow_redirects=False)
    assert login_error(callback) == "Google sign-in is not configured"


def test_authorization_request_carries_state_nonce_and_pkce(client, oidc):
    start = client.get("/api/auth/google", follow_redirects=False)
    url = urlsplit(start.headers["location"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{oidc.url}/authorize"
    q = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert q["client_id"] == CLIENT_ID
    assert q["redirect_uri"] == "http://testserver/api/auth/google/callback"
    assert set(q["scope"].split()) == {"openid", "email", "profile"}
    assert q["code_challenge_method"] == "S256" and len(q["code_challenge"]) >= 43
    assert len(q["state"]) >= 32 and len(q["nonce"]) >= 32
    again = urlsplit(client.get("/api/auth/google", follow_redirects=False).headers["location"])
    assert parse_qs(again.query)["state"] != [q["state"]]  # fresh per attempt


def test_first_sign_in_creates_a_verified_user_account(client, oidc, db_session):
    code = one_time_code(sign_in_at_provider(client))
    # The token request proved possession of the PKCE verifier (the provider checks it).
    assert oidc.token_requests[-1]["code_verifier"]
    exchanged = client.post("/api/auth/google/exchange", json={"code": code})
    assert exchanged.status_code == 200, exchanged.text
    body = exchanged.json()
    assert body["success"] is True and body["message"] == "Login successful!"
    user = body["data"]["user"]
    assert (user["email"], user["firstName"], user["lastName"], user["role"]) == \
        ("gina@example.com", "Gina", "Google", "USER")
    assert user["isEmailVerified"] is True and user["lastLogin"] is not None
    assert user["sessionCount"] == 1
    tokens = body["data"]["tokens"]
    profile = client.get("/api/auth/profile",
                         headers={"Authorization": f"Bearer {tokens['accessToken']}"})
    assert profile.status_code == 200 and profile.json()["data"]["id"] == user["id"]
    refreshed = client.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert refreshed.status_code == 200
    row = db_session.scalar(select(User).where(User.email == "gina@example.com"))
    assert row.google_sub == "google-sub-1" and row.password_hash is None
    # The one-time code is stored only as a hash and works once.
    assert db_session.scalar(select(EmailToken.id).where(EmailToken.token_hash == code)) is None
    reused = client.post("/api/auth/google/exchange", json={"code": code})
    assert reused.status_code == 400 and reused.json()["success"] is False
    # A Google-only account has no password to guess.
    assert client.post("/api/auth/login", json={"email": "gina@example.com",
                                                "password": ""}).status_code == 422


def test_existing_account_is_linked_by_verified_email(client, oidc, db_session):
    existing = make_user(db_session, email="gina@example.com", verified=False,
                         first_name="Regina")
    code = one_time_code(sign_in_at_provider(client))
    data = client.post("/api/auth/google/exchange", json={"code": code}).json()["data"]
    assert data["user"]["id"] == existing.id
    assert data["user"]["firstName"] == "Regina"  # linking keeps the account's own names
    assert data["user"]["isEmailVerified"] is True
    db_session.refresh(existing)
    assert existing.google_sub == "google-sub-1"
    # The password still works too.
    assert client.post("/api/auth/login", json={"email": "gina@example.com",
                                                "password": DEFAULT_PASSWORD}).status_code == 200
    # Later sign-ins find the account by its Google subject, even after an email change.
    oidc.identity["email"] = "gina.new@example.com"
    code = one_time_code(sign_in_at_provider(client))
    again = client.post("/api/auth/google/exchange", json={"code": code}).json()["data"]
    assert again["user"]["id"] == existing.id
    assert db_session.scalar(select(User.id).where(User.email == "gina.new@example.com")) is None


def test_unverified_google_email_is_refused(client, oidc, db_session):
    make_user(db_session, email="gina@example.com")
    oidc.identity["email_verified"] = False
    message = login_error(sign_in_at_provider(client))
    assert "not verified" in message
    row = db_session.scalar(select(User).where(User.email == "gina@example.com"))
    db_session.refresh(row)
    assert row.google_sub is None  # no takeover of the password account


def test_deactivated_account_cannot_sign_in_with_google(client, oidc, db_session):
    make_user(db_session, email="gina@example.com", active=False)
    assert login_error(sign_in_at_provider(client)) == google.DEACTIVATED


def test_account_deactivated_between_callback_and_exchange(client, oidc, db_session):
    code = one_time_code(sign_in_at_provider(client))
    db_session.execute(update(User).where(User.email == "gina@example.com")
                       .values(is_active=False))
    db_session.commit()
    answer = client.post("/api/auth/google/exchange", json={"code": code})
    assert answer.status_code == 403 and answer.json()["success"] is False


def test_person_declining_at_google(client, oidc):
    oidc.deny = True
    assert login_error(sign_in_at_provider(client)) == "Google sign-in was cancelled"


@pytest.mark.parametrize("tamper", ["signature", "nonce", "audience", "expired"])
def test_bad_id_tokens_are_rejected(client, oidc, db_session, tamper):
    oidc.tamper = tamper
    assert login_error(sign_in_at_provider(client)) == google.FAILED
    assert db_session.scalar(select(User.id).where(User.email == "gina@example.com")) is None


def test_callback_without_the_matching_state_cookie_is_refused(client, oidc, db_session):
    start = client.get("/api/auth/google", follow_redirects=False)
    at_provider = httpx.get(start.headers["location"], follow_redirects=False)
    callback = at_provider.headers["location"]
    # A forged callback: right code, wrong state.
    forged = callback.replace("state=", "state=x")
    assert login_error(client.get(forged, follow_redirects=False)) == google.STATE_INVALID
    # Another browser (no cookie) presenting the callback URL.
    client.cookies.clear()
    assert login_error(client.get(callback, follow_redirects=False)) == google.STATE_INVALID
    assert db_session.scalar(select(User.id).where(User.email == "gina@example.com")) is None


def test_exchange_code_expires(client, oidc, db_session):
    code = one_time_code(sign_in_at_provider(client))
    db_session.execute(update(EmailToken).where(EmailToken.purpose == google.EXCHANGE_PURPOSE)
                       .values(expires_at=utcnow() - timedelta(seconds=1)))
    db_session.commit()
    answer = client.post("/api/auth/google/exchange", json={"code": code})
    assert answer.status_code == 400
    assert "expired" in answer.json()["message"]
    assert client.post("/api/auth/google/exchange", json={"code": "made-up"}).status_code == 400


def test_unreachable_provider_gives_a_readable_error(client, settings):
    settings.google_client_id, settings.google_client_secret = "id", "secret"
    with socket_closed_port() as port:
        settings.google_discovery_url = f"http://127.0.0.1:{port}/.well-known/openid-configuration"
        answer = client.get("/api/auth/google", follow_redirects=False)
    assert login_error(answer) == google.UNAVAILABLE


class socket_closed_port:
    """A loopback port with nothing listening."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc) -> None:
        self.sock.close()


def test_state_cookie_is_scoped_and_secure_behind_https(client, oidc, settings):
    settings.public_url = "https://sanitas.example.org"
    settings.google_redirect_uri = "https://sanitas.example.org/api/auth/google/callback"
    start = client.get("/api/auth/google", follow_redirects=False)
    cookie = start.headers["set-cookie"]
    for attribute in ("HttpOnly", "Secure", "Path=/api/auth/google", "SameSite=lax",
                      "Max-Age=600"):
        assert attribute.lower() in cookie.lower(), (attribute, cookie)
    query = parse_qs(urlsplit(start.headers["location"]).query)
    assert query["redirect_uri"] == ["https://sanitas.example.org/api/auth/google/callback"]
    # The cookie is signed: a modified one is refused before anything else happens.
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    with pytest.raises(google.GoogleSignInError):
        google.finish(settings, cookie=value[:-2] + ("AA" if value[-2:] != "AA" else "BB"),
                      state=query["state"][0], code="c", error=None)


def test_an_account_linked_to_one_google_account_is_not_relinked(client, oidc, db_session):
    make_user(db_session, email="gina@example.com", google_sub="the-original-sub")
    assert login_error(sign_in_at_provider(client)) == google.OTHER_GOOGLE_ACCOUNT
    row = db_session.scalar(select(User).where(User.email == "gina@example.com"))
    db_session.refresh(row)
    assert row.google_sub == "the-original-sub"


def test_an_nfd_google_address_links_the_nfc_account(client, oidc, db_session):
    nfc = unicodedata.normalize("NFC", "josé@example.com")
    existing = make_user(db_session, email=nfc)
    oidc.identity["email"] = unicodedata.normalize("NFD", "José@example.com")
    code = one_time_code(sign_in_at_provider(client))
    data = client.post("/api/auth/google/exchange", json={"code": code}).json()["data"]
    assert data["user"]["id"] == existing.id
    assert db_session.scalars(select(User.email)).all() == [nfc]
