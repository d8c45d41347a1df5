"""The history's name search (GET /api/users/{userId}/files?search=) answers exactly what
`lower(original_name) LIKE '%search%'` matches (db.contains_text), on SQLite and PostgreSQL,
whether it narrows the rows by trigrams (3 characters or more: ix_files_name_keys on
PostgreSQL, the FTS5 table files_name_fts on SQLite) or reads the account's rows (shorter
searches, or on SQLite a search common to more names than the account has): LIKE's wildcards
are literal, case is ignored, non-ASCII names and FTS5's own syntax characters are plain text."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, select, text, update
from sqlalchemy.orm import Session

from sanitas.db import contains_text
from sanitas.models import File, User
from tests.factories import add_file, auth_headers, make_user

NAMES = ["Quarterly Report 2026.PDF", "quarterly-notes.txt", "Beta_report.docx",
         "delta 100%.txt", "100 percent.txt", "back\\slash.txt", 'say "hi" now.md',
         "ÉCOLE été.txt", "école primaire.pdf", "Straße plan.pdf", "日本語の資料.pdf",
         "OR AND NOT (x*) ^near.csv", "ab.pdf", "a_b.png", "axb.png", "x.y",
         "Résumé - CV.docx", "münchen-MÜNCHEN.txt", "abab.txt"]
SEARCHES = ["quarterly", "QUARTERLY REP", "rly", "report", "_rep", "_", "%", "100%", "0%.",
            "\\", "k\\s", '"hi"', 'y "', "école", "ÉCOLE", "cole", "été", "straße",
            "STRASSE", "日本語", "本", "の資", "or and", "(x*)", "^near", "x*", "ab", "a_b",
            "a_", "xb", "x.y", "ésumé", "RÉSUMÉ", "münchen", "MÜNCHEN", "chen-m", "pdf",
            ".pdf", "nothing here", "q", "  quarterly  ", "é", "ababab", "abab"]


def _names(api, user, headers, **params) -> list[str]:
    answer = api.get(f"/api/users/{user.id}/files", headers=headers,
                     params={"limit": 100, "sortBy": "originalName", "sortOrder": "asc",
                             **params})
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert data["pagination"]["total"] == len(data["files"])
    return [f["originalName"] for f in data["files"]]


def _like(db_session, user, search: str, status: str | None = None) -> list[str]:
    """What the LIKE alone matches in the user's files (no index involved), by name."""
    query = select(File.original_name).where(File.user_id == user.id,
                                             contains_text(File.original_name, search.strip()))
    if status:
        query = query.where(File.status == status)
    return sorted(db_session.scalars(query))


@pytest.fixture
def seeded(api, settings, db_session):
    user = make_user(db_session)
    other = make_user(db_session)
    for i, name in enumerate(NAMES):
        add_file(db_session, settings, user, name=name,
                 status="COMPLETED" if i % 3 else "FAILED")
        add_file(db_session, settings, other, name=name)  # never in the user's answers
    return user, auth_headers(settings, db_session, user)


def test_search_answers_what_like_matches(api, db_session, seeded):
    user, headers = seeded
    for search in SEARCHES:
        assert sorted(_names(api, user, headers, search=search)) == \
            _like(db_session, user, search), search
        assert sorted(_names(api, user, headers, search=search, status="COMPLETED")) == \
            _like(db_session, user, search, "COMPLETED"), search


def test_search_semantics_on_both_databases(api, settings, seeded):
    user, headers = seeded

    def names(search: str) -> list[str]:
        return _names(api, user, headers, search=search)

    assert names("QUARTERLY") == ["Quarterly Report 2026.PDF", "quarterly-notes.txt"]
    assert names("quarterly rep") == ["Quarterly Report 2026.PDF"]
    assert names("100%") == ["delta 100%.txt"]  # % is a character, not a wildcard
    assert names("0%.") == ["delta 100%.txt"]
    assert names("a_b") == ["a_b.png"]  # _ is a character: not axb.png
    assert names("_rep") == ["Beta_report.docx"]
    assert names("k\\s") == ["back\\slash.txt"]
    assert names('"hi"') == ['say "hi" now.md']  # FTS5's quotes are text
    assert names("(x*)") == ["OR AND NOT (x*) ^near.csv"]
    assert names("or and") == ["OR AND NOT (x*) ^near.csv"]
    assert names("école") == ["école primaire.pdf"] + (
        ["ÉCOLE été.txt"] if settings.database_url.startswith("postgresql")
        else [])  # SQLite's lower() folds ASCII only, as before the index
    assert names("été") == ["ÉCOLE été.txt"]
    assert names("日本語") == ["日本語の資料.pdf"]
    assert names("の資") == ["日本語の資料.pdf"]
    assert names("x.y") == ["x.y"]
    assert names("ababab") == []  # every trigram of it is in abab.txt, the text is not
    assert names("abab") == ["abab.txt"]
    assert names("nothing here") == []


def test_index_follows_inserts_renames_and_deletes(api, settings, db_session):
    user = make_user(db_session)
    headers = auth_headers(settings, db_session, user)
    kept = add_file(db_session, settings, user, name="Budget forecast.xlsx")
    gone = add_file(db_session, settings, user, name="budget draft.xlsx")
    assert _names(api, user, headers, search="budget") == ["budget draft.xlsx",
                                                           "Budget forecast.xlsx"]
    db_session.execute(update(File).where(File.id == kept.id)
                       .values(original_name="Plan 2027.xlsx"))
    db_session.delete(gone)
    db_session.commit()
    assert _names(api, user, headers, search="budget") == []
    assert _names(api, user, headers, search="plan 20") == ["Plan 2027.xlsx"]
    if db_session.get_bind().dialect.name == "sqlite":
        # The FTS5 index equals what its external content (files) holds, and VACUUM keeps the
        # rowids it is keyed by.
        db_session.execute(text("INSERT INTO files_name_fts (files_name_fts) "
                                "VALUES ('integrity-check')"))
        db_session.commit()
        with db_session.get_bind().connect() as conn:
            conn.exec_driver_sql("VACUUM")
        assert _names(api, user, headers, search="plan 20") == ["Plan 2027.xlsx"]
        db_session.execute(text("INSERT INTO files_name_fts (files_name_fts) "
                                "VALUES ('integrity-check')"))


def test_a_common_search_reads_the_accounts_rows_with_the_same_answer(api, settings,
                                                                      db_session):
    """On SQLite, a search whose trigrams more names hold than the account has files reads the
    account's rows instead of the index; the answer is the same either way."""
    user, crowd = make_user(db_session), make_user(db_session)
    headers = auth_headers(settings, db_session, user)
    add_file(db_session, settings, user, name="invoice 1.pdf")
    add_file(db_session, settings, user, name="receipt.pdf")
    for i in range(5):
        add_file(db_session, settings, crowd, name=f"invoice {i}.pdf")
    assert _names(api, user, headers, search="invoice") == ["invoice 1.pdf"]  # 6 > 2 names
    assert _names(api, user, headers, search="voice 1") == ["invoice 1.pdf"]  # 2 <= 2
    assert _names(api, user, headers, search="PDF") == ["invoice 1.pdf", "receipt.pdf"]


def test_the_migration_indexes_the_names_already_stored(api, settings, db_session, db_url):
    """Names stored before the migration are found through the index it builds (the FTS5
    table filled from the rows on SQLite, the GIN index built over them on PostgreSQL), and
    the migration goes down and up again."""
    from alembic import command

    from sanitas.migrate import alembic_config

    user = make_user(db_session)
    headers = auth_headers(settings, db_session, user)
    cfg = alembic_config(db_url)
    db_session.close()
    command.downgrade(cfg, "f9b1d3e5a7c9")
    engine = create_engine(db_url)
    try:
        with Session(engine) as session:  # rows stored while there was no such index
            owner = session.get(User, user.id)
            add_file(session, settings, owner, name="Minutes of May.docx")
            add_file(session, settings, owner, name="minutes-june.docx")
    finally:
        engine.dispose()
    command.upgrade(cfg, "head")
    assert _names(api, user, headers, search="MINUTES") == ["Minutes of May.docx",
                                                            "minutes-june.docx"]
    assert _names(api, user, headers, search="es of") == ["Minutes of May.docx"]
    if db_url.startswith("sqlite"):
        db_session.execute(text("INSERT INTO files_name_fts (files_name_fts) "
                                "VALUES ('integrity-check')"))
        assert db_session.scalar(text(
            "SELECT count(*) FROM files_name_fts WHERE files_name_fts MATCH '\"minutes\"'")) == 2
    else:
        assert db_session.scalar(text(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_files_name_keys'")) == 1
