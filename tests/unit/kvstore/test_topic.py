"""Store topic creation: replica assignment, safe and unsafe settings, compaction lag."""

from __future__ import annotations

import pytest

from kvstore.api import Timeouts
from kvstore.topic import create_store_topic, replica_assignment, topic_config


def test_one_partition_is_led_by_the_chosen_broker() -> None:
    assert replica_assignment([3, 1, 2], 1, 3, leader=2) == [[2, 3, 1]]
    assert replica_assignment([3, 1, 2], 1, 2) == [[1, 2]]


def test_partitions_spread_their_leaders() -> None:
    assignment = replica_assignment([1, 2, 3], 4, 3)
    assert [replicas[0] for replicas in assignment] == [1, 2, 3, 1]
    assert all(sorted(replicas) == [1, 2, 3] for replicas in assignment)


def test_impossible_shapes_are_refused() -> None:
    with pytest.raises(ValueError):
        replica_assignment([1, 2], 1, 3)
    with pytest.raises(ValueError):
        replica_assignment([1, 2, 3], 0, 3)


def test_safe_and_unsafe_settings() -> None:
    assert topic_config("safe") == {
        "min.insync.replicas": "2",
        "unclean.leader.election.enable": "false",
    }
    assert topic_config("unsafe")["unclean.leader.election.enable"] == "true"


def test_compaction_lag_must_outlast_every_attempt() -> None:
    config = topic_config(compaction=True, min_compaction_lag_ms=60_000)
    assert config["cleanup.policy"] == "compact"
    assert config["min.compaction.lag.ms"] == "60000"
    # The lag on the brokers' clock, segments that roll, tombstones kept no longer than it.
    assert config["message.timestamp.type"] == "LogAppendTime"
    assert int(config["segment.ms"]) <= 60_000
    assert config["delete.retention.ms"] == "60000"
    with pytest.raises(ValueError):
        topic_config(compaction=True, min_compaction_lag_ms=9_000)
    with pytest.raises(ValueError):
        topic_config(
            compaction=True, min_compaction_lag_ms=60_000, timeouts=Timeouts(operation=60.0)
        )


class _FakeAdmin:
    def __init__(self) -> None:
        self.created: list[tuple[str, list[list[int]], dict[str, str] | None]] = []
        self.waited: list[str] = []

    def brokers(self) -> list[int]:
        return [1, 2, 3]

    def create_topic(
        self, name: str, assignment: list[list[int]], config: dict[str, str] | None = None
    ) -> None:
        self.created.append((name, assignment, config))

    def wait_full_isr(self, topic: str, timeout: float) -> None:
        self.waited.append(topic)


def test_create_store_topic_uses_the_admin_wrapper() -> None:
    admin = _FakeAdmin()
    assignment = create_store_topic(admin, "store", partitions=2, compaction=True)
    assert assignment == [[1, 2, 3], [2, 3, 1]]
    name, _, config = admin.created[0]
    assert name == "store" and config is not None and config["cleanup.policy"] == "compact"
    assert admin.waited == ["store"]
