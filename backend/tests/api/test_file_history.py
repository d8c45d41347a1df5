"""GET /api/users/{userId}/files: filters, sort, search, stats, pagination, authorisation."""

from __future__ import annotations

from datetime import timedelta

from sanitas.db import utcnow
from tests.factories import add_file, auth_headers, make_user


def _seed(db_session, settings, user):
    base = utcnow() - timedelta(hours=5)
    specs = [("alpha.pdf", "COMPLETED", 300), ("Beta_report.docx", "FAILED", 100),
             ("gamma.png", "PENDING", 200), ("delta 100%.txt", "PROCESSING", 50),
             ("epsilon.pdf", "COMPLETED", 400)]
    return [add_file(db_session, settings, user, name=n, status=s, content=b"x" * size,
                     created_at=base + timedelta(minutes=i))
            for i, (n, s, size) in enumerate(specs)]


def test_history_defaults_stats_and_pagination(api, settings, db_session):
    user = make_user(db_session)
    _seed(db_session, settings, user)
    add_file(db_session, settings, make_user(db_session), name="someone-else.pdf")
    h = auth_headers(settings, db_session, user)
    answer = api.get(f"/api/users/{user.id}/files", headers=h)
    assert answer.status_code == 200
    body = answer.json()
    assert body["success"] is True and body["message"] == "Files retrieved successfully"
    data = body["data"]
    assert [f["originalName"] for f in data["files"]] == [
        "epsilon.pdf", "delta 100%.txt", "gamma.png", "Beta_report.docx", "alpha.pdf"]
    assert data["stats"] == {"total": 5, "completed": 2, "processing": 1, "pending": 1,
                             "failed": 1}
    assert data["pagination"] == {"page": 1, "limit": 20, "total": 5, "pages": 1,
                                  "hasPrev": False, "hasNext": False}
    first = data["files"][0]
    assert {"id", "originalName", "originalSize", "status", "createdAt", "expiresAt",
            "downloadCount", "isExpired", "sanitizedName"} <= set(first)

    page2 = api.get(f"/api/users/{user.id}/files?page=2&limit=2", headers=h).json()["data"]
    assert [f["originalName"] for f in page2["files"]] == ["gamma.png", "Beta_report.docx"]
    assert page2["pagination"] == {"page": 2, "limit": 2, "total": 5, "pages": 3,
                                   "hasPrev": True, "hasNext": True}
    beyond = api.get(f"/api/users/{user.id}/files?page=9&limit=2", headers=h).json()["data"]
    assert beyond["files"] == [] and beyond["pagination"]["hasNext"] is False


def test_history_filters_sorts_and_searches(api, settings, db_session):
    user = make_user(db_session)
    _seed(db_session, settings, user)
    h = auth_headers(settings, db_session, user)

    def names(query):
        answer = api.get(f"/api/users/{user.id}/files?{query}", headers=h)
        assert answer.status_code == 200, answer.text
        return [f["originalName"] for f in answer.json()["data"]["files"]]

    assert names("status=COMPLETED") == ["epsilon.pdf", "alpha.pdf"]
    assert names("status=FAILED") == ["Beta_report.docx"]
    assert names("status=ALL&sortBy=originalSize&sortOrder=asc") == [
        "delta 100%.txt", "Beta_report.docx", "gamma.png", "alpha.pdf", "epsilon.pdf"]
    assert names("sortBy=originalName&sortOrder=asc")[0] == "alpha.pdf"
    assert names("sortBy=status&sortOrder=asc")[0] in ("alpha.pdf", "epsilon.pdf")
    assert names("search=REPORT") == ["Beta_report.docx"]
    assert names("search=pdf&status=COMPLETED&sortOrder=asc") == ["alpha.pdf", "epsilon.pdf"]
    # LIKE wildcards in the search are literal
    assert names("search=100%25") == ["delta 100%.txt"]
    assert names("search=_") == ["Beta_report.docx"]
    stats = api.get(f"/api/users/{user.id}/files?status=FAILED",
                    headers=h).json()["data"]["stats"]
    assert stats["total"] == 5  # stats describe all the user's files, not the filter
    for bad in ("status=DONE", "sortBy=id", "sortOrder=up", "page=0", "limit=0", "limit=101"):
        answer = api.get(f"/api/users/{user.id}/files?{bad}", headers=h)
        assert answer.status_code == 422, bad
        assert answer.json()["success"] is False


def test_history_is_own_only_admins_see_any(api, settings, db_session):
    owner, other = make_user(db_session), make_user(db_session)
    admin = make_user(db_session, role="ADMIN")
    add_file(db_session, settings, owner)
    answer = api.get(f"/api/users/{owner.id}/files",
                     headers=auth_headers(settings, db_session, other))
    assert answer.status_code == 404
    assert answer.json()["message"] == "User not found"
    h_admin = auth_headers(settings, db_session, admin)
    answer = api.get(f"/api/users/{owner.id}/files", headers=h_admin)
    assert answer.status_code == 200 and answer.json()["data"]["stats"]["total"] == 1
    assert api.get("/api/users/nobody/files", headers=h_admin).status_code == 404
    assert api.get(f"/api/users/{owner.id}/files").status_code == 401


def test_empty_history(api, settings, db_session):
    user = make_user(db_session)
    data = api.get(f"/api/users/{user.id}/files",
                   headers=auth_headers(settings, db_session, user)).json()["data"]
    assert data["files"] == []
    assert data["stats"] == {"total": 0, "completed": 0, "processing": 0, "pending": 0,
                             "failed": 0}
    assert data["pagination"] == {"page": 1, "limit": 20, "total": 0, "pages": 0,
                                  "hasPrev": False, "hasNext": False}
