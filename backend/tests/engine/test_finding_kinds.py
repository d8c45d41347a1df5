"""The registry of finding kinds (engine/kinds.py): every kind a family can record is declared
with the rule that decides it, and a refusing policy refuses whatever basic reports under a
rule. (Every engine test also fails when it records an undeclared kind: see conftest.py.)"""

from __future__ import annotations

import pytest

from sanitas.engine import epub, odf, pdf, sanitize_file, text
from sanitas.engine.kinds import FINDING_KINDS, UNDECLARED, rule_of
from sanitas.engine.ooxml import package as ooxml_package
from sanitas.engine.ooxml import parts as ooxml_parts
from sanitas.engine.policy import CHOICES, Action, Policy, Rule
from sanitas.engine.report import REFUSAL_CODES, Context, RejectionCode

EVERYTHING_KEPT = Policy.from_json({"rules": {
    "embeddedFiles": "sanitize", "externalReferences": "keep", "hyperlinks": "keep",
    "reviewData": "keep", "documentMetadata": "keep", "imageMetadata": "keep",
    "hiddenContent": "remove", "formFields": "remove"}})
REFUSABLE = [rule for rule in Rule if Action.REFUSE in CHOICES[rule]]
EVERYTHING_REFUSED = Policy.from_json({"rules": {rule.value: "refuse" for rule in REFUSABLE}})


def test_the_engines_kind_tables_are_declared():
    tables = [pdf.DANGEROUS_ANNOTATIONS, pdf.PAGE_DROP, pdf.SWEEP_KEYS,
              ooxml_package.REMOVE_KINDS, ooxml_parts.ALWAYS_DROP, odf.DROP, odf.UNWRAP,
              text.REMOVED_ELEMENTS, text.SVG_REMOVED,
              {k: kind for k, (kind, _what) in epub.META_INF.items()}]
    undeclared = {kind for table in tables for kind in table.values() if kind not in FINDING_KINDS}
    assert not undeclared


def test_refusal_codes_one_per_rule():
    assert {code.value for code in REFUSAL_CODES.values()} == {
        code.value for code in RejectionCode if code.value.startswith("refused_")}
    assert set(REFUSAL_CODES) == set(REFUSABLE)
    assert [rule for rule in Rule if rule not in REFUSABLE] == [Rule.ENCRYPTED_CONTENT]


def test_an_undeclared_kind_is_noticed():
    ctx = Context()
    ctx.add("no_such_kind_for_the_test", "here")
    assert "no_such_kind_for_the_test" in UNDECLARED
    UNDECLARED.discard("no_such_kind_for_the_test")  # the autouse check would fail this test


@pytest.fixture(scope="module")
def basic_results(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("basic")
    return {name: sanitize_file(path, out) for name, path in sorted(corpus.items())}


def test_whole_corpus_under_other_policies(corpus, basic_results, tmp_path):
    """Every corpus file under a policy that keeps what it can and one that refuses
    everything: only declared kinds, the same outcome as basic when nothing is refused, and a
    refusal with a rule's code wherever basic reported content a rule decides."""
    for folder in ("kept", "strict"):
        (tmp_path / folder).mkdir()
    for name, path in sorted(corpus.items()):
        basic = basic_results[name]
        kept = sanitize_file(path, tmp_path / "kept", policy=EVERYTHING_KEPT)
        assert (kept.status, kept.code) == (basic.status, basic.code), (name, kept.reason)
        strict = sanitize_file(path, tmp_path / "strict", policy=EVERYTHING_REFUSED)
        decided = [f.kind for f in basic.findings if rule_of(f.kind) is not None]
        if basic.status == "ok" and decided:
            assert strict.status == "rejected", (name, decided)
            assert strict.code in set(REFUSAL_CODES.values()), (name, strict.code)
        if strict.status == "rejected" and strict.code in set(REFUSAL_CODES.values()):
            assert "which this policy refuses" in (strict.reason or "")
    assert not UNDECLARED
