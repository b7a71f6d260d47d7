"""A NATS JetStream cluster as Docker containers on a private bridge network with fixed
addresses, labelled like the Kafka clusters (so `cluster down`, `make clean` and
compose/check-no-leftovers.sh find it), made with the same Docker helpers.

The node operations mirror DockerCluster's and Jepsen's NATS db (jepsen-io/nats
src/jepsen/nats/db.clj: kill is SIGKILL of nats-server, pause stops it, start runs it
again on the data it left); here each container runs nats-server alone, so the
container's kill, pause and start are the server's.

With faultfs (NatsSpec.faultfs) the container starts as root and `faultfs run` puts the
power-loss layer under the JetStream store and runs nats-server beneath it, as the Kafka
nodes do (harness/cluster/faultfs.py): a kill is then a crash the OS outlives, a power
cut loses every write since each file's last fsync, and a pause stops nats-server alone
(the cgroup freezer cannot freeze a container whose FUSE daemon serves it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container

from harness import signals
from harness.cluster import faultfs, resources
from harness.cluster.docker_cluster import tar_files
from harness.cluster.engine import docker_client
from harness.cluster.errors import ClusterError, ClusterExists, ClusterRefused
from harness.cluster.labels import (
    CHECKOUT,
    CHECKOUT_LABEL,
    CLUSTER_LABEL,
    FAULTFS_LABEL,
    HARNESS_LABEL,
    NODE_LABEL,
)
from harness.cluster.nats import monitor
from harness.cluster.nats.config import (
    CONFIG_PATH,
    FAULTFS_EVENTS,
    SERVER_USER,
    STORE_DIR,
    NatsSpec,
    Server,
    client_urls,
    plan_servers,
    server_config,
)
from harness.cluster.nats.image import nats_image
from harness.cluster.nats.readiness import wait_ready
from harness.cluster.network import create_network
from harness.cluster.readiness import Deadline

SYSTEM_LABEL = "kafka-harness.system"
NATS_VERSION_LABEL = "kafka-harness.nats-version"
SYNC_LABEL = "kafka-harness.nats-sync"
ROLE_LABEL = "kafka-harness.role"
ADDRESS_LABEL = "kafka-harness.address"
MEMORY_MIB = 512
"""A server's memory ceiling; Go's collector is told to keep under GO_MEMORY_MIB."""
GO_MEMORY_MIB = 400
PIDS = 1024
SERVER_BINARY = "/usr/local/bin/nats-server"
LAYER_BINARY = "/usr/local/bin/faultfs"


class NatsCluster:
    """A cluster named spec.name: containers {name}-n1.., network {name}-net."""

    def __init__(self, spec: NatsSpec, client: docker.DockerClient | None = None) -> None:
        self.spec = spec
        self._client = client or docker_client()
        self._servers: dict[str, Server] = {}
        self._stopped: set[str] = set()
        """The faultfs nodes paused by SIGSTOP (faultfs.signal_jvm): running to Docker."""

    # ---- naming and lookup -------------------------------------------------------------

    @property
    def network_name(self) -> str:
        """Returns the name of the cluster's Docker network."""
        return f"{self.spec.name}-net"

    def container_name(self, node: str) -> str:
        """Returns the Docker container name of node."""
        return f"{self.spec.name}-{node}"

    def _labels(self, server: Server | None = None) -> dict[str, str]:
        labels = {
            HARNESS_LABEL: "1",
            CLUSTER_LABEL: self.spec.name,
            CHECKOUT_LABEL: CHECKOUT,
            SYSTEM_LABEL: "nats",
            NATS_VERSION_LABEL: self.spec.version,
            SYNC_LABEL: self.spec.sync,
            FAULTFS_LABEL: "1" if self.spec.faultfs else "0",
        }
        if server is not None:
            labels |= {NODE_LABEL: server.name, ROLE_LABEL: "nats", ADDRESS_LABEL: server.address}
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

    def _container(self, node: str) -> Container:
        try:
            container: Container = self._client.containers.get(self.container_name(node))
        except NotFound:
            raise ClusterError(f"node {node} of cluster {self.spec.name} does not exist") from None
        return container

    @property
    def nodes(self) -> list[str]:
        """Returns every server's node name, n1 first."""
        return list(self._servers)

    def ip(self, node: str) -> str:
        """Returns node's fixed address on the cluster network."""
        try:
            return self._servers[node].address
        except KeyError:
            raise ClusterError(f"no node {node!r} in cluster {self.spec.name}") from None

    @property
    def client_urls(self) -> list[str]:
        """Returns every server's client URL (nats://address:4222), for nats-py."""
        return client_urls(list(self._servers.values()))

    def attach(self) -> bool:
        """Reads the servers, release and sync profile of an existing NATS cluster of this
        name from its containers' labels; returns False if there is none."""
        found = [c for c in self._containers() if c.labels.get(SYSTEM_LABEL) == "nats"]
        servers = sorted(
            (Server(c.labels[NODE_LABEL], c.labels[ADDRESS_LABEL]) for c in found),
            key=lambda s: int(s.name[1:]),
        )
        self._servers = {s.name: s for s in servers}
        if found:
            labels = found[0].labels
            self.spec = dataclasses.replace(
                self.spec,
                servers=len(servers),
                version=labels[NATS_VERSION_LABEL],
                sync=labels[SYNC_LABEL],
                faultfs=labels.get(FAULTFS_LABEL) == "1",
            )
        return bool(found)

    # ---- lifecycle ---------------------------------------------------------------------

    def exists(self) -> int:
        """Returns how many containers and networks a cluster of this name has now."""
        return len(self._containers()) + len(self._networks())

    def up(self, status: Callable[[str], None] = lambda _: None, timeout: float = 60.0) -> None:
        """Creates and starts the servers, then waits until JetStream is on everywhere
        and the meta group has a leader every server agrees on (readiness.wait_ready).

        Raises ClusterRefused, having made nothing, when the servers' memory does not fit
        the machine or a cluster of this name exists; ClusterError (with the failing
        server's log tail) when a server stops or timeout seconds pass. On any failure or
        interrupt, everything made here is removed again before the error goes on.
        """
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout}")
        deadline = Deadline.after(timeout)
        machine = resources.engine_machine(self._client)
        need = self.spec.servers * MEMORY_MIB
        usable = machine.memory_mib - resources.CONTROL_NODE_RESERVE_MIB
        if need > usable:
            raise ClusterRefused(
                f"cluster {self.spec.name} does not fit: {self.spec.servers} NATS servers need "
                f"{need} MiB ({MEMORY_MIB} MiB each), this machine has {usable} MiB for nodes"
            )
        if self.exists():
            raise ClusterExists(f"cluster {self.spec.name} already exists")
        with signals.undone_on_failure(self.down):
            image = nats_image(self.spec.version)
            subnet = create_network(self._client, self.network_name, self._labels())
            servers = plan_servers(self.spec, subnet)
            self._servers = {s.name: s for s in servers}
            for server in servers:
                status(f"cluster {self.spec.name}: creating {server.name}")
                self._create_container(server, image, machine)
            for server in servers:
                self._container(server.name).start()
            wait_ready(self, deadline, status)

    def _create_container(self, server: Server, image: str, machine: resources.Machine) -> None:
        api = self._client.api
        layered = self.spec.faultfs
        host_config = api.create_host_config(
            cap_add=["NET_ADMIN", *(faultfs.CAPABILITIES if layered else [])],
            devices=faultfs.DEVICES if layered else None,
            init=True,
            mem_limit=MEMORY_MIB * resources.MIB,
            memswap_limit=MEMORY_MIB * resources.MIB,
            nano_cpus=resources.cpus_per_node(machine) * 10**9,
            pids_limit=PIDS,
        )
        networking = api.create_networking_config(
            {
                self.network_name: api.create_endpoint_config(
                    ipv4_address=server.address, aliases=[server.name]
                )
            }
        )
        try:
            created = api.create_container(
                image,
                name=self.container_name(server.name),
                hostname=server.name,
                labels=self._labels(server),
                environment={"GOMEMLIMIT": f"{GO_MEMORY_MIB}MiB"},
                entrypoint=self._entrypoint(),
                user=faultfs.USER if layered else None,
                host_config=host_config,
                networking_config=networking,
            )
        except ImageNotFound:
            raise ClusterError(f"no NATS image {image}: ensure_nats_image builds it") from None
        except APIError as err:
            raise ClusterError(f"docker refused container {server.name}: {err}") from err
        conf = server_config(
            server, list(self._servers.values()), self.spec.profile, self.spec.name
        )
        api.put_archive(created["Id"], "/", tar_files({CONFIG_PATH: conf}))

    def _entrypoint(self) -> list[str]:
        """Returns the container's command: nats-server, beneath faultfs when layered."""
        server = [SERVER_BINARY, "--config", CONFIG_PATH]
        if not self.spec.faultfs:
            return server
        layer = [LAYER_BINARY, "run", "-user", SERVER_USER, "-events", FAULTFS_EVENTS]
        return [*layer, "-mount", STORE_DIR, "--", *server]

    def down(self) -> int:
        """Removes the cluster's containers and network; returns how many containers
        were removed. Safe to call when nothing is there."""
        containers = self._containers()
        for c in containers:
            with contextlib.suppress(NotFound):
                c.remove(force=True, v=True)
        for net in self._networks():
            with contextlib.suppress(NotFound):
                net.remove()
        self._servers = {}
        return len(containers)

    # ---- node operations ---------------------------------------------------------------

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        """Runs cmd inside node as root (nats-server runs unprivileged; iptables needs
        root); returns its exit code and combined output."""
        result = self._container(node).exec_run(cmd, user="root")
        output: bytes = result.output or b""
        return int(result.exit_code), output.decode(errors="replace")

    def kill(self, node: str) -> None:
        """Kills node's nats-server with SIGKILL: no shutdown, no final fsync. On faultfs
        the layer outlives the server, as the OS outlives a crashed process, and writes
        back what it held before the node stops."""
        if self.spec.faultfs:
            faultfs.end(self._container(node), faultfs.CRASH_SIGNAL)
        self._kill_container(node)

    def power_off(self, node: str) -> dict[str, Any]:
        """Cuts node's power: nats-server dies at once and every write since each file's
        last fsync is lost (faultfs's cut), and the container stops. Returns what the
        layer lost, or {"error": ...} when it could not say: then a SIGKILL cuts the
        power, and what the layer held dies with it."""
        if not self.spec.faultfs:
            raise ClusterError(f"cluster {self.spec.name} has no power-loss layer (faultfs)")
        lost = faultfs.cut(self._container(node), FAULTFS_EVENTS)
        self._kill_container(node)
        return lost

    def _kill_container(self, node: str) -> None:
        try:
            self._container(node).kill(signal="SIGKILL")
        except APIError as err:
            if "is not running" not in str(err):
                raise
        self._stopped.discard(node)

    def start(self, node: str) -> None:
        """Starts node again (after a kill), on the data and address it had."""
        self._container(node).start()

    def pause(self, node: str) -> None:
        """Freezes node's nats-server: the cgroup freezer, or on faultfs SIGSTOP to the
        server beneath the layer (faultfs.signal_jvm says why)."""
        if not self.spec.faultfs:
            self._container(node).pause()
            return
        problem = faultfs.signal_jvm(self._container(node), "STOP", SERVER_USER)
        if problem is not None:
            raise ClusterError(f"{node}: {problem}")
        self._stopped.add(node)

    def resume(self, node: str) -> None:
        """Thaws a paused node."""
        if node not in self._stopped:
            self._container(node).unpause()
            return
        problem = faultfs.signal_jvm(self._container(node), "CONT", SERVER_USER)
        if problem is not None:
            raise ClusterError(f"{node}: {problem}")
        self._stopped.discard(node)

    def node_states(self) -> dict[str, str]:
        """Returns every node's container state (running, paused, exited, ...)."""
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
        """Returns the last lines node's nats-server printed (every start's, in order)."""
        try:
            out: bytes = self._container(node).logs(tail=lines)
        except (NotFound, ClusterError):
            return "(no container)"
        return out.decode(errors="replace").rstrip()

    def server_log(self, node: str, pattern: str, lines: int = 50) -> list[str]:
        """Returns the last lines of node's log matching a regular expression (grep -E)."""
        wanted = re.compile(pattern)
        log = self.log_tail(node, lines=100000).splitlines()
        return [line for line in log if wanted.search(line)][-lines:]

    def copy_logs(self, dest: Path) -> None:
        """Copies each node's log, config and JetStream store (a tar, as Jepsen's NATS db
        keeps data.tar.gz) into dest/<node>/; on faultfs the store as its disk holds it
        (the backing directory: no unsynced write) and the layer's events."""
        store = STORE_DIR + faultfs.BACKING_SUFFIX if self.spec.faultfs else STORE_DIR
        copied = [(CONFIG_PATH, None), (store, "data.tar")]
        if self.spec.faultfs:
            copied.append((FAULTFS_EVENTS, None))
        for name in self.nodes:
            target = dest / name
            target.mkdir(parents=True, exist_ok=True)
            (target / "nats.log").write_text(self.log_tail(name, lines=1000000) + "\n")
            for path, file in copied:
                try:
                    stream, _ = self._container(name).get_archive(path)
                except (NotFound, APIError, ClusterError):
                    continue
                data = b"".join(stream)
                if file is not None:
                    (target / file).write_bytes(data)
                    continue
                with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                    tar.extractall(target, filter="data")

    # ---- JetStream's own view ----------------------------------------------------------

    def jetstream_views(self) -> dict[str, monitor.JetStreamView]:
        """Returns node -> its /jsz view, for every node whose monitoring port answers."""
        views = {}
        for node in self.nodes:
            with contextlib.suppress(monitor.MonitorError):
                views[node] = monitor.jetstream(node, self.ip(node))
        return views

    def meta_leader(self) -> str | None:
        """Returns the meta group's leader that a majority of the answering servers
        name, None while there is none."""
        return monitor.agreed_leader(v.meta_leader for v in self.jetstream_views().values())

    def stream_leader(self, stream: str) -> str | None:
        """Returns the leader of stream that a majority of the answering servers that
        hold a replica name, None while there is none."""
        views = self.jetstream_views().values()
        return monitor.agreed_leader(v.streams[stream].leader for v in views if stream in v.streams)

    def replica_lag(self, stream: str) -> dict[str, int]:
        """Returns each replica of stream -> Raft entries behind its leader, as the leader
        reports it ({} while no answering server leads the stream)."""
        return monitor.stream_lag(self.jetstream_views().values(), stream)
