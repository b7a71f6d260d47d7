#!/usr/bin/env bash
# Fetches Kafka VERSION (3.9.1 when not given) and its runtime dependencies from
# Maven Central into compose/lib/VERSION/ (git-ignored); does nothing when the
# stamp says that folder is complete.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-3.9.1}
lib="$here/lib/$version"
stamp="$lib/.complete"
want=$( (cat "$here/kafka-deps.pom.xml"; echo "$version") | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "fetching Kafka $version jars from Maven Central into compose/lib/$version/"
rm -rf "$lib"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
mvn -q -B -f "$here/kafka-deps.pom.xml" dependency:copy-dependencies \
  -Dkafka.version="$version" -DincludeScope=runtime -DoutputDirectory="$lib" >"$log" 2>&1 \
  || { echo "fetch-kafka: mvn failed:" >&2; tail -n 15 "$log" >&2; exit 1; }
ls "$lib/kafka_2.13-$version.jar" >/dev/null
echo "$want" > "$stamp"
echo "Kafka $version jars ready: $(ls "$lib"/*.jar | wc -l) jars"
