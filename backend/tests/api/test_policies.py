"""The policy calls (SQLite and PostgreSQL): built-ins, create/read/replace/delete/duplicate,
validation against the engine's choices, versions, each role's default, and uploads cleaned
with a chosen policy through the real executor (hyperlinks kept or removed, JavaScript
refusing the file), with the recorded SHA-256s recomputed from the stored blobs."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import func, select

from sanitas.db import make_engine, make_sessionmaker
from sanitas.engine.policy import BUILT_IN, CHOICES, Rule
from sanitas.models import File, Job, PolicyVersion, StoredPolicy
from sanitas.processing import run
from tests.api.policy_samples import LINK, body, link_uris, pdf_with_javascript, pdf_with_link
from tests.api.polling import wait_for
from tests.factories import TEXT, add_file, auth_headers, make_user


def _headers(settings, db_session, role):
    user = make_user(db_session, role=role)
    return user, auth_headers(settings, db_session, user)


def _create(client, headers, payload=None, status=201):
    answer = client.post("/api/policies", headers=headers, json=payload or body())
    assert answer.status_code == status, answer.text
    return answer.json()["data"]


def _upload(client, headers, name, content, **fields):
    return client.post("/api/upload/single", headers=headers, files={"file": (name, content)},
                       data=fields)


# -- built-ins and CRUD ----------------------------------------------------------------------
def test_the_rule_of_each_finding_kind_is_published(api, settings, db_session):
    """The web app's policy preview places a file's findings under the rule that decides them."""
    from sanitas.engine.kinds import FINDING_KINDS

    assert api.get("/api/policies/kinds").status_code == 401
    _, h = _headers(settings, db_session, "USER")
    kinds = api.get("/api/policies/kinds", headers=h).json()["data"]["kinds"]
    assert set(kinds) == set(FINDING_KINDS)
    assert kinds["macro"] == ["macros"] and kinds["repaired"] == []
    shared = [k for k, rules in kinds.items() if len(rules) > 1]
    assert shared and all(r in {rule.value for rule in Rule} for k in shared for r in kinds[k])


@pytest.mark.parametrize("role", ["GUEST", "USER", "ENTERPRISE", "ADMIN"])
def test_every_account_lists_the_built_ins(api, settings, db_session, role):
    _, h = _headers(settings, db_session, role)
    answer = api.get("/api/policies", headers=h)
    assert answer.status_code == 200
    listed = {p["id"]: p for p in answer.json()["data"]}
    assert set(listed) == {"basic", "advanced"}
    for policy_id, engine_policy in BUILT_IN.items():
        p = listed[policy_id]
        assert p["builtIn"] is True and p["scope"] == "organisation" and p["ownerId"] is None
        assert p["version"] == 1
        expected = engine_policy.to_json()
        assert p["rules"] == expected["rules"]
        assert (p["output"], p["maxPages"], p["allowedTypes"]) == (
            expected["output"], expected["maxPages"], expected["allowedTypes"])
        assert api.get(f"/api/policies/{policy_id}", headers=h).json()["data"] == p
    assert listed["advanced"]["output"] == "pdf" and listed["basic"]["output"] == "same"


def test_create_read_replace_delete(api, settings, db_session):
    me, h = _headers(settings, db_session, "ENTERPRISE")
    created = _create(api, h, {"name": "  Keep links  ", "rules": {"hyperlinks": "keep",
                                                                    "macros": "refuse"},
                               "allowedTypes": ["pdf", "OOXML"], "maxPages": 40})
    assert created["name"] == "Keep links" and created["builtIn"] is False
    assert created["scope"] == "personal" and created["ownerId"] == me.id
    assert created["version"] == 1 and created["output"] == "same"
    assert created["allowedTypes"] == ["ooxml", "pdf"] and created["maxPages"] == 40
    # every rule answered; the ones left out are the built-in basic policy's
    assert created["rules"] == {**BUILT_IN["basic"].to_json()["rules"], "hyperlinks": "keep",
                                "macros": "refuse"}
    assert created["createdAt"].endswith("Z") and created["updatedAt"]
    pid = created["id"]
    assert api.get(f"/api/policies/{pid}", headers=h).json()["data"] == created
    assert [p["id"] for p in api.get("/api/policies", headers=h).json()["data"]] == \
        ["basic", "advanced", pid]

    # a new name alone is not a new version
    renamed = api.put(f"/api/policies/{pid}", headers=h, json={
        "name": "Links kept", "rules": created["rules"], "allowedTypes": ["pdf", "ooxml"],
        "maxPages": 40})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["data"]["version"] == 1
    assert renamed.json()["data"]["name"] == "Links kept"
    # a changed body is
    changed = api.put(f"/api/policies/{pid}", headers=h,
                      json=body("Links kept", hyperlinks="remove")).json()["data"]
    assert changed["version"] == 2 and changed["rules"]["hyperlinks"] == "remove"
    assert changed["allowedTypes"] is None and changed["maxPages"] is None
    assert changed["description"] == "for tests"
    versions = db_session.execute(select(PolicyVersion.version, PolicyVersion.body)
                                  .where(PolicyVersion.policy_id == pid)
                                  .order_by(PolicyVersion.version)).all()
    assert [v for v, _ in versions] == [1, 2]
    assert versions[0][1]["rules"]["hyperlinks"] == "keep"
    assert versions[1][1]["rules"]["hyperlinks"] == "remove"

    deleted = api.delete(f"/api/policies/{pid}", headers=h)
    assert deleted.status_code == 200 and deleted.json()["data"] == {"id": pid}
    assert api.get(f"/api/policies/{pid}", headers=h).status_code == 404
    assert api.put(f"/api/policies/{pid}", headers=h, json=body()).status_code == 404
    assert api.delete(f"/api/policies/{pid}", headers=h).status_code == 404
    assert len(api.get("/api/policies", headers=h).json()["data"]) == 2
    # the row and its versions stay for the files cleaned with them
    db_session.expire_all()
    assert db_session.get(StoredPolicy, pid).deleted_at is not None
    assert db_session.scalar(select(func.count()).select_from(PolicyVersion)
                             .where(PolicyVersion.policy_id == pid)) == 2


def test_duplicate_makes_a_personal_copy(api, settings, db_session):
    me, h = _headers(settings, db_session, "ENTERPRISE")
    _, admin_h = _headers(settings, db_session, "ADMIN")
    org = _create(api, admin_h, {**body("Shared", hyperlinks="remove"),
                                 "scope": "organisation"})
    assert org["scope"] == "organisation" and org["ownerId"] is None
    for source, name in ((org["id"], "Copy of Shared"), ("advanced", "Copy of Advanced")):
        answer = api.post(f"/api/policies/{source}/duplicate", headers=h)
        assert answer.status_code == 201, answer.text
        copy = answer.json()["data"]
        assert copy["name"] == name and copy["ownerId"] == me.id
        assert copy["scope"] == "personal" and copy["version"] == 1
        original = api.get(f"/api/policies/{source}", headers=h).json()["data"]
        for key in ("rules", "output", "allowedTypes", "maxPages"):
            assert copy[key] == original[key]
    # and the copy is the caller's to change, the organisation's policy is not
    assert api.put(f"/api/policies/{copy['id']}", headers=h, json=body()).status_code == 200
    refused = api.put(f"/api/policies/{org['id']}", headers=h, json=body())
    assert refused.status_code == 403
    assert refused.json()["error"] == "organisation_scope_admin_only"


# -- validation ------------------------------------------------------------------------------
@pytest.mark.parametrize(("payload", "field"), [
    ({**body(), "colour": "red"}, "colour"),
    (body(popups="remove"), "rules.popups"),
    (body(macros="keep"), "rules.macros"),
    (body(javascript="keep"), "rules.javascript"),
    (body(hyperlinks="sanitize"), "rules.hyperlinks"),
    (body(reviewData="delete"), "rules.reviewData"),
    ({**body(), "output": "docx"}, "output"),
    ({**body(), "maxPages": 0}, "maxPages"),
    ({**body(), "maxPages": 10**6}, "maxPages"),
    ({**body(), "allowedTypes": []}, "allowedTypes"),
    ({**body(), "allowedTypes": ["pdf", "exe"]}, "allowedTypes"),
    ({**body(), "name": "   "}, "name"),
    ({**body(), "name": "x" * 101}, "name"),
    ({"rules": {}}, "name"),
    ({"name": "no rules"}, "rules"),
    ({**body(), "max_pages": 3}, "max_pages"),
    ({"name": "n", "rules": {"embedded_files": "remove"}}, "embedded_files"),
])
def test_invalid_bodies_are_422_naming_the_field(api, settings, db_session, payload, field):
    _, h = _headers(settings, db_session, "ENTERPRISE")
    answer = api.post("/api/policies", headers=h, json=payload)
    assert answer.status_code == 422, answer.text
    envelope = answer.json()
    assert envelope["success"] is False and envelope["error"] == "validation_error"
    assert field in envelope["message"]
    assert db_session.scalar(select(func.count()).select_from(StoredPolicy)) == 0


def test_every_rule_takes_exactly_the_engines_choices(api, settings, db_session):
    _, h = _headers(settings, db_session, "ENTERPRISE")
    for rule in Rule:
        for action in ("remove", "keep", "refuse", "sanitize", "anonymise"):
            answer = api.post("/api/policies", headers=h,
                              json=body(f"{rule.value} {action}", **{rule.value: action}))
            offered = action in {a.value for a in CHOICES[rule]}
            assert answer.status_code == (201 if offered else 422), (rule, action, answer.text)
            if offered:
                assert answer.json()["data"]["rules"][rule.value] == action


def test_outputs(api, settings, db_session):
    _, h = _headers(settings, db_session, "ENTERPRISE")
    for output in ("same", "pdf", "pdf+ocr"):
        assert _create(api, h, {**body(output), "output": output})["output"] == output


# -- permissions -----------------------------------------------------------------------------
@pytest.mark.parametrize("role", ["GUEST", "USER"])
def test_plans_without_custom_policies_cannot_write(api, settings, db_session, role):
    _, h = _headers(settings, db_session, role)
    _, admin_h = _headers(settings, db_session, "ADMIN")
    org = _create(api, admin_h, {**body("Org"), "scope": "organisation"})
    calls = [api.post("/api/policies", headers=h, json=body()),
             api.put(f"/api/policies/{org['id']}", headers=h, json=body()),
             api.delete(f"/api/policies/{org['id']}", headers=h),
             api.post("/api/policies/basic/duplicate", headers=h)]
    for answer in calls:
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"] == "plan_required"
        assert "Enterprise plan" in answer.json()["message"]
    # but they see and read the organisation's policy
    assert org["id"] in [p["id"] for p in api.get("/api/policies", headers=h).json()["data"]]
    assert api.get(f"/api/policies/{org['id']}", headers=h).status_code == 200


@pytest.mark.parametrize("role", ["ENTERPRISE", "ADMIN"])
def test_another_accounts_personal_policy_is_not_found(api, settings, db_session, role):
    _, owner_h = _headers(settings, db_session, "ENTERPRISE")
    theirs = _create(api, owner_h)
    _, h = _headers(settings, db_session, role)
    missing = api.get("/api/policies/00000000-0000-0000-0000-000000000000", headers=h)
    assert missing.status_code == 404
    for answer in (api.get(f"/api/policies/{theirs['id']}", headers=h),
                   api.put(f"/api/policies/{theirs['id']}", headers=h, json=body()),
                   api.delete(f"/api/policies/{theirs['id']}", headers=h),
                   api.post(f"/api/policies/{theirs['id']}/duplicate", headers=h)):
        assert answer.status_code == 404
        assert answer.json() == missing.json()
    assert theirs["id"] not in [p["id"] for p in
                                api.get("/api/policies", headers=h).json()["data"]]
    # nor can it be used for an upload
    refused = _upload(api, h, "a.txt", TEXT, policyId=theirs["id"])
    assert refused.status_code == 404


def test_built_ins_cannot_be_changed_or_deleted(api, settings, db_session):
    _, h = _headers(settings, db_session, "ADMIN")
    for answer in (api.put("/api/policies/basic", headers=h, json=body()),
                   api.delete("/api/policies/advanced", headers=h)):
        assert answer.status_code == 403
        assert answer.json()["error"] == "built_in_policy"


def test_only_admins_publish_organisation_wide(api, settings, db_session):
    _, ent_h = _headers(settings, db_session, "ENTERPRISE")
    _, admin_h = _headers(settings, db_session, "ADMIN")
    _, other_admin_h = _headers(settings, db_session, "ADMIN")
    refused = api.post("/api/policies", headers=ent_h,
                       json={**body(), "scope": "organisation"})
    assert refused.status_code == 403
    assert refused.json()["error"] == "organisation_scope_admin_only"
    mine = _create(api, ent_h)
    assert api.put(f"/api/policies/{mine['id']}", headers=ent_h,
                   json={**body(), "scope": "organisation"}).status_code == 403
    # an admin's personal policy becomes organisation-wide, then any admin edits it
    personal = _create(api, admin_h)
    published = api.put(f"/api/policies/{personal['id']}", headers=admin_h,
                         json={**body(), "scope": "organisation"}).json()["data"]
    assert published["scope"] == "organisation" and published["ownerId"] is None
    edited = api.put(f"/api/policies/{personal['id']}", headers=other_admin_h,
                     json=body("Edited", hyperlinks="remove"))
    assert edited.status_code == 200 and edited.json()["data"]["scope"] == "organisation"
    assert edited.json()["data"]["version"] == 2
    listed = api.get("/api/policies", headers=ent_h).json()["data"]
    assert [p["id"] for p in listed] == ["basic", "advanced", personal["id"], mine["id"]]


# -- defaults --------------------------------------------------------------------------------
def test_defaults(api, settings, db_session):
    _, admin_h = _headers(settings, db_session, "ADMIN")
    _, ent_h = _headers(settings, db_session, "ENTERPRISE")
    assert api.get("/api/policies/defaults", headers=admin_h).json()["data"] == {
        "GUEST": "basic", "USER": "basic", "ENTERPRISE": "basic", "ADMIN": "basic"}
    for call in (api.get("/api/policies/defaults", headers=ent_h),
                 api.put("/api/policies/defaults", headers=ent_h, json={"USER": "advanced"})):
        assert call.status_code == 403 and call.json()["error"] == "forbidden"
    org = _create(api, admin_h, {**body("Org links", hyperlinks="remove"),
                                 "scope": "organisation"})
    personal = _create(api, ent_h)
    pixels = _create(api, admin_h, {**body("Pixels"), "output": "pdf",
                                    "scope": "organisation"})
    for bad in ({"ENTERPRISE": personal["id"]}, {"USER": "no-such-policy"},
                {"GUEST": "advanced"}, {"GUEST": pixels["id"]}, {"OWNER": "basic"}):
        answer = api.put("/api/policies/defaults", headers=admin_h, json=bad)
        assert answer.status_code == 422, (bad, answer.text)
        assert answer.json()["error"] == "validation_error"
    answer = api.put("/api/policies/defaults", headers=admin_h,
                     json={"ENTERPRISE": org["id"], "USER": "advanced"})
    assert answer.status_code == 200
    assert answer.json()["data"] == {"GUEST": "basic", "USER": "advanced",
                                     "ENTERPRISE": org["id"], "ADMIN": "basic"}
    info = api.get("/api/upload/info", headers=ent_h).json()["data"]
    assert info["defaultPolicyId"] == org["id"]
    assert api.get("/api/upload/info", headers=admin_h).json()["data"]["defaultPolicyId"] == \
        "basic"
    # an upload naming neither a policy nor a mode takes the role's default ...
    file_id = _upload(api, ent_h, "a.txt", TEXT).json()["data"]["fileId"]
    status = api.get(f"/api/process/status/{file_id}", headers=ent_h).json()["data"]["file"]
    assert status["policy"] == {"id": org["id"], "name": "Org links", "version": 1}
    # ... a mode still picks its built-in, a policyId wins over both
    by_mode = _upload(api, ent_h, "b.txt", TEXT, mode="basic").json()["data"]["fileId"]
    by_id = _upload(api, ent_h, "c.txt", TEXT, mode="advanced",
                    policyId=personal["id"]).json()["data"]["fileId"]
    db_session.expire_all()
    assert db_session.get(File, by_mode).policy_id == "basic"
    assert db_session.get(File, by_id).policy_id == personal["id"]
    assert db_session.get(File, by_id).mode == "basic"
    # a default cannot be deleted, made personal, or given an output its role lacks
    assert api.delete(f"/api/policies/{org['id']}", headers=admin_h).json()["error"] == \
        "policy_in_use"
    made_personal = api.put(f"/api/policies/{org['id']}", headers=admin_h,
                            json={**body("Org links"), "scope": "personal"})
    assert made_personal.status_code == 409
    api.put("/api/policies/defaults", headers=admin_h, json={"GUEST": org["id"]})
    needs_pixels = api.put(f"/api/policies/{org['id']}", headers=admin_h,
                           json={**body("Org links"), "output": "pdf"})
    assert needs_pixels.status_code == 409 and needs_pixels.json()["error"] == "policy_in_use"
    # null puts a role back to the built-in basic, then the policy may go
    reset = api.put("/api/policies/defaults", headers=admin_h,
                    json={"ENTERPRISE": None, "GUEST": None}).json()["data"]
    assert reset["ENTERPRISE"] == "basic" and reset["USER"] == "advanced"
    assert api.delete(f"/api/policies/{org['id']}", headers=admin_h).status_code == 200


# -- uploads with a policy -------------------------------------------------------------------
def test_upload_with_an_unusable_policy_stores_nothing(api, settings, db_session, storage):
    _, guest_h = _headers(settings, db_session, "GUEST")
    _, admin_h = _headers(settings, db_session, "ADMIN")
    pixels = _create(api, admin_h, {**body("Pixels"), "output": "pdf+ocr",
                                    "scope": "organisation"})
    unknown = _upload(api, guest_h, "a.txt", TEXT, policyId="nope")
    assert unknown.status_code == 404 and unknown.json()["message"] == "Policy not found"
    for policy_id in (pixels["id"], "advanced"):
        refused = _upload(api, guest_h, "a.txt", TEXT, policyId=policy_id)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"] == "policy_not_allowed"
    multiple = api.post("/api/upload/multiple", headers=guest_h,
                        files=[("files", ("a.txt", TEXT))], data={"policyId": pixels["id"]})
    assert multiple.status_code == 403
    assert db_session.scalar(select(func.count()).select_from(File)) == 0
    assert list(storage.keys("originals/")) == []
    # the query string works too, and a plan with advanced mode may use it
    _, user_h = _headers(settings, db_session, "USER")
    ok = api.post(f"/api/upload/single?policyId={pixels['id']}", headers=user_h,
                  files={"file": ("a.txt", TEXT)})
    assert ok.status_code == 201, ok.text
    db_session.expire_all()
    file = db_session.get(File, ok.json()["data"]["fileId"])
    assert file.policy_id == pixels["id"] and file.mode == "advanced"


def _sha256(storage, key) -> str:
    digest = hashlib.sha256()
    for chunk in storage.iter_chunks(key):
        digest.update(chunk)
    return digest.hexdigest()


def test_uploads_are_cleaned_with_their_policy(live, settings, db_session, storage):
    _, h = _headers(settings, db_session, "ENTERPRISE")
    keep = _create(live, h, body("Keep links", hyperlinks="keep"))
    remove = _create(live, h, body("Remove links", hyperlinks="remove"))
    refuse_js = _create(live, h, body("No scripts", javascript="refuse"))
    pdf, script = pdf_with_link(), pdf_with_javascript()
    assert link_uris(pdf) == [LINK]
    ids = {}
    for policy in (keep, remove):
        answer = _upload(live, h, "links.pdf", pdf, policyId=policy["id"])
        assert answer.status_code == 201, answer.text
        ids[policy["name"]] = answer.json()["data"]["fileId"]
    multiple = live.post("/api/upload/multiple", headers=h, data={"policyId": refuse_js["id"]},
                         files=[("files", ("script.pdf", script)),
                                ("files", ("links.pdf", pdf))])
    assert multiple.status_code == 201, multiple.text
    refused_id, fine_id = (f["fileId"] for f in multiple.json()["data"])

    for name, expected_links in (("Keep links", [LINK]), ("Remove links", [])):
        data = wait_for(live, h, ids[name])
        file = data["file"]
        assert file["status"] == "COMPLETED", file["errorMessage"]
        assert file["policy"]["name"] == name and file["policy"]["version"] == 1
        output = live.get(f"/api/process/download/{ids[name]}", headers=h).content
        assert link_uris(output) == expected_links
        # the hashes, recomputed from what is stored and from what was sent / received
        row = db_session.get(File, ids[name])
        assert file["sha256Original"] == hashlib.sha256(pdf).hexdigest() == \
            _sha256(storage, row.original_key)
        assert file["sha256Sanitized"] == hashlib.sha256(output).hexdigest() == \
            _sha256(storage, row.sanitized_key)

    refused = wait_for(live, h, refused_id)["file"]
    assert refused["status"] == "FAILED"
    assert refused["errorCode"] == "refused_javascript"
    assert refused["sha256Original"] == hashlib.sha256(script).hexdigest()
    assert refused["sha256Sanitized"] is None
    assert refused["policy"] == {"id": refuse_js["id"], "name": "No scripts", "version": 1}
    assert wait_for(live, h, fine_id)["file"]["status"] == "COMPLETED"

    # history and the admin list carry the same fields
    me = live.get("/api/auth/profile", headers=h).json()["data"]
    history = live.get(f"/api/users/{me['id']}/files", headers=h).json()["data"]["files"]
    by_id = {f["id"]: f for f in history}
    assert by_id[ids["Keep links"]]["policy"]["id"] == keep["id"]
    assert by_id[ids["Keep links"]]["sha256Original"] == hashlib.sha256(pdf).hexdigest()
    _, admin_h = _headers(settings, db_session, "ADMIN")
    listed = live.get("/api/admin/files", headers=admin_h).json()["data"]["files"]
    admin_row = next(f for f in listed if f["id"] == ids["Remove links"])
    assert admin_row["policy"] == {"id": remove["id"], "name": "Remove links", "version": 1}
    assert admin_row["sha256Sanitized"] == by_id[ids["Remove links"]]["sha256Sanitized"]


def test_a_file_keeps_the_version_it_was_uploaded_with(api, settings, db_session, storage):
    """Uploaded under v1 (links kept), the policy edited to v2 (links removed) before the job
    runs: the job cleans with v1's JSON and the file keeps showing v1, also once the policy is
    deleted."""
    _, h = _headers(settings, db_session, "ENTERPRISE")
    policy = _create(api, h, body("Versioned", hyperlinks="keep"))
    file_id = _upload(api, h, "links.pdf", pdf_with_link(),
                      policyId=policy["id"]).json()["data"]["fileId"]
    edited = api.put(f"/api/policies/{policy['id']}", headers=h,
                     json=body("Versioned v2", hyperlinks="remove")).json()["data"]
    assert edited["version"] == 2
    second_id = _upload(api, h, "links.pdf", pdf_with_link(),
                        policyId=policy["id"]).json()["data"]["fileId"]

    engine = make_engine(str(settings.database_url))
    factory = make_sessionmaker(engine)
    try:
        for fid in (file_id, second_id):
            job_id = db_session.scalar(select(Job.id).where(Job.file_id == fid))
            assert run.run_job(job_id, factory=factory, settings=settings,
                                storage=storage) == "completed"
    finally:
        engine.dispose()
    first = api.get(f"/api/process/status/{file_id}", headers=h).json()["data"]["file"]
    assert first["policy"] == {"id": policy["id"], "name": "Versioned", "version": 1}
    assert link_uris(api.get(f"/api/process/download/{file_id}", headers=h).content) == [LINK]
    second = api.get(f"/api/process/status/{second_id}", headers=h).json()["data"]["file"]
    assert second["policy"] == {"id": policy["id"], "name": "Versioned v2", "version": 2}
    assert link_uris(api.get(f"/api/process/download/{second_id}", headers=h).content) == []
    db_session.expire_all()
    assert db_session.get(File, file_id).policy_body["rules"]["hyperlinks"] == "keep"
    assert api.delete(f"/api/policies/{policy['id']}", headers=h).status_code == 200
    after = api.get(f"/api/process/status/{file_id}", headers=h).json()["data"]["file"]
    assert after["policy"] == first["policy"]


def test_files_from_before_policies_show_their_modes_built_in(api, settings, db_session):
    me, h = _headers(settings, db_session, "USER")
    old = add_file(db_session, settings, me, status="COMPLETED", mode="advanced")
    file = api.get(f"/api/process/status/{old.id}", headers=h).json()["data"]["file"]
    assert file["policy"] == {"id": "advanced", "name": "Advanced", "version": 1}
    assert file["sha256Original"] is None and file["sha256Sanitized"] is None


# -- OpenAPI ---------------------------------------------------------------------------------
def test_openapi_documents_the_policy_calls(api):
    paths = api.get("/api/openapi.json").json()["paths"]
    expected = {
        ("/api/policies", "get"): {"200", "401"},
        ("/api/policies", "post"): {"201", "401", "403", "409", "422"},
        ("/api/policies/defaults", "get"): {"200", "401", "403"},
        ("/api/policies/defaults", "put"): {"200", "401", "403", "422"},
        ("/api/policies/{policy_id}", "get"): {"200", "401", "404"},
        ("/api/policies/{policy_id}", "put"): {"200", "401", "403", "404", "409", "422"},
        ("/api/policies/{policy_id}", "delete"): {"200", "401", "403", "404", "409"},
        ("/api/policies/{policy_id}/duplicate", "post"): {"201", "401", "403", "404", "409"},
    }
    for (path, method), statuses in expected.items():
        assert statuses <= set(paths[path][method]["responses"]), (path, method)
    upload = paths["/api/upload/single"]["post"]
    props = upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert "policyId" in props
    assert {"403", "404"} <= set(upload["responses"])
