"""A password reaches the engine inside the real sandbox (in the job message over the job
socket) and opens an encrypted document there."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from sanitas.engine import RejectionCode
from sanitas.sandbox import run_sanitizer
from tests.engine.encrypted_samples import MARKER, aes_zip, encrypted_docx

PASSWORD = "sandbox-Pässword 42"


def test_encrypted_docx_opens_in_the_sandbox_with_the_password(sandbox_settings, tmp_path):
    source = tmp_path / "input"
    source.write_bytes(encrypted_docx(PASSWORD))
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                           original_name="figures.docx", prewarm=False, password=PASSWORD)
    assert result.status == "ok", result.reason
    assert result.detected_type == "docx" and Path(result.output).name == "figures.docx"
    with zipfile.ZipFile(result.output) as zf:
        assert MARKER in zf.read("word/document.xml").decode()
    assert any(f.kind == "encryption" for f in result.findings)
    assert PASSWORD not in json.dumps(result.to_json(), ensure_ascii=False)


def test_wrong_and_missing_password_in_the_sandbox(sandbox_settings, tmp_path):
    source = tmp_path / "input"
    source.write_bytes(aes_zip({"secret.txt": b"secret\n" * 10}, PASSWORD))
    wrong = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                          original_name="bundle.zip", prewarm=False, password="nope")
    assert (wrong.status, wrong.code) == ("rejected", RejectionCode.WRONG_PASSWORD)
    missing = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                            original_name="bundle.zip", prewarm=False)
    assert (missing.status, missing.code) == ("rejected", RejectionCode.ENCRYPTED)
    right = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                          original_name="bundle.zip", prewarm=False, password=PASSWORD)
    assert right.status == "ok", right.reason
    with zipfile.ZipFile(io.BytesIO(Path(right.output).read_bytes())) as zf:
        assert zf.read("secret.txt") == b"secret\n" * 10


def test_a_policy_that_passes_encrypted_content_gets_the_very_input_back(sandbox_settings,
                                                                        tmp_path):
    """`encryptedContent: pass` in the real sandbox: the document no password opened comes
    back byte for byte under its own name, marked not inspected; the host checks it is the
    input and refuses anything else the sandbox might call "passed"."""
    import pytest

    from sanitas.engine import Rejected
    from sanitas.engine.policy import BASIC
    from sanitas.engine.verdict import Verdict
    from sanitas.sandbox import bwrap

    data = encrypted_docx(PASSWORD)
    source = tmp_path / "input"
    source.write_bytes(data)
    passing = BASIC.with_rules(encryptedContent="pass")
    result = run_sanitizer(source, tmp_path / "out", settings=sandbox_settings, policy=passing,
                           original_name="figures.docx", prewarm=False)
    assert result.status == "ok", result.reason
    assert Path(result.output).name == "figures.docx"
    assert Path(result.output).read_bytes() == data
    assert result.outcome().verdict is Verdict.ENCRYPTED
    assert result.outcome().counts.encrypted_passed == 1

    forged = tmp_path / "forged.docx"
    forged.write_bytes(data[:-1] + b"!")
    with pytest.raises(Rejected, match="not the original"):
        bwrap._check_passed(forged, source, result, passing)
    with pytest.raises(Rejected, match="does not pass"):
        bwrap._check_passed(source, source, result, BASIC)
