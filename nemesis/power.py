"""Power loss: nodes lose power at once, and with it every write since each file's last
fsync or fdatasync (faultfs, the layer under the data directories); stop powers them on
again, to restart on what their disks kept.

Targets are those of every kill and pause (nemesis.targets: Jepsen's node specs over
the brokers, the metadata quorum and every node, and the nodes that hold a role). Each
node's op value says what its layer lost,
so a report can tell a power cut that lost acknowledged records from one that lost
nothing. Jepsen drives lazyfs the same way (jepsen/src/jepsen/lazyfs.clj:
`lose-unfsynced-writes!` after killing the process).
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nemesis.cluster import Cluster, PowerSwitch
from nemesis.core import SingleFault, Skipped, Value, partition_states, split_f
from nemesis.process import quorum_first, revive, why_chosen
from nemesis.targets import Aim, pick

_LISTED_FILES = 3
"""How many of a node's files with the most unsynced bytes its op value names."""


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

    def __init__(
        self, fault: str, topic: str, rng: random.Random, group: str | None = None
    ) -> None:
        """group: the run's consumer or share group (the coordinator target's)."""
        super().__init__(fault, topic, rng)
        self._target = fault.removeprefix("power-loss-")
        self._aim = Aim(topic, group)
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
            chosen = pick(self._target, cluster, self._aim, self.rng, self._off)
            nodes = list(chosen.nodes)
            # Recorded first: a half-done cut must still be powered on.
            self._off.extend(nodes)
            lost = power_off_all(self.switch, nodes)
            done: Value = {"powered-off": nodes, "lost": lost} | why_chosen(chosen)
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
        on, errors = [], []
        for node in quorum_first(cluster, list(self._off)):
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
