"""remove-server's plan without a cluster: when /jsz shows a server out and back, and the
steps the fault takes in order (wipe, peer-remove, wait; start under a new name, wait)
against a stand-in whose meta group and stream change as NATS's do, at once or never."""

from __future__ import annotations

import random
from typing import Any

import pytest

from nemesis.core import Skipped
from nemesis.peer_removal import (
    REMOVE_SERVER,
    ServerRemoval,
    left,
    rejoined,
    replica_count,
    summary,
)
from tests.support.fake_cluster import FakeCluster


def peer(name: str, current: bool = True) -> dict[str, Any]:
    return {"name": name, "current": current, "offline": not current}


def view(
    server: str,
    meta_leader: str,
    members: list[str],
    stream_leader: str | None,
    replicas: list[str],
    healthy: bool = True,
    behind: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One server's membership view; a leader lists the others, as /jsz does."""
    return {
        "server": server,
        "healthy": healthy,
        "meta_leader": meta_leader,
        "cluster_size": len(members),
        "meta_peers": [peer(m, m not in behind) for m in members if m != server],
        "stream": None
        if server not in replicas
        else {
            "leader": stream_leader,
            "peers": [peer(r, r not in behind) for r in replicas if r != server],
            "last_seq": 10,
        },
    }


ALL = ["n1", "n2", "n3"]


def test_a_server_has_left_once_neither_leader_lists_it() -> None:
    still = {"n1": view("n1", "n1", ALL, "n1", ALL, behind=frozenset({"n2"}))}
    assert not left(still, "n2")
    gone = {"n1": view("n1", "n1", ["n1", "n3"], "n3", ["n1", "n3"])}
    assert not left(gone, "n2")  # no answering server says it leads the stream
    gone["n3"] = view("n3", "n1", ["n1", "n3"], "n3", ["n1", "n3"])
    assert left(gone, "n2") and replica_count(gone) == 2
    assert not left(gone, "n3")
    assert summary(gone)["meta_leader"] == "n1" and summary(gone)["stream_leader"] == "n3"
    assert summary({})["meta_leader"] is None


def test_a_server_is_back_when_current_in_both_groups_the_stream_whole_and_healthy() -> None:
    names = ["n1", "n2-2", "n3"]

    def views(**kw: Any) -> dict[str, Any]:
        return {
            "n1": view("n1", "n1", names, "n1", kw.pop("replicas", names), **kw),
            "n2": view("n2-2", "n1", names, "n1", names, healthy=kw.get("healthy", True)),
        }

    assert rejoined(views(), "n2-2", replicas=3)
    assert not rejoined(views(healthy=False), "n2-2", replicas=3)
    assert not rejoined(views(behind=frozenset({"n2-2"})), "n2-2", replicas=3)
    # With five servers the stream may be whole on others: it is not waited on.
    assert not rejoined(views(replicas=["n1", "n3"]), "n2-2", replicas=3)
    assert rejoined(views(replicas=["n1", "n3"]), "n2-2", replicas=2)
    assert not rejoined(views(), "n2", replicas=3)  # the old name never comes back


class Members(FakeCluster):
    """Three NATS servers whose removals and joins land at once (or, with stuck, a
    removal that never does)."""

    def __init__(self, stuck: bool = False, leaderless: int = 0) -> None:
        super().__init__()
        self.names = {n: n for n in self.brokers}
        self.meta = list(self.brokers)
        self.stream = list(self.brokers)
        self.stuck = stuck
        self.leaderless = leaderless
        """How many removal requests go unanswered first (no meta leader yet)."""

    def server_name(self, node: str) -> str:
        return self.names[node]

    def wipe(self, node: str) -> dict[str, Any]:
        self.actions.append(("wipe", node))
        self.states[node] = "exited"
        return {"store": "/var/lib/nats/jetstream"}

    def remove_peer(self, node: str) -> dict[str, Any]:
        name = self.names[node]
        self.actions.append(("peer-remove", name))
        if self.leaderless:
            self.leaderless -= 1
            raise TimeoutError("nats: timeout")
        if not self.stuck:
            self.meta.remove(name)
            self.stream.remove(name)
        return {"success": True}

    def rejoin(self, node: str) -> str:
        name = f"{node}-2"
        self.names[node] = name
        self.actions.append(("rejoin", name))
        self.states[node] = "running"
        self.meta.append(name)
        self.stream.append(name)
        return name

    def membership(self, topic: str) -> dict[str, Any]:
        up = {n: self.names[n] for n in self.brokers if self.states[n] == "running"}
        leader = next(name for name in self.meta if name in up.values())
        return {n: view(name, leader, self.meta, leader, self.stream) for n, name in up.items()}


def fault(cluster: Members) -> ServerRemoval:
    nemesis = ServerRemoval("t", random.Random(4), sleep=lambda _: None, clock=ticking())
    nemesis.setup(cluster)
    return nemesis


def ticking() -> Any:
    now = [0.0]

    def clock() -> float:
        now[0] += 0.5
        return now[0]

    return clock


def test_start_wipes_then_peer_removes_and_stop_brings_it_back_under_a_new_name() -> None:
    cluster = Members()
    nemesis = fault(cluster)
    started = nemesis.invoke(f"start-{REMOVE_SERVER}")
    victim = started["node"]
    assert started["removed"] == victim and started["replicas"] == 3
    assert [s["step"] for s in started["steps"]] == [
        "members-before",
        "wiped",
        "peer-remove",
        "server-left",
    ]
    assert cluster.actions == [("wipe", victim), ("peer-remove", victim)]
    assert started["steps"][-1]["jsz"]["cluster_size"] == 2
    stopped = nemesis.invoke(f"stop-{REMOVE_SERVER}")
    assert stopped["rejoined"] == f"{victim}-2"
    assert [s["step"] for s in stopped["steps"]] == ["rejoining", "server-rejoined"]
    seen = stopped["steps"][-1]["jsz"]
    assert seen["cluster_size"] == 3 and f"{victim}-2" in seen["answering"]
    assert cluster.actions[2:] == [("rejoin", f"{victim}-2")]
    with pytest.raises(Skipped, match="no server is removed"):
        nemesis.invoke(f"stop-{REMOVE_SERVER}")
    assert nemesis.teardown() == {}


def test_a_removal_that_does_not_land_is_recorded_and_teardown_brings_the_server_back() -> None:
    cluster = Members(stuck=True)
    nemesis = fault(cluster)
    started = nemesis.invoke(f"start-{REMOVE_SERVER}")
    assert started["removed"] is None and started["steps"][-1]["step"] == "server-not-left"
    healed = nemesis.teardown()[REMOVE_SERVER]
    assert healed["node"] == started["node"]
    # Asked again before the server may come back under a new name.
    assert [s["step"] for s in healed["steps"]][:2] == ["peer-remove", "server-not-left"]
    assert cluster.states[started["node"]] == "running"
    assert ("rejoin", f"{started['node']}-2") in cluster.actions


def test_a_cluster_without_servers_to_remove_is_skipped() -> None:
    nemesis = ServerRemoval("t", random.Random(1))
    nemesis.setup(FakeCluster())
    with pytest.raises(Skipped, match="NATS JetStream"):
        nemesis.invoke(f"start-{REMOVE_SERVER}")


def test_an_unanswered_removal_is_asked_again_until_the_new_meta_leader_answers() -> None:
    cluster = Members(leaderless=2)
    started = fault(cluster).invoke(f"start-{REMOVE_SERVER}")
    victim = started["node"]
    assert started["removed"] == victim
    assert cluster.actions == [("wipe", victim)] + [("peer-remove", victim)] * 3
    [asked] = [s for s in started["steps"] if s["step"] == "peer-remove"]
    assert asked["failures"] == 2 and asked["said"] == {"success": True}
