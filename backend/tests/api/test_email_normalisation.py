"""Email addresses are one account whatever their Unicode form: NFC and NFD spellings of
josé@example.com (and any case) are the same address everywhere, and the migration brings
stored addresses to that form."""

from __future__ import annotations

import logging
import unicodedata
from datetime import timedelta

from alembic import command
from sqlalchemy import select, text

from sanitas.db import make_engine, utcnow
from sanitas.migrate import alembic_config
from sanitas.models import User
from tests.factories import auth_headers, make_user
from tests.outbox import outbox_links

NFC = unicodedata.normalize("NFC", "josé@example.com")
NFD = unicodedata.normalize("NFD", "josé@example.com")
BEFORE_NORMALISATION = "cca88320c719"  # the revision before emails were normalised


def test_the_two_spellings_differ():
    assert NFC != NFD and len(NFD) == len(NFC) + 1


def register(client, email, password="secret1"):
    return client.post("/api/auth/register", json={"email": email, "password": password})


def login(client, email, password):
    return client.post("/api/auth/login", json={"email": email, "password": password})


def test_the_nfd_form_of_a_registered_address_is_a_duplicate(client, db_session):
    first = register(client, NFC)
    assert first.status_code == 201
    assert first.json()["data"]["user"]["email"] == NFC
    duplicate = register(client, NFC.upper())
    nfd = register(client, NFD)
    assert nfd.status_code == duplicate.status_code == 409
    assert nfd.json() == duplicate.json() == {
        "success": False, "message": "An account with this email already exists",
        "error": "email_taken"}
    assert db_session.scalars(select(User.email)).all() == [NFC]


def test_an_nfd_registration_is_stored_in_nfc(client, db_session):
    assert register(client, NFD).json()["data"]["user"]["email"] == NFC
    assert register(client, NFC).status_code == 409
    assert db_session.scalars(select(User.email)).all() == [NFC]


def test_signing_in_and_resetting_with_either_form(client, db_session, settings):
    assert register(client, NFC, "first-password").status_code == 201
    for form in (NFC, NFD, unicodedata.normalize("NFD", NFC.upper())):
        answer = login(client, form, "first-password")
        assert answer.status_code == 200, (form, answer.text)
        assert answer.json()["data"]["user"]["email"] == NFC
    assert client.post("/api/auth/forgot-password", json={"email": NFD}).status_code == 200
    assert len(outbox_links(settings, "/reset-password")) == 1


def test_admin_search_finds_either_form(client, db_session, settings):
    admin = make_user(db_session, role="ADMIN", email="root@example.com")
    make_user(db_session, email=NFC)
    headers = auth_headers(settings, db_session, admin)
    for form in (NFC, NFD, unicodedata.normalize("NFD", "JOSÉ")):
        found = client.get("/api/users", params={"search": form}, headers=headers)
        assert [u["email"] for u in found.json()["data"]["users"]] == [NFC], form


def test_the_migration_normalises_stored_addresses_and_skips_collisions(db_url, caplog):
    """Rows written before the normalisation: an address that alone has its normalised form
    is rewritten; one whose form another account already has, or that several rows share,
    is left alone and logged."""
    config = alembic_config(db_url)
    command.downgrade(config, BEFORE_NORMALISATION)
    engine = make_engine(db_url)
    lone_nfd = unicodedata.normalize("NFD", "zoë@example.com")
    rows = [("u1", NFC), ("u2", NFD), ("u3", lone_nfd), ("u4", " Mixed@Example.COM"),
            ("u5", "plain@example.com"), ("u6", "Twin@example.com"), ("u7", "twin@example.com ")]
    now = utcnow()
    with engine.begin() as conn:
        for i, (user_id, email) in enumerate(rows):
            conn.execute(text(
                "INSERT INTO users (id, email, role, is_active, is_email_verified, created_at, "
                "updated_at) VALUES (:id, :email, 'USER', true, false, :t, :t)"),
                {"id": user_id, "email": email, "t": now + timedelta(seconds=i)})
    try:
        with caplog.at_level(logging.WARNING):
            command.upgrade(config, "head")
        with engine.connect() as conn:
            stored = dict(conn.execute(text("SELECT id, email FROM users")).all())
    finally:
        engine.dispose()
        command.upgrade(config, "head")
    assert stored == {"u1": NFC, "u2": NFD, "u3": unicodedata.normalize("NFC", lone_nfd),
                      "u4": "mixed@example.com", "u5": "plain@example.com",
                      "u6": "Twin@example.com", "u7": "twin@example.com "}
    skipped = [r.getMessage() for r in caplog.records if "u2" in r.getMessage()]
    assert len(skipped) == 1 and "u1" in skipped[0], caplog.text
    twins = [r.getMessage() for r in caplog.records if "u6" in r.getMessage()]
    assert len(twins) == 1 and "u7" in twins[0], caplog.text



def test_create_admin_uses_the_one_spelling(tmp_path):
    """`sanitas create-admin` with the NFD form promotes the NFC account, not a second one."""
    import subprocess
    import sys
    from pathlib import Path

    cli = Path(sys.executable).with_name("sanitas")
    env = {"PATH": "/usr/bin:/bin", "SANITAS_DATA_DIR": str(tmp_path / "data")}
    subprocess.run([str(cli), "migrate"], env=env, capture_output=True, timeout=120, check=True)
    outputs = []
    for address in ("jos\u00e9@example.com", "JOSE\u0301@example.com"):
        done = subprocess.run([str(cli), "create-admin", address, "--password", "longenough1"],
                              env=env, capture_output=True, text=True, timeout=120, check=True)
        outputs.append(done.stdout.strip())
    assert outputs == ["Created admin jos\u00e9@example.com.",
                       "Promoted admin jos\u00e9@example.com."]
