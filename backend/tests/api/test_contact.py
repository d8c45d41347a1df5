"""POST /api/contact (anyone, validated, rate-limited) and GET /api/contact (admins)."""

from __future__ import annotations

import pytest

from tests.factories import auth_headers, make_user

MESSAGE = {"name": "Eve", "email": "eve@example.com", "subject": "Enterprise plan",
           "message": "Could you tell me more about on-premise deployment?"}


def send(client, headers=None, **changes):
    return client.post("/api/contact", json={**MESSAGE, **changes}, headers=headers or {})


def test_anyone_can_send_and_gets_the_id(client, db_session, settings):
    answer = send(client)
    assert answer.status_code == 201
    body = answer.json()
    assert body["success"] is True and body["data"]["id"]
    assert "24 hours" in body["message"]


@pytest.mark.parametrize("changes, field", [
    ({"name": ""}, "name"), ({"name": "   "}, "name"), ({"name": "x" * 201}, "name"),
    ({"email": "not-an-address"}, "email"), ({"subject": ""}, "subject"),
    ({"subject": "s" * 201}, "subject"), ({"message": "too short"}, "message"),
    ({"message": "m" * 5001}, "message"), ({"message": None}, "message"),
])
def test_lengths_and_formats_are_validated(client, changes, field):
    answer = send(client, **changes)
    assert answer.status_code == 422
    assert answer.json()["success"] is False
    assert field in answer.json()["message"]


def test_admins_read_messages_newest_first_with_pagination(client, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    user = make_user(db_session)
    settings.rate_limit_contact_per_ip = 100
    for i in range(3):
        assert send(client, email=f"p{i}@example.com", subject=f"Question {i}").status_code == 201
    assert send(client, headers=auth_headers(settings, db_session, user),
                subject="From a member").status_code == 201
    headers = auth_headers(settings, db_session, admin)
    page = client.get("/api/contact?page=1&limit=3", headers=headers).json()["data"]
    assert page["pagination"] == {"page": 1, "limit": 3, "total": 4, "pages": 2,
                                  "hasPrev": False, "hasNext": True}
    assert [m["subject"] for m in page["messages"]] == ["From a member", "Question 2",
                                                        "Question 1"]
    assert page["messages"][0]["userId"] == user.id
    assert page["messages"][1]["userId"] is None
    rest = client.get("/api/contact?page=2&limit=3", headers=headers).json()["data"]
    assert len(rest["messages"]) == 1
    assert set(rest["messages"][0]) >= {"id", "name", "email", "subject", "message", "createdAt"}
    assert client.get("/api/contact?limit=0", headers=headers).status_code == 422


def test_only_admins_read_messages(client, db_session, settings):
    send(client)
    assert client.get("/api/contact").status_code == 401
    for role in ("GUEST", "USER", "ENTERPRISE"):
        headers = auth_headers(settings, db_session, make_user(db_session, role=role))
        answer = client.get("/api/contact", headers=headers)
        assert answer.status_code == 403 and answer.json()["success"] is False
