"""What a running cluster says about itself that a run's result depends on, for
results.json: its release and the protocol its transactions ran. The cluster's own facts
for test.json, and run.log's line for it, are each database's (harness/db/)."""

from __future__ import annotations

from typing import Any

from harness.cluster.admin import AdminError
from harness.cluster.docker_cluster import DockerCluster
from harness.cluster.txn_log import (
    TXN_FEATURE,
    TxnLogError,
    read_transaction_log,
    transactions_section,
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
    if spec.get("db") == "nats":
        return {
            "nats": spec.get("nats_version"),
            "sync": spec.get("nats_sync"),
            "client": "nats-py",
            "client_version": test.get("cluster", {}).get("nats_py"),
            "transactions": None,
        }
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
