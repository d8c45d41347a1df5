"""The format registry, walked: every declared kind goes through the real sandbox as a
generated sample and comes back accepted, detected as itself, in an output type the registry
allows for it. Advanced mode is walked once per family."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanitas.engine import formats
from sanitas.engine.policy import Mode
from sanitas.sandbox import run_sanitizer
from tests.engine.samples import all_samples

pytestmark = pytest.mark.slow  # six LibreOffice conversions to make the samples


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return all_samples(tmp_path_factory.mktemp("format-samples"))


def test_the_registry_is_consistent():
    formats.check_registry()
    for kind in formats.KINDS.values():
        family = formats.FAMILIES[kind.family]
        assert family.module.startswith("sanitas.engine.")
        if kind.container == "zip":
            assert set(kind.outputs) <= set(formats.OUTPUTS)
    # every output a kind may produce is one the sandbox parent knows how to check
    assert {o for k in formats.KINDS.values() for o in k.outputs} <= formats.output_extensions()


@pytest.mark.parametrize("kind", sorted(formats.KINDS))
def test_every_kind_is_accepted_through_the_sandbox(kind, samples, sandbox_settings, tmp_path):
    result = run_sanitizer(samples[kind], tmp_path / "out", settings=sandbox_settings,
                           original_name=samples[kind].name, prewarm=False)
    assert result.status == "ok", (kind, result.reason, result.code)
    assert result.detected_type == kind
    assert result.output_type in formats.allowed_outputs(kind, Mode.BASIC)
    output = formats.OUTPUTS[result.output_type]
    head = Path(result.output).read_bytes()[:16]
    assert output.text or head.startswith(output.magic)
    assert result.output.endswith(f".{result.output_type}")


def _one_kind_per_way() -> list[str]:
    """One kind for each (family, advanced behaviour) pair."""
    chosen: dict[tuple[str, str], str] = {}
    for kind in sorted(formats.KINDS):
        chosen.setdefault((formats.KINDS[kind].family, formats.advanced_of(kind)), kind)
    return sorted(chosen.values())


@pytest.mark.parametrize("kind", _one_kind_per_way())
def test_advanced_mode_per_family(kind, samples, sandbox_settings, tmp_path):
    result = run_sanitizer(samples[kind], tmp_path / "out", mode="advanced",
                           settings=sandbox_settings, original_name=samples[kind].name,
                           prewarm=False)
    assert result.status == "ok", (kind, result.reason)
    assert result.output_type in formats.allowed_outputs(kind, Mode.ADVANCED)
    if formats.advanced_of(kind) == formats.Advanced.SHEET_VALUES:
        assert result.output_type == "xlsx" and not result.pages_rebuilt
    elif formats.advanced_of(kind) != formats.Advanced.SAME:
        assert result.output_type == "pdf" and result.pages_rebuilt


def test_an_output_the_registry_does_not_allow_for_the_kind_is_refused():
    from sanitas.engine.report import Rejected
    from sanitas.sandbox.bwrap import _result_from_payload

    payload = {"status": "ok", "outputType": "html", "detectedType": "pdf", "findings": []}
    with pytest.raises(Rejected) as refused:
        _result_from_payload(payload, "x.pdf", "basic")
    assert refused.value.code == "invalid_output"
    payload["outputType"] = "pdf"
    assert _result_from_payload(payload, "x.pdf", "basic").output_type == "pdf"
    assert _result_from_payload({**payload, "detectedType": "docx"}, "x.docx",
                                "advanced").output_type == "pdf"
