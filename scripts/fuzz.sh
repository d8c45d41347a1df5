#!/usr/bin/env bash
# `make fuzz` (not part of `make test`): the API under schemathesis on SQLite and PostgreSQL
# (NUL bytes and extreme moments mixed in: scripts/fuzz_hooks.py), then the detection and
# multipart fuzz targets (the multipart one on both databases) with many more generated inputs
# than the test suite uses. SANITAS_FUZZ_SECONDS: schemathesis time per role and database
# (default 150: about 10 minutes in all); SANITAS_FUZZ_DATABASE: sqlite, postgresql or both.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-services.sh
status=0
echo "== API: schemathesis against a real server =="
backend/.venv/bin/python scripts/fuzz_api.py --max-time "${SANITAS_FUZZ_SECONDS:-150}" \
  --database "${SANITAS_FUZZ_DATABASE:-both}" || status=1
echo "== detection and multipart fuzz targets (hypothesis) =="
(cd backend && SANITAS_FUZZ_EXAMPLES="${SANITAS_FUZZ_EXAMPLES:-20000}" .venv/bin/pytest -q \
  -p no:cacheprovider tests/engine/test_detect_hostile.py tests/api/test_multipart_fuzz.py) \
  || status=1
exit $status
