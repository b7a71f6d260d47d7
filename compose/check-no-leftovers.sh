#!/usr/bin/env bash
# Fails when the tests left behind a container or network of a test cluster
# (named it<pid>-N by tests/integration/conftest.py).
set -euo pipefail
fmt='{{.Label "kafka-harness.cluster"}}'
containers=$(docker ps -a --filter label=kafka-harness --format "$fmt" | grep -c '^it' || true)
networks=$(docker network ls --filter label=kafka-harness --format "$fmt" | grep -c '^it' || true)
if [ "$containers" -gt 0 ] || [ "$networks" -gt 0 ]; then
  echo "tests left behind $containers container(s) and $networks network(s):" >&2
  docker ps -a --filter label=kafka-harness >&2
  exit 1
fi
