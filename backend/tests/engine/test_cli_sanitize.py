"""`sanitas sanitize` as a user runs it (a real subprocess, the real sandbox)."""

from __future__ import annotations

import json

from tests.engine.cli_runner import run


def test_json_report_and_exit_codes(corpus, tmp_path):
    out = tmp_path / "out"
    proc = run(str(corpus["hostile.pdf"]), str(corpus["invoice.pdf"]), "--output-dir", str(out),
               "--json")
    assert proc.returncode == 1, proc.stderr
    results = json.loads(proc.stdout)
    assert [r["status"] for r in results] == ["ok", "rejected"]
    ok, rejected = results
    assert set(ok) >= {"input", "status", "output", "outputType", "reason", "code", "findings",
                       "durationMs"}
    assert ok["output"] == str(out / "hostile.pdf") and ok["outputType"] == "pdf"
    assert {"kind", "location", "action"} <= set(ok["findings"][0])
    assert "executable" in rejected["reason"] and rejected["output"] is None
    assert rejected["code"] == "executable" and ok["code"] is None
    assert sorted(p.name for p in out.iterdir()) == ["hostile.pdf"]


def test_all_ok_exits_zero_and_prints_summary(corpus, tmp_path):
    proc = run(str(corpus["photo.jpg"]), "--output-dir", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout and "gps_location" in proc.stdout


def test_usage_errors_exit_two(corpus, tmp_path):
    assert run("--output-dir", str(tmp_path)).returncode == 2  # no file
    assert run(str(tmp_path / "missing.pdf"), "--output-dir", str(tmp_path)).returncode == 2
    assert run(str(corpus["clean.pdf"])).returncode == 2  # no --output-dir
    assert run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path),
               "--mode", "turbo").returncode == 2


def test_no_sandbox_needs_the_environment_flag(corpus, tmp_path):
    refused = run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path), "--no-sandbox")
    assert refused.returncode == 2 and "SANITAS_ALLOW_UNSANDBOXED" in refused.stderr
    allowed = run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path), "--no-sandbox",
                  "--json", env={"SANITAS_ALLOW_UNSANDBOXED": "1"})
    assert allowed.returncode == 0 and "WARNING" in allowed.stderr
    assert json.loads(allowed.stdout)[0]["status"] == "ok"


def test_ocr_flag_adds_a_text_layer_in_advanced_mode(corpus, tmp_path):
    proc = run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path / "o"), "--mode",
               "advanced", "--ocr", "--json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)
    details = [f["detail"] for f in result["findings"] if f["kind"] == "ocr"]
    assert details and "text layer rebuilt" in details[0]


def test_policy_file_decides(corpus, tmp_path):
    """--policy takes the API's JSON: a refusing rule rejects with its code, keep keeps."""
    refusing = tmp_path / "refuse.json"
    refusing.write_text(json.dumps({"name": "strict", "description": "no scripts",
                                    "rules": {"javascript": "refuse"}}))
    proc = run(str(corpus["hostile.pdf"]), "--output-dir", str(tmp_path / "a"), "--json",
               "--policy", str(refusing))
    assert proc.returncode == 1, proc.stderr
    [result] = json.loads(proc.stdout)
    assert result["status"] == "rejected" and result["code"] == "refused_javascript"
    assert "which this policy refuses" in result["reason"]
    keeping = tmp_path / "keep.json"
    keeping.write_text(json.dumps({"rules": {"imageMetadata": "keep"}}))
    proc = run(str(corpus["photo.jpg"]), "--output-dir", str(tmp_path / "b"), "--json",
               "--policy", str(keeping))
    assert proc.returncode == 0, proc.stderr
    [result] = json.loads(proc.stdout)
    assert {f["action"] for f in result["findings"] if f["kind"] == "gps_location"} == {"kept"}


def test_bad_policy_file_names_the_field(corpus, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rules": {"macros": "keep"}, "colour": "red"}))
    proc = run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path), "--policy", str(bad))
    assert proc.returncode == 2
    assert "rules.macros" in proc.stderr and "colour" in proc.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    proc = run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path), "--policy", str(broken))
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr
    assert run(str(corpus["clean.pdf"]), "--output-dir", str(tmp_path), "--policy",
               str(tmp_path / "missing.json")).returncode == 2
