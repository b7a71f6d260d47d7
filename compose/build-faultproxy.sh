#!/usr/bin/env bash
# Builds faultproxy/ (the in-path proxy of the late-delivery faults, in Go, standard
# library only) into build/faultproxy/faultproxy: one static binary that the node image
# copies in. Reproducible (-trimpath, no build id), so the image digest, which hashes
# the sources, always names the same binary. With `test`: gofmt, go vet and go test
# (with the race detector) instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
go=$(bash "$here/ensure-go.sh")
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
cd "$root/faultproxy"
if [ "${1:-}" = test ]; then
  unformatted=$("$(dirname "$go")/gofmt" -l .)
  if [ -n "$unformatted" ]; then
    echo "faultproxy: not gofmt-formatted: $unformatted" >&2
    exit 1
  fi
  CGO_ENABLED=0 "$go" vet ./...
  # The race detector needs cgo; without a C compiler the tests run without it.
  if command -v gcc >/dev/null; then
    exec env CGO_ENABLED=1 "$go" test -race -count=1 ./...
  fi
  exec env CGO_ENABLED=0 "$go" test -count=1 ./...
fi
out="$root/build/faultproxy"
mkdir -p "$out"
CGO_ENABLED=0 "$go" build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$out/faultproxy.new" .
mv "$out/faultproxy.new" "$out/faultproxy"
