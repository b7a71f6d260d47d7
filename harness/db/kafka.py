"""Kafka as a Database: the Docker cluster of brokers on ZooKeeper or KRaft
(harness/cluster/docker_cluster.py), with the run's set-up (image, a fresh cluster, one
more try on a clean slate), its facts and its run.log line."""

from __future__ import annotations

import logging
from typing import Any

import docker

from harness.cluster.admin import Admin, AdminError
from harness.cluster.config import ELR_FEATURE
from harness.cluster.docker_cluster import DockerCluster
from harness.cluster.errors import ClusterError
from harness.cluster.images import ensure_node_image
from harness.cluster.layout import ClusterSpec
from harness.progress import StatusLine

LOG = logging.getLogger("harness.run")


class KafkaDb(DockerCluster):
    """Kafka brokers (and ZooKeeper or KRaft controllers) in Docker."""

    def __init__(self, spec: ClusterSpec, client: docker.DockerClient) -> None:
        super().__init__(spec, client)
        self._engine = client

    @property
    def system(self) -> str:
        """Returns "kafka"."""
        return "kafka"

    def set_up(self, line: StatusLine, timeout: float) -> None:
        """Builds the node image if needed and starts a fresh cluster, replacing one of
        this name; tries once more on a clean slate when the first start fails."""
        ensure_node_image(self._engine, line.update, self.spec.kafka_version)
        # Asked of a cluster object of its own: attach() takes the running cluster's shape
        # (release, metadata, faultfs, faultproxy), which must not replace this run's.
        if DockerCluster(self.spec, self._engine).attach():
            line.say(f"replacing the running cluster {self.spec.name}")
        try:
            self.up(status=line.update, timeout=timeout, replace=True)
        except ClusterError as err:
            # A loaded machine can starve a starting broker past its ZooKeeper session;
            # one more try on a clean slate tells that apart from a cluster that cannot start.
            LOG.warning("cluster up failed, trying once more: %s", err)
            line.say(f"cluster up failed ({str(err).splitlines()[0]}); trying once more")
            self.up(status=line.update, timeout=timeout)

    def tear_down(self) -> int:
        """Removes the cluster (DockerCluster.down)."""
        return self.down()

    def admin(self, timeout: float = 5.0) -> Admin:
        """Returns an Admin client for this cluster."""
        return super().admin(timeout)

    def facts(self) -> dict[str, Any]:
        """Returns what the running cluster says about itself that a result depends on:
        its metadata mode, finalized features, and whether eligible leader replicas
        (KIP-966) are on (never on ZooKeeper; None when the cluster did not say)."""
        facts: dict[str, Any] = {
            "kafka_version": self.spec.kafka_version,
            "metadata": self.metadata,
            "kraft_roles": self.spec.kraft_roles if self.metadata == "kraft" else None,
        }
        if self.metadata != "kraft":
            return facts | {"features": {}, "eligible_leader_replicas": False}
        try:
            features = self.features()
        except AdminError as err:
            return facts | {"features": None, "eligible_leader_replicas": None, "error": str(err)}
        return facts | {
            "features": features,
            "eligible_leader_replicas": features.get(ELR_FEATURE, 0) >= 1,
        }

    def summary(self, facts: dict[str, Any], seconds: float) -> str:
        """Takes its facts and the seconds it took to come up. Returns run.log's line."""
        return (
            f"cluster {self.spec.name} up in {seconds:.1f} s: Kafka {facts['kafka_version']} "
            f"on {facts['metadata']}, bootstrap {self.bootstrap_servers}"
        )
