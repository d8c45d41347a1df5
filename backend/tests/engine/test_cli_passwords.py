"""`sanitas sanitize --password` (and SANITAS_PASSWORD, --password-file) as a user runs it:
a real subprocess and the real sandbox. The password is never printed."""

from __future__ import annotations

import json
import zipfile

from tests.engine.cli_runner import run
from tests.engine.encrypted_samples import MARKER, encrypted_docx

PASSWORD = "cli-Secret-7"


def test_password_option_env_and_file(tmp_path):
    source = tmp_path / "figures.docx"
    source.write_bytes(encrypted_docx(PASSWORD))
    secret_file = tmp_path / "password.txt"
    secret_file.write_text(PASSWORD + "\n")
    for index, (args, env) in enumerate([
            (["--password", PASSWORD], None),
            ([], {"SANITAS_PASSWORD": PASSWORD}),
            (["--password-file", str(secret_file)], None)]):
        out = tmp_path / f"out{index}"
        proc = run(str(source), "--output-dir", str(out), "--json", *args, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert PASSWORD not in proc.stdout + proc.stderr
        [result] = json.loads(proc.stdout)
        assert result["status"] == "ok" and result["detectedType"] == "docx"
        assert any(f["kind"] == "encryption" for f in result["findings"])
        with zipfile.ZipFile(out / "figures.docx") as zf:
            assert MARKER in zf.read("word/document.xml").decode()


def test_wrong_or_missing_password_and_both_sources(tmp_path):
    source = tmp_path / "figures.docx"
    source.write_bytes(encrypted_docx(PASSWORD))
    wrong = run(str(source), "--output-dir", str(tmp_path / "o"), "--password", "nope")
    assert wrong.returncode == 1
    assert "rejected" in wrong.stdout and "password given does not open" in wrong.stdout
    missing = run(str(source), "--output-dir", str(tmp_path / "o"), "--json")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)[0]["code"] == "encrypted"
    secret_file = tmp_path / "pw"
    secret_file.write_text(PASSWORD)
    both = run(str(source), "--output-dir", str(tmp_path / "o"), "--password-file",
               str(secret_file), env={"SANITAS_PASSWORD": PASSWORD})
    assert both.returncode == 2 and "once" in both.stderr
