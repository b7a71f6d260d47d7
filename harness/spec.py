"""TestSpec: every option of one test run, as one frozen value written to test.json."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from harness.cluster.layout import ClusterSpec
from workloads.argtypes import positive
from workloads.names import DATABASES, STORES, WORKLOAD_NAMES
from workloads.options import (
    CRASH_CLIENT_INTERVAL_S,
    NatsOptions,
    QueueOptions,
    ShareOptions,
    option,
)

DEFAULT_NEMESIS = ("partition-leader",)
"""The fault of `harness run` and `make run` when none is named."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TestSpec:
    """What `harness run` was asked to do; the run's only input besides the machine. Its
    own fields are the options of every run, each declared once (workloads.options);
    the cluster's shape, and the queue and share workloads' options, are records of
    their own, laid flat in test.json as they always were (to_json)."""

    __test__ = False  # not a pytest test class, despite its name

    name: str
    db: str = option("kafka", "the system under test", choices=DATABASES)
    workload: str = option("kv", "the workload", choices=WORKLOAD_NAMES)
    store: str = option(
        "linearizable", "kv and register: the store, or a variant that must fail", choices=STORES
    )
    nemesis: tuple[str, ...] = DEFAULT_NEMESIS
    cluster: ClusterSpec = field(default_factory=ClusterSpec)
    time_limit: float = option(60.0, "seconds of workload", type=positive(float), metavar="S")
    concurrency: int = option(5, "client processes", type=positive(int), metavar="N")
    rate: float = option(100.0, "total ops/s, a ceiling", type=positive(float), metavar="R")
    keys: int = option(
        8, "keys (queue and share: partitions of the topic)", type=positive(int), metavar="N"
    )
    partitions: int = option(
        1, "partitions of the store's topic (kv, register)", type=positive(int), metavar="N"
    )
    nemesis_interval: float = option(
        10.0,
        "seconds between fault changes: a fault lasts one, then one passes without",
        type=positive(float),
        metavar="S",
    )
    seed: int = 0
    leave_cluster_running: bool = option(False, "keep the cluster after the run (faults healed)")
    check_time_limit: float = option(
        60.0,
        "seconds of linearizability search per key before unknown",
        type=positive(float),
        metavar="S",
    )
    crash_clients: float | None = option(
        None,
        "queue and share: crash each client about every S seconds (with --txn in the "
        f"middle of a transaction; alone: {CRASH_CLIENT_INTERVAL_S:g}, Jepsen's "
        "crash-client-interval) and replace it",
        type=positive(float),
        nargs="?",
        const=CRASH_CLIENT_INTERVAL_S,
        metavar="S",
        shown_default="off",
    )
    queue: QueueOptions = field(default_factory=QueueOptions)
    share: ShareOptions = field(default_factory=ShareOptions)
    nats: NatsOptions = field(default_factory=NatsOptions)

    @property
    def topic(self) -> str:
        """Returns the store topic's name: fresh per run, so no run sees another's records."""
        return f"store-{self.seed}"

    def to_json(self) -> dict[str, Any]:
        """Returns every option, JSON-ready, in test.json's flat layout: the cluster's
        fields (its name as cluster_name) and the workloads' options beside the run's.
        A Kafka run's test.json is what it was before NATS came: no db, no NATS options."""
        mine = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("cluster", "queue", "share", "nats")
        }
        nats: dict[str, Any] = {}
        if self.db == "kafka":
            del mine["db"]
        else:
            nats = {f"nats_{k}": v for k, v in _fields(self.nats).items()}
        cluster = _fields(self.cluster)
        cluster["cluster_name"] = cluster.pop("name")
        return {
            **mine,
            "nemesis": list(self.nemesis),
            **cluster,
            **_fields(self.queue),
            "ignore": list(self.queue.ignore),
            **_fields(self.share),
            **nats,
        }


def _fields(record: Any) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def default_name(
    workload: str,
    store: str,
    nemesis: tuple[str, ...],
    txn: bool = False,
    client: str = "librdkafka",
    *,
    publish: str = "once",
) -> str:
    """Returns the test name used when --name is not given, e.g. kv-linearizable-kill-leader
    (queue-txn-... for the queue workload in transactions, queue-txn-java-... through the
    Java client, queue-publish-msg-id-... for NATS sends that ask again)."""
    faults = "+".join(nemesis) if nemesis else "none"
    if len(nemesis) > 3:
        faults = f"{len(nemesis)}-faults"
    if workload == "queue" and txn:  # no store in between: the name says only what ran
        return f"{workload}-txn-java-{faults}" if client == "java" else f"{workload}-txn-{faults}"
    if workload == "queue" and publish != "once":
        return f"{workload}-publish-{publish}-{faults}"
    if workload == "queue":
        return f"{workload}-{faults}"
    return f"{workload}-{store}-{faults}"
