"""The policy model (engine/policy.py): JSON in and out, validation, built-ins."""

from __future__ import annotations

import pytest

from sanitas.engine.policy import ADVANCED, BASIC, Action, Policy, PolicyError, Rule


def test_built_ins_are_the_two_modes():
    assert BASIC.mode == "basic" and ADVANCED.mode == "advanced"
    assert BASIC.keep_links and BASIC.review_data == "remove" and not BASIC.ocr
    assert Policy(output="pdf+ocr").ocr


def test_json_round_trip_and_defaults():
    data = {"rules": {"hyperlinks": "remove", "reviewData": "anonymise",
                      "embeddedFiles": "sanitize"},
            "allowedTypes": ["pdf", "docx"], "output": "pdf", "maxPages": 40}
    policy = Policy.from_json(data)
    assert policy.action(Rule.HYPERLINKS) is Action.REMOVE and not policy.keep_links
    assert policy.review_data == "anonymise"
    assert policy.action(Rule.MACROS) is Action.REMOVE  # not given: the basic policy's
    again = Policy.from_json(policy.to_json())
    assert again == policy and again.to_json()["allowedTypes"] == ["docx", "pdf"]
    assert Policy.from_json({}) == BASIC


@pytest.mark.parametrize(("data", "field"), [
    ({"rules": {"macros": "keep"}}, "rules.macros"),  # never kept
    ({"rules": {"javascript": "anonymise"}}, "rules.javascript"),
    ({"rules": {"hyperlinks": "sanitize"}}, "rules.hyperlinks"),  # embedded files only
    ({"rules": {"fonts": "remove"}}, "rules.fonts"),
    ({"rules": []}, "rules"),
    ({"output": "docx"}, "output"),
    ({"maxPages": 0}, "maxPages"),
    ({"maxPages": True}, "maxPages"),
    ({"allowedTypes": []}, "allowedTypes"),
    ({"allowedTypes": ["pdf", "exe"]}, "allowedTypes"),  # not a kind or family
    ({"colour": "red"}, "colour"),
])
def test_invalid_policies_name_the_field(data, field):
    with pytest.raises(PolicyError) as raised:
        Policy.from_json(data)
    assert field in raised.value.errors


def test_the_engine_has_one_mode():
    # report.Mode is policy.Mode (no second Literal of the same words); a Context given the
    # word gets the member, an unknown word is refused instead of running basic
    from sanitas.engine import formats, report
    from sanitas.engine.policy import Mode, resolve

    assert report.Mode is Mode
    assert report.Context().mode is Mode.BASIC
    assert report.Context(mode="advanced").mode is Mode.ADVANCED  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        report.Context(mode="fast")  # type: ignore[arg-type]
    assert resolve(None, "advanced").mode is Mode.ADVANCED
    assert formats.allowed_outputs("docx", Mode.ADVANCED) == {"pdf"}
    assert "docx" in formats.allowed_outputs("docx", Mode.BASIC)
    assert [m.value for m in Mode] == ["basic", "advanced"]  # the JSON/API/CLI words
