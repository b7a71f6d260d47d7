"""A running cluster's state as plain data, and the problems that make it unhealthy.

Container states come from Docker and are current at once; what Kafka reports
(registered brokers, leaders, ISRs) lags a killed broker by its ZooKeeper session (or
its KRaft broker session), so a node counts as up only when both agree. On KRaft the
controller quorum is shown as its leader describes it: each voter's lag behind the
leader's log and the age of its last fetch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.cluster.admin import AdminError
from harness.cluster.quorum import FRESH_FETCH_MS, Quorum
from harness.cluster.zookeeper import zookeeper_mode

if TYPE_CHECKING:
    from harness.cluster.docker_cluster import DockerCluster

SERVING = ("standalone", "leader", "follower")


def describe(cluster: DockerCluster) -> dict[str, Any]:
    """Takes an attached cluster. Returns its JSON-ready status: brokers (container state,
    registered, alive), controller, ZooKeeper servers, each topic's partitions, and the
    problems (none when healthy)."""
    states = cluster.node_states()
    registered: set[int] = set()
    controller = -1
    topics: dict[str, list[dict[str, Any]]] = {}
    try:
        md = cluster.admin(timeout=3.0).metadata()
        registered, controller = set(md.brokers), md.controller
        topics = {
            name: [
                {
                    "partition": p.partition,
                    "leader": p.leader,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                }
                for p in parts
            ]
            for name, parts in md.topics.items()
        }
    except AdminError:
        pass
    brokers = []
    for b in cluster.brokers:
        state = states.get(b, "missing")
        broker_id = cluster.broker_id(b)
        brokers.append(
            {
                "id": broker_id,
                "node": b,
                "address": f"{cluster.ip(b)}:9092",
                "state": state,
                "registered": broker_id in registered,
                "alive": state == "running" and broker_id in registered,
            }
        )
    zookeeper = [
        {
            "id": cluster.node(z).id,
            "node": z,
            "address": f"{cluster.ip(z)}:2181",
            "state": states.get(z, "missing"),
            "mode": zookeeper_mode(cluster.ip(z)) if states.get(z) == "running" else None,
        }
        for z in cluster.zookeepers
    ]
    info = {
        "kafka_version": cluster.spec.kafka_version,
        "metadata": cluster.metadata,
        "brokers": brokers,
        "controller": controller,
        "zookeeper": zookeeper,
        "quorum": quorum_status(cluster, states) if cluster.metadata == "kraft" else None,
        "topics": topics,
    }
    found = problems(info)
    return info | {"healthy": not found, "problems": found}


def quorum_status(cluster: DockerCluster, states: dict[str, str]) -> dict[str, Any]:
    """Returns the KRaft quorum JSON-ready: the leader (node and id, or None), its epoch
    and high watermark, and every voter with its container state, lag and last fetch;
    "error" says why no leader answered."""
    quorum: Quorum | None = None
    error: str | None = None
    try:
        quorum = cluster.quorum()
    except AdminError as err:
        error = str(err)
    seen = {v.node_id: v for v in quorum.voters} if quorum is not None else {}
    voters = []
    for node in cluster.controllers:
        node_id = cluster.broker_id(node)
        view = seen.get(node_id)
        voters.append(
            {
                "id": node_id,
                "node": node,
                "state": states.get(node, "missing"),
                "lag": None if view is None else view.lag,
                "last_fetch_ago_ms": None if view is None else view.last_fetch_ago_ms,
            }
        )
    leader = None if quorum is None else quorum.leader
    return {
        "leader": leader,
        "leader_node": None if leader is None else cluster.node_of_broker(leader),
        "epoch": None if quorum is None else quorum.epoch,
        "high_watermark": None if quorum is None else quorum.high_watermark,
        "voters": voters,
        "error": error,
    }


def quorum_problems(quorum: dict[str, Any]) -> list[str]:
    """Takes quorum_status()'s answer. Returns a line for no leader, and for each voter
    whose container is not running or that has not fetched from the leader lately."""
    found = [] if quorum["leader"] is not None else ["no quorum leader"]
    for v in quorum["voters"]:
        if v["state"] != "running":
            found.append(f"{v['node']}: container {v['state']}")
        elif v["id"] == quorum["leader"] or quorum["leader"] is None:
            continue
        elif v["last_fetch_ago_ms"] is None or v["last_fetch_ago_ms"] > FRESH_FETCH_MS:
            ago = v["last_fetch_ago_ms"]
            since = "never" if ago is None else f"{ago / 1000:.1f} s ago"
            found.append(f"{v['node']}: voter {v['id']} last fetched {since} (lag {v['lag']})")
    return found


def problems(info: dict[str, Any]) -> list[str]:
    """Takes describe()'s brokers, controller, zookeeper, quorum and topics. Returns one
    line per thing that is not as it should be: a node not running, a broker not
    registered, no controller, ZooKeeper not serving, no quorum leader or a voter not
    fetching, a partition without a leader or a full ISR."""
    found = []
    for b in info["brokers"]:
        if b["state"] != "running":
            found.append(f"{b['node']}: container {b['state']}")
        elif not b["registered"]:
            found.append(f"{b['node']}: broker {b['id']} is not registered")
    if info["controller"] < 0:
        found.append("no controller")
    for z in info["zookeeper"]:
        if z["state"] != "running":
            found.append(f"{z['node']}: container {z['state']}")
        elif z["mode"] not in SERVING:
            found.append(f"{z['node']}: ZooKeeper {z['mode'] or 'not answering'}")
    if info.get("quorum") is not None:
        found += quorum_problems(info["quorum"])
    for topic, parts in sorted(info["topics"].items()):
        for p in parts:
            where = f"{topic}[{p['partition']}]"
            if p["leader"] < 0:
                found.append(f"{where}: no leader")
            elif set(p["isr"]) != set(p["replicas"]):
                found.append(f"{where}: ISR {p['isr']} of replicas {p['replicas']}")
    return found
