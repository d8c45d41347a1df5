"""Input at the edges (issue 19): a NUL (or an unpaired surrogate) in any request string, and
moments at the ends of the calendar, are a 422 in the error envelope naming the field on
both databases, never a 500 (PostgreSQL cannot store a NUL; Python cannot add an offset to
9999-12-31T23:59:59-01:00). Labels people choose are cleaned like file names.

`test_every_route_refuses_nul_and_extreme_dates` walks the whole OpenAPI document, so a new
route or field is covered without a change here."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.factories import add_file, auth_headers, make_user

NUL = "a\x00b"
EXTREME_MOMENTS = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "9999-12-31",
                   "0001-01-01", "2099-01-01T00:00:00"]
DATE_NAME = re.compile(r"(?i)^(from|to)$|At$|Before$|After$|From$")


@pytest.fixture
def admin(settings, db_session):
    user = make_user(db_session, role="ADMIN")
    return user, auth_headers(settings, db_session, user)


def assert_invalid(answer, field: str) -> None:
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["success"] is False and body["error"] == "validation_error", body
    assert field in body["message"], body
    assert "\x00" not in answer.text


# -- the walk over every route -----------------------------------------------------------------
def _resolve(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _example(document: dict, schema: dict):
    """A plausible value of `schema` (every property, the first choice of each union)."""
    schema = _resolve(document, schema)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return _example(document, options[0]) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: _example(document, sub)
                for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [_example(document, schema.get("items", {}))]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 1.0)
    if kind == "boolean":
        return True
    if schema.get("format") == "date-time":
        return "2030-01-01T00:00:00Z"
    if schema.get("format") == "email":
        return "walker@example.com"
    return "example"


def _string_leaves(value, path=()) -> Iterator[tuple]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_leaves(item, (*path, i))


def _replaced(value, path: tuple, new: str):
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


def _is_string(schema: dict) -> bool:
    types = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", [])]
    return "string" in types


def _moment_like(name: str, schema: dict) -> bool:
    formats = [schema.get("format")] + [s.get("format") for s in schema.get("anyOf", [])]
    return "date-time" in formats or "date" in formats or bool(DATE_NAME.search(name))


def _cases(document: dict) -> Iterator[tuple[str, str, str, dict, object, str]]:
    """(method, path, field, query, body, kind) for each string a call takes, with a NUL in
    it (kind "nul") or, for the moments, each extreme value (kind "moment")."""
    for path, item in document["paths"].items():
        for method, operation in item.items():
            params = operation.get("parameters", [])
            path_values = {p["name"]: "example" for p in params if p["in"] == "path"}
            content = operation.get("requestBody", {}).get("content", {})
            body = (_example(document, content["application/json"]["schema"])
                    if "application/json" in content else None)

            def url(values: dict, path=path) -> str:
                return path.format(**{k: quote(v, safe="") for k, v in values.items()})

            for p in params:
                name, schema = p["name"], p.get("schema", {})
                if p["in"] == "path":
                    yield method, url({**path_values, name: NUL}), name, {}, body, "nul"
                elif p["in"] == "query" and _is_string(schema):
                    yield method, url(path_values), name, {name: NUL}, body, "nul"
                    if _moment_like(name, schema):
                        for moment in EXTREME_MOMENTS:
                            yield (method, url(path_values), name, {name: moment}, body,
                                   "moment")
            # A query parameter no route declares is refused the same way.
            yield method, url(path_values), "stray", {"stray": NUL}, body, "nul"
            for leaf in _string_leaves(body):
                name = str(leaf[-1]) if isinstance(leaf[-1], str) else str(leaf[-2])
                yield method, url(path_values), name, {}, _replaced(body, leaf, NUL), "nul"
                if DATE_NAME.search(name):
                    for moment in EXTREME_MOMENTS:
                        yield (method, url(path_values), name, {},
                               _replaced(body, leaf, moment), "moment")


def test_every_route_refuses_nul_and_extreme_dates(api, admin, settings, db_session):
    """Every path parameter, query parameter and JSON body string of every operation, with a
    NUL: 422 naming it. Every moment (and each string named like one) at the calendar's ends
    or without a zone: never a server error. Signed in as an admin, so admin calls are
    reached (signed in again when a call, such as logout, ended the session)."""
    user, headers = admin
    document = api.get("/api/openapi.json").json()
    seen = {"nul": 0, "moment": 0}
    server_errors, not_named = [], []
    for method, url, field, query, body, kind in _cases(document):
        try:
            for _ in range(2):
                answer = api.request(method.upper(), url, params=query, headers=headers,
                                     json=body if body is not None else None)
                if answer.status_code != 401:
                    break
                headers = auth_headers(settings, db_session, user)
        except Exception as exc:  # noqa: BLE001 - the test client re-raises a server error
            server_errors.append(f"{method.upper()} {url} {field}: {exc!r}")
            continue
        where = f"{method.upper()} {url} {field}: {answer.status_code} {answer.text[:120]}"
        if answer.status_code >= 500:
            server_errors.append(where)
        elif kind == "nul" and (answer.status_code != 422
                                or field not in answer.json()["message"]):
            not_named.append(where)
        seen[kind] += 1
    assert server_errors == []
    assert not_named == []
    assert seen["nul"] > 150 and seen["moment"] > 20, seen  # the walk found the API


# -- issue 19's cases, one by one -------------------------------------------------------------
def test_a_key_expiry_needs_a_zone_and_a_bounded_year(api, settings, db_session):
    headers = auth_headers(settings, db_session, make_user(db_session, role="ENTERPRISE"))
    for expiry in ("2099-01-01T00:00:00", "9999-12-31T23:59:59-01:00",
                   "0001-01-01T00:00:00+01:00", "9000-01-01T00:00:01Z"):
        answer = api.post("/api/keys", json={"name": "ci", "expiresAt": expiry},
                          headers=headers)
        assert_invalid(answer, "expiresAt")
    ok = api.post("/api/keys", json={"name": "ci", "expiresAt": "2099-01-01T00:00:00+02:00"},
                  headers=headers)
    assert ok.status_code == 201, ok.text
    assert ok.json()["data"]["key"]["expiresAt"] == "2098-12-31T22:00:00Z"


@pytest.mark.parametrize("period", [
    {"from": "2026-01-01", "to": "9999-12-31"},
    {"from": "0001-01-01T00:00:00+01:00", "to": "2026-01-01"},
    {"from": "2026-01-01", "to": "9000-01-01"},  # its end, the next day, is past the bound
    {"from": "1969-12-31", "to": "1970-01-02"},
])
def test_report_periods_at_the_calendar_ends_are_422(api, admin, period):
    _, headers = admin
    answer = api.post("/api/reports", json={**period, "format": "csv"}, headers=headers)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "validation_error"
    assert "between 1970-01-01 and 9000-01-01" in answer.json()["message"]


@pytest.mark.parametrize("path", ["/api/audit", "/api/audit/export"])
def test_audit_bounds_are_checked_before_any_answer_starts(api, admin, path):
    _, headers = admin
    for name, value in (("to", "9999-12-31T23:59:59-01:00"),
                        ("from", "0001-01-01T00:00:00+01:00"), ("to", "9999-12-31")):
        answer = api.get(path, params={name: value}, headers=headers)
        assert_invalid(answer, name)
    # A naive moment is UTC, as documented; the export streams its rows.
    answer = api.get(path, params={"from": "2020-01-01T00:00:00", "to": "8999-01-01"},
                     headers=headers)
    assert answer.status_code == 200, answer.text


def test_admin_file_dates_are_bounded(api, admin):
    _, headers = admin
    answer = api.get("/api/admin/files", params={"createdBefore": "9999-12-31T23:59:59-01:00"},
                     headers=headers)
    assert_invalid(answer, "createdBefore")


def test_nul_in_the_fields_the_issue_names_is_422(api, admin, settings, db_session):
    user, headers = admin
    file = add_file(db_session, settings, user)
    calls = [
        ("post", "/api/keys", {"json": {"name": NUL}}, "name"),
        ("post", "/api/policies", {"json": {"name": "p", "description": NUL, "rules": {}}},
         "description"),
        ("post", "/api/policies", {"json": {"name": NUL, "rules": {}}}, "name"),
        ("put", "/api/auth/profile", {"json": {"firstName": NUL}}, "firstName"),
        ("post", "/api/reports", {"json": {"from": "2026-01-01", "to": "2026-01-02",
                                           "format": "csv", "scope": NUL}}, "scope"),
        ("get", f"/api/users/{user.id}/files", {"params": {"search": NUL}}, "search"),
        ("get", "/api/process/status/a%00b", {}, "file_id"),
        ("get", f"/api/process/download/{file.id}%00", {}, "file_id"),
        ("get", "/api/policies/a%00b", {}, "policy_id"),
        ("delete", "/api/keys/a%00b", {}, "key_id"),
        ("get", "/api/admin/files", {"params": {"userId": NUL}}, "userId"),
        ("post", "/api/upload/single", {"params": {"policyId": NUL},
                                        "files": {"file": ("a.txt", b"hello")}}, "policyId"),
        ("post", "/api/upload/single", {"data": {"policyId": NUL},
                                        "files": {"file": ("a.txt", b"hello")}}, "policyId"),
        ("post", "/api/auth/login", {"json": {"email": "a@example.com", "password": NUL}},
         "password"),
    ]
    for method, url, options, field in calls:
        assert_invalid(api.request(method.upper(), url, headers=headers, **options), field)


def test_unpaired_surrogates_and_nul_keys_in_json_are_422(api, admin):
    _, headers = admin
    raw = b'{"name": "a\\ud800b"}'
    answer = api.post("/api/keys", content=raw, headers={**headers,
                                                         "Content-Type": "application/json"})
    assert_invalid(answer, "name")
    answer = api.post("/api/keys", content=b'{"na\\u0000me": "x", "\\udc00": 1}',
                      headers={**headers, "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert "na\\u0000me" in answer.json()["message"]  # named, escaped


# -- labels are cleaned like file names --------------------------------------------------------
DIRTY = " \u202eInvoice\u200b\x07 2026\u2028\t"
CLEAN = "Invoice 2026"


def test_labels_are_cleaned_like_file_names(api, admin):
    _, headers = admin
    key = api.post("/api/keys", json={"name": DIRTY}, headers=headers)
    assert key.status_code == 201, key.text
    assert key.json()["data"]["key"]["name"] == CLEAN
    assert [k["name"] for k in api.get("/api/keys", headers=headers).json()["data"]] == [CLEAN]

    policy = api.post("/api/policies", json={"name": DIRTY, "description": DIRTY,
                                             "rules": {}}, headers=headers)
    assert policy.status_code == 201, policy.text
    stored = api.get(f"/api/policies/{policy.json()['data']['id']}", headers=headers).json()
    assert (stored["data"]["name"], stored["data"]["description"]) == (CLEAN, CLEAN)

    profile = api.put("/api/auth/profile", json={"firstName": DIRTY, "lastName": "\u202e"},
                      headers=headers)
    assert profile.status_code == 200, profile.text
    me = api.get("/api/auth/profile", headers=headers).json()["data"]
    me = me.get("user", me)
    assert me["firstName"] == CLEAN

    message = {"name": DIRTY, "email": "a@example.com", "subject": DIRTY,
               "message": "A message long enough."}
    assert api.post("/api/contact", json=message).status_code in (200, 201)
    listed = api.get("/api/contact", headers=headers).json()["data"]
    item = (listed.get("messages") or listed.get("items"))[0]
    assert (item["name"], item["subject"]) == (CLEAN, CLEAN)


def test_a_label_that_is_only_invisible_characters_is_refused(api, admin):
    _, headers = admin
    answer = api.post("/api/keys", json={"name": "\u202e\u200b\x07 "}, headers=headers)
    assert_invalid(answer, "name")
