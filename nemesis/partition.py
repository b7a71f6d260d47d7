"""Network faults: partitions (leader, random halves, majorities ring, brokers from
ZooKeeper or from the KRaft controllers, the active controller from its quorum) and a
flaky leader, each installed with iptables and healed by a flush.

Each start picks its targets from the cluster as it is at that moment.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from nemesis import grudge as g
from nemesis import net
from nemesis.cluster import Cluster
from nemesis.core import (
    SingleFault,
    Skipped,
    Value,
    active_controller,
    current_leader,
    partition_states,
    split_f,
)

FLAKY_LOSS = 0.3
"""The share of the leader's incoming packets that flaky-leader drops."""

Cut = Callable[[Cluster, str, random.Random], Value]


def partition_by(cluster: Cluster, grudge: g.Grudge, about: Value) -> Value:
    """Installs grudge; returns about with the grudge and what a probe saw of it."""
    net.apply_grudge(cluster, grudge)
    return {**about, "grudge": g.describe(grudge), "verified": net.verify_grudge(cluster, grudge)}


def cut_leader(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Isolates the current leader of a random partition of topic from every other node."""
    target = current_leader(cluster, topic, rng)
    grudge = g.isolate(target.node, cluster.nodes)
    return partition_by(cluster, grudge, {"isolated": target.node, "partition": target.partition})


def cut_random_halves(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Cuts every node (brokers and ZooKeeper) into two random halves."""
    return partition_by(cluster, g.bisect(cluster.nodes, rng), {})


def cut_majorities_ring(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Gives every node its own majority of the others, in a random ring."""
    if len(cluster.nodes) < 4:
        raise Skipped(f"a majorities ring needs 4 nodes or more, not {len(cluster.nodes)}")
    return partition_by(cluster, g.majorities_ring(cluster.nodes, rng), {})


def cut_zookeeper(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Cuts every broker from every ZooKeeper server; brokers still see each other."""
    if not cluster.zookeepers:
        raise Skipped("partition-zookeeper does not apply on KRaft: the cluster has no ZooKeeper")
    return partition_by(cluster, g.between(cluster.brokers, cluster.zookeepers), {})


def cut_controller_quorum(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Cuts the active KRaft controller from the other controllers; brokers still reach
    every controller, so the old leader keeps answering them until it resigns."""
    if cluster.metadata != "kraft":
        raise Skipped("partition-controller-quorum does not apply on ZooKeeper: no quorum")
    active = active_controller(cluster).node
    others = [c for c in cluster.controllers if c != active]
    return partition_by(cluster, g.between([active], others), {"isolated": active})


def cut_brokers_from_controllers(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Cuts every broker from every KRaft controller; brokers still see each other."""
    if cluster.metadata != "kraft":
        raise Skipped(
            "partition-brokers-from-controllers does not apply on ZooKeeper: "
            "partition-zookeeper is its counterpart"
        )
    brokers = [b for b in cluster.brokers if b not in cluster.controllers]
    if not brokers:
        raise Skipped("every broker is also a controller (combined roles): none to cut off")
    return partition_by(cluster, g.between(brokers, cluster.controllers), {})


def flaky_leader(cluster: Cluster, topic: str, rng: random.Random) -> Value:
    """Makes the current leader of a random partition drop a share of incoming packets."""
    target = current_leader(cluster, topic, rng)
    net.drop_share(cluster, target.node, FLAKY_LOSS)
    return {
        "node": target.node,
        "partition": target.partition,
        "loss": FLAKY_LOSS,
        "rules": net.rules(cluster, target.node),
    }


CUTS: dict[str, Cut] = {
    "partition-leader": cut_leader,
    "partition-random-halves": cut_random_halves,
    "partition-majorities-ring": cut_majorities_ring,
    "partition-zookeeper": cut_zookeeper,
    "flaky-leader": flaky_leader,
    "partition-controller-quorum": cut_controller_quorum,
    "partition-brokers-from-controllers": cut_brokers_from_controllers,
}


class NetworkFault(SingleFault):
    """One network fault: start installs it (once at a time), stop flushes every rule."""

    def __init__(self, fault: str, topic: str, rng: random.Random, cut: Cut | None = None) -> None:
        """cut: how to install the fault, for one CUTS does not name."""
        super().__init__(fault, topic, rng)
        self._cut = cut or CUTS[fault]
        self._active = False

    def invoke(self, f: str) -> Value:
        """Installs the fault (start) or heals every node (stop)."""
        cluster = self.cluster
        action, _ = split_f(f)
        before = partition_states(cluster, self.topic)
        if action == "start":
            if self._active:
                raise Skipped(f"{self.fault} is already in force")
            # Marked first: a cut that fails half-way must still be healed.
            self._active = True
            done = self._cut(cluster, self.topic, self.rng)
        else:
            if not self._active:
                raise Skipped(f"{self.fault} is not in force")
            errors = net.heal(cluster, cluster.nodes)
            self._active = False
            done = {"healed": cluster.nodes, "unreachable": errors}
        return {**done, "before": before, "after": partition_states(cluster, self.topic)}

    def teardown(self) -> Value:
        """Removes the harness's rules and chain from every node."""
        if self._cluster is None:
            return {}
        errors = net.remove_chain(self._cluster, self._cluster.nodes)
        self._active = False
        return {self.fault: {"healed": True, "unreachable": errors}}
