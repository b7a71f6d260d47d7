#!/bin/sh
# Starts the role named by the first argument, with the config the harness
# copied into the container and the heap it set in HEAP_MIB
# (harness/cluster/resources.py, which also sets the container's memory limit).
# A KRaft node (broker, controller or both) formats its storage once, with the
# cluster id and format arguments the harness set in KRAFT_CLUSTER_ID and
# KRAFT_FORMAT_ARGS, before its first start; a restart keeps what is there.
#
# With FAULTFS_DIRS (a cluster made with --faultfs: harness/cluster/node_setup.py) the
# container starts as root, and faultfs puts its power-loss layer under each of those
# directories, then runs this script again as kafka beneath it and outlives the JVM
# (faultfs/supervisor.go); its events go to the node's log folder.
#
# With FAULTPROXY_ARGS (a broker of a cluster made with --faultproxy) faultproxy starts
# first, in the background, with those arguments: it listens where the broker is
# advertised and forwards to the broker's loopback listener (faultproxy/main.go). It
# lives as long as the container, whose JVM becomes its parent.
set -e
if [ -n "${FAULTFS_DIRS:-}" ] && [ "$(id -u)" = 0 ]; then
  mounts=
  for d in $FAULTFS_DIRS; do mounts="$mounts -mount $d"; done
  # shellcheck disable=SC2086 # the mount options are words on purpose
  exec /usr/local/bin/faultfs run -user kafka -events /var/log/kafka/faultfs.jsonl $mounts \
    -- "$0" "$@"
fi
# With CLOCK_FILE (a cluster made for the clock faults) every JVM here reads its wall
# clock through libfaketime, offset by the seconds that file holds ("+0" at first); the
# harness rewrites it to move this node's clock, and libfaketime reads it again within
# about two seconds (its cache lasts 1 whole second of the true clock; 1.7-2.1 s measured). The monotonic clock stays true, as a stepped NTP clock leaves it. Without
# FAKETIME_FORCE_MONOTONIC_FIX=0 libfaketime stretches the JVM's timed waits (a 0.7 s
# Object.wait took 3 s) and a broker took minutes to start.
if [ -n "${CLOCK_FILE:-}" ]; then
  [ -f "$CLOCK_FILE" ] || echo "+0" >"$CLOCK_FILE"
  export LD_PRELOAD=/usr/local/lib/libfaketimeMT.so.1 FAKETIME_TIMESTAMP_FILE="$CLOCK_FILE" \
    FAKETIME_CACHE_DURATION=1 FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_FORCE_MONOTONIC_FIX=0
fi
heap=${HEAP_MIB:?HEAP_MIB is not set: the harness sets it when it creates the container}
cp_libs='/opt/kafka/libs/*'
log="-Dlog4j.configuration=file:/etc/kafka/log4j.properties -Dkafka.logs.dir=/var/log/kafka"
mem="-Xms$((heap / 2))m -Xmx${heap}m"
start_kafka() {
  if [ -n "${FAULTPROXY_ARGS:-}" ]; then
    # shellcheck disable=SC2086 # the proxy's arguments are words on purpose
    /usr/local/bin/faultproxy $FAULTPROXY_ARGS -events /var/log/kafka/faultproxy.jsonl \
      2>>/var/log/kafka/faultproxy.log &
  fi
  exec java $mem -XX:+UseG1GC -Djava.awt.headless=true $log \
    -cp "$cp_libs" kafka.Kafka /etc/kafka/server.properties
}
case "$1" in
  kafka)
    start_kafka ;;
  kraft)
    id=${KRAFT_CLUSTER_ID:?KRAFT_CLUSTER_ID is not set: the harness sets it for KRaft nodes}
    if [ ! -f /var/lib/kafka/data/meta.properties ]; then
      # shellcheck disable=SC2086 # the format arguments are words on purpose
      java -Xmx256m $log -cp "$cp_libs" kafka.tools.StorageTool format \
        -t "$id" -c /etc/kafka/server.properties ${KRAFT_FORMAT_ARGS:-}
    fi
    start_kafka ;;
  zookeeper)
    exec java $mem -Djava.awt.headless=true $log -Dzookeeper.admin.enableServer=false \
      -cp "$cp_libs" org.apache.zookeeper.server.quorum.QuorumPeerMain /etc/zookeeper/zoo.cfg ;;
  *)
    echo "usage: entrypoint.sh kafka|kraft|zookeeper" >&2; exit 2 ;;
esac
