#!/usr/bin/env bash
# Makes sure a Docker engine answers: installs Debian's docker.io if dockerd is
# missing and starts dockerd in the background when nothing is listening.
set -euo pipefail
if docker info >/dev/null 2>&1; then
  exit 0
fi
if [ -n "${DOCKER_HOST:-}" ]; then
  echo "ensure-docker: DOCKER_HOST=$DOCKER_HOST does not answer" >&2
  exit 1
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
log=/var/log/harness-dockerd.log
echo "no Docker engine answered: starting dockerd (log: $log)"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "dockerd is up"
    exit 0
  fi
  sleep 0.5
done
echo "ensure-docker: dockerd did not answer within 30 s; last lines of $log:" >&2
tail -n 15 "$log" >&2
exit 1
