#!/usr/bin/env bash
# Builds the web UI into frontend/dist when its sources changed since the last build.
set -euo pipefail
cd "$(dirname "$0")/../frontend" 2>/dev/null || exit 0
[ -f package.json ] || exit 0
stamp=dist/.build-stamp
if [ -f "$stamp" ] && [ -z "$(find src public index.html package-lock.json vite.config.ts \
     tailwind.config.* postcss.config.* -newer "$stamp" 2>/dev/null | head -1)" ]; then
  exit 0
fi
echo "[build] frontend"
npm run --silent build >/dev/null
touch "$stamp"
