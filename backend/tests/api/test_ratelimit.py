"""DB-backed rate limits: per IP and per account, 429 with Retry-After, across processes."""

from __future__ import annotations

import threading
from datetime import timedelta

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from sanitas.db import make_engine, make_sessionmaker, utcnow
from sanitas.main import create_app
from sanitas.models import AuthSession, RateLimitHit
from sanitas.web import ratelimit
from sanitas.web.errors import ApiError
from tests.factories import DEFAULT_PASSWORD, auth_headers, make_user
from tests.live_server import app_server


def login(client, email, password=DEFAULT_PASSWORD):
    return client.post("/api/auth/login", json={"email": email, "password": password})


def contact(client, email="eve@example.com", **headers):
    return client.post("/api/contact", json={"name": "Eve", "email": email, "subject": "Hi",
                                             "message": "Hello there, team."}, headers=headers)


def test_hit_counts_per_key_and_answers_retry_after(db_session):
    for _ in range(3):
        ratelimit.hit(db_session, [("t:a", 3), ("t:b", 10)], 60)
    with pytest.raises(ApiError) as refused:
        ratelimit.hit(db_session, [("t:a", 3), ("t:b", 10)], 60)
    assert refused.value.status_code == 429
    assert refused.value.message == "Too many attempts. Please try again later."
    assert 55 <= int(refused.value.headers["Retry-After"]) <= 60
    # The refused attempt is not counted, under any of its keys.
    count = db_session.scalar(select(func.count()).select_from(RateLimitHit)
                              .where(RateLimitHit.key == "t:b"))
    assert count == 3
    ratelimit.hit(db_session, [("t:other", 3)], 60)  # other keys are unaffected


def test_the_window_slides(db_session):
    for _ in range(2):
        ratelimit.hit(db_session, [("t:w", 2)], 60)
    with pytest.raises(ApiError):
        ratelimit.hit(db_session, [("t:w", 2)], 60)
    # One of the two attempts leaves the window: one more is allowed, and then the
    # Retry-After points at the other one leaving.
    oldest = db_session.scalars(select(RateLimitHit).where(RateLimitHit.key == "t:w")).first()
    db_session.execute(update(RateLimitHit).where(RateLimitHit.id == oldest.id)
                       .values(created_at=utcnow() - timedelta(seconds=61)))
    remaining = db_session.scalars(select(RateLimitHit).where(RateLimitHit.key == "t:w",
                                                              RateLimitHit.id != oldest.id)).one()
    remaining.created_at = utcnow() - timedelta(seconds=50)
    db_session.commit()
    ratelimit.hit(db_session, [("t:w", 2)], 60)
    with pytest.raises(ApiError) as refused:
        ratelimit.hit(db_session, [("t:w", 2)], 60)
    assert 1 <= int(refused.value.headers["Retry-After"]) <= 11


def test_concurrent_attempts_never_exceed_the_limit(settings):
    """Sixteen simultaneous attempts, each with its own connection: exactly the limit pass."""
    engine = make_engine(str(settings.database_url))
    factory = make_sessionmaker(engine)
    barrier = threading.Barrier(16)
    results: list[str] = []

    def attempt():
        with factory() as session:
            barrier.wait()
            try:
                ratelimit.hit(session, [("t:race", 4)], 60)
                results.append("ok")
            except ApiError as exc:
                results.append(str(exc.status_code))

    threads = [threading.Thread(target=attempt) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    engine.dispose()
    assert len(results) == 16
    assert results.count("ok") == 4  # exactly the limit: no more, and no needless refusals
    assert results.count("429") == 12


def test_sweep_removes_only_expired_hits(db_session):
    ratelimit.hit(db_session, [("t:old", 5)], 60)
    ratelimit.hit(db_session, [("t:new", 5)], 60)
    db_session.execute(update(RateLimitHit).where(RateLimitHit.key == "t:old")
                       .values(created_at=utcnow() - timedelta(seconds=120)))
    db_session.commit()
    ratelimit.sweep(db_session, 60)
    assert db_session.scalars(select(RateLimitHit.key)).all() == ["t:new"]


def test_limits_hold_across_two_app_processes(settings, db_session):
    """Two app instances (separate engines and pools, as two server processes would have)
    share one count through the database."""
    settings.rate_limit_login_per_account = 4
    make_user(db_session, email="multi@example.com")
    with TestClient(create_app(settings)) as one, TestClient(create_app(settings)) as two:
        for client in (one, two, one, two):
            assert login(client, "multi@example.com", "wrong-password").status_code == 401
        assert login(one, "multi@example.com").status_code == 429
        assert login(two, "multi@example.com").status_code == 429


def test_login_is_limited_per_ip_across_accounts(client, settings):
    settings.rate_limit_login_per_ip = 3
    for i in range(3):
        assert login(client, f"nobody{i}@example.com").status_code == 401
    limited = login(client, "someone-else@example.com")
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    assert limited.json() == {"success": False,
                              "message": "Too many attempts. Please try again later.",
                              "error": "too_many_requests"}


def test_a_successful_login_resets_the_account_count(client, db_session, settings):
    settings.rate_limit_login_per_account = 3
    make_user(db_session, email="ok@example.com")
    for _ in range(2):
        assert login(client, "ok@example.com", "wrong-password").status_code == 401
    assert login(client, "ok@example.com").status_code == 200
    for _ in range(3):
        assert login(client, "ok@example.com", "wrong-password").status_code == 401
    assert login(client, "ok@example.com").status_code == 429


def test_registration_is_limited_per_account(client, settings):
    settings.rate_limit_register_per_account = 2
    body = {"email": "same@example.com", "password": "secret1"}
    assert client.post("/api/auth/register", json=body).status_code == 201
    assert client.post("/api/auth/register", json=body).status_code == 409
    again = client.post("/api/auth/register", json={**body, "email": "SAME@example.com"})
    assert again.status_code == 429 and "Retry-After" in again.headers


def test_forgot_password_is_limited_per_account(client, db_session, settings):
    settings.rate_limit_reset_per_account = 2
    make_user(db_session, email="forgetful@example.com")
    for _ in range(2):
        assert client.post("/api/auth/forgot-password",
                           json={"email": "forgetful@example.com"}).status_code == 200
    limited = client.post("/api/auth/forgot-password", json={"email": "forgetful@example.com"})
    assert limited.status_code == 429 and "Retry-After" in limited.headers
    # Per account: another address from the same IP is still answered.
    assert client.post("/api/auth/forgot-password",
                       json={"email": "other@example.com"}).status_code == 200


def test_reset_password_attempts_are_limited_per_ip(client, settings):
    settings.rate_limit_reset_per_ip = 3
    for i in range(3):
        answer = client.post("/api/auth/reset-password",
                             json={"token": f"guess-{i}", "password": "long-enough"})
        assert answer.status_code == 400
    guessed = client.post("/api/auth/reset-password",
                          json={"token": "guess-x", "password": "long-enough"})
    assert guessed.status_code == 429 and "Retry-After" in guessed.headers


def test_contact_is_limited_per_ip_and_per_sender(client, settings):
    settings.rate_limit_contact_per_account = 2
    settings.rate_limit_contact_per_ip = 3
    assert contact(client).status_code == 201
    assert contact(client).status_code == 201
    per_sender = contact(client)
    assert per_sender.status_code == 429 and "Retry-After" in per_sender.headers
    assert contact(client, "bob@example.com").status_code == 201
    per_ip = contact(client, "carol@example.com")
    assert per_ip.status_code == 429


def test_forwarded_for_counts_only_from_trusted_proxies(client, settings):
    settings.rate_limit_login_per_ip = 2

    def attempt(forwarded):
        return client.post("/api/auth/login", json={"email": "x@example.com", "password": "p"},
                           headers={"X-Forwarded-For": forwarded})

    # Not trusted: the header is ignored, spoofed addresses share the peer's count.
    assert attempt("1.1.1.1").status_code == 401
    assert attempt("2.2.2.2").status_code == 401
    assert attempt("3.3.3.3").status_code == 429
    # Behind a trusted proxy each client has its own count; a client-supplied hop to the
    # left of the real one changes nothing.
    settings.trusted_proxies = ["testclient", "10.0.0.0/8"]
    for _ in range(2):
        assert attempt("9.9.9.9, 10.1.2.3").status_code == 401
    assert attempt("8.8.8.8, 9.9.9.9, 10.1.2.3").status_code == 429
    assert attempt("7.7.7.7").status_code == 401


def login_from(client, address, email, password=DEFAULT_PASSWORD):
    """A sign-in from `address`, as the trusted proxy in front of the API reports it."""
    return client.post("/api/auth/login", json={"email": email, "password": password},
                       headers={"X-Forwarded-For": address})


def test_a_stranger_failing_cannot_lock_the_owner_out(client, db_session, settings):
    settings.trusted_proxies = ["testclient"]
    make_user(db_session, email="owner@example.com")
    codes = [login_from(client, "203.0.113.1", "owner@example.com", "wrong-password")
             .status_code for _ in range(12)]
    assert codes == [401] * 10 + [429] * 2  # rate_limit_login_per_account from one address
    # The owner, elsewhere, with the right password: signed in.
    assert login_from(client, "198.51.100.2", "owner@example.com").status_code == 200
    # The stranger is still refused, and the owner's success did not reset their count.
    refused = login_from(client, "203.0.113.1", "owner@example.com", "wrong-password")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert refused.json()["message"] == "Too many attempts. Please try again later."
    assert login_from(client, "203.0.113.1", "owner@example.com").status_code == 429


def test_guessing_from_many_addresses_meets_the_account_ceiling_but_not_the_owner(
        client, db_session, settings):
    settings.trusted_proxies = ["testclient"]
    settings.rate_limit_login_per_account = 2
    settings.rate_limit_login_account_ceiling = 5
    make_user(db_session, email="target@example.com")
    # The owner signs in from home; this first attempt (from a then new address) counts too.
    assert login_from(client, "198.51.100.7", "target@example.com").status_code == 200
    codes = [login_from(client, f"203.0.113.{i}", "target@example.com", "wrong-password")
             .status_code for i in range(1, 5) for _ in range(2)]
    assert codes == [401] * 4 + [429] * 4  # each address within its own limit of 2
    # At home the owner still signs in, again and again; a new address has to wait.
    for _ in range(3):
        assert login_from(client, "198.51.100.7", "target@example.com").status_code == 200
    new_place = login_from(client, "192.0.2.50", "target@example.com")
    assert new_place.status_code == 429 and "Retry-After" in new_place.headers
    # An address is known only as long as a refresh token from there could live.
    db_session.execute(update(AuthSession).values(
        created_at=utcnow() - timedelta(days=settings.refresh_token_ttl_days, minutes=1)))
    db_session.commit()
    assert login_from(client, "198.51.100.7", "target@example.com").status_code == 429


def test_one_ipv6_64_network_is_one_source(client, db_session, settings):
    settings.trusted_proxies = ["testclient"]
    settings.rate_limit_login_per_account = 2
    make_user(db_session, email="six@example.com")
    for host in ("2001:db8:5:6::1", "2001:db8:5:6::2"):
        assert login_from(client, host, "six@example.com", "wrong-password").status_code == 401
    rotated = login_from(client, "2001:db8:5:6:ffff::3", "six@example.com", "wrong-password")
    assert rotated.status_code == 429
    assert login_from(client, "2001:db8:5:7::1", "six@example.com").status_code == 200


def test_keys_longer_than_the_column_are_counted_too(client, db_session, settings):
    """'İ' lower-cases to two characters: the longest address makes a key beyond 400."""
    settings.rate_limit_login_per_ip = 100
    settings.rate_limit_login_per_account = 2
    email = "İ" * 300 + "@example.com"
    for _ in range(2):
        assert login(client, email, "wrong-password").status_code == 401
    assert login(client, email, "wrong-password").status_code == 429
    assert login(client, email[:-1] + "org", "wrong-password").status_code == 401


# -- password changes ----------------------------------------------------------------------------
def change_password(client, headers, current, new="a-new-password", address=None):
    extra = {"X-Forwarded-For": address} if address else {}
    return client.put("/api/auth/password", headers={**headers, **extra},
                      json={"currentPassword": current, "newPassword": new})


def test_password_change_is_limited_per_account(client, db_session, settings):
    """A stolen session cannot guess the current password: attempts count per account, from
    every address and session, and a success ends the count."""
    settings.trusted_proxies = ["testclient"]
    settings.rate_limit_password_per_account = 3
    user = make_user(db_session)
    one, two = (auth_headers(settings, db_session, user) for _ in range(2))
    for _ in range(2):
        assert change_password(client, one, "wrong-guess").json()["error"] == "wrong_password"
    # The owner, elsewhere, changes it: the two strikes are forgotten.
    assert change_password(client, two, DEFAULT_PASSWORD, "second-password",
                           address="198.51.100.9").status_code == 200
    codes = [change_password(client, two, "wrong-guess", address=f"203.0.113.{i}").status_code
             for i in range(5)]
    assert codes == [400] * 3 + [429] * 2  # spread over addresses: the account's limit
    refused = change_password(client, two, "second-password")  # even the right one waits
    assert refused.status_code == 429
    assert refused.json() == {"success": False,
                              "message": "Too many attempts. Please try again later.",
                              "error": "too_many_requests"}
    assert 1 <= int(refused.headers["Retry-After"]) <= settings.rate_limit_window_seconds
    assert login(client, user.email, "second-password").status_code == 200  # unchanged


def test_password_change_is_limited_per_source(client, db_session, settings):
    settings.rate_limit_password_per_ip = 4
    headers = [auth_headers(settings, db_session, make_user(db_session)) for _ in range(3)]
    codes = [change_password(client, h, "wrong-guess").status_code
             for h in headers for _ in range(2)]
    assert codes == [400] * 4 + [429] * 2  # one address, several accounts


def test_parallel_password_guesses_never_exceed_the_limit(settings, db_session):
    """Twenty simultaneous wrong attempts against a real HTTP server, each on its own
    connection: exactly the account's limit is checked, the rest answer 429."""
    parallel, allowed = 20, 4
    settings.rate_limit_password_per_account = allowed
    settings.user_concurrency = parallel  # the database alone holds the limit here
    user = make_user(db_session)
    headers = auth_headers(settings, db_session, user)
    barrier = threading.Barrier(parallel)
    codes: list[str] = []

    def guess(i: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as c:
            barrier.wait()
            answer = change_password(c, headers, f"wrong-guess-{i}")
        codes.append(answer.json().get("error") or str(answer.status_code))

    with app_server(settings) as port:
        base = f"http://127.0.0.1:{port}"
        threads = [threading.Thread(target=guess, args=(i,)) for i in range(parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
    assert len(codes) == parallel
    assert codes.count("wrong_password") == allowed, codes
    assert codes.count("too_many_requests") == parallel - allowed, codes
    hits = db_session.scalar(select(func.count()).select_from(RateLimitHit)
                             .where(RateLimitHit.key == f"password:acct:{user.id}"))
    assert hits == allowed


def test_openapi_names_the_password_changes_429(client):
    answers = client.get("/api/openapi.json").json()["paths"]["/api/auth/password"]["put"]
    assert "too_many_requests" in answers["responses"]["429"]["description"]
