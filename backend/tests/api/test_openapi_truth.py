"""The OpenAPI document tells the truth: each call answers only statuses it documents (checked
by calling every operation without a token, with a wrong token's owner role, and with a wrong
method), uploads document their multipart body, downloads their binary answer."""

from __future__ import annotations

import re

import pytest

from tests.factories import auth_headers, make_user


@pytest.fixture
def document(api) -> dict:
    return api.get("/api/openapi.json").json()


def _operations(document: dict):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "00000000-0000-0000-0000-000000000000", path)


def test_every_answer_without_a_token_is_documented(api, document):
    for path, method, operation in _operations(document):
        if path.startswith("/api/auth/google"):
            continue  # browser redirects
        answer = api.request(method.upper(), _concrete(path))
        assert str(answer.status_code) in operation["responses"], (
            f"{method.upper()} {path} answered {answer.status_code}, documented "
            f"{sorted(operation['responses'])}")


def test_every_answer_to_a_signed_in_user_is_documented(api, settings, db_session, document):
    """A GUEST calling everything with an empty JSON body: admin calls answer 403, the rest
    what they answer; each status must be in the document."""
    h = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    for path, method, operation in _operations(document):
        if path.startswith("/api/auth/google") or path in ("/api/auth/logout",
                                                           "/api/auth/password"):
            continue
        answer = api.request(method.upper(), _concrete(path), headers=h,
                             json={} if method in ("post", "put") else None)
        assert str(answer.status_code) in operation["responses"], (
            f"{method.upper()} {path} answered {answer.status_code}, documented "
            f"{sorted(operation['responses'])}")


def test_admin_and_signed_in_calls_document_401_and_403(document):
    responses = document["paths"]["/api/process/queue/pause"]["post"]["responses"]
    assert {"401", "403", "429", "503"} <= set(responses)
    assert "401" not in document["paths"]["/api/contact"]["post"]["responses"]  # anyone


def test_a_wrong_method_is_405_with_allow(api):
    answer = api.delete("/api/auth/profile")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET, PUT"
    assert answer.json()["error"] == "method_not_allowed"
    assert api.get("/api/no-such-call").status_code == 404


def test_uploads_document_their_multipart_body_and_downloads_their_file(document):
    single = document["paths"]["/api/upload/single"]["post"]
    schema = single["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert schema["properties"]["file"] == {"type": "string", "format": "binary"}
    assert schema["required"] == ["file"]
    assert {"400", "403", "413", "415"} <= set(single["responses"])
    multiple = document["paths"]["/api/upload/multiple"]["post"]
    items = multiple["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert items["files"]["type"] == "array"
    download = document["paths"]["/api/process/download/{file_id}"]["get"]["responses"]["200"]
    assert "application/octet-stream" in download["content"]


def test_optional_sign_in_and_password_rules_are_documented(document):
    assert document["paths"]["/api/contact"]["post"]["security"] == [{}, {"HTTPBearer": []}]
    assert document["paths"]["/api/auth/profile"]["get"]["security"] == [{"HTTPBearer": []}]
    schemas = document["components"]["schemas"]
    assert schemas["RegisterIn"]["properties"]["password"]["minLength"] == 6
    assert schemas["PasswordChangeIn"]["properties"]["newPassword"]["minLength"] == 8
    assert schemas["ResetPasswordIn"]["properties"]["password"]["minLength"] == 8


def test_list_filters_are_named_enums(document):
    """Each list filter is one enum in the document: a status or role filter is the model's
    values plus the one meaning every value."""
    schemas = document["components"]["schemas"]

    def query_schema(path: str, name: str) -> dict:
        parameters = document["paths"][path]["get"]["parameters"]
        return next(p["schema"] for p in parameters if p["name"] == name)

    for path in ("/api/users/{user_id}/files", "/api/admin/files"):
        assert query_schema(path, "status")["$ref"] == "#/components/schemas/StatusFilter"
    assert query_schema("/api/users", "role")["$ref"] == "#/components/schemas/RoleFilter"
    assert query_schema("/api/users", "status")["$ref"] == "#/components/schemas/UserStatusFilter"
    assert query_schema("/api/usage/analytics", "timeframe")["$ref"] == (
        "#/components/schemas/Timeframe")
    assert set(schemas["StatusFilter"]["enum"]) == {"ALL", *schemas["FileStatus"]["enum"]}
    assert set(schemas["RoleFilter"]["enum"]) == {"", *schemas["Role"]["enum"]}
