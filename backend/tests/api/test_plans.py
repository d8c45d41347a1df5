"""Plans (sanitas/plans.py): GET /api/plans answers SPEC section 9's table and the pricing
page's FAQ; the profile carries the caller's plan; a new account gets the table's
newAccountRole; SANITAS_PLANS_FILE and SANITAS_ROLE_LIMITS override it, and a bad override
stops the server naming the setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from pydantic import ValidationError

from sanitas.config import Settings
from sanitas.plans import Capability
from tests.factories import TEXT, auth_headers, make_user

SPEC_PLANS = {
    "GUEST": ("Free", "$0", "forever", False,
              ["5 files per month", "Up to 10MB per file", "Basic sanitization",
               "Email support", "24h processing"],
              ["Limited file formats", "Standard priority"], "Get Started", "signUp"),
    "USER": ("Pro", "$19", "per month", True,
             ["100 files per month", "Up to 100MB per file", "Advanced sanitization",
              "Priority email support", "1h processing", "All file formats", "API access",
              "Batch processing"], [], "Start Free Trial", "signUp"),
    "ENTERPRISE": ("Enterprise", "Custom", "", False,
                   ["Unlimited files", "Unlimited file size", "Custom sanitization rules",
                    "Dedicated support", "Instant processing", "On-premise deployment",
                    "SLA guarantee", "Custom integrations", "Advanced analytics",
                    "Compliance reports"], [], "Contact Sales", "contact"),
}
MB = 1024 * 1024


def _plans(api) -> dict:
    answer = api.get("/api/plans")  # public: no Authorization
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def test_plans_are_spec_pricing_table(api):
    data = _plans(api)
    by_role = {p["role"]: p for p in data["plans"]}
    assert set(by_role) == {"GUEST", "USER", "ENTERPRISE", "ADMIN"}
    for role, (label, price, period, popular, features, limitations, button, action) in \
            SPEC_PLANS.items():
        plan = by_role[role]
        assert (plan["label"], plan["price"], plan["period"], plan["popular"], plan["features"],
                plan["limitations"], plan["button"], plan["action"], plan["listed"]) == \
            (label, price, period, popular, features, limitations, button, action, True)
    assert by_role["ADMIN"]["listed"] is False
    assert by_role["ADMIN"]["capabilities"] == [c.value for c in Capability]
    # The limits the texts promise are the limits the plans have.
    assert by_role["GUEST"]["limits"] == {"uploadsPerMonth": 5, "maxFileSize": 10 * MB,
                                          "storageQuota": 100 * MB, "maxFilesPerUpload": 5}
    assert by_role["USER"]["limits"]["uploadsPerMonth"] == 100
    assert by_role["USER"]["limits"]["maxFileSize"] == 100 * MB
    assert by_role["ENTERPRISE"]["limits"]["uploadsPerMonth"] == -1
    assert by_role["GUEST"]["capabilities"] == []
    assert by_role["USER"]["capabilities"] == ["apiKeys", "webhooks", "advancedMode"]
    assert "reports" in by_role["ENTERPRISE"]["capabilities"]
    assert [q["question"] for q in data["faq"]] == [
        "What file formats are supported?", "How secure is the sanitization process?",
        "Can I cancel my subscription anytime?", "Do you offer refunds?"]
    assert "30-day money-back guarantee" in data["faq"][3]["answer"]
    assert data["newAccountRole"] == "USER"


def test_new_account_gets_the_new_account_plan_and_profile_says_so(api):
    answer = api.post("/api/auth/register", json={"email": "new@example.com",
                                                   "password": "secret123"})
    assert answer.status_code in (200, 201), answer.text
    data = answer.json()["data"]
    assert data["user"]["role"] == _plans(api)["newAccountRole"] == "USER"
    assert data["user"]["plan"]["label"] == "Pro"
    headers = {"Authorization": f"Bearer {data['tokens']['accessToken']}"}
    profile = api.get("/api/auth/profile", headers=headers).json()["data"]
    assert profile["plan"] == {
        "role": "USER", "label": "Pro", "capabilities": ["apiKeys", "webhooks", "advancedMode"],
        "limits": {"uploadsPerMonth": 100, "maxFileSize": 100 * MB,
                   "storageQuota": 5 * 1024 * MB, "maxFilesPerUpload": 10}}


@pytest.mark.parametrize("role", ["GUEST", "USER", "ENTERPRISE", "ADMIN"])
def test_profile_plan_matches_table(api, settings, db_session, role):
    h = auth_headers(settings, db_session, make_user(db_session, role=role))
    plan = api.get("/api/auth/profile", headers=h).json()["data"]["plan"]
    table = {p["role"]: p for p in _plans(api)["plans"]}[role]
    assert plan == {k: table[k] for k in ("role", "label", "capabilities", "limits")}


def test_plans_file_changes_price_limit_and_new_account_plan(tmp_path, settings):
    from fastapi.testclient import TestClient

    from sanitas.main import create_app

    override = tmp_path / "plans.toml"
    override.write_text('''newAccountRole = "GUEST"
[[faq]]
question = "Is it audited?"
answer = "Ask us."
[plans.USER]
price = "$29"
[plans.USER.limits]
uploadsPerMonth = 250
''')
    changed = Settings(**{**settings.model_dump(exclude={"plans_file"}),
                          "plans_file": override})
    with TestClient(create_app(changed, start_background=False)) as api:
        data = _plans(api)
        user = {p["role"]: p for p in data["plans"]}["USER"]
        assert user["price"] == "$29" and user["period"] == "per month"  # the rest kept
        assert user["limits"]["uploadsPerMonth"] == 250
        assert user["limits"]["maxFileSize"] == 100 * MB
        assert data["faq"] == [{"question": "Is it audited?", "answer": "Ask us."}]
        assert data["newAccountRole"] == "GUEST"
        created = api.post("/api/auth/register", json={"email": "n@example.com",
                                                       "password": "secret123"})
        assert created.json()["data"]["user"]["role"] == "GUEST"
        assert created.json()["data"]["user"]["plan"]["label"] == "Free"
        headers = {"Authorization":
                   f"Bearer {created.json()['data']['tokens']['accessToken']}"}
        stats = api.get("/api/usage/stats", headers=headers).json()["data"]
        assert stats["currentPeriod"]["uploadQuota"] == 5


def test_bad_plans_file_refuses_settings(tmp_path):
    bad = tmp_path / "plans.json"
    for content, expected in (("{not json", "not valid JSON"),
                              ('{"plans": {"USER": {"limits": {"uploadsPerMonth": "many"}}}}',
                               "uploadsPerMonth"),
                              ('{"plans": {"PLATINUM": {}}}', "unknown role"),
                              ('{"plans": {"USER": {"capabilities": ["teleport"]}}}',
                               "capabilities"),
                              ('{"prices": {}}', "unknown key")):
        bad.write_text(content)
        with pytest.raises(ValidationError) as caught:
            Settings(data_dir=tmp_path / "data", plans_file=bad)
        assert "SANITAS_PLANS_FILE" in str(caught.value) and expected in str(caught.value)
    with pytest.raises(ValidationError, match="SANITAS_PLANS_FILE"):
        Settings(data_dir=tmp_path / "data", plans_file=tmp_path / "missing.json")
    with pytest.raises(ValidationError, match="SANITAS_ROLE_LIMITS"):
        Settings(data_dir=tmp_path / "data", role_limits={"GUEST": {"uploads_per_month": "x"}})


def test_bad_plans_file_stops_the_server(tmp_path):
    bad = tmp_path / "plans.json"
    bad.write_text('{"plans": {"USER": {"limits": {"maxFileSize": -5}}}}')
    env = {**os.environ, "SANITAS_PLANS_FILE": str(bad), "SANITAS_DATA_DIR": str(tmp_path),
           "SANITAS_PORT": "0"}
    done = subprocess.run([sys.executable, "-m", "sanitas.cli", "serve", "--port", "0"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "SANITAS_PLANS_FILE" in done.stderr and "maxFileSize" in done.stderr


def test_role_limits_setting_still_overrides(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", role_limits=json.loads(
        '{"GUEST": {"uploads_per_month": 7, "modes": ["basic", "advanced"]},'
        ' "ENTERPRISE": {"high_priority": false}}'))
    assert settings.plans["GUEST"].limits.uploads_per_month == 7
    assert settings.plans["GUEST"].limits.max_file_size == 10 * MB  # untouched
    assert settings.plans["GUEST"].has(Capability.ADVANCED_MODE)
    assert not settings.plans["ENTERPRISE"].has(Capability.HIGH_PRIORITY)


def test_upload_info_follows_plan(api, settings, db_session):
    h = auth_headers(settings, db_session, make_user(db_session, role="GUEST"))
    info = api.get("/api/upload/info", headers=h).json()["data"]
    assert info["maxFileSize"] == 10 * MB and info["modes"] == ["basic"]
    refused = api.post("/api/upload/single", headers=h, data={"mode": "advanced"},
                       files={"file": ("a.txt", TEXT)})
    assert refused.status_code == 403 and refused.json()["error"] == "mode_not_allowed"
