#!/usr/bin/env bash
# Fails when the tests of this checkout left behind a container or network of a
# test cluster (named it<pid>-N by tests/integration/conftest.py). Other checkouts'
# clusters on a shared engine carry their own checkout label and are not counted.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd -P)
filter="label=kafka-harness.checkout=$checkout"
fmt='{{.Label "kafka-harness.cluster"}}'
containers=$(docker ps -a --filter "$filter" --format "$fmt" | grep -c '^it' || true)
networks=$(docker network ls --filter "$filter" --format "$fmt" | grep -c '^it' || true)
if [ "$containers" -gt 0 ] || [ "$networks" -gt 0 ]; then
  echo "tests left behind $containers container(s) and $networks network(s):" >&2
  docker ps -a --filter "$filter" >&2
  exit 1
fi
