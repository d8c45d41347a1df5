"""Usage statistics, monthly history, admin analytics and quota resets."""

from __future__ import annotations

from datetime import timedelta

from sanitas.db import utcnow
from sanitas.files.service import month_start
from sanitas.models import User
from tests.factories import add_file, auth_headers, make_user


def test_stats_for_a_user_near_quota(api, settings, db_session):
    user = make_user(db_session, role="GUEST")
    for i in range(4):
        add_file(db_session, settings, user, status="COMPLETED" if i else "FAILED",
                 content=b"x" * 1000, sanitized=b"y" * 500)
    add_file(db_session, settings, user, content=b"z" * 700, expired=True,
             created_at=month_start(utcnow()) - timedelta(days=2))
    answer = api.get("/api/usage/stats", headers=auth_headers(settings, db_session, user))
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert data["user"]["role"] == "GUEST" and data["user"]["memberSince"].endswith("Z")
    assert data["currentPeriod"]["uploadsUsed"] == 4
    assert data["currentPeriod"]["uploadQuota"] == 5
    assert data["currentPeriod"]["quotaUtilization"] == 80.0
    assert data["currentPeriod"]["start"] == month_start(utcnow()).isoformat().replace(
        "+00:00", "Z")
    assert data["limits"]["isOverQuota"] is False and data["limits"]["isNearQuota"] is True
    assert 1 <= data["limits"]["daysUntilReset"] <= 31
    # live blobs: 3 completed (1000 + 500) + 1 failed (1000); the expired one not counted
    assert data["overall"] == {"totalFiles": 5, "totalStorageUsed": 3 * 1500 + 1000,
                               "storageQuota": 100 * 1024 * 1024,
                               "storageUtilization": round(5500 / (100 * 1024 * 1024) * 100, 2)}


def test_stats_unlimited_and_over_quota(api, settings, db_session):
    ent = make_user(db_session, role="ENTERPRISE")
    data = api.get("/api/usage/stats",
                   headers=auth_headers(settings, db_session, ent)).json()["data"]
    assert data["currentPeriod"]["uploadQuota"] == -1
    assert data["currentPeriod"]["quotaUtilization"] == 0
    assert data["overall"]["storageQuota"] == -1
    assert data["limits"]["isOverQuota"] is False and data["limits"]["isNearQuota"] is False
    guest = make_user(db_session, role="GUEST")
    for _ in range(5):
        add_file(db_session, settings, guest)
    data = api.get("/api/usage/stats",
                   headers=auth_headers(settings, db_session, guest)).json()["data"]
    assert data["limits"]["isOverQuota"] is True
    assert data["currentPeriod"]["quotaUtilization"] == 100.0


def test_reset_quota_starts_a_fresh_count(api, settings, db_session):
    guest = make_user(db_session, role="GUEST")
    admin = make_user(db_session, role="ADMIN")
    for _ in range(5):
        add_file(db_session, settings, guest)
    h_admin = auth_headers(settings, db_session, admin)
    answer = api.post(f"/api/usage/reset-quota/{guest.id}", headers=h_admin)
    assert answer.status_code == 200
    assert answer.json()["message"] == "User quota reset successfully"
    db_session.expire_all()
    assert db_session.get(User, guest.id).quota_reset_at is not None
    data = api.get("/api/usage/stats",
                   headers=auth_headers(settings, db_session, guest)).json()["data"]
    assert data["currentPeriod"]["uploadsUsed"] == 0
    assert data["overall"]["totalFiles"] == 5
    assert api.post("/api/usage/reset-quota/nobody", headers=h_admin).status_code == 404
    answer = api.post(f"/api/usage/reset-quota/{guest.id}",
                      headers=auth_headers(settings, db_session, guest))
    assert answer.status_code == 403


def test_history_by_month(api, settings, db_session):
    user = make_user(db_session)
    this_month = month_start(utcnow())
    last_month = month_start(this_month - timedelta(days=1))
    long_ago = this_month - timedelta(days=400)
    add_file(db_session, settings, user, status="COMPLETED", content=b"a" * 10,
             created_at=this_month + timedelta(hours=1))
    add_file(db_session, settings, user, status="FAILED", content=b"b" * 20,
             created_at=this_month + timedelta(hours=2))
    add_file(db_session, settings, user, status="COMPLETED", content=b"c" * 30,
             created_at=last_month + timedelta(days=3))
    add_file(db_session, settings, user, status="COMPLETED", created_at=long_ago)
    add_file(db_session, settings, make_user(db_session), status="COMPLETED")
    h = auth_headers(settings, db_session, user)
    answer = api.get("/api/usage/history?months=6", headers=h)
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert len(data) == 6
    assert data[-1] == {"month": this_month.strftime("%Y-%m"), "uploads": 2, "successful": 1,
                        "totalSize": 30}
    assert data[-2] == {"month": last_month.strftime("%Y-%m"), "uploads": 1, "successful": 1,
                        "totalSize": 30}
    assert all(m["uploads"] == 0 for m in data[:-2])
    assert [m["month"] for m in data] == sorted(m["month"] for m in data)
    assert len(api.get("/api/usage/history", headers=h).json()["data"]) == 6
    assert len(api.get("/api/usage/history?months=1", headers=h).json()["data"]) == 1
    assert api.get("/api/usage/history?months=0", headers=h).status_code == 422


def test_admin_analytics(api, settings, db_session):
    admin = make_user(db_session, role="ADMIN")
    admin.last_login = utcnow()
    db_session.commit()
    uploader = make_user(db_session, role="USER")
    make_user(db_session, role="GUEST")
    make_user(db_session, role="ENTERPRISE")
    add_file(db_session, settings, uploader, status="COMPLETED", content=b"a" * 100,
             sanitized=b"b" * 50)
    add_file(db_session, settings, uploader, status="FAILED", content=b"c" * 300,
             created_at=utcnow() - timedelta(days=3))
    add_file(db_session, settings, uploader, status="PENDING", content=b"d" * 200,
             created_at=utcnow() - timedelta(days=20), expired=True)
    h = auth_headers(settings, db_session, admin)
    day = api.get("/api/usage/analytics?timeframe=day", headers=h).json()["data"]
    assert day["users"] == {"total": 4, "active": 2,
                            "byRole": {"GUEST": 1, "USER": 1, "ENTERPRISE": 1, "ADMIN": 1}}
    assert day["files"]["total"] == 3 and day["files"]["recent"] == 1
    assert day["files"]["byStatus"] == {"PENDING": 1, "PROCESSING": 0, "COMPLETED": 1,
                                        "FAILED": 1}
    assert day["storage"] == {"totalUsed": 100 + 50 + 300, "averageFileSize": 200}
    assert set(day["period"]) == {"start", "end"}
    week = api.get("/api/usage/analytics?timeframe=week", headers=h).json()["data"]
    assert week["files"]["recent"] == 2
    month = api.get("/api/usage/analytics", headers=h).json()["data"]
    assert month["files"]["recent"] == 3 and month["timeframe"] == "month"
    assert api.get("/api/usage/analytics?timeframe=year", headers=h).status_code == 422
    user_h = auth_headers(settings, db_session, uploader)
    assert api.get("/api/usage/analytics", headers=user_h).status_code == 403
    assert api.get("/api/usage/analytics").status_code == 401
