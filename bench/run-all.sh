#!/usr/bin/env bash
# Runs every benchmark in bench/ in turn (`make bench`); figures go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
for script in bench/bench_*.py; do
  echo "== $script"
  "$py" "$script"
done
