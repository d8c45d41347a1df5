#!/usr/bin/env bash
# The web app's API types, generated from the backend's OpenAPI document.
#   scripts/api-types.sh          regenerate frontend/src/lib/api-schema.ts
#   scripts/api-types.sh --check  fail when the committed file no longer matches the backend
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=frontend/src/lib/api-schema.ts
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
backend/.venv/bin/sanitas openapi > "$scratch/openapi.json" 2>/dev/null
(cd frontend && npx --no-install openapi-typescript "$scratch/openapi.json" \
   -o "$scratch/api-schema.ts" >/dev/null 2>&1)
if [ "${1:-}" = "--check" ]; then
  if ! diff -q "$scratch/api-schema.ts" "$TARGET" >/dev/null 2>&1; then
    diff -u "$TARGET" "$scratch/api-schema.ts" | head -40 >&2 || true
    echo "$TARGET is out of date with the backend's API: run scripts/api-types.sh" >&2
    exit 1
  fi
  echo "API types match the backend."
else
  cp "$scratch/api-schema.ts" "$TARGET"
  echo "wrote $TARGET"
fi
