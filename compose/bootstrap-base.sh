#!/usr/bin/env bash
# Builds the base image (Debian bookworm, JRE 17, iptables, iproute2, procps, libfaketime)
# with debootstrap and docker import, because no container registry is reachable.
# Where one is, HARNESS_BASE_IMAGE=debian:bookworm skips this (see README.md).
# Usage: compose/bootstrap-base.sh IMAGE_NAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=${1:?usage: bootstrap-base.sh IMAGE_NAME}
if docker image inspect "$image" >/dev/null 2>&1; then
  exit 0
fi
command -v debootstrap >/dev/null 2>&1 \
  || { echo "bootstrap-base: debootstrap is missing (make setup installs it)" >&2; exit 1; }
# The host may run Ubuntu or another distribution: Debian's keyring is checked for.
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || {
  echo "bootstrap-base: $keyring is missing: install debian-archive-keyring" >&2
  exit 1
}
mirror=$(bash "$here/debian-mirror.sh")
root=$(mktemp -d /tmp/harness-base.XXXXXX)
trap 'rm -rf "$root" "$root.log"' EXIT
echo "bootstrapping base image $image from $mirror (debootstrap, about a minute)"
debootstrap --variant=minbase --keyring="$keyring" \
  --include=openjdk-17-jre-headless,iptables,iproute2,procps,netcat-openbsd,faketime \
  bookworm "$root" "$mirror" >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import \
  --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "base image $image ready"
