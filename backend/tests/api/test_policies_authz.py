"""Every policy call x anonymous/GUEST/USER/ENTERPRISE/ADMIN x built-in / organisation-wide /
own / another account's policy (the style of test_authz_matrix.py): the server decides,
another account's personal policy answers 404 like one that does not exist; concurrent edits
make one version each; the per-account limit holds under concurrent creation."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from sanitas.models import PolicyVersion
from sanitas.policies import service as policies_service
from tests.api.policy_samples import body
from tests.factories import TEXT, auth_headers, make_user

ROLES = ("GUEST", "USER", "ENTERPRISE", "ADMIN")
WRITERS = ("ENTERPRISE", "ADMIN")

# (method, path template, {role: expected status}); {builtin} {org} {own} {theirs} are ids.
def _expected(reader: int, writer: int, admin: int | None = None) -> dict[str, int]:
    return {"GUEST": reader, "USER": reader, "ENTERPRISE": writer,
            "ADMIN": writer if admin is None else admin}


MATRIX = [
    ("GET", "/api/policies", _expected(200, 200)),
    ("POST", "/api/policies", _expected(403, 201)),
    ("GET", "/api/policies/{builtin}", _expected(200, 200)),
    ("GET", "/api/policies/{org}", _expected(200, 200)),
    ("GET", "/api/policies/{own}", _expected(200, 200)),
    ("GET", "/api/policies/{theirs}", _expected(404, 404)),
    ("PUT", "/api/policies/{builtin}", _expected(403, 403)),
    ("PUT", "/api/policies/{org}", _expected(403, 403, admin=200)),
    ("PUT", "/api/policies/{own}", _expected(403, 200)),
    ("PUT", "/api/policies/{theirs}", _expected(403, 404)),
    ("POST", "/api/policies/{builtin}/duplicate", _expected(403, 201)),
    ("POST", "/api/policies/{org}/duplicate", _expected(403, 201)),
    ("POST", "/api/policies/{own}/duplicate", _expected(403, 201)),
    ("POST", "/api/policies/{theirs}/duplicate", _expected(403, 404)),
    ("GET", "/api/policies/defaults", _expected(403, 403, admin=200)),
    ("PUT", "/api/policies/defaults", _expected(403, 403, admin=200)),
    ("POST", "/api/upload/single?policyId={builtin}", _expected(201, 201)),
    ("POST", "/api/upload/single?policyId={org}", _expected(201, 201)),
    ("POST", "/api/upload/single?policyId={own}", _expected(201, 201)),
    ("POST", "/api/upload/single?policyId={theirs}", _expected(404, 404)),
    ("DELETE", "/api/policies/{builtin}", _expected(403, 403)),
    ("DELETE", "/api/policies/{theirs}", _expected(403, 404)),
    ("DELETE", "/api/policies/{own}", _expected(403, 200)),
    ("DELETE", "/api/policies/{org}", _expected(403, 403, admin=200)),
]


def _call(client, method, path, headers):
    if path.startswith("/api/upload/single"):
        return client.post(path, headers=headers, files={"file": ("a.txt", TEXT)})
    if path == "/api/policies/defaults" and method == "PUT":
        return client.put(path, headers=headers, json={"USER": "basic"})
    if method in ("POST", "PUT") and not path.endswith("/duplicate"):
        return client.request(method, path, headers=headers, json=body())
    return client.request(method, path, headers=headers)


def _own_policy(db_session, owner_id: str | None, name: str) -> str:
    """A stored policy written straight to the database (GUEST and USER cannot create one
    through the API, but may own one from an earlier plan)."""
    from sanitas.db import utcnow
    from sanitas.engine.policy import BASIC
    from sanitas.models import StoredPolicy

    now = utcnow()
    policy = StoredPolicy(owner_id=owner_id, name=name, version=1, body=BASIC.to_json(),
                          created_at=now, updated_at=now)
    db_session.add(policy)
    db_session.flush()
    db_session.add(PolicyVersion(policy_id=policy.id, version=1, name=name,
                                 body=policy.body, created_at=now))
    db_session.commit()
    return policy.id


@pytest.mark.parametrize("role", ROLES)
def test_matrix_for_role(api, settings, db_session, role):
    me = make_user(db_session, role=role)
    other = make_user(db_session, role="ENTERPRISE")
    ids = {"builtin": "basic", "org": _own_policy(db_session, None, "Org"),
           "own": _own_policy(db_session, me.id, "Mine"),
           "theirs": _own_policy(db_session, other.id, "Theirs")}
    h = auth_headers(settings, db_session, me)
    missing = api.get("/api/policies/00000000-0000-0000-0000-000000000000", headers=h).json()
    for method, template, expected in MATRIX:
        path = template.format(**ids)
        answer = _call(api, method, path, h)
        assert answer.status_code == expected[role], (role, method, path, answer.text)
        assert answer.json()["success"] is (answer.status_code < 400)
        if answer.status_code == 404 and not path.startswith("/api/upload"):
            assert answer.json() == missing
    listed = {p["id"] for p in api.get("/api/policies", headers=h).json()["data"]}
    assert ids["theirs"] not in listed


def test_matrix_anonymous(api, settings, db_session):
    for method, template, _expected_statuses in MATRIX:
        path = template.format(builtin="basic", org="x", own="y", theirs="z")
        answer = _call(api, method, path, {})
        assert answer.status_code == 401, path
        assert answer.json()["error"] == "unauthorized"


def test_concurrent_edits_make_one_version_each(api, settings, db_session):
    user = make_user(db_session, role="ENTERPRISE")
    h = auth_headers(settings, db_session, user)
    pid = api.post("/api/policies", headers=h, json=body()).json()["data"]["id"]
    actions = ["remove", "keep", "refuse"]
    payloads = [{**body(f"edit {i}", hyperlinks=actions[i % 3]), "maxPages": i + 1}
                for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda p: api.put(f"/api/policies/{pid}", headers=h, json=p),
                                payloads))
    assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers]
    assert sorted(a.json()["data"]["version"] for a in answers) == list(range(2, 10))
    versions = db_session.scalars(select(PolicyVersion.version)
                                  .where(PolicyVersion.policy_id == pid)).all()
    assert sorted(versions) == list(range(1, 10))
    final = api.get(f"/api/policies/{pid}", headers=h).json()["data"]
    assert final["version"] == 9


def test_the_policy_limit_holds_under_concurrency(api, settings, db_session, monkeypatch):
    monkeypatch.setattr(policies_service, "MAX_PERSONAL_POLICIES", 3)
    user = make_user(db_session, role="ENTERPRISE")
    h = auth_headers(settings, db_session, user)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: api.post("/api/policies", headers=h,
                                                   json=body(f"p{i}")), range(8)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] * 3 + [409] * 5, [a.text for a in answers]
    assert {a.json()["error"] for a in answers if a.status_code == 409} == \
        {"too_many_policies"}
    assert len(api.get("/api/policies", headers=h).json()["data"]) == 2 + 3
