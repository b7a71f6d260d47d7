"""The shape of a cluster, checked before anything is made: its name (Docker's rules),
Kafka release, metadata mode, node counts (what one /24 network holds) and fixed
addresses.

ZooKeeper server i, or on KRaft dedicated controller i, listens on .(10+i) (a cluster
has one or the other, never both) and broker i on .(100+i), so an address says which
node it is; the ranges hold 89 nodes without meeting (.11-.99, .101-.189). A KRaft
controller's node id is 100+i, so it never meets a broker's.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

from harness.cluster.config import PROFILES, profile_problem
from harness.cluster.releases import DEFAULT_VERSION, Metadata, release_problem

Role = Literal["kafka", "zookeeper", "controller", "combined"]
"""kafka: a broker; controller: a dedicated KRaft controller; combined: both."""
ROLES: tuple[Role, ...] = ("kafka", "zookeeper", "controller", "combined")
KraftRoles = Literal["dedicated", "combined"]
KRAFT_ROLES: tuple[KraftRoles, ...] = ("dedicated", "combined")
BROKER_ROLES: tuple[Role, ...] = ("kafka", "combined")
CONTROLLER_ROLES: tuple[Role, ...] = ("controller", "combined")
MAX_BROKERS = 89
MAX_ZOOKEEPERS = 89
MAX_CONTROLLERS = 9
CONTROLLER_ID_BASE = 100
_ZOOKEEPER_BASE, _CONTROLLER_BASE, _BROKER_BASE = 10, 10, 100
# Docker's rule for container and network names, and the length `harness run` allows.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class SpecError(ValueError):
    """A cluster spec no cluster can have: a bad name, count, release or profile."""


def name_problem(name: str) -> str | None:
    """Returns why name cannot name a cluster, or None when it can."""
    if _NAME.fullmatch(name):
        return None
    return (
        f"cluster name {name!r}: use 1 to 100 letters, digits and . _ - "
        "(starting with a letter or digit), as Docker requires"
    )


def count_problem(what: str, count: int, most: int) -> str | None:
    """Returns why count cannot be the number of a cluster's `what`, or None."""
    if 1 <= count <= most:
        return None
    return f"{what} {count}: 1 to {most} (the address layout of one /24 network)"


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """The shape of a cluster: its name, node counts, Kafka profile, release and
    metadata mode; raises SpecError when built with values no cluster can have.
    `zookeepers` counts only in ZooKeeper mode, `kraft_roles` and `controllers` only
    on KRaft (combined: every broker is a voter, and `controllers` is not used)."""

    name: str = "harness"
    brokers: int = 3
    zookeepers: int = 1
    kafka_config: str = "safe"
    kafka_version: str = DEFAULT_VERSION
    metadata: Metadata = "zookeeper"
    kraft_roles: KraftRoles = "dedicated"
    controllers: int = 3
    faultfs: bool = False
    """Every node's data directory sits on faultfs, the power-loss layer: a power cut
    then loses what was written since each file's last fsync (nemesis.power)."""
    faultproxy: bool = False
    """Every broker is reached through faultproxy, the in-path proxy that can hold,
    cut or delay chosen connections' requests (the late-delivery and client faults)."""
    faketime: bool = False
    """Every node's JVM reads its wall clock through libfaketime, offset by a number of
    seconds the harness sets per node (the clock faults); without it no clock moves."""
    dynamic_quorum: bool = False
    """On KRaft, the controllers are formatted as a dynamic quorum (KIP-853's
    --initial-controllers), so voters can be removed and added while it runs (the
    controller membership faults); without it the voters are fixed, as they always were."""

    def __post_init__(self) -> None:
        problems = [
            name_problem(self.name),
            count_problem("brokers", self.brokers, MAX_BROKERS),
            count_problem("zookeepers", self.zookeepers, MAX_ZOOKEEPERS),
            count_problem("controllers", self.controllers, MAX_CONTROLLERS),
            None
            if self.kraft_roles in KRAFT_ROLES
            else f"kraft roles {self.kraft_roles!r}: one of {', '.join(KRAFT_ROLES)}",
            release_problem(self.kafka_version, self.metadata),
        ]
        if self.kafka_config not in PROFILES:
            problems.append(
                f"kafka config {self.kafka_config!r}: one of {', '.join(sorted(PROFILES))}"
            )
        elif not any(problems):
            problems.append(
                profile_problem(PROFILES[self.kafka_config], self.kafka_version, self.metadata)
            )
        for problem in problems:
            if problem is not None:
                raise SpecError(problem)

    def role_counts(self) -> dict[Role, int]:
        """Returns how many nodes of each role the cluster has (roles it lacks left out)."""
        if self.metadata == "zookeeper":
            return {"kafka": self.brokers, "zookeeper": self.zookeepers}
        if self.kraft_roles == "combined":
            return {"combined": self.brokers}
        return {"kafka": self.brokers, "controller": self.controllers}


@dataclass(frozen=True, slots=True)
class Node:
    """One container of the cluster; id is its Kafka node id (ZooKeeper: its myid)."""

    name: str
    role: Role
    id: int
    address: str


def plan_nodes(spec: ClusterSpec, subnet: ipaddress.IPv4Network) -> list[Node]:
    """Takes a spec and its /24 subnet; returns the nodes with fixed addresses, brokers
    first, then the controllers or ZooKeeper servers."""
    base = subnet.network_address
    counts = spec.role_counts()
    broker_role: Role = "combined" if "combined" in counts else "kafka"
    nodes = [
        Node(f"n{i}", broker_role, i, str(base + _BROKER_BASE + i))
        for i in range(1, spec.brokers + 1)
    ]
    nodes += [
        Node(f"zk{i}", "zookeeper", i, str(base + _ZOOKEEPER_BASE + i))
        for i in range(1, counts.get("zookeeper", 0) + 1)
    ]
    nodes += [
        Node(f"c{i}", "controller", CONTROLLER_ID_BASE + i, str(base + _CONTROLLER_BASE + i))
        for i in range(1, counts.get("controller", 0) + 1)
    ]
    return nodes
