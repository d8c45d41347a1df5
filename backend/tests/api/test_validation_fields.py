"""A 422 names each refused field (`fields: [{field, message, code}]`, camelCase paths as the
request body spells them, messages in plain words) besides the one-line `message`, and the
OpenAPI document says so for every 422."""

from __future__ import annotations

from tests.factories import auth_headers, make_user


def test_contact_form_names_each_field(api):
    answer = api.post("/api/contact", json={"name": "", "email": "ada@example.org",
                                            "subject": "Hi", "message": "short"})
    assert answer.status_code == 422
    body = answer.json()
    assert body["error"] == "validation_error"
    assert body["message"].startswith("Invalid request: ")  # the summary stays
    fields = {f["field"]: f for f in body["fields"]}
    assert set(fields) == {"name", "message"}
    assert fields["name"]["message"] == "This field is required."
    assert fields["message"]["message"] == "Must be at least 10 characters."
    assert fields["message"]["code"] == "too_short"


def test_nested_paths_are_camel_case(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session, role="ENTERPRISE"))
    answer = api.post("/api/policies", headers=h, json={
        "name": "x", "rules": {"macros": "keep"}, "allowedTypes": None, "output": "same",
        "maxPages": 0, "scope": "personal"})
    assert answer.status_code == 422
    paths = {f["field"] for f in answer.json()["fields"]}
    assert "rules.macros" in paths and "maxPages" in paths


def test_service_checks_name_their_field(api, settings, db_session):
    answer = api.post("/api/auth/register",
                      json={"email": "not an address", "password": "secret1"})
    assert answer.status_code == 422
    assert answer.json()["fields"] == [
        {"field": "email", "message": "Please enter a valid email address", "code": "invalid"}]
    user = make_user(db_session, password="old-password-1")
    h = auth_headers(settings, db_session, user)
    answer = api.put("/api/auth/password", headers=h,
                     json={"currentPassword": "old-password-1", "newPassword": "short"})
    assert answer.status_code == 422
    assert [f["field"] for f in answer.json()["fields"]] == ["newPassword"]


def test_a_body_that_is_not_an_object_has_a_field_of_null(api):
    answer = api.post("/api/contact", json=["not", "an", "object"])
    assert answer.status_code == 422
    assert [f["field"] for f in answer.json()["fields"]] == [None]


def test_openapi_documents_fields_on_every_422(api):
    document = api.get("/api/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    envelope = schemas["ValidationErrorEnvelope"]
    assert "fields" in envelope["properties"]
    assert set(schemas["FieldError"]["required"]) == {"field", "message", "code"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            answer = operation["responses"]["422"]
            assert answer["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ValidationErrorEnvelope"}, (method, path)
