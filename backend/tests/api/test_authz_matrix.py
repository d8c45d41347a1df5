"""Every files/usage/queue endpoint x anonymous/GUEST/USER/ENTERPRISE/ADMIN x own/other's
file: the server decides, another user's ids answer 404 (not 403), admins reach everything."""

from __future__ import annotations

import pytest

from tests.factories import TEXT, add_file, auth_headers, make_user

ROLES = ("GUEST", "USER", "ENTERPRISE", "ADMIN")

# (method, path template, expected status for a non-admin, for an admin); {file} and {user}
# are filled with the caller's own or another user's ids.
OWNED = [
    ("GET", "/api/process/status/{file}", 200, 200),
    ("GET", "/api/process/download/{file}", 200, 200),
    ("GET", "/api/users/{user}/files", 200, 200),
]
OTHERS = [
    ("GET", "/api/process/status/{file}", 404, 200),
    ("GET", "/api/process/download/{file}", 404, 200),
    ("GET", "/api/users/{user}/files", 404, 200),
]
GENERAL = [
    ("GET", "/api/upload/info", 200, 200),
    ("POST", "/api/upload/single", 201, 201),
    ("POST", "/api/upload/multiple", 201, 201),
    ("GET", "/api/usage/stats", 200, 200),
    ("GET", "/api/usage/history?months=6", 200, 200),
    ("GET", "/api/usage/analytics?timeframe=week", 403, 200),
    ("POST", "/api/usage/reset-quota/{other_user}", 403, 200),
    ("GET", "/api/process/queue/stats", 403, 200),
    ("POST", "/api/process/queue/pause", 403, 200),
    ("POST", "/api/process/queue/resume", 403, 200),
    ("POST", "/api/process/queue/clear-completed", 403, 200),
    ("POST", "/api/process/queue/clear-failed", 403, 200),
]


def _call(client, method, path, headers):
    if path.startswith("/api/upload/single"):
        return client.post(path, headers=headers, files={"file": ("a.txt", TEXT)})
    if path.startswith("/api/upload/multiple"):
        return client.post(path, headers=headers, files=[("files", ("a.txt", TEXT))])
    return client.request(method, path, headers=headers)


@pytest.mark.parametrize("role", ROLES)
def test_matrix_for_role(api, settings, db_session, role):
    me = make_user(db_session, role=role)
    other = make_user(db_session, role="USER")
    mine = add_file(db_session, settings, me, status="COMPLETED")
    theirs = add_file(db_session, settings, other, status="COMPLETED")
    h = auth_headers(settings, db_session, me)
    admin = role == "ADMIN"
    seen = []
    for rows, file, user in ((OWNED, mine, me), (OTHERS, theirs, other)):
        for method, template, plain, for_admin in rows:
            path = template.format(file=file.id, user=user.id)
            answer = _call(api, method, path, h)
            expected = for_admin if admin else plain
            seen.append((method, template, answer.status_code))
            assert answer.status_code == expected, (role, path, answer.text)
            if expected == 404:
                assert answer.json()["success"] is False
                assert answer.json()["message"] in ("File not found", "User not found")
    for method, template, plain, for_admin in GENERAL:
        path = template.format(other_user=other.id)
        answer = _call(api, method, path, h)
        expected = for_admin if admin else plain
        assert answer.status_code == expected, (role, path, answer.text)
        assert answer.json()["success"] is (expected < 400)
    # a 404 for another's file is indistinguishable from a file that does not exist
    if not admin:
        missing = api.get("/api/process/status/00000000-0000-0000-0000-000000000000",
                          headers=h)
        other_file = api.get(f"/api/process/status/{theirs.id}", headers=h)
        assert missing.json() == other_file.json()


def test_matrix_anonymous(api, settings, db_session):
    owner = make_user(db_session)
    file = add_file(db_session, settings, owner, status="COMPLETED")
    for method, template, _plain, _admin in OWNED + GENERAL:
        path = template.format(file=file.id, user=owner.id, other_user=owner.id)
        answer = _call(api, method, path, {})
        assert answer.status_code == 401, path
        assert answer.json() == {"success": False,
                                 "message": "Authentication required. Please sign in.",
                                 "error": "unauthorized"}
    bad = {"Authorization": "Bearer not-a-token"}
    assert api.get(f"/api/process/status/{file.id}", headers=bad).status_code == 401


# -- plans x capabilities: every route behind Requires(Capability.X) -----------------------
def _gated_routes(app):
    from sanitas.web.deps import plan_gates
    from sanitas.web.openapi import _calls, api_routes

    for route in api_routes(app):
        for capability in plan_gates(_calls(route.dependant)):
            for method in sorted(route.methods or ()):
                yield method, route.path_format, capability


def _fill(template: str) -> str:
    import re

    return re.sub(r"\{[^}]+\}", "00000000-0000-0000-0000-000000000000", template)


@pytest.mark.parametrize("role", ROLES)
def test_plans_x_capabilities(api, settings, db_session, role):
    """Each gated route answers 403 plan_required exactly when the caller's plan (the table,
    sanitas/plans.py) lacks its capability; the table's roles are the roles tested."""
    from sanitas.plans import Capability

    assert {p.role.value for p in settings.plans.plans} == set(ROLES)
    plan = settings.plans[role]
    gated = list(_gated_routes(api.app))
    # Every capability a route can carry is on at least one route.
    route_capabilities = {c for _, _, c in gated}
    assert route_capabilities == set(Capability) - {Capability.ADVANCED_MODE,
                                                    Capability.HIGH_PRIORITY}
    h = auth_headers(settings, db_session, make_user(db_session, role=role))
    for method, template, capability in gated:
        answer = api.request(method, _fill(template), headers=h, json={})
        refused = answer.status_code == 403 and answer.json()["error"] == "plan_required"
        assert refused is not plan.has(capability), (role, method, template, answer.text)
        # anonymous callers are told to sign in, not about plans
        assert api.request(method, _fill(template), json={}).status_code == 401
    # The two capabilities that are no route: the processing mode and the job's priority.
    upload = api.post("/api/upload/single", headers=h, data={"mode": "advanced"},
                      files={"file": ("a.txt", TEXT)})
    if plan.has(Capability.ADVANCED_MODE):
        assert upload.status_code == 201, upload.text
        from sanitas.models import Job

        job = db_session.query(Job).filter_by(file_id=upload.json()["data"]["fileId"]).one()
        assert (job.priority > 0) is plan.has(Capability.HIGH_PRIORITY)
    else:
        assert upload.status_code == 403 and upload.json()["error"] == "mode_not_allowed"
