"""The questions about Kafka's own state that any cluster answers once it knows where
its nodes are: leaders and ISRs, the committed partition state, the controller or
KRaft quorum, finalized features. DockerCluster says where the nodes are.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

from harness.cluster import kraft, wire
from harness.cluster.admin import Admin, AdminError
from harness.cluster.config import BROKER_PORT
from harness.cluster.coordinator import find_coordinator
from harness.cluster.layout import ClusterSpec
from harness.cluster.quorum import Quorum
from harness.cluster.zookeeper import committed_partitions
from nemesis.cluster import PartitionState

PREFER_WAIT_S = 10.0
"""Bound on a reordered assignment reaching the brokers' metadata."""


class ClusterQueries(ABC):
    """Kafka-side queries over nodes a subclass names."""

    spec: ClusterSpec
    _admin: Admin | None = None

    @property
    @abstractmethod
    def brokers(self) -> list[str]:
        """Returns the broker nodes' names in id order."""

    @property
    @abstractmethod
    def zookeepers(self) -> list[str]:
        """Returns the ZooKeeper nodes' names in id order."""

    @property
    @abstractmethod
    def controllers(self) -> list[str]:
        """Returns the KRaft quorum's voters in id order (none on ZooKeeper)."""

    @abstractmethod
    def ip(self, node: str) -> str:
        """Returns node's address."""

    @abstractmethod
    def broker_id(self, node: str) -> int:
        """Returns the Kafka node id of a broker or KRaft controller node."""

    @abstractmethod
    def node_of_broker(self, broker_id: int) -> str:
        """Returns the node name of a Kafka node id."""

    @abstractmethod
    def node_states(self) -> dict[str, str]:
        """Returns every node's container state."""

    @property
    def metadata(self) -> str:
        """Returns where the cluster keeps its metadata: zookeeper or kraft."""
        return self.spec.metadata

    @property
    def bootstrap_servers(self) -> str:
        """Returns the "host:port,..." string clients connect to."""
        return ",".join(f"{self.ip(b)}:{BROKER_PORT}" for b in self.brokers)

    def admin(self, timeout: float = 5.0) -> Admin:
        """Returns an Admin client for this cluster."""
        return Admin(self.bootstrap_servers, timeout=timeout)

    def partitions(self, topic: str) -> list[PartitionState]:
        """Returns each partition of topic with its leader, replicas and ISR, asked now."""
        return self._query_admin().partitions(topic)

    def committed_partitions(self, topic: str) -> list[PartitionState]:
        """Returns each partition of topic as the controller committed it: read from
        ZooKeeper, or on KRaft from the broker with the freshest metadata
        (harness/cluster/kraft.py)."""
        if self.metadata == "kraft":
            return kraft.committed_partitions(self, topic)
        hosts = ",".join(f"{self.ip(z)}:2181" for z in self.zookeepers)
        return committed_partitions(hosts, topic)

    def controller(self) -> int:
        """Returns the controller's broker id, asked now (-1 while there is none). On
        KRaft, brokers name a random broker here: use active_controller()."""
        return self._query_admin().controller()

    def active_controller(self) -> str | None:
        """Returns the node that leads the metadata now: the KRaft quorum's leader, or the
        ZooKeeper-mode controller broker; None while there is none."""
        if self.metadata == "kraft":
            try:
                return self.node_of_broker(self.quorum().leader)
            except AdminError:
                return None
        controller = self.controller()
        return self.node_of_broker(controller) if controller >= 0 else None

    def quorum(self) -> Quorum:
        """Returns the KRaft quorum as its leader describes it now (voters with their
        lag, observers); raises AdminError on ZooKeeper or when no controller leads."""
        if self.metadata != "kraft":
            raise AdminError(f"cluster {self.spec.name} keeps its metadata in ZooKeeper")
        return kraft.describe_quorum(self)

    def features(self) -> dict[str, int]:
        """Returns the feature levels the cluster has finalized (none on ZooKeeper)."""
        return kraft.finalized_features(self) if self.metadata == "kraft" else {}

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        """Moves leadership of topic's partitions to their preferred replicas where in sync;
        returns partition -> "" or the reason it did not move."""
        return self._query_admin().elect_preferred_leaders(topic)

    def prefer_leader(self, topic: str, partition: int, broker: int) -> str:
        """Makes broker the preferred leader of one partition of topic: the same replicas,
        broker first, so no data moves. Returns "" once the assignment says so, else the
        reason it does not (a leader election then moves leadership there)."""
        try:
            (part,) = [p for p in self.partitions(topic) if p.partition == partition]
        except ValueError:
            return f"no partition {partition} of {topic!r}"
        if broker not in part.replicas:
            return f"broker {broker} holds no replica of {topic}-{partition}"
        wanted = (broker, *(r for r in part.replicas if r != broker))
        if part.replicas != wanted:
            # To the controller: on ZooKeeper only it takes reassignments; on KRaft the
            # broker named here forwards them.
            address = self.ip(self.node_of_broker(self.controller()))
            try:
                refused = wire.reassign(address, 9092, topic, {partition: wanted}, 5.0)
            except wire.WireError as err:
                return str(err)
            if refused.get(partition):
                return refused[partition]
        deadline = time.monotonic() + PREFER_WAIT_S
        while time.monotonic() < deadline:
            if any(
                p.partition == partition and p.replicas == wanted for p in self.partitions(topic)
            ):
                return ""
            time.sleep(0.25)
        return f"{topic}-{partition}: assignment not {list(wanted)} after {PREFER_WAIT_S:g} s"

    def add_partitions(self, topic: str, total: int) -> None:
        """Grows topic to total partitions (nemesis.cluster's Expandable); raises
        AdminError when the cluster refuses or cannot say."""
        self._query_admin().create_partitions(topic, total)

    def group_coordinator(self, group: str) -> str:
        """Returns the node that coordinates group now, as the first running broker to
        answer FindCoordinator says; raises AdminError when none can say."""
        states = self.node_states()
        refusals = []
        for node in (b for b in self.brokers if states.get(b) == "running"):
            try:
                found = find_coordinator(self.ip(node), 9092, group, 2.0)
            except wire.WireError as err:
                refusals.append(f"{node}: {err}")
                continue
            if found.error == 0:
                return self.node_of_broker(found.node_id)
            refusals.append(f"{node}: error {found.error} {found.message}".rstrip())
        raise AdminError(f"no broker names the coordinator of {group!r}: {'; '.join(refusals)}")

    def _query_admin(self) -> Admin:
        # One client for the many queries a run makes: each new one opens sockets anew.
        if self._admin is None:
            self._admin = self.admin(timeout=3.0)
        return self._admin
