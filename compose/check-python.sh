#!/usr/bin/env bash
# Fails at once, with one line, unless $PYTHON (default python3) is Python 3.11 or
# newer: pip would otherwise fail much later, with a less helpful message.
set -euo pipefail
python=${PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 \
  || { echo "no $python on PATH: the harness needs Python 3.11 or newer" >&2; exit 1; }
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo "?")
  echo "$python is Python $version; the harness needs 3.11 or newer" \
    "(e.g. on Ubuntu 22.04: apt install python3.11 python3.11-venv; make PYTHON=python3.11)" >&2
  exit 1
fi
