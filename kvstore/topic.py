"""Creates store topics: explicit replica assignment, safe or unsafe settings, optional compaction.

The admin is the cluster's wrapper (harness.cluster.admin.Admin) or anything with its shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from kvstore.api import DEFAULT_TIMEOUTS, Timeouts

Safety = Literal["safe", "unsafe"]
SAFETY_CONFIG: Mapping[Safety, Mapping[str, str]] = {
    "safe": {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"},
    "unsafe": {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
}
DEFAULT_COMPACTION_LAG_MS = 60_000
# A segment is compacted only once it is no longer the active one; rolling every 30 s
# keeps what a fresh instance replays to roughly the last lag + 30 s + the cleaner's
# 15 s back-off of records, however long the run (BENCHMARKS.md, issue 11).
COMPACTION_SEGMENT_MS = 30_000


class TopicAdmin(Protocol):
    """The part of the cluster's admin wrapper that topic creation needs."""

    def brokers(self) -> list[int]:
        """Returns the live broker ids."""
        ...

    def create_topic(
        self, name: str, assignment: list[list[int]], config: dict[str, str] | None = None
    ) -> None:
        """Creates a topic; assignment[i] are partition i's replicas, preferred leader first."""
        ...

    def wait_full_isr(self, topic: str, timeout: float) -> Any:
        """Waits until every replica of every partition is in sync."""
        ...


def replica_assignment(
    brokers: Sequence[int], partitions: int, replication_factor: int, leader: int | None = None
) -> list[list[int]]:
    """Takes broker ids. Returns each partition's replicas, preferred leader first.

    Partition i starts i places after `leader` (default: the lowest id) in
    the sorted broker list, so leadership spreads over the brokers; with one
    partition, `leader` leads it (e.g. the controller, for the ISR-shrink test).
    """
    ordered = sorted(brokers)
    if not 0 < replication_factor <= len(ordered):
        raise ValueError(f"replication factor {replication_factor} with brokers {ordered}")
    if partitions < 1:
        raise ValueError(f"{partitions} partitions")
    start = 0 if leader is None else ordered.index(leader)
    n = len(ordered)
    return [
        [ordered[(start + p + r) % n] for r in range(replication_factor)] for p in range(partitions)
    ]


def topic_config(
    safety: Safety = "safe",
    *,
    compaction: bool = False,
    min_compaction_lag_ms: int = DEFAULT_COMPACTION_LAG_MS,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
) -> dict[str, str]:
    """Returns the topic-level settings for a store topic.

    With compaction, min.compaction.lag.ms must outlast any attempt still in
    flight (timeouts.operation and the producer's message timeout): until an
    attempt has been decided, every record it races against must stay. The lag
    is measured on the brokers' clock (LogAppendTime). Tombstones mean nothing
    to a replica (they only let the cleaner drop a record nobody needs), so
    they need keeping no longer than the lag itself.
    """
    config = dict(SAFETY_CONFIG[safety])
    if compaction:
        longest_attempt_ms = max(int(timeouts.operation * 1000), timeouts.message_ms)
        if min_compaction_lag_ms <= longest_attempt_ms:
            raise ValueError(
                f"min.compaction.lag.ms {min_compaction_lag_ms} must exceed the longest "
                f"attempt, {longest_attempt_ms} ms"
            )
        config["cleanup.policy"] = "compact"
        config["min.compaction.lag.ms"] = str(min_compaction_lag_ms)
        config["message.timestamp.type"] = "LogAppendTime"
        config["segment.ms"] = str(COMPACTION_SEGMENT_MS)
        config["delete.retention.ms"] = str(min_compaction_lag_ms)
        # Cleans a quiet log too, or its tombstones would wait for more dirty records.
        config["max.compaction.lag.ms"] = str(2 * min_compaction_lag_ms)
        config["min.cleanable.dirty.ratio"] = "0.1"
    return config


def create_store_topic(
    admin: TopicAdmin,
    name: str,
    partitions: int = 1,
    replication_factor: int = 3,
    *,
    compaction: bool = False,
    safety: Safety = "safe",
    leader: int | None = None,
    min_compaction_lag_ms: int = DEFAULT_COMPACTION_LAG_MS,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    isr_timeout: float = 30.0,
) -> list[list[int]]:
    """Creates a store topic and waits until all its replicas are in sync.

    Returns the replica assignment used. Maps read the topic's settings when
    they open: on a compacted topic they write the tombstones compaction relies
    on, and under unsafe settings they follow the unclean-election rule
    (kvstore.kafka_map).
    """
    assignment = replica_assignment(admin.brokers(), partitions, replication_factor, leader)
    config = topic_config(
        safety,
        compaction=compaction,
        min_compaction_lag_ms=min_compaction_lag_ms,
        timeouts=timeouts,
    )
    admin.create_topic(name, assignment, config)
    admin.wait_full_isr(name, isr_timeout)
    return assignment
