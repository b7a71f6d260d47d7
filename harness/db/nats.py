"""NATS JetStream as a Database: the servers in Docker (harness/cluster/nats/), seen the
way the nemeses and the runner ask a cluster: every server is a "broker" n<i> with id i,
a stream is a topic of one partition whose leader and in-sync replicas come from /jsz
(the leader's own view: its current replicas), the meta group's leader is the "active
controller", and a probe of a cut reaches a server's client port.

Leader-aimed faults therefore isolate, kill or pause the stream's Raft leader, and the
controller-aimed ones the meta leader. Jepsen's NATS db (jepsen-io/nats
src/jepsen/nats/db.clj) kills and pauses nats-server the same way; its nemeses pick
nodes at random, not by leadership.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import re
import tarfile
import time
from importlib import metadata
from typing import Any

import docker
import nats

from harness.cluster.admin import AdminError
from harness.cluster.docker_cluster import tar_files
from harness.cluster.nats import (
    MonitorError,
    NatsCluster,
    NatsSpec,
    Server,
    agreed_leader,
    blocks,
    ensure_nats_image,
    members,
    replica_states,
    server_config,
    split_brain,
    stream_config,
)
from harness.cluster.nats.config import (
    CLIENT_PORT,
    CONFIG_PATH,
    SERVER_USER,
    STORE_DIR,
    client_urls,
    next_server_name,
)
from harness.progress import StatusLine
from nemesis.cluster import PartitionState
from workloads.nats_kv import bucket_stream
from workloads.nats_loop import until_placed

STREAM_TIMEOUT_S = 10.0
AGREEMENT_S = 20.0
"""How long the replicas may take to agree after the final drains before a difference
is called a split brain (a follower one append behind catches up in milliseconds)."""
POLL_S = 0.25


class NatsDb(NatsCluster):
    """NATS servers in Docker, answering the questions a Kafka cluster answers."""

    def __init__(self, spec: NatsSpec, client: docker.DockerClient) -> None:
        super().__init__(spec, client)
        self._engine = client

    @property
    def system(self) -> str:
        """Returns "nats"."""
        return "nats"

    # ---- the run's steps ---------------------------------------------------------------

    def set_up(self, line: StatusLine, timeout: float) -> None:
        """Builds nats-server and its image if needed, removes a cluster of this name and
        starts a fresh one (NatsCluster.up waits for a meta leader all servers agree on)."""
        ensure_nats_image(self._engine, line.update, self.spec.version)
        if self.attach():
            line.say(f"replacing the running cluster {self.spec.name}")
            self.down()
        self.up(status=line.update, timeout=timeout)

    def tear_down(self) -> int:
        """Removes the cluster (NatsCluster.down)."""
        return self.down()

    def admin(self) -> StreamAdmin:
        """Returns what makes the workload's stream."""
        return StreamAdmin(self)

    def facts(self) -> dict[str, Any]:
        """Returns the release, the sync profile and what the servers say of it (whether
        one fsyncs every write, its interval), and the client library's version."""
        facts: dict[str, Any] = {
            "db": "nats",
            "nats_version": self.spec.version,
            "sync": self.spec.sync,
            "servers": self.spec.servers,
            "faultfs": self.spec.faultfs,
            "nats_py": metadata.version("nats-py"),
        }
        views = self.jetstream_views()
        if views:
            view = views[min(views)]
            facts |= {"sync_always": view.sync_always, "sync_interval_ns": view.sync_interval_ns}
        return facts

    def summary(self, facts: dict[str, Any], seconds: float) -> str:
        """Takes its facts and the seconds it took to come up. Returns run.log's line."""
        return (
            f"cluster {self.spec.name} up in {seconds:.1f} s: NATS {facts['nats_version']}, "
            f"{facts['servers']} servers, sync {facts['sync']}"
            f"{', faultfs' if facts.get('faultfs') else ''}, servers {self.bootstrap_servers}"
        )

    # ---- the nodes, as the nemeses name them -------------------------------------------

    @property
    def brokers(self) -> list[str]:
        """Returns every server: each can hold a stream's replica."""
        return self.nodes

    @property
    def zookeepers(self) -> list[str]:
        """Returns none: JetStream keeps its metadata in its own Raft group."""
        return []

    @property
    def controllers(self) -> list[str]:
        """Returns none: every server is a voter of the meta group."""
        return []

    @property
    def metadata(self) -> str:
        """Returns "nats": faults that need ZooKeeper or KRaft do not apply."""
        return "nats"

    @property
    def bootstrap_servers(self) -> str:
        """Returns the comma list of the servers' client URLs, for nats-py, in node order
        (n1 first: the queue workload names its per-server drains by place)."""
        return ",".join(self.client_urls)

    def broker_id(self, node: str) -> int:
        """Returns the number of server n<i>: i."""
        return int(node.removeprefix("n"))

    def node_of_broker(self, broker_id: int) -> str:
        """Returns the node name of server number broker_id."""
        return f"n{broker_id}"

    def service_port(self, node: str) -> int:
        """Returns the port a probe of a cut tries: the server's client port."""
        return CLIENT_PORT

    # ---- who leads what ----------------------------------------------------------------

    def partitions(self, topic: str) -> list[PartitionState]:
        """Returns the stream named topic (or the stream of the KV bucket named topic) as
        one partition: the leader a majority of the
        answering servers that hold a replica name (-1: none), the replicas the leader
        lists with itself, and as in-sync those it calls current. Raises AdminError when
        no answering server holds the stream."""
        views = self.jetstream_views()
        held = {node: v.streams[topic] for node, v in views.items() if topic in v.streams}
        if not held:  # the kv workload's topic is a bucket: its stream is KV_<bucket>
            stream = bucket_stream(topic)
            held = {node: v.streams[stream] for node, v in views.items() if stream in v.streams}
        if not held:
            raise AdminError(f"no answering server holds stream {topic} or bucket {topic}")
        leader = agreed_leader(s.leader for s in held.values())
        own = held.get(leader) if leader is not None else None
        if own is None:
            seen = next(iter(held.values()))
            names = sorted({*held, *(p.name for p in seen.replicas)}, key=self.broker_id)
            ids = tuple(self.broker_id(n) for n in names)
            return [PartitionState(0, -1, ids, ())]
        assert leader is not None
        replicas = [leader, *(p.name for p in own.replicas)]
        in_sync = [leader, *(p.name for p in own.replicas if p.current and not p.offline)]
        return [
            PartitionState(
                0,
                self.broker_id(leader),
                tuple(self.broker_id(n) for n in replicas),
                tuple(self.broker_id(n) for n in in_sync),
            )
        ]

    def committed_partitions(self, topic: str) -> list[PartitionState]:
        """Returns partitions(topic): the leader's own view is what its Raft group
        committed to; a deposed leader cut off is outvoted by the majority's claims."""
        return self.partitions(topic)

    def replica_agreement(self, topic: str, bound_s: float = AGREEMENT_S) -> dict[str, Any]:
        """Asks every server, until its replicas of the stream (or the bucket's) agree or
        bound_s passes, what it holds and whom it names leader. Returns {"states": node ->
        its replica_states entry, "split_brain": what still differed (split_brain; [] when
        they agreed, or when no server holds it: a stream lost everywhere is no split
        brain), "seconds": how long it asked}."""
        began = time.monotonic()
        while True:
            views = self.jetstream_views().values()
            states = replica_states(views, topic) or replica_states(views, bucket_stream(topic))
            found = split_brain(states)
            waited = time.monotonic() - began
            if not found or waited >= bound_s:
                return {"states": states, "split_brain": found, "seconds": round(waited, 1)}
            time.sleep(1.0)

    def stream_copies(self, topic: str) -> dict[str, Any]:
        """Reads every server's copy of the stream (or the bucket's) from its own disk
        (harness/cluster/nats/blocks.py says why no client read could). Returns {"stream":
        its name, "copies": node -> sequence -> payload as text, "errors": node -> what
        could not be read}; a server that holds no block of it holds it empty."""
        for stream in (topic, bucket_stream(topic)):
            copies, errors = self._copies(stream)
            if any(copies.values()) or errors:
                return {"stream": stream, "copies": copies, "errors": errors}
        return {"stream": topic, "copies": copies, "errors": {}}

    def _copies(self, stream: str) -> tuple[dict[str, dict[int, str]], dict[str, str]]:
        copies: dict[str, dict[int, str]] = {}
        errors: dict[str, str] = {}
        for node in self.nodes:
            try:
                copy, problems = blocks.read_copy(functools.partial(self.exec, node), stream)
            except (ValueError, OSError) as err:  # told beside the others, never fatal
                errors[node] = str(err)
                continue
            copies[node] = {seq: data.decode(errors="replace") for seq, data in copy.items()}
            if problems:
                errors[node] = "; ".join(problems[:5])
        return copies, errors

    # ---- membership (nemesis/peer_removal.py) -----------------------------------------

    def server_name(self, node: str) -> str:
        """Returns the server_name node runs under, as its config says (n2, or n2-2 once
        it rejoined)."""
        stream, _ = self._engine.containers.get(self.container_name(node)).get_archive(CONFIG_PATH)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            text = member.read().decode() if member is not None else ""
        found = re.search(r"^server_name:\s*(\S+)", text, re.MULTILINE)
        if found is None:
            raise AdminError(f"{node}: no server_name in {CONFIG_PATH}")
        return found.group(1)

    def wipe(self, node: str) -> dict[str, Any]:
        """Stops node's nats-server (SIGSTOP: it writes nothing more), deletes its
        JetStream store and kills it, as Jepsen's wipe! kills and deletes. Returns what
        the deletion said."""
        self.exec(node, ["pkill", "-STOP", "-u", SERVER_USER])
        code, said = self.exec(node, ["rm", "-rf", f"{STORE_DIR}/jetstream"])
        self.kill(node)
        return {"store": f"{STORE_DIR}/jetstream", "rm_exit": code, "said": said.strip()[-200:]}

    def remove_peer(self, node: str) -> dict[str, Any]:
        """Asks the meta leader, through the other servers, to remove node's server from
        the cluster; returns its answer (raises when none came)."""
        urls = client_urls([Server(n, self.ip(n)) for n in self.nodes if n != node])
        return members.remove_server(urls, self.server_name(node))

    def rejoin(self, node: str) -> str:
        """Gives the stopped node a new server_name (next_server_name) and starts it, as
        a new peer on whatever store it has; returns the new name."""
        name = next_server_name(self.server_name(node))
        servers = [Server(n, self.ip(n)) for n in self.nodes]
        renamed = Server(name, self.ip(node))
        conf = server_config(renamed, servers, self.spec.profile, self.spec.name)
        container = self._engine.containers.get(self.container_name(node))
        container.put_archive("/", tar_files({CONFIG_PATH: conf}))
        self.start(node)
        return name

    def membership(self, topic: str) -> dict[str, Any]:
        """Returns node -> what its /jsz says of the meta group and of the stream (or the
        bucket's), with server_names as NATS gives them, for every server answering."""
        addresses = {n: self.ip(n) for n in self.nodes}
        names = {n: self.server_name(n) for n in self.nodes}
        views = members.membership(addresses, names, topic)
        if not any(v["stream"] for v in views.values()):
            views = members.membership(addresses, names, bucket_stream(topic))
        return views

    def controller(self) -> int:
        """Returns the meta leader's number (-1 while there is none)."""
        leader = self.meta_leader()
        return -1 if leader is None else self.broker_id(leader)

    def active_controller(self) -> str | None:
        """Returns the meta group's leader a majority of the answering servers name."""
        return self.meta_leader()

    def group_coordinator(self, group: str) -> str:
        """Raises AdminError: JetStream has no consumer groups (the run refuses the
        group faults on NATS before it starts)."""
        raise AdminError("NATS JetStream has no consumer group coordinator")

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        """Returns that JetStream has no preferred leaders (isr-shrink is refused)."""
        return {0: "NATS JetStream has no preferred leaders"}

    def prefer_leader(self, topic: str, partition: int, broker: int) -> str:
        """Returns that JetStream has no preferred leaders."""
        return "NATS JetStream has no preferred leaders"


class StreamAdmin:
    """Makes a topic of one partition a file-backed stream of that many replicas (the
    shape kvstore.topic.TopicAdmin gives a Kafka topic), with subjects `<name>.>`."""

    def __init__(self, db: NatsDb) -> None:
        self._db = db

    def brokers(self) -> list[int]:
        """Returns every server's number."""
        return [self._db.broker_id(n) for n in self._db.nodes]

    def create_topic(
        self, name: str, assignment: list[list[int]], config: dict[str, str] | None = None
    ) -> None:
        """Creates stream name replicated on len(assignment[0]) servers, which JetStream
        places itself. Refuses more than one partition and any Kafka topic config, which
        a stream has no use for."""
        if len(assignment) != 1 or config:
            raise ValueError("a NATS stream is one partition, with no Kafka topic config")
        replicas = len(assignment[0])
        asyncio.run(self._add_stream(name, replicas))

    async def _add_stream(self, name: str, replicas: int) -> None:
        nc = await nats.connect(servers=self._db.client_urls, connect_timeout=2)
        try:
            js = nc.jetstream(timeout=STREAM_TIMEOUT_S)
            config = stream_config(name, [f"{name}.>"], replicas)
            await until_placed(lambda: js.add_stream(config))
        finally:
            with contextlib.suppress(Exception):
                await nc.close()

    def wait_full_isr(self, topic: str, timeout: float) -> list[PartitionState]:
        """Waits until the stream has a leader and every replica is current; returns it,
        or raises AdminError after timeout seconds."""
        deadline = time.monotonic() + timeout
        last: object = "no answer"
        while time.monotonic() < deadline:
            try:
                parts = self._db.partitions(topic)
            except (AdminError, MonitorError) as err:
                last = err
            else:
                last = parts
                p = parts[0]
                if p.leader >= 0 and set(p.isr) == set(p.replicas):
                    return parts
            time.sleep(POLL_S)
        raise AdminError(f"stream {topic} not whole within {timeout:g} s: {last}")
