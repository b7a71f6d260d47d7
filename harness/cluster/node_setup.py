"""What one node's container is made with: the files copied in before its first start,
the entrypoint command and its environment, by role and metadata mode.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence

from harness.cluster import config
from harness.cluster.layout import BROKER_ROLES, CONTROLLER_ROLES, ClusterSpec, Node, Role
from harness.cluster.releases import RELEASES
from harness.cluster.resources import node_environment

DATA_DIRS: dict[Role, str] = {
    "kafka": "/var/lib/kafka/data",
    "controller": "/var/lib/kafka/data",
    "combined": "/var/lib/kafka/data",
    "zookeeper": "/var/lib/zookeeper",
}
"""Where each role keeps what it must not lose (log.dirs, which on KRaft holds the
metadata log too; ZooKeeper's dataDir, its snapshots and transaction log): the
directories a cluster made with faultfs puts the power-loss layer under."""


CLOCK_FILE = "/tmp/harness-clock"
"""The file whose offset ("+12", "-300": seconds) libfaketime adds to a node's wall clock,
in a cluster made with faketime (compose/entrypoint.sh)."""


def new_cluster_id() -> str:
    """Returns a fresh KRaft cluster id (a random UUID, base64url without padding, as
    `kafka-storage random-uuid` prints it). Like Kafka's Uuid.randomUuid it never starts
    with "-": `kafka-storage format -t -xyz` would read the id as an option (1 in 64)."""
    while True:
        found = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not found.startswith("-"):
            return found


def directory_id(cluster_id: str, node_id: int) -> str:
    """Returns the metadata directory id a controller of a dynamic quorum is formatted
    with: a Kafka Uuid (base64url of 16 bytes) drawn from the cluster id and the node id,
    so that every node's --initial-controllers names the same ids."""
    while True:
        raw = uuid.uuid5(uuid.NAMESPACE_OID, f"{cluster_id}/{node_id}").bytes
        found = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if not found.startswith("-"):
            return found
        cluster_id += "-"


def node_files(spec: ClusterSpec, node: Node, nodes: Sequence[Node]) -> dict[str, str]:
    """Takes the spec, one node and every node of the cluster. Returns path -> text of
    the configuration files the node starts with."""
    profile = config.PROFILES[spec.kafka_config]
    if node.role == "zookeeper":
        addresses = [n.address for n in nodes if n.role == "zookeeper"]
        return {
            "/etc/zookeeper/zoo.cfg": config.zoo_cfg(addresses),
            "/var/lib/zookeeper/myid": f"{node.id}\n",
        }
    if spec.metadata == "zookeeper":
        zookeepers = [n.address for n in nodes if n.role == "zookeeper"]
        props = config.server_properties(
            broker_id=node.id,
            address=node.address,
            zookeeper_connect=config.zookeeper_connect(zookeepers),
            brokers=spec.brokers,
            profile=profile,
            proxied=spec.faultproxy,
        )
    else:
        voters = [(n.id, n.address) for n in nodes if n.role in CONTROLLER_ROLES]
        props = config.kraft_properties(
            node_id=node.id,
            address=node.address,
            broker=node.role in BROKER_ROLES,
            controller=node.role in CONTROLLER_ROLES,
            quorum_voters=config.quorum_voters(voters),
            brokers=spec.brokers,
            profile=profile,
            share_groups=RELEASES[spec.kafka_version].share_workload,
            proxied=spec.faultproxy,
            dynamic_quorum=spec.dynamic_quorum,
        )
    return {"/etc/kafka/server.properties": props}


def node_command(spec: ClusterSpec, node: Node) -> list[str]:
    """Returns the entrypoint's arguments for node: its role's start command."""
    if node.role == "zookeeper":
        return ["zookeeper"]
    return ["kraft"] if spec.metadata == "kraft" else ["kafka"]


def node_env(
    spec: ClusterSpec, node: Node, cluster_id: str, nodes: Sequence[Node] = ()
) -> dict[str, str]:
    """Takes the spec, one node, the cluster id and every node of the cluster. Returns
    node's environment: its heap, on KRaft the cluster id and storage format arguments
    of the first start (a dynamic quorum's controllers: its voters, from nodes), with
    faultfs the directories to put it under, with faultproxy (brokers only) the proxy's
    arguments, with faketime the clock file."""
    env = node_environment(node.role)
    if spec.faketime:
        env["CLOCK_FILE"] = CLOCK_FILE
    if spec.faultfs:
        env["FAULTFS_DIRS"] = DATA_DIRS[node.role]
    if spec.faultproxy and node.role in BROKER_ROLES:
        env["FAULTPROXY_ARGS"] = config.proxy_arguments()
    if spec.metadata == "kraft":
        voters = None
        if spec.dynamic_quorum and node.role in CONTROLLER_ROLES:
            voters = config.initial_controllers(
                [
                    (c.id, c.address, directory_id(cluster_id, c.id))
                    for c in nodes
                    if c.role in CONTROLLER_ROLES
                ]
            )
        args = config.storage_format_args(
            config.PROFILES[spec.kafka_config], spec.kafka_version, voters
        )
        env |= {"KRAFT_CLUSTER_ID": cluster_id, "KRAFT_FORMAT_ARGS": " ".join(args)}
    return env
