"""A Kafka + ZooKeeper cluster as Docker containers on a private bridge network
with fixed addresses, driven through the docker SDK.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container

from harness.cluster import config
from harness.cluster.admin import Admin, AdminError, PartitionState
from harness.cluster.engine import docker_client
from harness.cluster.images import NODE_IMAGE
from harness.cluster.labels import CLUSTER_LABEL, HARNESS_LABEL, NODE_LABEL
from harness.cluster.zookeeper import zookeeper_mode

Role = Literal["kafka", "zookeeper"]
PROBE_TOPIC = "harness-probe"
# Our networks take /24s from here, skipping any Docker or the host already use.
_SUBNET_POOL = ipaddress.ip_network("172.30.0.0/16")


class ClusterError(RuntimeError):
    """The cluster could not be brought to the asked state; the message says why."""


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """The shape of a cluster: its name, node counts and Kafka profile."""

    name: str = "harness"
    brokers: int = 3
    zookeepers: int = 1
    kafka_config: str = "safe"


@dataclass(frozen=True, slots=True)
class Node:
    """One container of the cluster."""

    name: str
    role: Role
    id: int
    address: str


def plan_nodes(spec: ClusterSpec, subnet: ipaddress.IPv4Network) -> list[Node]:
    """Takes a spec and its subnet; returns the nodes with fixed addresses, brokers first."""
    hosts = list(subnet.hosts())
    brokers = [Node(f"n{i}", "kafka", i, str(hosts[99 + i])) for i in range(1, spec.brokers + 1)]
    zks = [Node(f"zk{i}", "zookeeper", i, str(hosts[9 + i])) for i in range(1, spec.zookeepers + 1)]
    return brokers + zks


def _tar(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def cluster_names(client: docker.DockerClient) -> list[str]:
    """Returns the names of every cluster the harness made that still has a container
    or a network."""
    names = {
        c.labels.get(CLUSTER_LABEL, "")
        for c in client.containers.list(all=True, filters={"label": HARNESS_LABEL})
    }
    names |= {
        n.attrs["Labels"].get(CLUSTER_LABEL, "")
        for n in client.networks.list(filters={"label": HARNESS_LABEL})
    }
    return sorted(n for n in names if n)


class DockerCluster:
    """A cluster named spec.name: containers {name}-n1.., {name}-zk1.., network {name}-net."""

    def __init__(self, spec: ClusterSpec, client: docker.DockerClient | None = None) -> None:
        if spec.kafka_config not in config.PROFILES:
            raise ValueError(f"unknown kafka config {spec.kafka_config!r}")
        self.spec = spec
        self._client = client or docker_client()
        self._nodes: dict[str, Node] = {}
        self._admin: Admin | None = None

    # ---- naming and lookup -------------------------------------------------------------

    @property
    def network_name(self) -> str:
        """Returns the name of the cluster's Docker network."""
        return f"{self.spec.name}-net"

    def container_name(self, node: str) -> str:
        """Returns the Docker container name of node."""
        return f"{self.spec.name}-{node}"

    def _labels(self, node: Node | None = None) -> dict[str, str]:
        labels = {HARNESS_LABEL: "1", CLUSTER_LABEL: self.spec.name}
        if node is not None:
            labels |= {
                NODE_LABEL: node.name,
                "kafka-harness.role": node.role,
                "kafka-harness.id": str(node.id),
                "kafka-harness.address": node.address,
            }
        return labels

    def _containers(self) -> list[Container]:
        found: list[Container] = self._client.containers.list(
            all=True, filters={"label": f"{CLUSTER_LABEL}={self.spec.name}"}
        )
        return found

    def attach(self) -> bool:
        """Reads the nodes of an existing cluster of this name; returns False if none."""
        self._nodes = {}
        for c in self._containers():
            lab = c.labels
            role: Role = "kafka" if lab["kafka-harness.role"] == "kafka" else "zookeeper"
            node = Node(
                lab[NODE_LABEL], role, int(lab["kafka-harness.id"]), lab["kafka-harness.address"]
            )
            self._nodes[node.name] = node
        return bool(self._nodes)

    def _container(self, node: str) -> Container:
        try:
            container: Container = self._client.containers.get(self.container_name(node))
        except NotFound:
            raise ClusterError(f"node {node} of cluster {self.spec.name} does not exist") from None
        return container

    @property
    def nodes(self) -> list[str]:
        """Returns every node's name, brokers first."""
        return self.brokers + self.zookeepers

    @property
    def brokers(self) -> list[str]:
        """Returns the broker nodes' names in id order."""
        return [
            n.name for n in sorted(self._nodes.values(), key=lambda n: n.id) if n.role == "kafka"
        ]

    @property
    def zookeepers(self) -> list[str]:
        """Returns the ZooKeeper nodes' names in id order."""
        return [
            n.name
            for n in sorted(self._nodes.values(), key=lambda n: n.id)
            if n.role == "zookeeper"
        ]

    def node(self, name: str) -> Node:
        """Returns the Node called name."""
        try:
            return self._nodes[name]
        except KeyError:
            raise ClusterError(f"no node {name!r} in cluster {self.spec.name}") from None

    def ip(self, node: str) -> str:
        """Returns node's fixed address on the cluster network."""
        return self.node(node).address

    def broker_id(self, node: str) -> int:
        """Returns the Kafka broker id of a broker node."""
        return self.node(node).id

    def node_of_broker(self, broker_id: int) -> str:
        """Returns the node name of a Kafka broker id."""
        return f"n{broker_id}"

    @property
    def bootstrap_servers(self) -> str:
        """Returns the "host:port,..." string clients connect to."""
        return ",".join(f"{self.ip(b)}:9092" for b in self.brokers)

    def admin(self, timeout: float = 5.0) -> Admin:
        """Returns an Admin client for this cluster."""
        return Admin(self.bootstrap_servers, timeout=timeout)

    def partitions(self, topic: str) -> list[PartitionState]:
        """Returns each partition of topic with its leader, replicas and ISR, asked now."""
        return self._query_admin().partitions(topic)

    def controller(self) -> int:
        """Returns the controller's broker id, asked now (-1 while there is none)."""
        return self._query_admin().controller()

    def _query_admin(self) -> Admin:
        # One client for the many queries a run makes: each new one opens sockets anew.
        if self._admin is None:
            self._admin = self.admin(timeout=3.0)
        return self._admin

    # ---- lifecycle ---------------------------------------------------------------------

    def _free_subnet(self) -> ipaddress.IPv4Network:
        used = []
        for net in self._client.networks.list():
            for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
                if "Subnet" in cfg and ":" not in cfg["Subnet"]:
                    used.append(ipaddress.ip_network(cfg["Subnet"]))
        for candidate in _SUBNET_POOL.subnets(new_prefix=24):
            if not any(candidate.overlaps(u) for u in used):
                return ipaddress.IPv4Network(candidate)
        raise ClusterError(f"no free /24 left in {_SUBNET_POOL} for the cluster network")

    def _create_network(self) -> ipaddress.IPv4Network:
        subnet = self._free_subnet()
        pool = docker.types.IPAMPool(subnet=str(subnet), gateway=str(next(subnet.hosts())))
        self._client.networks.create(
            self.network_name,
            driver="bridge",
            ipam=docker.types.IPAMConfig(pool_configs=[pool]),
            labels=self._labels(),
        )
        return subnet

    def _node_files(self, node: Node) -> dict[str, str]:
        zk_addresses = [self.ip(z) for z in self.zookeepers]
        if node.role == "zookeeper":
            return {
                "/etc/zookeeper/zoo.cfg": config.zoo_cfg(zk_addresses),
                "/var/lib/zookeeper/myid": f"{node.id}\n",
            }
        props = config.server_properties(
            broker_id=node.id,
            address=node.address,
            zookeeper_connect=config.zookeeper_connect(zk_addresses),
            brokers=self.spec.brokers,
            profile=config.PROFILES[self.spec.kafka_config],
        )
        return {"/etc/kafka/server.properties": props}

    def _create_container(self, node: Node) -> None:
        api = self._client.api
        host_config = api.create_host_config(cap_add=["NET_ADMIN"], init=True)
        networking = api.create_networking_config(
            {
                self.network_name: api.create_endpoint_config(
                    ipv4_address=node.address, aliases=[node.name]
                )
            }
        )
        created = api.create_container(
            NODE_IMAGE,
            command=[node.role],
            name=self.container_name(node.name),
            hostname=node.name,
            labels=self._labels(node),
            host_config=host_config,
            networking_config=networking,
        )
        api.put_archive(created["Id"], "/", _tar(self._node_files(node)))

    def up(self, status: Callable[[str], None] = lambda _: None, timeout: float = 120.0) -> None:
        """Creates and starts the cluster, then waits until every broker is registered and
        a probe topic has a full ISR; raises ClusterError (with the failing node's log
        tail) after timeout seconds. A cluster of the same name is removed first."""
        self.down()
        deadline = time.monotonic() + timeout
        subnet = self._create_network()
        self._nodes = {n.name: n for n in plan_nodes(self.spec, subnet)}
        for name in self.nodes:
            self._create_container(self.node(name))
        for name in self.zookeepers:
            self._container(name).start()
        self._wait_zookeeper(deadline, status)
        for name in self.brokers:
            self._container(name).start()
        self._wait_brokers(deadline, status)
        self._wait_probe_topic(deadline, status)

    def _fail(self, what: str, node: str | None) -> ClusterError:
        if node is None:
            return ClusterError(what)
        return ClusterError(f"{what}\n--- last lines of {node}'s log ---\n{self.log_tail(node)}")

    def _check_running(self, nodes: list[str]) -> None:
        for name in nodes:
            state = self._container(name).attrs["State"]
            if not state["Running"]:
                raise self._fail(
                    f"{name} exited with code {state['ExitCode']} while starting", name
                )

    def _wait_zookeeper(self, deadline: float, status: Callable[[str], None]) -> None:
        while True:
            modes = {z: zookeeper_mode(self.ip(z)) for z in self.zookeepers}
            if all(m in ("standalone", "leader", "follower") for m in modes.values()):
                return
            self._check_running(self.zookeepers)
            waiting = [z for z, m in modes.items() if m is None or m == "not serving"]
            status(f"cluster {self.spec.name}: waiting for ZooKeeper ({', '.join(waiting)})")
            if time.monotonic() > deadline:
                raise self._fail("ZooKeeper did not start serving in time", waiting[0])
            time.sleep(0.5)

    def _wait_brokers(self, deadline: float, status: Callable[[str], None]) -> None:
        admin = self.admin(timeout=2.0)
        want = {self.broker_id(b) for b in self.brokers}
        while True:
            try:
                md = admin.metadata()
                live, controller = set(md.brokers), md.controller
            except AdminError:
                live, controller = set(), -1
            if live == want and controller >= 0:
                return
            self._check_running(self.nodes)
            missing = sorted(want - live)
            status(f"cluster {self.spec.name}: {len(live)}/{len(want)} brokers registered")
            if time.monotonic() > deadline:
                node = self.node_of_broker(missing[0]) if missing else None
                raise self._fail(f"brokers {missing} did not register in time", node)
            time.sleep(0.5)

    def _wait_probe_topic(self, deadline: float, status: Callable[[str], None]) -> None:
        status(f"cluster {self.spec.name}: waiting for a full ISR")
        admin = self.admin()
        ids = [self.broker_id(b) for b in self.brokers]
        rf = min(3, len(ids))
        try:
            admin.create_topic(PROBE_TOPIC, [ids[:rf]])
            admin.wait_full_isr(PROBE_TOPIC, timeout=max(1.0, deadline - time.monotonic()))
        except AdminError as err:
            raise self._fail(f"cluster did not become ready: {err}", None) from err
        replicas = [self.node_of_broker(i) for i in ids[:rf]]
        while missing := [n for n in replicas if not self.has_log(n, PROBE_TOPIC, 0)]:
            if time.monotonic() > deadline:
                raise self._fail(
                    f"{missing[0]} never created its replica of the probe topic", missing[0]
                )
            time.sleep(0.2)

    def down(self) -> int:
        """Removes the cluster's containers and network; returns how many containers
        were removed. Safe to call when nothing is there."""
        containers = self._containers()
        for c in containers:
            with contextlib.suppress(NotFound):
                c.remove(force=True, v=True)
        for net in self._client.networks.list(
            filters={"label": f"{CLUSTER_LABEL}={self.spec.name}"}
        ):
            with contextlib.suppress(NotFound):
                net.remove()
        self._nodes = {}
        self._admin = None
        return len(containers)

    # ---- node operations ---------------------------------------------------------------

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        """Runs cmd inside node; returns its exit code and combined output."""
        result = self._container(node).exec_run(cmd)
        output: bytes = result.output or b""
        return int(result.exit_code), output.decode(errors="replace")

    def kill(self, node: str) -> None:
        """Kills node's process with SIGKILL: no controlled shutdown."""
        try:
            self._container(node).kill(signal="SIGKILL")
        except APIError as err:
            if "is not running" not in str(err):
                raise

    def start(self, node: str) -> None:
        """Starts node again (after a kill), keeping its data and address."""
        self._container(node).start()

    def restart(self, node: str, timeout: int = 10) -> None:
        """Stops node gracefully (SIGTERM, then SIGKILL after timeout s) and starts it."""
        self._container(node).restart(timeout=timeout)

    def pause(self, node: str) -> None:
        """Freezes every process of node."""
        self._container(node).pause()

    def resume(self, node: str) -> None:
        """Thaws a paused node."""
        self._container(node).unpause()

    def has_log(self, node: str, topic: str, partition: int) -> bool:
        """Returns whether broker node has created its log for topic-partition. A new
        topic reports a full ISR before its followers have, and a follower frozen in
        between may never take the partition up again (see test_cluster)."""
        code, _ = self.exec(node, ["test", "-d", f"/var/lib/kafka/data/{topic}-{partition}"])
        return code == 0

    def state(self, node: str) -> str:
        """Returns node's container state: running, paused, exited, ..."""
        container = self._container(node)
        container.reload()
        return str(container.status)

    def log_tail(self, node: str, lines: int = 30) -> str:
        """Returns the last lines node printed."""
        try:
            out: bytes = self._container(node).logs(tail=lines)
        except (NotFound, ClusterError):
            return "(no container)"
        return out.decode(errors="replace").rstrip()

    def copy_logs(self, dest: Path) -> None:
        """Copies every node's log folder into dest/<node>/."""
        for name in self.nodes:
            target = dest / name
            target.mkdir(parents=True, exist_ok=True)
            try:
                stream, _ = self._container(name).get_archive("/var/log/kafka")
            except (NotFound, APIError, ClusterError):
                continue
            data = b"".join(stream)
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(target, filter="data")
            (target / "docker.log").write_text(self.log_tail(name, lines=100000) + "\n")

    def describe(self) -> dict[str, Any]:
        """Returns the JSON-ready status: brokers (alive or not), controller, ZooKeeper
        servers and each topic's partitions with leader and ISR."""
        live: set[int] = set()
        controller = -1
        topics: dict[str, list[dict[str, Any]]] = {}
        try:
            md = self.admin(timeout=3.0).metadata()
            live, controller = set(md.brokers), md.controller
            topics = {
                name: [
                    {"partition": p.partition, "leader": p.leader, "isr": list(p.isr)}
                    for p in parts
                ]
                for name, parts in md.topics.items()
            }
        except AdminError:
            pass
        brokers = [
            {
                "id": self.broker_id(b),
                "node": b,
                "address": f"{self.ip(b)}:9092",
                "alive": self.broker_id(b) in live,
            }
            for b in self.brokers
        ]
        zookeeper = [
            {
                "id": self.node(z).id,
                "node": z,
                "address": f"{self.ip(z)}:2181",
                "mode": zookeeper_mode(self.ip(z)),
            }
            for z in self.zookeepers
        ]
        return {
            "brokers": brokers,
            "controller": controller,
            "zookeeper": zookeeper,
            "topics": topics,
        }
