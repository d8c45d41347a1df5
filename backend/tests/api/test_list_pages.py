"""Every page of the history and of the admin file list holds the rows OFFSET from the start
would give, whichever end a page is read from (files.service.page_ids), and the totals from
the daily rollup equal the rows' count, also for periods with partial first and last days."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from sanitas.db import utcnow
from sanitas.files.admin_service import SORT_COLUMNS as ADMIN_SORTS
from sanitas.files.service import SORT_COLUMNS
from sanitas.models import File, User
from tests.factories import add_file, auth_headers, make_user

STATUSES = ("COMPLETED", "FAILED", "PENDING", "COMPLETED")


@pytest.fixture
def spread(db_session, settings):
    """Two users' files over five days, three of them uploaded together (one created_at)."""
    owner, other = make_user(db_session), make_user(db_session)
    now = utcnow()
    batch = now - timedelta(hours=80)  # among the older half: read from the end
    for i in range(17):
        who = owner if i % 4 else other
        add_file(db_session, settings, who, name=f"Name {i % 5} {chr(97 + i)}.pdf",
                 status=STATUSES[i % 4], content=b"x" * (100 + i % 3),
                 created_at=batch if i in (3, 6, 9) else now - timedelta(hours=7 * i))
    admin = make_user(db_session, role="ADMIN")
    return owner, auth_headers(settings, db_session, owner), \
        auth_headers(settings, db_session, admin)


def _walk(api, path, headers, limit, **params):
    ids, page = [], 1
    while True:
        data = api.get(path, headers=headers,
                       params={"page": page, "limit": limit, **params}).json()["data"]
        ids += [f["id"] for f in data["files"]]
        if not data["pagination"]["hasNext"]:
            return ids, data["pagination"]["total"]
        page += 1


@pytest.mark.parametrize("sort", list(SORT_COLUMNS))
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_history_pages_from_either_end_match_offset(api, db_session, spread, sort, order):
    owner, headers, _ = spread
    column = SORT_COLUMNS[sort]
    want = list(db_session.scalars(select(File.id).where(File.user_id == owner.id).order_by(
        column.asc() if order == "asc" else column.desc(), File.id)))
    for limit in (2, 3, 5):
        got, total = _walk(api, f"/api/users/{owner.id}/files", headers, limit,
                           sortBy=sort, sortOrder=order)
        assert (got, total) == (want, len(want))
    got, total = _walk(api, f"/api/users/{owner.id}/files", headers, 2, status="COMPLETED",
                       sortBy=sort, sortOrder=order)
    assert total == len(got) == 4 and set(got) <= set(want)  # i % 4 == 3
    beyond = api.get(f"/api/users/{owner.id}/files", headers=headers,
                     params={"page": 50, "limit": 5}).json()["data"]
    assert beyond["files"] == [] and beyond["pagination"]["total"] == len(want)


@pytest.mark.parametrize("sort", list(ADMIN_SORTS))
def test_admin_pages_and_period_totals_match_the_rows(api, db_session, spread, sort):
    _, _, admin = spread
    column = ADMIN_SORTS[sort]
    want = list(db_session.scalars(select(File.id).join(User, User.id == File.user_id)
                                   .order_by(column.desc(), File.id)))
    got, total = _walk(api, "/api/admin/files", admin, 3, sortBy=sort)
    assert (got, total) == (want, len(want))
    now = utcnow()
    for start, end in [(now - timedelta(days=3, hours=5), now - timedelta(hours=3)),
                       (now - timedelta(hours=40), None), (None, now - timedelta(hours=20)),
                       (now - timedelta(hours=30), now - timedelta(hours=29))]:
        params = {k: v.isoformat() for k, v in (("createdFrom", start),
                                                 ("createdBefore", end)) if v}
        rows = [File.created_at >= start] if start else []
        rows += [File.created_at < end] if end else []
        count = db_session.scalar(select(func.count()).select_from(File).where(*rows))
        for status in ("ALL", "COMPLETED"):
            if status != "ALL":
                count = db_session.scalar(select(func.count()).select_from(File).where(
                    *rows, File.status == status))
            got, total = _walk(api, "/api/admin/files", admin, 4, status=status, **params)
            assert total == len(got) == count, (start, end, status)
