"""A Kafka cluster (brokers with ZooKeeper, or with KRaft controllers) as Docker
containers on a private bridge network with fixed addresses, driven through the
docker SDK.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import shlex
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container

from harness import signals
from harness.cluster import faultfs, node_disk, readiness, resources
from harness.cluster.admin import Admin
from harness.cluster.config import ZOOKEEPER_SESSION_TIMEOUT_S
from harness.cluster.engine import docker_client
from harness.cluster.errors import ClusterError, ClusterExists, ClusterRefused
from harness.cluster.faultproxy import ProxyControl
from harness.cluster.images import node_image
from harness.cluster.labels import (
    CHECKOUT,
    CHECKOUT_LABEL,
    CLUSTER_LABEL,
    FAULTFS_LABEL,
    FAULTPROXY_LABEL,
    HARNESS_LABEL,
    METADATA_LABEL,
    NODE_LABEL,
    VERSION_LABEL,
)
from harness.cluster.layout import (
    BROKER_ROLES,
    CONTROLLER_ROLES,
    ROLES,
    ClusterSpec,
    Node,
    Role,
    plan_nodes,
)
from harness.cluster.membership import MembershipTools
from harness.cluster.network import create_network
from harness.cluster.node_setup import (
    CLOCK_FILE,
    DATA_DIRS,
    new_cluster_id,
    node_command,
    node_env,
    node_files,
)

_SERVER_LOG = "/var/log/kafka/server.log"
STOP_TIMEOUT_S = 30
"""How long a stopped node may take to shut down before it is killed."""
FREEZE_ATTEMPTS = 3
"""How often pause asks runc to freeze a node before it gives up."""
DOWN_ATTEMPTS, DOWN_RETRY_S = 5, 0.2
"""How often down lists and removes the cluster's containers, and the wait between."""

__all__ = [
    "ClusterError",
    "ClusterExists",
    "ClusterRefused",
    "ClusterSpec",
    "DockerCluster",
    "cluster_names",
]


def tar_files(files: dict[str, str]) -> bytes:
    """Takes path -> text. Returns a tar archive holding them, for put_archive at /."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def cluster_names(client: docker.DockerClient, checkout: str | None = None) -> list[str]:
    """Returns the names of every cluster the harness made (from checkout, if given)
    that still has a container or a network."""
    label = HARNESS_LABEL if checkout is None else f"{CHECKOUT_LABEL}={checkout}"
    # Sparse: the listing's own labels, with no inspection of each container, which
    # raised NotFound when another cluster's container was removed meanwhile.
    names = {
        (c.attrs.get("Labels") or {}).get(CLUSTER_LABEL, "")
        for c in client.containers.list(all=True, filters={"label": label}, sparse=True)
    }
    names |= {
        n.attrs["Labels"].get(CLUSTER_LABEL, "")
        for n in client.networks.list(filters={"label": label})
    }
    return sorted(n for n in names if n)


class DockerCluster(MembershipTools, ProxyControl):
    """A cluster named spec.name: containers {name}-n1.., {name}-zk1.., network {name}-net
    (its queries are ClusterQueries', which MembershipTools extends)."""

    def __init__(self, spec: ClusterSpec, client: docker.DockerClient | None = None) -> None:
        self.spec = spec
        self._client = client or docker_client()
        self._nodes: dict[str, Node] = {}
        self._crashed_at: dict[str, float] = {}
        """When each node was last killed or cut off its power (time.monotonic())."""
        self._stopped: set[str] = set()
        """The faultfs nodes paused by SIGSTOP (faultfs.signal_jvm): running to Docker."""
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
        labels = {
            HARNESS_LABEL: "1",
            CLUSTER_LABEL: self.spec.name,
            CHECKOUT_LABEL: CHECKOUT,
            VERSION_LABEL: self.spec.kafka_version,
            METADATA_LABEL: self.spec.metadata,
            FAULTFS_LABEL: "1" if self.spec.faultfs else "0",
            FAULTPROXY_LABEL: "1" if self.spec.faultproxy else "0",
        }
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

    def _networks(self) -> list[docker.models.networks.Network]:
        found: list[docker.models.networks.Network] = self._client.networks.list(
            filters={"label": f"{CLUSTER_LABEL}={self.spec.name}"}
        )
        return found

    def attach(self) -> bool:
        """Reads the nodes, Kafka version and metadata mode of an existing cluster of this
        name; returns False if none."""
        self._nodes = {}
        for c in self._containers():
            lab = c.labels
            role = next((r for r in ROLES if r == lab["kafka-harness.role"]), None)
            if role is None:
                raise ClusterError(f"{c.name}: unknown role {lab['kafka-harness.role']!r}")
            node = Node(
                lab[NODE_LABEL], role, int(lab["kafka-harness.id"]), lab["kafka-harness.address"]
            )
            self._nodes[node.name] = node
            # Clusters made before these labels existed were 3.9.1 on ZooKeeper.
            self.spec = dataclasses.replace(
                self.spec,
                kafka_version=lab.get(VERSION_LABEL, self.spec.kafka_version),
                metadata="kraft" if lab.get(METADATA_LABEL) == "kraft" else "zookeeper",
                kraft_roles="combined" if role == "combined" else self.spec.kraft_roles,
                faultfs=lab.get(FAULTFS_LABEL) == "1",
                faultproxy=lab.get(FAULTPROXY_LABEL) == "1",
            )
        return bool(self._nodes)

    def _container(self, node: str) -> Container:
        try:
            container: Container = self._client.containers.get(self.container_name(node))
        except NotFound:
            raise ClusterError(f"node {node} of cluster {self.spec.name} does not exist") from None
        return container

    def _named(self, roles: tuple[Role, ...]) -> list[str]:
        return [n.name for n in sorted(self._nodes.values(), key=lambda n: n.id) if n.role in roles]

    @property
    def nodes(self) -> list[str]:
        """Returns every node's name, brokers first."""
        return self.brokers + self._named(("zookeeper", "controller"))

    @property
    def brokers(self) -> list[str]:
        """Returns the broker nodes' names in id order."""
        return self._named(BROKER_ROLES)

    @property
    def zookeepers(self) -> list[str]:
        """Returns the ZooKeeper nodes' names in id order."""
        return self._named(("zookeeper",))

    @property
    def controllers(self) -> list[str]:
        """Returns the KRaft quorum's voters in id order (none on ZooKeeper)."""
        return self._named(CONTROLLER_ROLES)

    def node(self, name: str) -> Node:
        """Returns the Node called name."""
        try:
            return self._nodes[name]
        except KeyError:
            raise ClusterError(f"no node {name!r} in cluster {self.spec.name}") from None

    def ip(self, node: str) -> str:
        """Returns node's fixed address on the cluster network."""
        return self.node(node).address

    @property
    def proxied(self) -> bool:
        """Returns whether every broker is reached through faultproxy (--faultproxy)."""
        return self.spec.faultproxy

    def broker_id(self, node: str) -> int:
        """Returns the Kafka node id of a broker or KRaft controller node."""
        return self.node(node).id

    def node_of_broker(self, broker_id: int) -> str:
        """Returns the node name of a Kafka node id (a broker's or a KRaft controller's)."""
        for n in self._nodes.values():
            if n.id == broker_id and n.role != "zookeeper":
                return n.name
        return f"n{broker_id}"

    # ---- lifecycle ---------------------------------------------------------------------

    def _create_container(
        self, node: Node, image: str, machine: resources.Machine, cluster_id: str
    ) -> None:
        api = self._client.api
        # A node on faultfs starts as root with /dev/fuse, to mount its layer.
        layered = self.spec.faultfs
        host_config = api.create_host_config(
            cap_add=["NET_ADMIN", *(faultfs.CAPABILITIES if layered else [])],
            devices=faultfs.DEVICES if layered else None,
            init=True,
            **resources.host_limits(node.role, machine),
        )
        networking = api.create_networking_config(
            {
                self.network_name: api.create_endpoint_config(
                    ipv4_address=node.address, aliases=[node.name]
                )
            }
        )
        try:
            created = api.create_container(
                image,
                command=node_command(self.spec, node),
                name=self.container_name(node.name),
                hostname=node.name,
                labels=self._labels(node),
                environment=node_env(self.spec, node, cluster_id, list(self._nodes.values())),
                user=faultfs.USER if layered else None,
                host_config=host_config,
                networking_config=networking,
            )
        except ImageNotFound:
            raise ClusterError(
                f"no node image {image}: `harness cluster image` builds it"
            ) from None
        except APIError as err:
            raise ClusterError(f"docker refused container {node.name}: {err}") from err
        files = node_files(self.spec, node, list(self._nodes.values()))
        api.put_archive(created["Id"], "/", tar_files(files))

    def exists(self) -> int:
        """Returns how many containers and networks a cluster of this name has now."""
        return len(self._containers()) + len(self._networks())

    def up(
        self,
        status: Callable[[str], None] = lambda _: None,
        timeout: float = 120.0,
        replace: bool = False,
    ) -> None:
        """Creates and starts the cluster, then waits until every broker is registered and
        a probe topic has a full ISR.

        Raises ClusterRefused, having made nothing, when the cluster does not fit the
        machine, or when a cluster of this name exists and replace is False (with
        replace, that cluster is removed first). Raises ClusterError (with the failing
        node's log tail) when a node fails or timeout seconds pass. On any failure or
        interrupt, everything made here is removed again before the error goes on.
        """
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout}")
        deadline = readiness.Deadline.after(timeout)
        machine = resources.engine_machine(self._client)
        problem = resources.fit_problem(self.spec, machine)
        if problem is not None:
            raise ClusterRefused(f"cluster {self.spec.name} does not fit: {problem}")
        if self.exists():
            if not replace:
                raise ClusterExists(
                    f"cluster {self.spec.name} already exists; `cluster down --name "
                    f"{self.spec.name}` removes it, `cluster up --replace` replaces it"
                )
            status(f"cluster {self.spec.name}: removing the existing cluster")
            self.down()
        with signals.undone_on_failure(self.down):
            self._start(deadline, machine, status)

    def _start(
        self,
        deadline: readiness.Deadline,
        machine: resources.Machine,
        status: Callable[[str], None],
    ) -> None:
        def in_time(doing: str) -> None:
            if deadline.passed():
                raise ClusterError(deadline.missed(self.spec.name, doing))

        image = node_image(self.spec.kafka_version)
        subnet = create_network(self._client, self.network_name, self._labels())
        self._nodes = {n.name: n for n in plan_nodes(self.spec, subnet)}
        cluster_id = new_cluster_id()
        for i, name in enumerate(self.nodes, start=1):
            in_time(f"created {i - 1} of {len(self._nodes)} containers")
            status(f"cluster {self.spec.name}: creating {name} ({i} of {len(self._nodes)})")
            self._create_container(self.node(name), image, machine, cluster_id)
        # The metadata store first: ZooKeeper must serve before brokers start (a broker
        # gives up on it); KRaft brokers wait for their quorum themselves, so they start
        # with the controllers, each node formatting its storage meanwhile.
        for name in self._named(("zookeeper", "controller")):
            in_time(f"starting {name}")
            self._container(name).start()
        if self.zookeepers:
            readiness.wait_zookeeper(self, deadline, status)
        for i, name in enumerate(self.brokers, start=1):
            in_time(f"started {i - 1} of {len(self.brokers)} brokers")
            status(f"cluster {self.spec.name}: starting {name}")
            self._container(name).start()
        if self.metadata == "kraft":
            readiness.wait_quorum(self, deadline, status)
        readiness.wait_brokers(self, deadline, status)
        readiness.wait_probe_topic(self, deadline, status)

    def down(self) -> int:
        """Removes the cluster's containers and network; returns how many containers
        were removed. Safe to call when nothing is there.

        Lists the containers again until a listing finds none (DOWN_ATTEMPTS at most): an
        `up` interrupted while the engine was still creating or starting a node leaves
        it to appear after the first listing, or refuses its removal while it starts
        (409), and a signal test once found such a node left behind."""
        removed = 0
        for attempt in range(1, DOWN_ATTEMPTS + 1):
            containers = self._containers()
            if not containers:
                break
            for c in containers:
                try:
                    c.remove(force=True, v=True)
                    removed += 1
                except NotFound:
                    pass
                except APIError:
                    if attempt == DOWN_ATTEMPTS:
                        raise
            time.sleep(DOWN_RETRY_S)
        for net in self._networks():
            with contextlib.suppress(NotFound):
                net.remove()
        self._nodes = {}
        self._admin = None
        return removed

    # ---- node operations ---------------------------------------------------------------

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        """Runs cmd inside node as root (the nodes' JVMs run unprivileged; iptables
        needs root); returns its exit code and combined output."""
        result = self._container(node).exec_run(cmd, user="root")
        output: bytes = result.output or b""
        return int(result.exit_code), output.decode(errors="replace")

    def kill(self, node: str) -> None:
        """Kills node's process with SIGKILL: no controlled shutdown. On faultfs the
        layer outlives the JVM, as the OS outlives a crashed process, and writes back
        what it held before the node stops."""
        if self.spec.faultfs:
            faultfs.end(self._container(node), faultfs.CRASH_SIGNAL)
        self._kill_container(node)

    def power_off(self, node: str) -> dict[str, Any]:
        """Cuts node's power: its processes die at once and every write since each
        file's last fsync is lost (faultfs's cut), and the container stops. Returns
        what the layer lost, or {"error": ...} when it could not say: then a SIGKILL
        cuts the power, and what the layer held dies with it."""
        if not self.spec.faultfs:
            raise ClusterError(
                f"cluster {self.spec.name} has no power-loss layer: make it with --faultfs"
            )
        lost = faultfs.cut(self._container(node))
        self._kill_container(node)
        return lost

    def set_clock_offset(self, node: str, seconds: int) -> None:
        """Sets node's wall clock, as its JVM reads it (libfaketime), `seconds` from the
        true time; 0 puts it right. libfaketime reads the offset again within about two
        seconds: it caches it for FAKETIME_CACHE_DURATION=1 whole seconds of the true clock."""
        if not self.spec.faketime:
            raise ClusterError(f"cluster {self.spec.name} has no fake clocks (no clock fault)")
        code, out = self.exec(node, ["sh", "-c", f"echo {seconds:+d} > {CLOCK_FILE}"])
        if code != 0:
            raise ClusterError(f"{node}: its clock could not be set: {out.strip()}")

    def _kill_container(self, node: str) -> None:
        try:
            self._container(node).kill(signal="SIGKILL")
        except APIError as err:
            if "is not running" not in str(err):
                raise
        self._crashed_at[node] = time.monotonic()
        self._stopped.discard(node)

    def start(self, node: str) -> None:
        """Starts node again (after a kill), keeping its data and address. A ZooKeeper
        broker that crashed less than a session timeout ago is started once its old
        session has expired: before, its registration is still there and Kafka exits
        at start-up with NodeExists, so the node would stay down for the rest of a run."""
        self._await_session_expiry(node)
        self._container(node).start()

    def stop(self, node: str) -> None:
        """Stops node as an operator would (SIGTERM: a controlled shutdown, and on faultfs
        everything written back), SIGKILL after STOP_TIMEOUT_S."""
        if node in self._stopped:  # a stopped JVM would only take SIGTERM once continued
            self.resume(node)
        self._container(node).stop(timeout=STOP_TIMEOUT_S)

    def read_file(self, node: str, path: str) -> bytes:
        """Returns a file of node's disk, running or stopped (path as its processes see it)."""
        return node_disk.read_file(self._container(node), self._disk_path(node, path))

    def read_tree(self, node: str, path: str) -> dict[str, bytes]:
        """Returns every file under a directory of node's disk, running or stopped, by its
        path relative to the directory's parent."""
        return node_disk.read_tree(self._container(node), self._disk_path(node, path))

    def write_file(self, node: str, path: str, data: bytes) -> None:
        """Replaces a file of a stopped node's disk, keeping its owner and mode."""
        node_disk.write_file(self._container(node), self._disk_path(node, path), data)

    def _disk_path(self, node: str, path: str) -> str:
        layered = [DATA_DIRS[self.node(node).role]] if self.spec.faultfs else []
        return node_disk.disk_path(path, layered)

    def _await_session_expiry(self, node: str) -> None:
        crashed = self._crashed_at.pop(node, None)
        if crashed is None or self.spec.metadata != "zookeeper" or node not in self.brokers:
            return
        # ZooKeeper expires sessions on its tick (500 ms here: compose/zoo.cfg.tmpl).
        expired = crashed + ZOOKEEPER_SESSION_TIMEOUT_S + 1.0
        time.sleep(max(0.0, expired - time.monotonic()))

    def restart(self, node: str, timeout: int = 10) -> None:
        """Stops node gracefully (SIGTERM, then SIGKILL after timeout s) and starts it."""
        self._container(node).restart(timeout=timeout)

    def pause(self, node: str) -> None:
        """Freezes every process of node: the cgroup freezer, or on faultfs SIGSTOP to the
        JVM beneath the layer (faultfs.signal_jvm says why)."""
        if not self.spec.faultfs:
            self._freeze(node)
            return
        problem = faultfs.signal_jvm(self._container(node), "STOP")
        if problem is not None:
            raise ClusterError(f"{node}: {problem}")
        self._stopped.add(node)

    def _freeze(self, node: str) -> None:
        """Freezes node's cgroup, asking again when runc could not: a freeze races with a
        process that forks or waits in the kernel at that moment ("unable to freeze"),
        and runc thaws what it froze before it reports the failure, so a second attempt
        starts from a running node. Seen once in a parallel make test."""
        for attempt in range(1, FREEZE_ATTEMPTS + 1):
            try:
                self._container(node).pause()
                return
            except APIError as err:
                if "unable to freeze" not in str(err) or attempt == FREEZE_ATTEMPTS:
                    raise
                time.sleep(0.2 * attempt)

    def resume(self, node: str) -> None:
        """Thaws a paused node."""
        if node not in self._stopped:
            self._container(node).unpause()
            return
        problem = faultfs.signal_jvm(self._container(node), "CONT")
        if problem is not None:
            raise ClusterError(f"{node}: {problem}")
        self._stopped.discard(node)

    def has_log(self, node: str, topic: str, partition: int) -> bool:
        """Returns whether broker node has created its log for topic-partition. A new
        topic reports a full ISR before its followers have, and a follower frozen in
        between may never take the partition up again (see test_cluster)."""
        code, _ = self.exec(node, ["test", "-d", f"/var/lib/kafka/data/{topic}-{partition}"])
        return code == 0

    def server_log(self, node: str, pattern: str, lines: int = 50) -> list[str]:
        """Returns the last lines of node's server log matching pattern (grep -E)."""
        script = f"grep -hE {shlex.quote(pattern)} {_SERVER_LOG} | tail -n {int(lines)}"
        _, out = self.exec(node, ["sh", "-c", script])
        return out.splitlines()

    def node_states(self) -> dict[str, str]:
        """Returns every node's container state (running, paused, exited, ...) in one
        query of the engine."""
        states = {c.labels[NODE_LABEL]: str(c.status) for c in self._containers()}
        return {n: self._paused_by_signal(n, state) for n, state in states.items()}

    def state(self, node: str) -> str:
        """Returns node's container state: running, paused, exited, ..."""
        container = self._container(node)
        container.reload()
        return self._paused_by_signal(node, str(container.status))

    def _paused_by_signal(self, node: str, state: str) -> str:
        if node in self._stopped and state == "running":
            return "paused"
        self._stopped.discard(node)  # it stopped or was killed since: no longer paused
        return state

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
