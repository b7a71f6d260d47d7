#!/usr/bin/env bash
# Fetches Kafka 3.9.1 and its runtime dependencies from Maven Central into
# compose/lib/ (git-ignored); does nothing when the stamp says it is complete.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib="$here/lib"
stamp="$lib/.complete"
want=$(sha256sum "$here/kafka-deps.pom.xml" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "fetching Kafka 3.9.1 jars from Maven Central into compose/lib/"
rm -rf "$lib"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
mvn -q -B -f "$here/kafka-deps.pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$lib" >"$log" 2>&1 \
  || { echo "fetch-kafka: mvn failed:" >&2; tail -n 15 "$log" >&2; exit 1; }
ls "$lib"/kafka_2.13-3.9.1.jar "$lib"/zookeeper-3.8.*.jar >/dev/null
echo "$want" > "$stamp"
echo "Kafka jars ready: $(ls "$lib"/*.jar | wc -l) jars"
