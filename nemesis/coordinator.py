"""Faults aimed at the run's group: kill, pause or cut off the broker that coordinates it
now, as FindCoordinator names it, on ZooKeeper and KRaft alike (issue 23, item 4).

The coordinator holds the group's membership, assignments and committed offsets (a
share group's too); each start asks anew, since the last fault may have moved it.
"""

from __future__ import annotations

import random
from functools import partial

from nemesis import grudge as g
from nemesis.cluster import Cluster
from nemesis.core import Nemesis, Target, Value, ask_until_known
from nemesis.partition import NetworkFault, partition_by
from nemesis.process import KILL, PAUSE, ProcessFault


def coordinator(cluster: Cluster, group: str) -> Target:
    """Returns the node that coordinates group now. Raises Skipped when no broker names
    one within a few seconds (its __consumer_offsets partition has no leader)."""

    def node() -> Target | str:
        return Target(cluster.group_coordinator(group), None)

    return ask_until_known(node, f"no coordinator of group {group!r} known")


def cut_coordinator(cluster: Cluster, topic: str, rng: random.Random, group: str) -> Value:
    """Isolates the group's coordinator from every other node (the clients still reach
    it): it can neither replicate the group's offsets nor hear of a new coordinator."""
    node = coordinator(cluster, group).node
    about = {"isolated": node, "coordinates": group}
    return partition_by(cluster, g.isolate(node, cluster.nodes), about)


class CoordinatorProcessFault(ProcessFault):
    """kill-coordinator or pause-coordinator: a process fault whose target is the group's
    coordinator; its start says which group the node coordinated."""

    def __init__(self, fault: str, topic: str, group: str, rng: random.Random) -> None:
        action = KILL if fault == "kill-coordinator" else PAUSE
        super().__init__(fault, topic, rng, how=(action, lambda c, t, r, d: coordinator(c, group)))
        self.group = group

    def invoke(self, f: str) -> Value:
        """Takes the coordinator down (start) or brings back every node taken down (stop)."""
        done = super().invoke(f)
        return done | {"coordinates": self.group} if f.startswith("start-") else done


def coordinator_fault(fault: str, topic: str, group: str, rng: random.Random) -> Nemesis:
    """Takes a fault of names.GROUP_FAULTS and the run's group. Returns its nemesis."""
    if fault == "partition-coordinator":
        return NetworkFault(fault, topic, rng, cut=partial(cut_coordinator, group=group))
    return CoordinatorProcessFault(fault, topic, group, rng)
