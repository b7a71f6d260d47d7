#!/usr/bin/env bash
# Builds nats-server VERSION (2.12.1 when not given: the version Jepsen's NATS suite,
# jepsen-io/nats, tests) from the Go module proxy into compose/lib/nats/VERSION/
# (git-ignored), with the Go that compose/ensure-go.sh finds or fetches: `go install
# github.com/nats-io/nats-server/v2@vVERSION`, static (CGO_ENABLED=0), -trimpath (no
# build paths in the binary). Does nothing when the stamp says the folder is
# complete; the stamp names the version, the Go and the binary's SHA-256, and the node
# image's tag digests it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-2.12.1}
lib="$here/lib/nats/$version"
stamp="$lib/.complete"
if [ -f "$stamp" ] && [ -x "$lib/nats-server" ]; then
  exit 0
fi
go=$(bash "$here/ensure-go.sh")
go_version=$("$go" env GOVERSION)
echo "building nats-server v$version with $go_version into compose/lib/nats/$version/"
out=$(mktemp -d /tmp/harness-nats.XXXXXX)
trap 'rm -rf "$out"' EXIT
# GOTOOLCHAIN=local: build with this Go, never one that a go.mod's toolchain line names.
CGO_ENABLED=0 GOTOOLCHAIN=local GOBIN="$out" \
  "$go" install -trimpath "github.com/nats-io/nats-server/v2@v$version" >"$out/log" 2>&1 \
  || { echo "fetch-nats: go install nats-server@v$version failed:" >&2
       tail -n 15 "$out/log" >&2; exit 1; }
said=$("$out/nats-server" --version)
[ "$said" = "nats-server: v$version" ] \
  || { echo "fetch-nats: the built server says '$said', not v$version" >&2; exit 1; }
rm -rf "$lib"
mkdir -p "$lib"
mv "$out/nats-server" "$lib/nats-server"
sum=$(sha256sum "$lib/nats-server" | cut -d' ' -f1)
echo "nats-server v$version $go_version sha256:$sum" > "$stamp"
echo "nats-server v$version ready ($(du -m "$lib/nats-server" | cut -f1) MiB)"
