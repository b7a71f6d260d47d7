"""partition-coordinator: the broker that coordinates the run's group now, as
FindCoordinator names it (on ZooKeeper and KRaft alike), cut off from every other node
(issue 23, item 4). Its kill, pause and power cut are the process and power faults'
`coordinator` target (nemesis.targets).

The coordinator holds the group's membership, assignments and committed offsets (a
share group's too); each start asks anew, since the last fault may have moved it.
"""

from __future__ import annotations

import random
from functools import partial

from nemesis import grudge as g
from nemesis.cluster import Cluster
from nemesis.core import Nemesis, Value
from nemesis.partition import NetworkFault, partition_by
from nemesis.targets import group_coordinator


def cut_coordinator(cluster: Cluster, topic: str, rng: random.Random, group: str) -> Value:
    """Isolates the group's coordinator from every other node (the clients still reach
    it): it can neither replicate the group's offsets nor hear of a new coordinator."""
    node = group_coordinator(cluster, group)
    about = {"isolated": node, "coordinates": group}
    return partition_by(cluster, g.isolate(node, cluster.nodes), about)


def coordinator_cut(topic: str, group: str, rng: random.Random) -> Nemesis:
    """Takes the run's topic and group. Returns partition-coordinator's nemesis."""
    return NetworkFault(
        "partition-coordinator", topic, rng, cut=partial(cut_coordinator, group=group)
    )
