"""The Nemesis protocol, composition by op name, and what every fault asks of the cluster.

A nemesis is set up once, then invoked with `start-<fault>` and `stop-<fault>` ops;
`teardown` heals everything it may have broken, also after a failed setup or ^C.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from nemesis.cluster import Cluster

Value = dict[str, Any]
LEADER_WAIT_S = 3.0


class Nemesis(Protocol):
    """A fault family: knows which ops it takes, injects and heals them."""

    @property
    def faults(self) -> tuple[str, ...]:
        """Returns the fault names it injects (its ops are start-NAME and stop-NAME)."""
        ...

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster it will break."""
        ...

    def invoke(self, f: str) -> Value:
        """Takes start-NAME or stop-NAME. Does it; returns what it did (JSON-ready). A
        fault that cannot happen now returns {"skipped": reason}."""
        ...

    def teardown(self) -> Value:
        """Heals everything this nemesis may have broken; returns what it did."""
        ...


class Skipped(Exception):
    """A fault cannot happen now (no leader known, nothing to heal); the message says why."""


@dataclass(frozen=True, slots=True)
class Target:
    """A broker chosen as a fault's target, and why (the partition it leads, if any)."""

    node: str
    partition: int | None


class Compose:
    """Routes each op to the nemesis that injects its fault."""

    def __init__(self, nemeses: Sequence[Nemesis]) -> None:
        self._nemeses = list(nemeses)
        self._routes = {fault: n for n in self._nemeses for fault in n.faults}

    @property
    def faults(self) -> tuple[str, ...]:
        """Returns every fault of every nemesis, in order."""
        return tuple(self._routes)

    def setup(self, cluster: Cluster) -> None:
        """Sets up every nemesis."""
        for nemesis in self._nemeses:
            nemesis.setup(cluster)

    def invoke(self, f: str) -> Value:
        """Passes f to the nemesis whose fault it names."""
        _, fault = split_f(f)
        return self._routes[fault].invoke(f)

    def teardown(self) -> Value:
        """Tears every nemesis down, each even if another failed; returns what each did."""
        report: Value = {}
        for nemesis in self._nemeses:
            try:
                report |= nemesis.teardown()
            except Exception as err:  # every other nemesis must still heal
                report[",".join(nemesis.faults)] = {"error": repr(err)}
        return report


class SingleFault:
    """What every one-fault nemesis shares: its name, its topic, its random source and the
    cluster it was set up with."""

    def __init__(self, fault: str, topic: str, rng: random.Random) -> None:
        self.fault = fault
        self.topic = topic
        self.rng = rng
        self._cluster: Cluster | None = None

    @property
    def faults(self) -> tuple[str, ...]:
        """Returns the one fault this injects."""
        return (self.fault,)

    def setup(self, cluster: Cluster) -> None:
        """Takes the cluster; nothing is changed until the first start."""
        self._cluster = cluster

    @property
    def cluster(self) -> Cluster:
        """Returns the cluster given to setup."""
        if self._cluster is None:
            raise RuntimeError(f"{self.fault}: used before setup")
        return self._cluster


def split_f(f: str) -> tuple[str, str]:
    """Takes an op name such as start-kill-leader. Returns ("start", "kill-leader")."""
    action, _, fault = f.partition("-")
    if action not in ("start", "stop") or not fault:
        raise ValueError(f"not a nemesis op: {f!r}")
    return action, fault


def partition_states(cluster: Cluster, topic: str) -> Value:
    """Returns each partition of topic's leader and ISR as node names, as the cluster
    reports them now, or {"error": ...} when it cannot say."""
    try:
        parts = cluster.partitions(topic)
    except Exception as err:  # metadata is unavailable during some faults: say so
        return {"error": str(err)}
    return {
        str(p.partition): {
            "leader": cluster.node_of_broker(p.leader) if p.leader >= 0 else None,
            "isr": [cluster.node_of_broker(b) for b in p.isr],
        }
        for p in parts
    }


def current_leader(cluster: Cluster, topic: str, rng: random.Random) -> Target:
    """Returns the leader of a random partition of topic, asked of the cluster now.

    Raises Skipped when no partition has a leader within a few seconds.
    """

    def leader() -> Target | str:
        led = [p for p in cluster.partitions(topic) if p.leader >= 0]
        if not led:
            return f"no partition of {topic} has a leader"
        chosen = rng.choice(led)
        return Target(cluster.node_of_broker(chosen.leader), chosen.partition)

    return ask_until_known(leader, "no leader known")


def active_controller(cluster: Cluster) -> Target:
    """Returns the node that leads the metadata now: the KRaft quorum's leader, or the
    controller broker on ZooKeeper. Raises Skipped when none leads within a few seconds."""

    def node() -> Target | str:
        found = cluster.active_controller()
        return "no controller leads" if found is None else Target(found, None)

    return ask_until_known(node, "no active controller known")


def wait_until(
    done: Callable[[], bool],
    bound: float,
    poll_s: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> bool:
    """Asks done() every poll_s seconds until it says so (True) or bound seconds pass
    (False). An exception from done() counts as not yet: the cluster's metadata is briefly
    unavailable around a fault, a failover or a restart. clock and sleep are the caller's,
    so tests can run it on a fake clock."""
    deadline = clock() + bound
    while True:
        try:
            if done():
                return True
        except Exception:  # asked again until the bound
            pass
        if clock() >= deadline:
            return False
        sleep(poll_s)


def ask_until_known(ask: Callable[[], Target | str], unknown: str) -> Target:
    """Asks until ask gives a Target (a str says why not yet) or LEADER_WAIT_S pass."""
    deadline = time.monotonic() + LEADER_WAIT_S
    while True:
        try:
            found = ask()
        except Exception as err:  # e.g. controller failover: ask again until the deadline
            found = str(err)
        if isinstance(found, Target):
            return found
        if time.monotonic() >= deadline:
            raise Skipped(f"{unknown}: {found}")
        time.sleep(0.25)


def random_broker(cluster: Cluster, rng: random.Random, exclude: Sequence[str] = ()) -> Target:
    """Returns a random broker not in exclude. Raises Skipped when none is left."""
    candidates = [b for b in cluster.brokers if b not in exclude]
    if not candidates:
        raise Skipped("every broker is already down")
    return Target(rng.choice(candidates), None)
