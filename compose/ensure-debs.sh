#!/usr/bin/env bash
# Checks Python >= 3.11 first, then installs the Debian (or Ubuntu) packages the
# harness needs when any is missing (docker.io, iptables, maven, a Java 17 JRE for Spark,
# the Java 17 JDK's javac for the Java client's driver and libfaketime for its clock
# faults, chromium for the page tests, the
# venv module, a go command (Debian's golang-go: too old to build nats-server and faultfs
# itself, it fetches the Go toolchain that does, see compose/ensure-go.sh; Porcupine's
# driver in bench/ builds with it as it is);
# debootstrap and Debian's keyring unless HARNESS_BASE_IMAGE names a base image to
# pull instead); runs apt-get update once. PYTHON names the interpreter (python3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/check-python.sh"
python=${PYTHON:-python3}
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
# Spark (analyze, check --spark) runs on a Java 17 JRE; the page tests use headless Chromium.
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
# `--client java` builds its driver (clients/java/) with javac on first use.
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# The client clock faults preload libfaketime into the Java client's drivers.
ls /usr/lib/*-linux-gnu/faketime/libfaketimeMT.so.1 >/dev/null 2>&1 || missing+=(libfaketime)
command -v go >/dev/null 2>&1 || missing+=(golang-go)
"$python" -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=("${python##*/}-venv")
if [ -z "${HARNESS_BASE_IMAGE:-}" ]; then
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages: ${missing[*]}; run as root or install them" >&2
  exit 1
fi
echo "installing packages: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
