#!/usr/bin/env bash
# Runs every suite: backend lint (ruff), types (mypy), the licence report and tests (pytest, SQLite + PostgreSQL),
# the web app's type check and lint, frontend unit (Vitest), e2e (Playwright).
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
echo "== backend lint (ruff; rules in backend/pyproject.toml) =="
backend/.venv/bin/ruff check --quiet backend/src backend/tests || status=1
echo "== backend layers (import-linter; contracts in backend/pyproject.toml, docs/architecture.md) =="
(cd backend && .venv/bin/lint-imports --no-cache) || status=1
echo "== backend types (mypy) =="
(cd backend && .venv/bin/mypy) || status=1
echo "== licences (every Python and npm dependency against AGPL-3.0-or-later; docs/licences.md) =="
backend/.venv/bin/python scripts/licence-check.py || status=1
echo "== backend (pytest) =="
(cd backend && .venv/bin/pytest -q -p no:cacheprovider) || status=1
if [ -f frontend/package.json ]; then
  echo "== API types (frontend/src/lib/api-schema.ts vs the backend's OpenAPI) =="
  scripts/api-types.sh --check || status=1
  # tsc here, not only in the build: scripts/build-frontend.sh skips an up-to-date build and
  # never looks at tests/unit, which the type check covers.
  echo "== frontend checks (tsc --noEmit, eslint) =="
  (cd frontend && npx tsc --noEmit -p tsconfig.json && npm run --silent lint) || status=1
  echo "== frontend (vitest) =="
  (cd frontend && npx vitest run) || status=1
  if [ -f frontend/tests/run-e2e.mjs ]; then
    echo "== end-to-end (playwright + chromium) =="
    (cd frontend && node tests/run-e2e.mjs) || status=1
  fi
fi
exit $status
