"""Every integer query parameter has bounds: a huge page or limit is a 422 in the error
envelope, never a 500 from the database (SQLite's OverflowError, PostgreSQL's bigint)."""

from __future__ import annotations

import pytest

from tests.factories import auth_headers, make_user

HUGE = str(10**18)


@pytest.fixture
def admin(settings, db_session):
    user = make_user(db_session, role="ADMIN")
    return user, auth_headers(settings, db_session, user)


def listing_calls(user_id: str) -> list[tuple[str, str]]:
    return [("/api/users", "page"), ("/api/users", "limit"),
            ("/api/contact", "page"), ("/api/contact", "limit"),
            (f"/api/users/{user_id}/files", "page"), (f"/api/users/{user_id}/files", "limit"),
            ("/api/usage/history", "months")]


def test_huge_integers_are_refused_with_422(client, admin):
    user, headers = admin
    for path, name in listing_calls(user.id):
        for value in (HUGE, "-" + HUGE, "0"):
            answer = client.get(path, params={name: value}, headers=headers)
            assert answer.status_code == 422, (path, name, value, answer.text)
            body = answer.json()
            assert body["success"] is False and body["error"] == "validation_error"
            assert name in body["message"]


def test_the_largest_page_still_answers(client, admin):
    user, headers = admin
    for path in ("/api/users", "/api/contact", f"/api/users/{user.id}/files"):
        answer = client.get(path, params={"page": 100000, "limit": 100}, headers=headers)
        assert answer.status_code == 200, (path, answer.text)


def test_every_integer_query_parameter_is_bounded(client):
    unbounded = []
    for path, operations in client.get("/api/openapi.json").json()["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                types = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", [])]
                bounded = "minimum" in schema and "maximum" in schema
                if parameter["in"] == "query" and {"integer", "number"} & set(types) \
                        and not bounded:
                    unbounded.append(f"{method.upper()} {path} {parameter['name']}")
    assert unbounded == []
