"""Admin user management and the authorisation of every admin call."""

from __future__ import annotations

import pytest

from tests.factories import DEFAULT_PASSWORD, auth_headers, make_user


@pytest.fixture
def admin_headers(settings, db_session):
    return auth_headers(settings, db_session, make_user(db_session, role="ADMIN",
                                                        email="root@example.com"))


def test_list_users_pages_by_ten_and_filters(client, db_session, admin_headers):
    for i in range(12):
        make_user(db_session, email=f"u{i:02}@example.com", first_name="Alan" if i == 3 else None,
                  last_name="Turing" if i == 3 else None, username=f"name{i}",
                  active=i != 5, verified=i % 2 == 0)
    page1 = client.get("/api/users", headers=admin_headers).json()["data"]
    assert len(page1["users"]) == 10
    assert page1["pagination"] == {"page": 1, "limit": 10, "total": 13, "pages": 2,
                                   "hasPrev": False, "hasNext": True}
    page2 = client.get("/api/users?page=2", headers=admin_headers).json()["data"]
    assert len(page2["users"]) == 3 and page2["pagination"]["hasPrev"] is True

    def emails(query):
        return {u["email"] for u in client.get(f"/api/users?{query}",
                                               headers=admin_headers).json()["data"]["users"]}

    assert emails("search=alan%20tur") == {"u03@example.com"}  # full name
    assert emails("search=NAME11") == {"u11@example.com"}  # username
    assert emails("search=u07@") == {"u07@example.com"}  # email
    assert emails("role=ADMIN") == {"root@example.com"}
    assert emails("status=inactive") == {"u05@example.com"}
    assert len(emails("status=unverified")) == 6
    assert client.get("/api/users?status=bogus", headers=admin_headers).status_code == 422


def test_admin_changes_role_and_activity(client, db_session, admin_headers):
    user = make_user(db_session)
    answer = client.put(f"/api/users/{user.id}", json={"role": "ENTERPRISE"},
                        headers=admin_headers)
    assert answer.status_code == 200
    assert answer.json()["message"] == "User role updated successfully"
    assert answer.json()["data"]["role"] == "ENTERPRISE"
    assert client.put(f"/api/users/{user.id}", json={"role": "KING"},
                      headers=admin_headers).status_code == 422
    assert client.put(f"/api/users/{user.id}", json={},
                      headers=admin_headers).status_code == 422
    assert client.put("/api/users/no-such-id", json={"isActive": False},
                      headers=admin_headers).status_code == 404
    back_on = client.put(f"/api/users/{user.id}", json={"isActive": True}, headers=admin_headers)
    assert back_on.json()["message"] == "User activated successfully"


def test_the_last_active_admin_cannot_be_demoted_or_deactivated(client, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    headers = auth_headers(settings, db_session, admin)
    for change in ({"role": "USER"}, {"isActive": False}):
        answer = client.put(f"/api/users/{admin.id}", json=change, headers=headers)
        assert answer.status_code == 409
        assert answer.json()["message"] == "Cannot demote or deactivate the last active admin"
    second = make_user(db_session, role="ADMIN")
    assert client.put(f"/api/users/{second.id}", json={"role": "USER"},
                      headers=headers).status_code == 200


@pytest.mark.parametrize("role", ["GUEST", "USER", "ENTERPRISE"])
def test_non_admins_get_403_on_every_admin_call(client, db_session, settings, role):
    caller = make_user(db_session, role=role)
    victim = make_user(db_session)
    headers = auth_headers(settings, db_session, caller)
    calls = [("get", "/api/users", None), ("put", f"/api/users/{victim.id}", {"role": "ADMIN"}),
             ("put", f"/api/users/{caller.id}", {"role": "ADMIN"}), ("get", "/api/contact", None)]
    for method, path, body in calls:
        answer = client.request(method.upper(), path, json=body, headers=headers)
        assert answer.status_code == 403, (method, path)
        assert answer.json()["success"] is False
        anonymous = client.request(method.upper(), path, json=body)
        assert anonymous.status_code == 401, (method, path)
    db_session.refresh(caller)
    assert caller.role == role


def test_profile_is_always_the_callers_own(client, db_session, settings):
    alice, bob = make_user(db_session), make_user(db_session)
    answer = client.get("/api/auth/profile", headers=auth_headers(settings, db_session, alice))
    assert answer.json()["data"]["id"] == alice.id
    client.put("/api/users/profile", json={"firstName": "Mallory"},
               headers=auth_headers(settings, db_session, alice))
    db_session.refresh(bob)
    assert bob.first_name is None


def test_contact_messages_are_stored_and_admins_read_them(client, db_session, admin_headers):
    sent = client.post("/api/contact", json={"name": "Eve", "email": "eve@example.com",
                                             "subject": "Hi", "message": "Hello there"})
    assert sent.status_code == 201 and sent.json()["data"]["id"]
    assert client.post("/api/contact", json={"name": "", "email": "x", "subject": "s",
                                             "message": "m"}).status_code == 422
    listed = client.get("/api/contact", headers=admin_headers).json()["data"]
    assert [m["subject"] for m in listed["messages"]] == ["Hi"]
    assert listed["pagination"]["total"] == 1


def test_role_and_activity_together_and_reactivation(client, db_session, settings,
                                                     admin_headers):
    user = make_user(db_session, email="both@example.com")
    answer = client.put(f"/api/users/{user.id}", json={"role": "ENTERPRISE", "isActive": False},
                        headers=admin_headers)
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert (data["role"], data["isActive"], data["sessionCount"]) == ("ENTERPRISE", False, 0)
    listed = client.get("/api/users?status=inactive", headers=admin_headers).json()["data"]
    assert [u["email"] for u in listed["users"]] == ["both@example.com"]
    assert client.post("/api/auth/login", json={"email": "both@example.com",
                                                "password": DEFAULT_PASSWORD}).status_code == 403
    client.put(f"/api/users/{user.id}", json={"isActive": True}, headers=admin_headers)
    back = client.post("/api/auth/login", json={"email": "both@example.com",
                                                "password": DEFAULT_PASSWORD})
    assert back.status_code == 200 and back.json()["data"]["user"]["role"] == "ENTERPRISE"


def test_an_admin_may_step_down_while_another_admin_remains(client, db_session, settings):
    first = make_user(db_session, role="ADMIN")
    make_user(db_session, role="ADMIN")
    headers = auth_headers(settings, db_session, first)
    answer = client.put(f"/api/users/{first.id}", json={"role": "USER"}, headers=headers)
    assert answer.status_code == 200
    assert client.get("/api/users", headers=headers).status_code == 403  # no longer admin


def test_an_inactive_admin_does_not_count_as_the_last_one(client, db_session, settings):
    admin = make_user(db_session, role="ADMIN")
    dormant = make_user(db_session, role="ADMIN", active=False)
    headers = auth_headers(settings, db_session, admin)
    assert client.put(f"/api/users/{admin.id}", json={"isActive": False},
                      headers=headers).status_code == 409
    # Demoting the inactive one leaves the active admin in place: allowed.
    assert client.put(f"/api/users/{dormant.id}", json={"role": "USER"},
                      headers=headers).status_code == 200


def test_list_parameters_are_validated(client, admin_headers):
    for query in ("page=0", "limit=0", "limit=101", "role=KING", "page=x"):
        answer = client.get(f"/api/users?{query}", headers=admin_headers)
        assert answer.status_code == 422, query
        assert answer.json()["success"] is False
    beyond = client.get("/api/users?page=9", headers=admin_headers).json()["data"]
    assert beyond["users"] == [] and beyond["pagination"]["hasPrev"] is True
