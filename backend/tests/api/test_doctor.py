"""`sanitas doctor` (sanitas/doctor.py) run as the command a deployment runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SANITAS = Path(sys.executable).parent / "sanitas"


def _doctor(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SANITAS_")}
    return subprocess.run([str(SANITAS), *args], capture_output=True, text=True, timeout=180,
                          check=False, env={**clean, "SANITAS_DATA_DIR": str(data_dir), **env})


def _checks(done: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def test_a_fresh_install_needs_its_migrations_then_passes(tmp_path):
    before = _doctor(tmp_path, "doctor", "--json")
    assert before.returncode == 1
    checks = _checks(before)
    assert checks["database"]["status"] == "fail" and "sanitas migrate" in checks["database"]["fix"]
    assert checks["sandbox"]["status"] == "ok"  # starts, no network, no host files
    assert _doctor(tmp_path, "migrate").returncode == 0
    after = _doctor(tmp_path, "doctor", "--json")
    assert after.returncode == 0, after.stdout
    checks = _checks(after)
    assert {c["status"] for c in checks.values()} <= {"ok", "warn"}
    assert checks["storage"]["status"] == "ok" and checks["broker"]["status"] == "ok"
    assert checks["smtp"]["status"] == "warn"  # no SMTP server configured: outbox
    assert checks["webhook CAs"] == {"name": "webhook CAs", "status": "ok",
                                     "detail": "public CAs only", "fix": ""}


def test_failures_say_what_to_do_and_hide_passwords(tmp_path):
    done = _doctor(tmp_path, "doctor",
                   SANITAS_DATABASE_URL="postgresql+psycopg://user:hunter2@127.0.0.1:1/none",
                   SANITAS_SANDBOX="none", SANITAS_EXECUTOR="celery",
                   SANITAS_BROKER_URL="redis://127.0.0.1:1/0", SANITAS_PUBLIC_URL="nonsense",
                   SANITAS_WEBHOOK_CA_BUNDLE=str(tmp_path / "no-such-ca.pem"))
    assert done.returncode == 1
    assert "hunter2" not in done.stdout + done.stderr
    for line in ("FAIL  sandbox", "FAIL  database", "FAIL  broker", "FAIL  public url",
                 "FAIL  webhook CAs"):
        assert line in done.stdout, done.stdout
    assert "fix: Run" not in done.stdout or "migrate" in done.stdout
    assert "fix: Check SANITAS_DATABASE_URL" in done.stdout
    assert "fix: Point SANITAS_WEBHOOK_CA_BUNDLE at a readable PEM file" in done.stdout
