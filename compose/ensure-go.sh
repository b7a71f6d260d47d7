#!/usr/bin/env bash
# Prints the path of a Go command new enough to build nats-server (GO_MIN: v2.15 asks
# for go 1.26, v2.12 for 1.24): the machine's `go` when it is, else the Go toolchain
# GO_TOOLCHAIN, fetched once into compose/lib/go/ (git-ignored).
#
# The toolchain is the module golang.org/toolchain, the very zip `go` downloads when it
# switches toolchains (https://go.dev/doc/toolchain). Any `go`, Debian bookworm's 1.19
# (golang-go, which compose/ensure-debs.sh installs where Go is missing) included, fetches
# it with `go mod download` from the Go module proxy and checks it against Go's checksum
# database; it is then copied out of a throw-away module cache with the executable bits
# that module zips do not carry (cmd/go sets them the same way).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
GO_MIN=26
GO_TOOLCHAIN=go1.26.8

# Prints the minor version of a go command when it is Go 1.x, else nothing.
minor_of() {
  "$1" env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9][0-9]*\).*/\1/p'
}

if system_go=$(command -v go 2>/dev/null); then
  minor=$(minor_of "$system_go")
  if [ -n "$minor" ] && [ "$minor" -ge "$GO_MIN" ]; then
    echo "$system_go"
    exit 0
  fi
fi
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "ensure-go: no Go toolchain for $(uname -m) here" >&2; exit 1 ;;
esac
root="$here/lib/go/$GO_TOOLCHAIN.linux-$arch"
if [ -x "$root/bin/go" ]; then
  echo "$root/bin/go"
  exit 0
fi
if [ -z "${system_go:-}" ]; then
  echo "ensure-go: no go command to fetch $GO_TOOLCHAIN with (make setup installs" \
    "Debian's golang-go)" >&2
  exit 1
fi
module="golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-$arch"
echo "fetching the Go toolchain $GO_TOOLCHAIN from the Go module proxy into" \
  "compose/lib/go/ (its go is $("$system_go" env GOVERSION))" >&2
cache=$(mktemp -d /tmp/harness-go.XXXXXX)
trap 'rm -rf "$cache" "$cache.log"' EXIT
# Outside any module: GO111MODULE=on makes the go of Debian bookworm accept module@version.
GOMODCACHE="$cache" GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local \
  "$system_go" mod download "$module" >"$cache.log" 2>&1 \
  || { echo "ensure-go: go mod download $module failed:" >&2; tail -n 5 "$cache.log" >&2; exit 1; }
mkdir -p "$here/lib/go"
rm -rf "$root.partial"
cp -r "$cache/$module" "$root.partial"
chmod -R u+w "$root.partial"
chmod +x "$root.partial"/bin/* "$root.partial"/pkg/tool/*/*
mv "$root.partial" "$root"
[ "$(minor_of "$root/bin/go")" -ge "$GO_MIN" ] \
  || { echo "ensure-go: $root/bin/go does not run" >&2; exit 1; }
echo "$root/bin/go"
