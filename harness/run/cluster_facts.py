"""What a running cluster says about itself that a run's result depends on, for test.json
and results.json (its release, features, and the protocol its transactions ran), and the
line run.log gives it."""

from __future__ import annotations

from typing import Any

from harness.cluster.admin import AdminError
from harness.cluster.config import ELR_FEATURE
from harness.cluster.docker_cluster import DockerCluster
from harness.cluster.txn_log import (
    TXN_FEATURE,
    TxnLogError,
    read_transaction_log,
    transactions_section,
)


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


TXN_LOG_TIMEOUT_S = 30.0


def transaction_facts(cluster: DockerCluster) -> dict[str, Any]:
    """Returns which transaction protocol each transactional client spoke, as the
    coordinator logged it (harness/cluster/txn_log.py), with the cluster's finalized
    transaction.version; or the error that kept it from being read."""
    try:
        level = cluster.features().get(TXN_FEATURE, 0) if cluster.metadata == "kraft" else 0
        records = read_transaction_log(cluster.bootstrap_servers, TXN_LOG_TIMEOUT_S)
    except (AdminError, TxnLogError) as err:
        return {"protocol": "unknown", "error": str(err)}
    return transactions_section(records, level)


def release_section(test: dict[str, Any], transactions: dict[str, Any] | None) -> dict[str, Any]:
    """Takes test.json and what transaction_facts found (None: no transactions, or not
    read). Returns results.json's `release`: the Kafka release, its metadata mode, the
    client library the workload ran through and its version, and the transactions'
    protocol."""
    spec, versions = test.get("spec", {}), test.get("versions", {})
    if spec.get("client") == "java":
        client = {"client": "kafka-clients", "client_version": versions.get("kafka_clients")}
    else:
        client = {
            "client": "confluent-kafka",
            "client_version": versions.get("confluent_kafka"),
            "librdkafka": versions.get("librdkafka"),
        }
    return {
        "kafka": spec.get("kafka_version"),
        "metadata": spec.get("metadata"),
        **client,
        "transactions": transactions,
    }
