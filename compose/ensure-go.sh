#!/usr/bin/env bash
# Prints the path of a Go toolchain (1.22 or newer) for faultfs/, installing one from
# Debian's packages when none is found: golang-go where the release's own is new
# enough (Debian 13, Ubuntu 24.04), else golang-1.23-go from bookworm-backports
# (Debian 12's own Go is 1.19). The build never fetches a toolchain of its own
# (GOTOOLCHAIN=local in build-faultfs.sh).
set -euo pipefail
new_enough() {
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}
  [ "${v%%.*}" -gt 1 ] || { v=${v#1.}; [ "${v%%.*}" -ge 22 ]; }
}
find_go() {
  local g
  for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go-1.2[2-9]/bin/go /usr/lib/go/bin/go; do
    if [ -n "$g" ] && [ -x "$g" ] && GOTOOLCHAIN=local new_enough "$g"; then
      echo "$g"
      return 0
    fi
  done
  return 1
}
find_go && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "faultfs needs Go 1.22 or newer: run as root or install it" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "installing Go from Debian's packages (for faultfs/)" >&2
if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
  echo "deb http://deb.debian.org/debian bookworm-backports main" \
    > /etc/apt/sources.list.d/kafka-harness-backports.list
  apt-get update -qq >&2
  apt-get install -y -qq -t bookworm-backports golang-1.23-go >/dev/null
else
  apt-get update -qq >&2
  apt-get install -y -qq golang-go >/dev/null
fi
find_go && exit 0
echo "faultfs needs Go 1.22 or newer, and this system's packages have none" >&2
exit 1
