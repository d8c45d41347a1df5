"""files/intake.py, the one way files come in, at its own level: the policy each kind of caller
gets (resolved once, the mode a property of it), a file sanitized now, and the history row of a
transaction. The channels' own tests (upload, one-call API, ICAP, mail) drive it over the wire."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from sanitas.db import make_engine, make_sessionmaker, utcnow
from sanitas.engine.policy import Action, Mode, Rule
from sanitas.files import intake
from sanitas.models import File, FileStatus, StoredPolicy, User
from sanitas.web.errors import ApiError
from tests.api.policy_samples import pdf_with_javascript
from tests.factories import make_user

SERVICE = intake.Caller.service(intake.Channel.MAIL)


@pytest.fixture
def factory(settings):
    engine = make_engine(str(settings.database_url))
    yield make_sessionmaker(engine)
    engine.dispose()


def _stored(session, owner: User | None, body: dict) -> StoredPolicy:
    now = utcnow()
    policy = StoredPolicy(owner_id=owner.id if owner else None, name="Keep the format",
                          description=None, version=3, body=body, created_at=now,
                          updated_at=now)
    session.add(policy)
    session.commit()
    return policy


def test_a_service_gets_built_ins_by_id_or_mode(settings):
    basic = intake.choose_policy(settings, SERVICE, intake.PolicyRef())
    assert (basic.id, basic.mode, basic.policy.output, basic.built_in) == \
        ("basic", Mode.BASIC, "same", True)
    # the built-in advanced policy carries the server's OCR setting, by id or by mode
    for ref in (intake.PolicyRef(policy_id="advanced"), intake.PolicyRef(mode="advanced")):
        advanced = intake.choose_policy(settings, SERVICE, ref)
        assert advanced.id == "advanced" and advanced.mode is Mode.ADVANCED
        assert advanced.policy.output == ("pdf+ocr" if settings.ocr else "pdf")
    no_ocr = settings.model_copy(update={"ocr": False})
    assert intake.choose_policy(no_ocr, SERVICE, intake.PolicyRef(policy_id="advanced")) \
        .policy.output == "pdf"


def test_a_service_uses_organisation_policies_only(settings, db_session, factory):
    owner = make_user(db_session)
    keep = {"rules": {"hyperlinks": "remove"}, "output": "same"}
    org = _stored(db_session, None, keep)
    personal = _stored(db_session, owner, keep)

    chosen = intake.choose_policy(settings, SERVICE, intake.PolicyRef(policy_id=org.id),
                                  factory=factory)
    assert (chosen.id, chosen.version, chosen.body, chosen.built_in) == (org.id, 3, keep, False)
    assert chosen.mode is Mode.BASIC and chosen.policy.action(Rule.HYPERLINKS) is Action.REMOVE
    # the advanced service rebuilds it from pixels; the record keeps the stored body
    upgraded = intake.choose_policy(settings, SERVICE, intake.PolicyRef(
        policy_id=org.id, mode="advanced"), session=db_session)
    assert upgraded.mode is Mode.ADVANCED and upgraded.body == keep
    assert upgraded.policy.action(Rule.HYPERLINKS) is Action.REMOVE

    for unknown in (personal.id, "no-such-policy", "x" * 37):
        with pytest.raises(intake.UnknownPolicy, match="organisation-wide"):
            intake.choose_policy(settings, SERVICE, intake.PolicyRef(policy_id=unknown),
                                 factory=factory)
    with pytest.raises(intake.UnknownPolicy):  # no database: built-ins only
        intake.choose_policy(settings, SERVICE, intake.PolicyRef(policy_id=org.id))


def test_a_person_gets_the_upload_rules(settings, db_session):
    guest = make_user(db_session, role="GUEST")
    person = intake.Caller.person(guest, intake.Channel.API)
    assert intake.choose_policy(settings, person, intake.PolicyRef(),
                                session=db_session).id == "basic"
    with pytest.raises(ApiError) as refused:
        intake.choose_policy(settings, person, intake.PolicyRef(mode="advanced"),
                             session=db_session)
    assert refused.value.status_code == 403 and refused.value.error == "mode_not_allowed"
    with pytest.raises(ApiError) as unknown:
        intake.choose_policy(settings, person, intake.PolicyRef(mode="turbo"),
                             session=db_session)
    assert unknown.value.status_code == 400 and unknown.value.error == "invalid_mode"
    with pytest.raises(TypeError):  # a person's policies are read in their session
        intake.choose_policy(settings, person, intake.PolicyRef())


def test_sanitize_now_and_record(settings, db_session, factory, tmp_path):
    source = tmp_path / "in.pdf"
    source.write_bytes(pdf_with_javascript())
    chosen = intake.choose_policy(settings, SERVICE, intake.PolicyRef())
    done = intake.sanitize_now(settings, source, tmp_path / "out", chosen, name="invoice.pdf")
    assert not done.refused and done.output is not None and done.output.exists()
    assert done.output.parent == tmp_path / "out" and done.output.name == "invoice.pdf"
    assert any(f.kind == "javascript" for f in done.findings)
    assert done.verdict.verdict == "cleaned" and done.verdict.counts.threats >= 1

    account = intake.service_account(factory, "Mail@Sanitas.Local", "Mail")
    assert intake.service_account(factory, "mail@sanitas.local", "Mail") == account
    intake.record(factory, account, intake.Record(
        channel=intake.Channel.MAIL, name="dir/invoice.pdf", size=source.stat().st_size,
        sha256="ab" * 32, chosen=chosen, outcome="sanitized", result=done.result,
        output_size=done.output.stat().st_size, duration=0.25,
        details={"from": "a@example.com"}))
    intake.record(factory, account, intake.Record(
        channel=intake.Channel.MAIL, name="tool.exe", size=10, sha256=None, chosen=chosen,
        outcome="blocked", code="executable", reason="A program."))
    rows = db_session.scalars(select(File).where(File.user_id == account)
                              .order_by(File.original_name)).all()
    assert [(r.original_name, r.status, r.verdict, r.is_expired, r.original_key) for r in rows] \
        == [("invoice.pdf", FileStatus.COMPLETED, "cleaned", True, None),
            ("tool.exe", FileStatus.FAILED, "refused", True, None)]
    sanitized, blocked = rows
    assert sanitized.report["mail"] == {"from": "a@example.com", "outcome": "sanitized",
                                        "code": None, "reason": ""}
    assert sanitized.mode == "basic" and sanitized.policy_id == "basic"
    assert sanitized.sanitized_name == "sanitized_invoice.pdf"
    assert blocked.error_code == "executable" and blocked.report["mail"]["reason"] == "A program."
