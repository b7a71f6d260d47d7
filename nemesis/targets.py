"""Whom a kill, a pause or a power cut takes, by the names every verb shares (kill-X,
pause-X, power-loss-X): Jepsen's node specs (jepsen.nemesis.combined's `db-nodes`: one,
minority, majority, primaries, all) over the brokers, over the metadata quorum and over
every node, and the nodes that hold a role now: a partition's leader (with or without
its followers), the active controller, the run's group coordinator, the transaction
coordinator.

Each pick asks the cluster anew, since the last fault may have moved every role, and
leaves out the nodes already down.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nemesis.cluster import Cluster
from nemesis.core import Skipped, Target, active_controller, ask_until_known, current_leader

TXN_STATE_TOPIC = "__transaction_state"
"""Kafka's transaction log: the leader of a transactional id's partition of it is that
id's transaction coordinator (the harness's brokers keep it in one partition)."""


@dataclass(frozen=True, slots=True)
class Aim:
    """What a pick may need besides the cluster: the topic whose leaders count and the
    run's consumer or share group, if it has one."""

    topic: str
    group: str | None = None


@dataclass(frozen=True, slots=True)
class Chosen:
    """The nodes a pick chose, the partition that chose them (None when none did) and
    the role that did, in words (None for a plain draw)."""

    nodes: tuple[str, ...]
    partition: int | None = None
    role: str | None = None


Pick = Callable[[Cluster, Aim, random.Random, Sequence[str]], Chosen]
"""Takes the cluster, the aim, a random source and the nodes already down (a draw
chooses among the others). Returns the nodes chosen."""


def minority(nodes: Sequence[str], rng: random.Random) -> list[str]:
    """Returns a random minority of nodes (fewer than half); none of one node."""
    return rng.sample(list(nodes), (len(nodes) - 1) // 2)


def majority(nodes: Sequence[str], rng: random.Random) -> list[str]:
    """Returns a random majority of nodes (more than half)."""
    return rng.sample(list(nodes), len(nodes) // 2 + 1)


def quorum(cluster: Cluster) -> list[str]:
    """Returns the nodes that keep the metadata: ZooKeeper's servers, or the KRaft
    controllers (the brokers themselves when they are the voters)."""
    return cluster.controllers if cluster.metadata == "kraft" else cluster.zookeepers


def group_coordinator(cluster: Cluster, group: str) -> str:
    """Returns the node that coordinates group now. Raises Skipped when no broker names
    one within a few seconds (its __consumer_offsets partition has no leader)."""

    def node() -> Target | str:
        return Target(cluster.group_coordinator(group), None)

    return ask_until_known(node, f"no coordinator of group {group!r} known").node


def txn_coordinator(cluster: Cluster, rng: random.Random) -> Target:
    """Returns the transaction coordinator: the leader of a partition of the transaction
    log, as the controller committed it (brokers' metadata leaves internal topics out).
    Raises Skipped when there is no transaction log (no transactional producer has
    started) or no leader of it within a few seconds."""

    def leader() -> Target | str:
        led = [p for p in cluster.committed_partitions(TXN_STATE_TOPIC) if p.leader >= 0]
        if not led:
            return f"no partition of {TXN_STATE_TOPIC} has a leader"
        return Target(cluster.node_of_broker(rng.choice(led).leader), None)

    return ask_until_known(leader, "no transaction coordinator known")


def _of(
    nodes: Callable[[Cluster], list[str]], choose: Callable[[list[str], random.Random], list[str]]
) -> Pick:
    """Returns a Pick that chooses among nodes(cluster) not down with choose(nodes, rng)."""

    def draw(cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]) -> Chosen:
        return Chosen(tuple(choose([n for n in nodes(cluster) if n not in down], rng)))

    return draw


def _leader(cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]) -> Chosen:
    target = current_leader(cluster, aim.topic, rng)
    return Chosen((target.node,), target.partition)


def _replicas(cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]) -> Chosen:
    target = current_leader(cluster, aim.topic, rng)
    state = next(p for p in cluster.partitions(aim.topic) if p.partition == target.partition)
    followers = [cluster.node_of_broker(b) for b in state.replicas]
    return Chosen(tuple(dict.fromkeys([target.node, *followers])), target.partition)


def _controller(cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]) -> Chosen:
    return Chosen((active_controller(cluster).node,), role="the active controller")


def _coordinator(cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]) -> Chosen:
    if aim.group is None:
        raise Skipped("the run has no group to find the coordinator of")
    node = group_coordinator(cluster, aim.group)
    return Chosen((node,), role=f"coordinator of group {aim.group}")


def _txn_coordinator(cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]) -> Chosen:
    node = txn_coordinator(cluster, rng).node
    return Chosen((node,), role="the transaction coordinator")


def _brokers(cluster: Cluster) -> list[str]:
    return cluster.brokers


def _every(cluster: Cluster) -> list[str]:
    return cluster.nodes


def _one(nodes: list[str], rng: random.Random) -> list[str]:
    return [rng.choice(nodes)] if nodes else []


def _all(nodes: list[str], rng: random.Random) -> list[str]:
    return list(nodes)


PICKS: dict[str, Pick] = {
    "one": _of(_brokers, _one),
    "leader": _leader,
    "leader-and-followers": _replicas,
    "minority": _of(_brokers, minority),
    "majority": _of(_brokers, majority),
    "brokers": _of(_brokers, _all),
    "quorum-one": _of(quorum, _one),
    "quorum-minority": _of(quorum, minority),
    "quorum-majority": _of(quorum, majority),
    "quorum": _of(quorum, _all),
    "active-controller": _controller,
    "coordinator": _coordinator,
    "txn-coordinator": _txn_coordinator,
    "all": _of(_every, _all),
}
"""Every target by the name that follows the verb (nemesis.names.TARGETS, in order)."""


def pick(
    target: str, cluster: Cluster, aim: Aim, rng: random.Random, down: Sequence[str]
) -> Chosen:
    """Takes a target's name, the cluster, the aim, a random source and the nodes already
    down. Returns the nodes chosen that are not down; raises Skipped when none is left."""
    chosen = PICKS[target](cluster, aim, rng, down)
    nodes = tuple(n for n in chosen.nodes if n not in down)
    if not nodes:
        raise Skipped(f"no node to take: none chosen ({target}), or every one already down")
    return Chosen(nodes, chosen.partition, chosen.role)
