"""What a nemesis may ask of a cluster, as two small protocols: Nodes (name, reach, break
and mend the nodes) and KafkaAdmin (partition leaders, ISRs, the controller, elections).

Declared here, on the side that uses them, so that nemeses import nothing of the control
node; the Docker cluster (harness.cluster) has both abilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition as the cluster's metadata reports it."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader_epoch: int = -1
    """-1 where the source does not say (librdkafka's metadata)."""


class Nodes(Protocol):
    """A set of named nodes (n1.., zk1..) that can be reached, inspected and broken."""

    @property
    def nodes(self) -> list[str]:
        """Returns every node's name, brokers first."""
        ...

    @property
    def brokers(self) -> list[str]:
        """Returns the Kafka brokers' node names."""
        ...

    @property
    def zookeepers(self) -> list[str]:
        """Returns the ZooKeeper servers' node names."""
        ...

    @property
    def controllers(self) -> list[str]:
        """Returns the KRaft controller quorum's voters' node names (none on ZooKeeper)."""
        ...

    @property
    def metadata(self) -> str:
        """Returns where the cluster keeps its metadata: zookeeper or kraft."""
        ...

    @property
    def bootstrap_servers(self) -> str:
        """Returns the "host:port,..." string clients connect to."""
        ...

    def ip(self, node: str) -> str:
        """Returns node's address on the cluster network."""
        ...

    def broker_id(self, node: str) -> int:
        """Returns the Kafka broker id of a broker node."""
        ...

    def node_of_broker(self, broker_id: int) -> str:
        """Returns the node name of a Kafka broker id."""
        ...

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        """Runs cmd inside node as root (iptables needs it; the node's own processes run
        unprivileged); returns its exit code and output."""
        ...

    def kill(self, node: str) -> None:
        """Kills node's process with SIGKILL (no controlled shutdown)."""
        ...

    def start(self, node: str) -> None:
        """Starts node again after a kill, keeping its data."""
        ...

    def pause(self, node: str) -> None:
        """Freezes every process of node (SIGSTOP-like, via the cgroup freezer)."""
        ...

    def resume(self, node: str) -> None:
        """Thaws a paused node."""
        ...

    def state(self, node: str) -> str:
        """Returns node's state: running, paused, exited, ..."""
        ...

    def server_log(self, node: str, pattern: str, lines: int = 50) -> list[str]:
        """Returns the last lines of broker node's server log matching a regular
        expression (grep -E), oldest first."""
        ...


class KafkaAdmin(Protocol):
    """Kafka's own view of the cluster: partitions, the controller, leader elections."""

    def partitions(self, topic: str) -> list[PartitionState]:
        """Returns each partition of topic with its leader, replicas and ISR, asked now.

        Raises AdminError when the cluster cannot say (e.g. during controller failover).
        """
        ...

    def committed_partitions(self, topic: str) -> list[PartitionState]:
        """Returns each partition of topic as the controller committed it (leader, leader
        epoch, ISR), read from the metadata store: unlike `partitions`, never a stale
        copy held by a broker cut off from the controller. Raises AdminError when the
        store cannot say."""
        ...

    def controller(self) -> int:
        """Returns the controller's broker id, asked now (-1 while there is none)."""
        ...

    def active_controller(self) -> str | None:
        """Returns the node that leads the metadata now (the KRaft quorum's leader, or the
        ZooKeeper-mode controller broker), None while there is none."""
        ...

    def group_coordinator(self, group: str) -> str:
        """Returns the node that coordinates a consumer or share group now (FindCoordinator:
        the leader of the group's partition of __consumer_offsets). Raises AdminError when
        no broker can say."""
        ...

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        """Moves each partition of topic's leadership to its preferred replica (the first
        of its assignment) where that replica is in sync. Returns partition -> "" when it
        leads there now, else the reason it does not."""
        ...

    def prefer_leader(self, topic: str, partition: int, broker: int) -> str:
        """Makes broker the preferred leader of one partition (its replicas reordered, none
        moved). Returns "" once the assignment says so, else the reason it does not."""
        ...


class Cluster(Nodes, KafkaAdmin, Protocol):
    """A cluster a nemesis can break and ask about: both abilities."""


@runtime_checkable
class PowerSwitch(Protocol):
    """An optional ability: nodes whose data directories sit on a layer that holds
    every write until its file is fsynced (faultfs), so that they can lose power."""

    def power_off(self, node: str) -> dict[str, Any]:
        """Cuts node's power: every process dies at once, and what was written since
        each file's last fsync is lost. Returns what was lost, as the layer counted it
        ({"error": ...} when it could not say). `start` powers it on again."""
        ...


@runtime_checkable
class Expandable(Protocol):
    """An optional ability: a topic that can be given more partitions while it is used
    (Kafka's CreatePartitions; a NATS stream has one partition and cannot)."""

    def add_partitions(self, topic: str, total: int) -> None:
        """Grows topic to total partitions; raises when the cluster refuses or cannot
        say (a retry that finds the topic already that large is success)."""
        ...


@runtime_checkable
class Clocks(Protocol):
    """An optional ability: each node's wall clock, as its processes read it, set apart
    from the true time (libfaketime), while its monotonic clock stays true."""

    def set_clock_offset(self, node: str, seconds: int) -> None:
        """Sets node's wall clock `seconds` from the true time (0: right again)."""
        ...


@runtime_checkable
class Disks(Protocol):
    """An optional ability: a node stopped as an operator stops it, and its files read
    and written while it is down (the file corruption faults)."""

    def stop(self, node: str) -> None:
        """Stops node cleanly (a controlled shutdown); `start` starts it again."""
        ...

    def read_file(self, node: str, path: str) -> bytes:
        """Returns the bytes of a file of node's disk, the node running or stopped (path as
        the node's processes see it)."""
        ...

    def write_file(self, node: str, path: str, data: bytes) -> None:
        """Replaces a file of a stopped node's disk with data, keeping its owner and mode."""
        ...


@runtime_checkable
class InPath(Protocol):
    """An optional ability: every broker is reached through faultproxy, an in-path proxy
    in the broker's container that can hold, cut or delay the frames of chosen
    connections (faultproxy/rules.go says what a rule is; its reports say what it did)."""

    def proxy_add_rule(self, broker: str, rule: dict[str, Any]) -> dict[str, Any]:
        """Installs a rule in broker's proxy; returns its report, with its id."""
        ...

    def proxy_rule(self, broker: str, rule_id: int) -> dict[str, Any]:
        """Returns what a rule of broker's proxy did so far."""
        ...

    def proxy_end_rule(self, broker: str, rule_id: int, release_now: bool) -> dict[str, Any]:
        """Stops a rule (each connection it holds keeps its own hold time unless
        release_now); returns its report."""
        ...

    def proxy_heal(self, broker: str) -> list[dict[str, Any]]:
        """Stops every rule of broker's proxy and releases everything it holds."""
        ...

    def proxy_stats(self, broker: str) -> dict[str, Any]:
        """Returns what passed broker's proxy, per client id (requests by API; for a
        transactional producer its transactional id, timeout, producer id and epoch)."""
        ...

    def proxy_ends(self, broker: str, since: float) -> list[dict[str, Any]]:
        """Returns the EndTxn requests that reached broker's proxy since a time (unix
        seconds), held or not, with when each was delivered and its answer."""
        ...

    def proxy_markers(self, broker: str, since: float) -> list[dict[str, Any]]:
        """Returns the transaction markers (producer id and epoch, commit or abort,
        partitions) coordinators sent broker since a time (unix seconds)."""
        ...


@runtime_checkable
class ServicePorts(Protocol):
    """An optional ability: nodes that say which port a probe of a cut should try (a
    NATS server's client port); without it, Kafka's and ZooKeeper's ports."""

    def service_port(self, node: str) -> int:
        """Returns the port node serves clients on."""
        ...


@dataclass(frozen=True, slots=True)
class Voter:
    """One voter of a dynamic KRaft quorum: its node id, the id of its metadata log's
    directory (a voter is a node and a directory: KIP-853) and where it listens."""

    node_id: int
    directory_id: str
    endpoints: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class QuorumMembers:
    """The KRaft quorum's membership as its leader reports it (`kafka-metadata-quorum
    describe --status`): the leader, its epoch, the high watermark, the voters and the
    observers' node ids."""

    leader: int
    epoch: int
    high_watermark: int
    voters: tuple[Voter, ...]
    observers: tuple[int, ...]

    @property
    def voter_ids(self) -> list[int]:
        """Returns the voters' node ids, in order."""
        return sorted(v.node_id for v in self.voters)


@runtime_checkable
class Reconfigurable(Protocol):
    """An optional ability: a KRaft quorum formatted for dynamic membership (KIP-853),
    whose voters can be removed and added while it runs."""

    def quorum_members(self, avoid: Sequence[str] = (), directories: bool = True) -> QuorumMembers:
        """Returns the quorum's membership now, asked of the controllers but those to
        avoid (cut off); without directories a quicker question whose voters' directory
        ids are empty. Raises when no controller can say."""
        ...

    def remove_controller(self, node: str, directory_id: str, avoid: Sequence[str] = ()) -> str:
        """Removes controller node (with that metadata directory) from the voters, asked of
        the other controllers but those to avoid; returns what the tool said. Raises when
        it refused or did not answer in time (the change may still land)."""
        ...

    def add_controller(self, node: str) -> str:
        """Adds controller node, which must be running and caught up as an observer, to
        the voters; returns what the tool said. Raises as remove_controller does."""
        ...


@runtime_checkable
class Reassignable(Protocol):
    """An optional ability: replicas moved between brokers (Kafka's partition
    reassignment), and on KRaft a stopped broker unregistered."""

    def replica_assignment(self) -> dict[str, list[PartitionState]]:
        """Returns every topic's partitions (the internal ones too) with their replicas,
        leaders and ISRs, asked now."""
        ...

    def reassign(self, moves: dict[tuple[str, int], tuple[int, ...]]) -> str:
        """Starts moving each (topic, partition) to the replicas given (the first the
        preferred leader); returns what the tool said. Raises when it refused."""
        ...

    def unregister_broker(self, broker_id: int) -> str:
        """KRaft: removes a stopped broker's registration from the metadata; returns what
        the tool said. Raises when it refused."""
        ...


@runtime_checkable
class PeerRemovable(Protocol):
    """An optional ability: a server removed from a NATS JetStream cluster's meta group
    (peer-remove) and brought back as a new peer under a new name."""

    def server_name(self, node: str) -> str:
        """Returns the name node's server goes by now."""
        ...

    def wipe(self, node: str) -> dict[str, Any]:
        """Stops node's server, deletes its store and kills it; returns what was done."""
        ...

    def remove_peer(self, node: str) -> dict[str, Any]:
        """Asks the cluster to remove node's server; returns its answer. Raises when
        none came."""
        ...

    def rejoin(self, node: str) -> str:
        """Starts the stopped node under a new server name; returns the name."""
        ...

    def membership(self, topic: str) -> dict[str, Any]:
        """Returns node -> what that server says of the membership of the cluster and of
        topic's stream (members.membership's shape), for every server answering."""
        ...
