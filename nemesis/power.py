"""Power loss: nodes lose power at once, and with it every write since each file's last
fsync or fdatasync (faultfs, the layer under the data directories); stop powers them on
again, to restart on what their disks kept.

Targets are Jepsen's (jepsen.nemesis.combined's node specs: one, minority, majority,
primaries, all) over the brokers, over the metadata quorum (ZooKeeper's servers or the
KRaft controllers) and over every node. Each node's op value says what its layer lost,
so a report can tell a power cut that lost acknowledged records from one that lost
nothing. Jepsen drives lazyfs the same way (jepsen/src/jepsen/lazyfs.clj:
`lose-unfsynced-writes!` after killing the process).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nemesis.cluster import Cluster, PowerSwitch
from nemesis.core import (
    SingleFault,
    Skipped,
    Value,
    active_controller,
    current_leader,
    partition_states,
    split_f,
)
from nemesis.process import revive

Targets = tuple[list[str], int | None]
"""The nodes chosen, and the partition that chose them (None when none did)."""
Pick = Callable[[Cluster, str, random.Random], Targets]
_LISTED_FILES = 3
"""How many of a node's files with the most unsynced bytes its op value names."""


def minority(nodes: list[str], rng: random.Random) -> list[str]:
    """Returns a random minority of nodes (fewer than half); none of one node."""
    return rng.sample(nodes, (len(nodes) - 1) // 2)


def majority(nodes: list[str], rng: random.Random) -> list[str]:
    """Returns a random majority of nodes (more than half)."""
    return rng.sample(nodes, len(nodes) // 2 + 1)


def quorum(cluster: Cluster) -> list[str]:
    """Returns the nodes that keep the metadata: ZooKeeper's servers, or the KRaft
    controllers (the brokers themselves when they are the voters)."""
    return cluster.controllers if cluster.metadata == "kraft" else cluster.zookeepers


def _leader(cluster: Cluster, topic: str, rng: random.Random) -> Targets:
    target = current_leader(cluster, topic, rng)
    return [target.node], target.partition


def _replicas(cluster: Cluster, topic: str, rng: random.Random) -> Targets:
    target = current_leader(cluster, topic, rng)
    state = next(p for p in cluster.partitions(topic) if p.partition == target.partition)
    followers = [cluster.node_of_broker(b) for b in state.replicas]
    return list(dict.fromkeys([target.node, *followers])), target.partition


def _controller(cluster: Cluster, topic: str, rng: random.Random) -> Targets:
    return [active_controller(cluster).node], None


def _of(
    nodes: Callable[[Cluster], list[str]], choose: Callable[[list[str], random.Random], list[str]]
) -> Pick:
    """Returns a Pick that chooses among nodes(cluster) with choose(nodes, rng)."""
    return lambda cluster, topic, rng: (choose(nodes(cluster), rng), None)


def _brokers(cluster: Cluster) -> list[str]:
    return cluster.brokers


def _every(cluster: Cluster) -> list[str]:
    return cluster.nodes


def _one(nodes: list[str], rng: random.Random) -> list[str]:
    return [rng.choice(nodes)] if nodes else []


def _all(nodes: list[str], rng: random.Random) -> list[str]:
    return list(nodes)


PICKS: dict[str, Pick] = {
    "power-loss-one": _of(_brokers, _one),
    "power-loss-leader": _leader,
    "power-loss-leader-and-followers": _replicas,
    "power-loss-minority": _of(_brokers, minority),
    "power-loss-majority": _of(_brokers, majority),
    "power-loss-brokers": _of(_brokers, _all),
    "power-loss-quorum-one": _of(quorum, _one),
    "power-loss-quorum-minority": _of(quorum, minority),
    "power-loss-quorum-majority": _of(quorum, majority),
    "power-loss-quorum": _of(quorum, _all),
    "power-loss-active-controller": _controller,
    "power-loss-all": _of(_every, _all),
}


def summary(answer: dict[str, Any]) -> Value:
    """Takes the layer's answer to a power cut (faultfs/control.go `cut`). Returns what
    one node lost, in brief: files and bytes over its mounts, and the files that lost
    the most."""
    if "mounts" not in answer:
        return {"error": str(answer.get("error", answer))}
    mounts = answer["mounts"]
    listed = sorted(
        (f for m in mounts for f in m.get("listed", [])),
        key=lambda f: -int(f.get("unsynced_bytes", 0)),
    )
    return {
        "files": sum(int(m.get("files", 0)) for m in mounts),
        "unsynced_bytes": sum(int(m.get("unsynced_bytes", 0)) for m in mounts),
        "largest": listed[:_LISTED_FILES],
        "exit": answer.get("exit"),
    }


def power_off_all(switch: PowerSwitch, nodes: list[str]) -> dict[str, Value]:
    """Cuts the power of every node at once (one thread each). Returns node -> what it
    lost, with the seconds its cut took."""

    def cut(node: str) -> Value:
        began = time.monotonic()
        try:
            lost = summary(switch.power_off(node))
        except Exception as err:  # the other nodes' cuts go on; this one is reported
            lost = {"error": repr(err)}
        return {**lost, "seconds": round(time.monotonic() - began, 3)}

    with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        return dict(zip(nodes, pool.map(cut, nodes), strict=True))


class PowerLoss(SingleFault):
    """One power fault: start cuts the power of its targets, stop powers on every node
    it cut."""

    def __init__(self, fault: str, topic: str, rng: random.Random) -> None:
        super().__init__(fault, topic, rng)
        self._pick = PICKS[fault]
        self._switch: PowerSwitch | None = None
        self._off: list[str] = []

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; refuses one whose nodes cannot lose power."""
        if not isinstance(cluster, PowerSwitch):
            raise TypeError(f"{self.fault}: the cluster has no power switch (faultfs)")
        super().setup(cluster)
        self._switch = cluster

    @property
    def switch(self) -> PowerSwitch:
        """Returns the cluster given to setup, as the power switch it is."""
        if self._switch is None:
            raise RuntimeError(f"{self.fault}: used before setup")
        return self._switch

    def invoke(self, f: str) -> Value:
        """Cuts the power of the targets (start) or powers every cut node on (stop)."""
        cluster = self.cluster
        action, _ = split_f(f)
        before = partition_states(cluster, self.topic)
        if action == "start":
            nodes, partition = self._pick(cluster, self.topic, self.rng)
            nodes = [n for n in nodes if n not in self._off]
            if not nodes:
                raise Skipped("no node to cut: none chosen, or every one already off")
            # Recorded first: a half-done cut must still be powered on.
            self._off.extend(nodes)
            lost = power_off_all(self.switch, nodes)
            done: Value = {"powered-off": nodes, "partition": partition, "lost": lost}
        else:
            if not self._off:
                raise Skipped("no node is powered off")
            done = {"powered-on": self._power_on(cluster)}
            done["revived"] = revive(cluster, resume_paused=False)
        return {**done, "before": before, "after": partition_states(cluster, self.topic)}

    def teardown(self) -> Value:
        """Powers on every node this nemesis cut."""
        if self._cluster is None or not self._off:
            return {}
        return {self.fault: {"powered-on": self._power_on(self._cluster)}}

    def _power_on(self, cluster: Cluster) -> list[str]:
        # The metadata quorum first: a broker gives up on a ZooKeeper that is not there.
        keepers = quorum(cluster)
        on, errors = [], []
        for node in sorted(self._off, key=lambda n: n not in keepers):
            try:
                cluster.start(node)
            except Exception as err:  # the others must still come back; reported below
                errors.append(f"{node}: {err}")
                continue
            self._off.remove(node)
            on.append(node)
        if errors:
            raise RuntimeError(f"could not power on {', '.join(errors)}")
        return on
