"""Issue 19 through the real sandbox: the key `keep` cases of the engine's matrix
(tests/engine/test_keep_active_content.py) run in bubblewrap, and the output is scanned for
active content (olevba, PDF action names, executables by magic, OLE packages, references that
load code), every container opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanitas.engine.policy import CHOICES, Action, Policy
from sanitas.sandbox import run_sanitizer
from tests.engine.active_scan import active_content
from tests.engine.hostile_keep import write_all

EVERY_KEEP = {rule.value: "keep" for rule, offered in CHOICES.items() if Action.KEEP in offered}


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("hostile-keep"))


@pytest.mark.parametrize(("sample", "rules"), [
    ("attachments.pdf", {"embeddedFiles": "keep"}),  # the issue's case: invoice.exe, a JS PDF
    ("attachments.pdf", EVERY_KEEP),
    ("embedding.docx", EVERY_KEEP),
    ("embedding.odt", EVERY_KEEP),
    ("bundle.zip", EVERY_KEEP),
])
def test_keep_through_the_sandbox(samples, sandbox_settings, tmp_path, sample, rules):
    source = samples[sample]
    assert active_content(source.read_bytes(), sample)  # hostile going in
    result = run_sanitizer(source, tmp_path / "out", settings=sandbox_settings,
                           original_name=sample, policy=Policy().with_rules(**rules),
                           prewarm=False)
    assert result.status == "ok", (result.reason, result.code)
    assert result.output is not None
    assert active_content(Path(result.output).read_bytes(), sample) == []
    removed = [f for f in result.findings if f.action == "removed" and
               f.kind in ("embedded_file", "ole_object", "embedded_object", "archive_member",
                          "remote_template", "external_relationship")]
    assert removed  # the report says what was dropped
