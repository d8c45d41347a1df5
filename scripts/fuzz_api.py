"""`make fuzz`, API part: schemathesis over the whole OpenAPI document of a real `sanitas serve`
(SQLite, embedded executor), signed in as an ADMIN and as a USER, bounded in time.

Checks: no server error (5xx), answers that match the documented status codes and schemas.
Exit status: schemathesis's (0 = no failure).

Usage: backend/.venv/bin/python scripts/fuzz_api.py [--max-time 240] [--workers 2]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))  # the test helpers are the package `tests`
from tests.live_server import free_port, make_users, start_server, stop_server  # noqa: E402

SCHEMATHESIS = ROOT / "backend" / ".venv" / "bin" / "schemathesis"
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance," \
         "content_type_conformance"
# Calls that would end the fuzzer's own session (its token stops working) are left out, and
# the browser-only Google redirect (schemathesis 4.32's coverage phase crashes on it).
EXCLUDED = ["/api/auth/logout", "/api/auth/password", "/api/auth/google/callback"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-time", type=int, default=240, help="seconds per signed-in role")
    parser.add_argument("--workers", default="2")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="sanitas-fuzz-"))
    port = free_port()
    proc = None
    status = 0
    try:
        # Bursts of the fuzzer's workers are not what is tested here.
        proc = start_server(data_dir, port, extra_env={"SANITAS_USER_CONCURRENCY": "0"})
        roles = {"ADMIN": make_users(data_dir, 1, role="ADMIN")[0],
                 "USER": make_users(data_dir, 1, role="USER")[0]}
        for role, headers in roles.items():
            print(f"== schemathesis as {role} ({args.max_time} s) ==", flush=True)
            command = [str(SCHEMATHESIS), "run", f"http://127.0.0.1:{port}/api/openapi.json",
                       "--checks", CHECKS, "--max-time", str(args.max_time),
                       "--workers", args.workers, "--suppress-health-check", "all",
                       "-H", f"Authorization: {headers['Authorization']}"]
            for path in EXCLUDED:
                command += ["--exclude-path", path]
            done = subprocess.run(command, cwd=data_dir, check=False)
            status = status or done.returncode
    finally:
        if proc is not None:
            stop_server(proc)
        log = data_dir / "serve.log"
        if log.exists():
            errors = [line for line in log.read_text(errors="replace").splitlines()
                      if "Traceback" in line or " ERROR " in line]
            print(f"server log: {len(errors)} error line(s)")
            for line in errors[:20]:
                print("  " + line)
            status = status or (1 if errors else 0)
        shutil.rmtree(data_dir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
