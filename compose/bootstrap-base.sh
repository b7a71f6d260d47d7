#!/usr/bin/env bash
# Builds the base image (Debian bookworm, JRE 17, iptables, iproute2, procps)
# with debootstrap and docker import, because no container registry is reachable.
# Usage: compose/bootstrap-base.sh IMAGE_NAME
set -euo pipefail
image=${1:?usage: bootstrap-base.sh IMAGE_NAME}
if docker image inspect "$image" >/dev/null 2>&1; then
  exit 0
fi
# The mirror is the one apt already uses on this machine, so no host is named here.
mirror=$( (cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true) \
  | grep -oE '^(URIs:|deb) *[a-z]+://[^ ]+' | grep -v security | head -n1 | awk '{print $NF}')
[ -n "$mirror" ] || { echo "bootstrap-base: no Debian mirror found in the apt sources" >&2; exit 1; }
root=$(mktemp -d /tmp/harness-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "bootstrapping base image $image (debootstrap, about a minute)"
debootstrap --variant=minbase \
  --include=openjdk-17-jre-headless,iptables,iproute2,procps,netcat-openbsd \
  bookworm "$root" "$mirror" >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import \
  --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
rm -f "$root.log"
echo "base image $image ready"
