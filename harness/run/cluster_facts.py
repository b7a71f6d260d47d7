"""What a running cluster says about itself that a run's result depends on, for test.json,
and the line run.log gives it."""

from __future__ import annotations

from typing import Any

from harness.cluster.admin import AdminError
from harness.cluster.config import ELR_FEATURE
from harness.cluster.docker_cluster import DockerCluster


def cluster_facts(cluster: DockerCluster) -> dict[str, Any]:
    """Returns what the running cluster says about itself that a result depends on: its
    metadata mode, finalized features, and whether eligible leader replicas (KIP-966)
    are on (never on ZooKeeper; None when the cluster did not say)."""
    facts: dict[str, Any] = {
        "kafka_version": cluster.spec.kafka_version,
        "metadata": cluster.metadata,
        "kraft_roles": cluster.spec.kraft_roles if cluster.metadata == "kraft" else None,
    }
    if cluster.metadata != "kraft":
        return facts | {"features": {}, "eligible_leader_replicas": False}
    try:
        features = cluster.features()
    except AdminError as err:
        return facts | {"features": None, "eligible_leader_replicas": None, "error": str(err)}
    return facts | {
        "features": features,
        "eligible_leader_replicas": features.get(ELR_FEATURE, 0) >= 1,
    }


def cluster_line(cluster: DockerCluster, facts: dict[str, Any], seconds: float) -> str:
    """Takes a cluster just up, its facts and the seconds it took. Returns run.log's line."""
    return (
        f"cluster {cluster.spec.name} up in {seconds:.1f} s: Kafka {facts['kafka_version']} "
        f"on {facts['metadata']}, bootstrap {cluster.bootstrap_servers}"
    )
