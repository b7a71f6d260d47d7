"""add-partitions: the workload's topic grows by ADDED partitions at each start while the
clients run (Kafka's CreatePartitions), and the workload is told the new count at once,
so that its generator sends to the new partitions from then on (issue 37, item 3).

What a group does with a partition born under it is the question: a consumer group
reads it from `auto.offset.reset` (KIP-1327 / KAFKA-20539: `latest` skips what was sent
before the group found it), a share group from `share.auto.offset.reset` unless the topic
was known (KAFKA-20742). Partitions cannot be removed, so a stop heals nothing: it says
the count stays. Kafka's own reconfiguration tests grow topics the same way
(kafka-topics.sh --alter --partitions).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from nemesis.cluster import Cluster, Expandable
from nemesis.core import SingleFault, Skipped, Value, partition_states, split_f

ADD_PARTITIONS = "add-partitions"
ADDED = 2
"""Partitions added at each start: enough that a group's assignor moves them to different
members, few enough that a run of several faults stays small."""
LEADERS_WAIT_S = 15.0
"""How long the new partitions may take to have leaders in the brokers' metadata."""


class AddPartitions(SingleFault):
    """Grows the topic by ADDED partitions at each start; tells on_grown the new count
    once every partition has a leader (the brokers take sends there)."""

    def __init__(
        self,
        topic: str,
        rng: random.Random,
        on_grown: Callable[[int], None] | None = None,
        added: int = ADDED,
    ) -> None:
        super().__init__(ADD_PARTITIONS, topic, rng)
        self._on_grown = on_grown
        self._added = added

    def invoke(self, f: str) -> Value:
        """Takes start-add-partitions (grow the topic) or stop-add-partitions (nothing to
        undo). Returns the count before and after and the new partitions' leaders."""
        action, _ = split_f(f)
        if action == "stop":
            return {"topic": self.topic, "unchanged": "partitions are never removed"}
        return grow(self.cluster, self.topic, self._added, self._on_grown)

    def teardown(self) -> Value:
        """Nothing to heal: a topic keeps the partitions it was given."""
        return {}


def grow(cluster: Cluster, topic: str, added: int, on_grown: Callable[[int], None] | None) -> Value:
    """Takes the cluster, the topic, how many partitions to add and whom to tell. Adds
    them, waits until each has a leader, tells on_grown the new count. Returns
    {"topic", "partitions": {"from", "to"}, "added": [...], "after": leaders and ISRs}.
    Raises Skipped when the cluster cannot grow topics or does not know the count."""
    if not isinstance(cluster, Expandable):
        raise Skipped(f"this cluster cannot add partitions to {topic}")
    try:
        before = len(cluster.partitions(topic))
    except Exception as err:  # e.g. no metadata during a failover: nothing was changed
        raise Skipped(f"the partition count of {topic} is unknown: {err}") from err
    total = before + added
    cluster.add_partitions(topic, total)
    led = _wait_for_leaders(cluster, topic, total)
    if on_grown is not None:
        on_grown(total)
    return {
        "topic": topic,
        "partitions": {"from": before, "to": total},
        "added": list(range(before, total)),
        "led_after_s": led,
        "after": partition_states(cluster, topic),
    }


def _wait_for_leaders(cluster: Cluster, topic: str, total: int) -> float | None:
    """Returns the seconds until all total partitions had a leader, None if they had
    none within LEADERS_WAIT_S (the generator is told anyway: a send there is then
    refused, not lost)."""
    began = time.monotonic()
    while time.monotonic() - began < LEADERS_WAIT_S:
        try:
            parts = cluster.partitions(topic)
        except Exception:  # asked again until the bound
            parts = []
        if len(parts) >= total and all(p.leader >= 0 for p in parts):
            return round(time.monotonic() - began, 3)
        time.sleep(0.2)
    return None
