#!/usr/bin/env bash
# `make fuzz` (not part of `make test`): the API under schemathesis, then the detection and
# multipart fuzz targets with many more generated inputs than the test suite uses.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
echo "== API: schemathesis against a real server =="
backend/.venv/bin/python scripts/fuzz_api.py --max-time "${SANITAS_FUZZ_SECONDS:-240}" || status=1
echo "== detection and multipart fuzz targets (hypothesis) =="
(cd backend && SANITAS_FUZZ_EXAMPLES="${SANITAS_FUZZ_EXAMPLES:-20000}" .venv/bin/pytest -q \
  -p no:cacheprovider tests/engine/test_detect_hostile.py tests/api/test_multipart_fuzz.py) \
  || status=1
exit $status
