"""Waits for a starting cluster to be ready: ZooKeeper serving or the KRaft quorum
led, every broker registered, and a probe topic fully replicated; each wait ends at the
deadline with the failing node's log tail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from harness.cluster.admin import Admin, AdminError
from harness.cluster.errors import ClusterError
from harness.cluster.layout import ClusterSpec
from harness.cluster.quorum import Quorum
from harness.cluster.zookeeper import zookeeper_mode
from nemesis.cluster import Nodes

PROBE_TOPIC = "harness-probe"
Status = Callable[[str], None]


class Starting(Nodes, Protocol):
    """What the waits ask of a starting cluster (the Docker cluster, which calls them)."""

    spec: ClusterSpec

    def node_states(self) -> dict[str, str]:
        """Returns each node's container state."""
        ...

    def log_tail(self, node: str, lines: int = 30) -> str:
        """Returns the last lines of node's log."""
        ...

    def quorum(self) -> Quorum:
        """Returns the KRaft quorum as its leader describes it."""
        ...

    def admin(self, timeout: float = 5.0) -> Admin:
        """Returns an admin client of the cluster."""
        ...

    def has_log(self, node: str, topic: str, partition: int) -> bool:
        """Returns whether node holds a log of the partition."""
        ...


@dataclass(frozen=True, slots=True)
class Deadline:
    """When `cluster up` must be done: a monotonic time and the bound it came from, so
    every step that runs out of time says the same thing ("was not up within N s")."""

    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """Takes a bound in seconds; returns the deadline that far from now."""
        return cls(time.monotonic() + seconds, seconds)

    def passed(self) -> bool:
        """Returns whether the deadline has passed."""
        return time.monotonic() > self.at

    def left(self) -> float:
        """Returns the seconds left (negative once passed)."""
        return self.at - time.monotonic()

    def missed(self, cluster: str, doing: str) -> str:
        """Returns the message for a cluster not up in time, while doing something."""
        return f"cluster {cluster} was not up within {self.seconds:g} s ({doing})"


def _fail(cluster: Starting, what: str, node: str | None) -> ClusterError:
    if node is None:
        return ClusterError(what)
    return ClusterError(f"{what}\n--- last lines of {node}'s log ---\n{cluster.log_tail(node)}")


def _late(cluster: Starting, deadline: Deadline, doing: str, node: str | None) -> ClusterError:
    return _fail(cluster, deadline.missed(cluster.spec.name, doing), node)


def _check_running(cluster: Starting, nodes: list[str]) -> None:
    states = cluster.node_states()
    for name in nodes:
        if states.get(name) != "running":
            raise _fail(cluster, f"{name} stopped while starting ({states.get(name)})", name)


def wait_zookeeper(cluster: Starting, deadline: Deadline, status: Status) -> None:
    """Returns when every ZooKeeper server serves; raises ClusterError at the deadline."""
    while True:
        modes = {z: zookeeper_mode(cluster.ip(z)) for z in cluster.zookeepers}
        if all(m in ("standalone", "leader", "follower") for m in modes.values()):
            return
        _check_running(cluster, cluster.zookeepers)
        waiting = [z for z, m in modes.items() if m is None or m == "not serving"]
        status(f"cluster {cluster.spec.name}: waiting for ZooKeeper ({', '.join(waiting)})")
        if deadline.passed():
            raise _late(cluster, deadline, "ZooKeeper did not start serving", waiting[0])
        time.sleep(0.5)


def wait_quorum(cluster: Starting, deadline: Deadline, status: Status) -> None:
    """Returns when the KRaft controllers have elected a leader; raises ClusterError
    when a controller stops or at the deadline."""
    while True:
        try:
            cluster.quorum()
            return
        except AdminError as err:
            last = str(err)
        _check_running(cluster, cluster.controllers)
        status(f"cluster {cluster.spec.name}: waiting for the controllers to elect a leader")
        if deadline.passed():
            doing = f"the controllers elected no leader: {last}"
            raise _late(cluster, deadline, doing, cluster.controllers[0])
        time.sleep(0.5)


def wait_brokers(cluster: Starting, deadline: Deadline, status: Status) -> None:
    """Returns when every broker is registered and there is a controller; raises
    ClusterError when a node stops or at the deadline."""
    admin = cluster.admin(timeout=2.0)
    want = {cluster.broker_id(b) for b in cluster.brokers}
    while True:
        try:
            md = admin.metadata()
            live, controller = set(md.brokers), md.controller
        except AdminError:
            live, controller = set(), -1
        if live == want and controller >= 0:
            return
        _check_running(cluster, cluster.nodes)
        missing = sorted(want - live)
        status(f"cluster {cluster.spec.name}: {len(live)}/{len(want)} brokers registered")
        if deadline.passed():
            node = cluster.node_of_broker(missing[0]) if missing else None
            raise _late(cluster, deadline, f"brokers {missing} had not registered", node)
        time.sleep(0.5)


def _create_probe_topic(admin: Admin, assignment: list[list[int]], deadline: Deadline) -> None:
    # A loaded machine can time a request out that the controller then carries out:
    # ask again until the deadline, and take "already exists" as done.
    while True:
        try:
            admin.create_topic(PROBE_TOPIC, assignment)
            return
        except AdminError as err:
            if "TOPIC_ALREADY_EXISTS" in str(err):
                return
            if deadline.passed():
                raise
        time.sleep(0.5)


def wait_probe_topic(cluster: Starting, deadline: Deadline, status: Status) -> None:
    """Creates the probe topic and returns when its replicas are all in sync and have
    their logs; raises ClusterError at the deadline."""
    status(f"cluster {cluster.spec.name}: waiting for a full ISR")
    admin = cluster.admin()
    ids = [cluster.broker_id(b) for b in cluster.brokers]
    rf = min(3, len(ids))
    try:
        _create_probe_topic(admin, [ids[:rf]], deadline)
        admin.wait_full_isr(PROBE_TOPIC, timeout=max(1.0, deadline.left()))
    except AdminError as err:
        doing = f"the probe topic: {err}"
        if deadline.passed():
            raise _late(cluster, deadline, doing, None) from err
        raise _fail(cluster, f"cluster did not become ready: {err}", None) from err
    replicas = [cluster.node_of_broker(i) for i in ids[:rf]]
    while missing := [n for n in replicas if not cluster.has_log(n, PROBE_TOPIC, 0)]:
        if deadline.passed():
            doing = f"{missing[0]} had not created its replica of the probe topic"
            raise _late(cluster, deadline, doing, missing[0])
        time.sleep(0.2)
