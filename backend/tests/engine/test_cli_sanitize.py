"""`sanitas sanitize` as a user runs it (a real subprocess, the real sandbox)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SANITAS = str(Path(sys.executable).parent / "sanitas")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "SANITAS_ALLOW_UNSANDBOXED"}
    environment.update(env or {})
    return subprocess.run([SANITAS, "sanitize", *args], capture_output=True, text=True,
                          env=environment, timeout=120, check=False)


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
    details = [f["detail"] for f in result["findings"] if f["kind"] == "pixel_reconstruction"]
    assert details and "OCR text layer added" in details[0]
