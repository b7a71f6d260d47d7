"""When `cluster status` calls a cluster unhealthy: the container state counts at once,
whatever Kafka's metadata still says (no Docker)."""

from __future__ import annotations

from typing import Any

from harness.cluster.status import problems


def status(**changes: Any) -> dict[str, Any]:
    """A healthy 3-broker cluster's describe() output, with changes applied."""
    brokers = [
        {"id": i, "node": f"n{i}", "state": "running", "registered": True} for i in (1, 2, 3)
    ]
    info: dict[str, Any] = {
        "brokers": brokers,
        "controller": 1,
        "zookeeper": [{"node": "zk1", "state": "running", "mode": "standalone"}],
        "topics": {"t": [{"partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2, 3]}]},
    }
    return info | changes


def test_a_healthy_cluster_has_no_problems() -> None:
    assert problems(status()) == []


def test_a_killed_broker_is_down_while_kafka_still_lists_it() -> None:
    info = status()
    info["brokers"][1] |= {"state": "exited", "registered": True}
    assert problems(info) == ["n2: container exited"]


def test_paused_unregistered_and_leaderless_are_each_named() -> None:
    info = status(controller=-1)
    info["brokers"][0]["state"] = "paused"
    info["brokers"][2]["registered"] = False
    info["zookeeper"][0]["mode"] = "not serving"
    info["topics"]["t"].append({"partition": 1, "leader": -1, "replicas": [2, 3], "isr": []})
    info["topics"]["t"][0]["isr"] = [1, 3]
    assert problems(info) == [
        "n1: container paused",
        "n3: broker 3 is not registered",
        "no controller",
        "zk1: ZooKeeper not serving",
        "t[0]: ISR [1, 3] of replicas [1, 2, 3]",
        "t[1]: no leader",
    ]


def test_a_stopped_zookeeper_is_named() -> None:
    info = status()
    info["zookeeper"][0] |= {"state": "exited", "mode": None}
    assert problems(info) == ["zk1: container exited"]
