"""TestSpec: every option of one test run, as one frozen value written to test.json."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.cluster.layout import ClusterSpec, KraftRoles
from harness.cluster.releases import DEFAULT_VERSION, Metadata

DELIVERY_LIMIT = 3
"""The share workload's default delivery count limit: small (Kafka allows 2 to 10, and
defaults to 5), so that records released again and again are archived within a run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TestSpec:
    """What `harness run` was asked to do; the run's only input besides the machine."""

    __test__ = False  # not a pytest test class, despite its name

    name: str
    workload: str = "kv"
    store: str = "linearizable"
    nemesis: tuple[str, ...] = ("partition-leader",)
    kafka_config: str = "safe"
    brokers: int = 3
    zookeepers: int = 1
    kafka_version: str = DEFAULT_VERSION
    metadata: Metadata = "zookeeper"
    kraft_roles: KraftRoles = "dedicated"
    controllers: int = 3
    faultfs: bool = False
    """Every node's data directory on faultfs, the power-loss layer (--faultfs, or any
    power-loss nemesis)."""
    faultproxy: bool = False
    """Every broker behind faultproxy, the in-path proxy (--faultproxy, or any late,
    slow or client nemesis)."""
    time_limit: float = 60.0
    concurrency: int = 5
    rate: float = 100.0
    keys: int = 8
    partitions: int = 1
    nemesis_interval: float = 10.0
    seed: int = 0
    cluster_name: str = "harness"
    leave_cluster_running: bool = False
    check_time_limit: float = 60.0
    producer_acks: str = "all"
    idempotence: bool = False
    consumer_group: bool = False
    """Queue workload: the consumers subscribe in one group (--sub-via subscribe)."""
    group_protocol: str = "classic"
    """Queue workload in a group: the rebalance protocol, classic or consumer (KIP-848)."""
    auto_commit: bool = False
    """Queue workload in a group: librdkafka commits the positions (else commit ops do)."""
    ignore: tuple[str, ...] = ()
    """Queue anomaly kinds reported but never counted against validity."""
    txn: bool = False
    """Queue workload: each op a Kafka transaction of send and poll micro-ops."""
    abort_p: float = 0.1
    """Queue workload with txn: the probability of aborting a transaction on purpose."""
    isolation_level: str = "read_committed"
    """Queue workload: the consumers' isolation.level."""
    crash_clients: float | None = None
    """Queue workload: the mean seconds between one client's crashes (with txn in the
    middle of a transaction; Jepsen's crash-client-interval), or None for no crashes."""
    client: str = "librdkafka"
    """Queue workload with txn: the client the transactions run through, librdkafka
    (confluent-kafka) or java (kafka-clients, in a driver process per client)."""
    release_p: float = 0.2
    """Share workload: the probability that a consumer releases a record it polled."""
    reject_p: float = 0.05
    """Share workload: the probability that it rejects the record (archived)."""
    delivery_limit: int = DELIVERY_LIMIT
    """Share workload: the group's share.delivery.count.limit; recorded here so that
    `harness check` judges the history by it."""

    @property
    def topic(self) -> str:
        """Returns the store topic's name: fresh per run, so no run sees another's records."""
        return f"store-{self.seed}"

    def cluster_spec(self) -> ClusterSpec:
        """Returns the shape of the cluster this test runs on."""
        return ClusterSpec(
            self.cluster_name,
            self.brokers,
            self.zookeepers,
            self.kafka_config,
            kafka_version=self.kafka_version,
            metadata=self.metadata,
            kraft_roles=self.kraft_roles,
            controllers=self.controllers,
            faultfs=self.faultfs,
            faultproxy=self.faultproxy,
        )

    def to_json(self) -> dict[str, Any]:
        """Returns every field, JSON-ready."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)} | {
            "nemesis": list(self.nemesis),
            "ignore": list(self.ignore),
        }


def default_name(
    workload: str,
    store: str,
    nemesis: tuple[str, ...],
    txn: bool = False,
    client: str = "librdkafka",
) -> str:
    """Returns the test name used when --name is not given, e.g. kv-linearizable-kill-leader
    (queue-txn-... for the queue workload in transactions, queue-txn-java-... through the
    Java client)."""
    faults = "+".join(nemesis) if nemesis else "none"
    if len(nemesis) > 3:
        faults = f"{len(nemesis)}-faults"
    if workload == "queue" and txn:  # no store in between: the name says only what ran
        return f"{workload}-txn-java-{faults}" if client == "java" else f"{workload}-txn-{faults}"
    if workload == "queue":
        return f"{workload}-{faults}"
    return f"{workload}-{store}-{faults}"
