#!/usr/bin/env bash
# Runs every benchmark in bench/ and prints its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
for b in bench/bench_*.py; do
  [ -e "$b" ] || continue
  echo "== $b =="
  backend/.venv/bin/python "$b"
done
