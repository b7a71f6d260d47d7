#!/usr/bin/env bash
# Prints the Debian mirror for debootstrap: $HARNESS_DEBIAN_MIRROR if set, else the
# first mirror in apt's sources that serves a Debian suite (one-line entries with or
# without [options], and deb822 .sources files), else deb.debian.org. A host whose
# apt serves Ubuntu or another distribution thus still bootstraps Debian.
# Usage: compose/debian-mirror.sh [APT_DIR]   (default /etc/apt)
set -euo pipefail
apt_dir=${1:-/etc/apt}
fallback=http://deb.debian.org/debian
if [ -n "${HARNESS_DEBIAN_MIRROR:-}" ]; then
  echo "$HARNESS_DEBIAN_MIRROR"
  exit 0
fi
# "URI SUITE" pairs of every enabled binary (deb) source, in apt's order.
pairs() {
  local f
  for f in "$apt_dir"/sources.list "$apt_dir"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed 's/#.*//' "$f" | awk '$1 == "deb" { sub(/\[[^]]*\]/, ""); print $2, $3 }'
  done
  for f in "$apt_dir"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: blank-line separated stanzas; continuation lines start with a space.
    awk 'BEGIN { RS = ""; FS = "\n" }
      {
        types = ""; uris = ""; suites = ""; enabled = "yes"
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^[ \t#]/ || index(line, ":") == 0) continue
          key = tolower(substr(line, 1, index(line, ":") - 1))
          value = substr(line, index(line, ":") + 1)
          if (key == "types") types = value
          else if (key == "uris") uris = value
          else if (key == "suites") suites = value
          else if (key == "enabled") enabled = tolower(value)
        }
        gsub(/ /, "", enabled)
        if (enabled == "no" || (" " types " ") !~ /[ \t]deb[ \t]/) next
        n = split(uris, u, /[ \t]+/); m = split(suites, s, /[ \t]+/)
        for (a = 1; a <= n; a++) for (b = 1; b <= m; b++)
          if (u[a] != "" && s[b] != "") print u[a], s[b]
      }' "$f"
  done
}
debian_suite='^(buster|bullseye|bookworm|trixie|forky|sid|oldoldstable|oldstable|stable|testing|unstable)(-updates|-backports)?$'
mirror=$(pairs | awk -v suite="$debian_suite" \
  '$1 ~ /^(https?|ftp):\/\// && $1 !~ /security/ && $2 ~ suite { sub(/\/+$/, "", $1); print $1; exit }')
if [ -z "$mirror" ]; then
  echo "debian-mirror: apt's sources name no Debian mirror (an Ubuntu host?); using $fallback" \
    "(set HARNESS_DEBIAN_MIRROR to choose another)" >&2
  mirror=$fallback
fi
echo "$mirror"
