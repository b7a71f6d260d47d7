#!/usr/bin/env bash
# Builds faultfs/ (the power-loss layer, in Go) into build/faultfs/faultfs: one static
# binary (no cgo) that the node image copies in. Reproducible (-trimpath, no build id),
# so the image digest, which hashes the sources, always names the same binary.
# With `test`: gofmt, go vet and go test instead (the mount tests need root and
# /dev/fuse, and skip themselves without).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
go=$(bash "$here/ensure-go.sh")
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0
cd "$root/faultfs"
if [ "${1:-}" = test ]; then
  unformatted=$("$(dirname "$go")/gofmt" -l .)
  if [ -n "$unformatted" ]; then
    echo "faultfs: not gofmt-formatted: $unformatted" >&2
    exit 1
  fi
  "$go" vet ./...
  exec "$go" test -count=1 ./...
fi
out="$root/build/faultfs"
mkdir -p "$out"
"$go" build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$out/faultfs.new" .
mv "$out/faultfs.new" "$out/faultfs"
