"""add-partitions' logic on a stand-in cluster (tests/integration/test_expand.py grows a
real topic): it grows the topic by ADDED, tells the workload the new count once every
partition has a leader, heals nothing, and is skipped where topics cannot grow."""

from __future__ import annotations

import random

import pytest

from nemesis.cluster import PartitionState
from nemesis.core import Skipped
from nemesis.expand import ADDED, AddPartitions
from tests.support.fake_cluster import FakeCluster


class GrowingCluster(FakeCluster):
    """A FakeCluster whose topic has `count` partitions, all led by broker 1."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 2
        self.grown: list[tuple[str, int]] = []

    def partitions(self, topic: str) -> list[PartitionState]:
        return [PartitionState(p, 1, (1, 2, 3), (1, 2, 3)) for p in range(self.count)]

    def add_partitions(self, topic: str, total: int) -> None:
        self.grown.append((topic, total))
        self.count = total


def test_each_start_adds_partitions_and_tells_the_new_count() -> None:
    cluster, told = GrowingCluster(), []
    nemesis = AddPartitions("t", random.Random(1), told.append)
    nemesis.setup(cluster)
    first = nemesis.invoke("start-add-partitions")
    assert first["partitions"] == {"from": 2, "to": 2 + ADDED}
    assert first["added"] == list(range(2, 2 + ADDED))
    assert first["after"][str(2 + ADDED - 1)] == {"leader": "n1", "isr": ["n1", "n2", "n3"]}
    assert nemesis.invoke("stop-add-partitions")["unchanged"]
    nemesis.invoke("start-add-partitions")
    assert cluster.grown == [("t", 2 + ADDED), ("t", 2 + 2 * ADDED)]
    assert told == [2 + ADDED, 2 + 2 * ADDED]
    assert nemesis.teardown() == {}


def test_a_cluster_that_cannot_grow_topics_skips_it() -> None:
    nemesis = AddPartitions("t", random.Random(1))
    nemesis.setup(FakeCluster())
    with pytest.raises(Skipped, match="cannot add partitions"):
        nemesis.invoke("start-add-partitions")
