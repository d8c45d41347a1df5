"""Result.to_json and Result.from_json: one format both ways, and untrusted JSON bounded."""

from __future__ import annotations

import pytest

from sanitas.engine.report import Finding, RejectionCode, Result


def test_a_result_survives_the_round_trip():
    original = Result(input="a.docm", status="ok", output="/x/a.docx", output_type="docx",
                      findings=[Finding("macro", "word/vbaProject.bin", "removed", "VBA")],
                      duration_ms=12, detected_type="docm", pages_rebuilt=[1, 2])
    again = Result.from_json(original.to_json(), name="a.docm")
    assert again.output is None  # a path is never taken from the payload
    assert (again.status, again.output_type, again.findings, again.duration_ms,
            again.detected_type, again.pages_rebuilt) == (
        "ok", "docx", original.findings, 12, "docm", [1, 2])
    refused = Result(input="x.exe", status="rejected", reason="An executable.",
                     code=RejectionCode.EXECUTABLE)
    back = Result.from_json(refused.to_json(), name="x.exe")
    assert (back.reason, back.code, back.output_type) == ("An executable.", "executable", None)


def test_hostile_payloads_are_bounded_and_normalised():
    payload = {"status": "rejected", "reason": "r" * 10_000, "code": "not-a-code",
               "findings": [{"kind": "k" * 500, "action": "exploded", "detail": None}, "junk"]
               * 2000, "pagesRebuilt": [1, "2", None, 3], "durationMs": -5,
               "outputType": "exe", "detectedType": "d" * 100}
    result = Result.from_json(payload, name="f")
    assert len(result.reason) == 2000 and result.code == RejectionCode.DAMAGED
    assert len(result.findings) == 500  # the first 1,000 items, half of them not objects
    assert {f.action for f in result.findings} == {"removed"}
    assert len(result.findings[0].kind) == 100 and result.findings[0].detail == ""
    assert result.pages_rebuilt == [1, 3] and result.duration_ms == 0
    assert result.output_type is None and len(result.detected_type) == 40


@pytest.mark.parametrize("payload", [None, [], "ok", {"status": "maybe"}, {}])
def test_what_is_not_a_result_is_refused(payload):
    with pytest.raises(ValueError):
        Result.from_json(payload, name="f")
