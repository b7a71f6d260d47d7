#!/bin/sh
# Starts the role named by the first argument, with the config the harness
# copied into the container before starting it.
set -e
cp_libs='/opt/kafka/libs/*'
log="-Dlog4j.configuration=file:/etc/kafka/log4j.properties -Dkafka.logs.dir=/var/log/kafka"
case "$1" in
  kafka)
    exec java -Xms256m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true $log \
      -cp "$cp_libs" kafka.Kafka /etc/kafka/server.properties ;;
  zookeeper)
    exec java -Xms64m -Xmx256m -Djava.awt.headless=true $log -Dzookeeper.admin.enableServer=false \
      -cp "$cp_libs" org.apache.zookeeper.server.quorum.QuorumPeerMain /etc/zookeeper/zoo.cfg ;;
  *)
    echo "usage: entrypoint.sh kafka|zookeeper" >&2; exit 2 ;;
esac
