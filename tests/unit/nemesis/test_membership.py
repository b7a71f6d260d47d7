"""The membership faults' plans without a cluster: which partitions leave a broker and
come back, when a reassignment is done, and the steps each fault takes in order against
a stand-in that applies a reassignment or a voter change at once."""

from __future__ import annotations

import random
from collections.abc import Sequence

from nemesis.cluster import PartitionState, QuorumMembers, Voter
from nemesis.controllers import ControllerRemoval
from nemesis.decommission import Decommission, away_from, held_by, unsettled
from tests.support.fake_cluster import FakeCluster

ASSIGNMENT = {
    "t": [PartitionState(0, 1, (1, 2, 3), (1, 2, 3)), PartitionState(1, 2, (2, 3, 1), (2, 3))],
    "__consumer_offsets": [PartitionState(0, 3, (3, 2, 1), (1, 2, 3))],
    "single": [PartitionState(0, 1, (1,), (1,))],
}


def test_away_from_drops_the_broker_and_keeps_the_order_to_put_it_back() -> None:
    away, back = away_from(ASSIGNMENT, 1)
    assert away == {("t", 0): (2, 3), ("t", 1): (2, 3), ("__consumer_offsets", 0): (3, 2)}
    assert back == {("t", 0): (1, 2, 3), ("t", 1): (2, 3, 1), ("__consumer_offsets", 0): (3, 2, 1)}
    # A partition whose only replica is the broker cannot move: it stays out of both.
    assert ("single", 0) not in away and "single-0" in held_by(ASSIGNMENT, 1)
    assert away_from(ASSIGNMENT, 9) == ({}, {})


def test_a_reassignment_is_done_when_every_partition_has_the_replicas_asked() -> None:
    away, _ = away_from(ASSIGNMENT, 1)
    assert unsettled(ASSIGNMENT, away) == ["__consumer_offsets-0", "t-0", "t-1"]
    moved = {
        "t": [PartitionState(0, 2, (3, 2), (2, 3)), PartitionState(1, 2, (2, 3), (2, 3))],
        "__consumer_offsets": [PartitionState(0, 3, (3, 2), (3, 2))],
    }
    assert unsettled(moved, away) == [] and held_by(moved, 1) == []
    # Growing back: the metadata lists the added replica at once, out of the ISR until
    # it has caught up, and only then is the reassignment done.
    _, back = away_from(ASSIGNMENT, 1)
    adding = {"t": [PartitionState(0, 2, (1, 2, 3), (2, 3))]}
    assert unsettled(adding, {("t", 0): back[("t", 0)]}) == ["t-0"]
    assert unsettled({}, away) == ["__consumer_offsets-0", "t-0", "t-1"]


class Reassigning(FakeCluster):
    """A KRaft FakeCluster whose reassignments land at once, with a dynamic quorum of
    c4-c6 whose voter changes land at once too."""

    def __init__(self) -> None:
        super().__init__(kraft=True)
        self.assignment = {t: list(parts) for t, parts in ASSIGNMENT.items() if t != "single"}
        self.voters = [4, 5, 6]
        self.refuse_adds = 1

    def replica_assignment(self) -> dict[str, list[PartitionState]]:
        return self.assignment

    def reassign(self, moves: dict[tuple[str, int], tuple[int, ...]]) -> str:
        self.actions.append(("reassign", ",".join(f"{t}-{p}" for t, p in sorted(moves))))
        for (topic, partition), replicas in moves.items():
            parts = self.assignment[topic]
            parts[partition] = PartitionState(partition, replicas[0], replicas, replicas)
        return "Successfully started partition reassignments"

    def unregister_broker(self, broker_id: int) -> str:
        self.actions.append(("unregister", str(broker_id)))
        return f"Broker {broker_id} is no longer registered."

    def stop(self, node: str) -> None:
        self.actions.append(("stop", node))
        self.states[node] = "exited"

    def read_file(self, node: str, path: str) -> bytes:
        return b""

    def write_file(self, node: str, path: str, data: bytes) -> None:
        pass

    def quorum_members(self, avoid: Sequence[str] = (), directories: bool = True) -> QuorumMembers:
        voters = tuple(Voter(i, f"dir{i}") for i in self.voters)
        return QuorumMembers(self.voters[0], 1, 10, voters, (1, 2, 3))

    def remove_controller(self, node: str, directory_id: str, avoid: Sequence[str] = ()) -> str:
        self.actions.append(("remove-controller", f"{node}:{directory_id}"))
        self.voters.remove(self.broker_id(node))
        return "Removed"

    def add_controller(self, node: str) -> str:
        if self.refuse_adds:
            self.refuse_adds -= 1
            raise RuntimeError("not caught up")
        self.actions.append(("add-controller", node))
        self.voters = sorted({*self.voters, self.broker_id(node)})
        return "Added"


def test_decommission_moves_away_stops_unregisters_and_brings_back() -> None:
    cluster = Reassigning()
    nemesis = Decommission("t", random.Random(2), sleep=lambda _: None)
    nemesis.setup(cluster)
    gone = nemesis.invoke("start-decommission-broker")
    node = gone["decommissioned"]
    steps = [s["step"] for s in gone["steps"]]
    assert steps == ["reassigning", "reassigned-away", "left-on-it", "stopped", "unregistered"]
    assert held_by(cluster.assignment, cluster.broker_id(node)) == []
    assert cluster.state(node) == "exited"
    back = nemesis.invoke("stop-decommission-broker")
    assert back["recommissioned"] == node and cluster.state(node) == "running"
    assert [s["step"] for s in back["steps"]][-3:] == [
        "reassigning-back",
        "reassigned-back",
        "preferred-leaders",
    ]
    assert {t: [p.replicas for p in parts] for t, parts in cluster.assignment.items()} == {
        t: [p.replicas for p in parts] for t, parts in ASSIGNMENT.items() if t != "single"
    }
    assert nemesis.teardown() == {}


def test_decommission_kill_leader_kills_another_broker_and_starts_it_after_the_stop() -> None:
    cluster = Reassigning()
    nemesis = Decommission("t", random.Random(2), kill_leader=True, sleep=lambda _: None)
    nemesis.setup(cluster)
    gone = nemesis.invoke("start-decommission-kill-leader")
    killed = gone["killed"]
    assert killed not in (None, gone["decommissioned"])
    order = [(a, n) for a, n in cluster.actions if a in ("kill", "stop", "start")]
    assert order == [("kill", killed), ("stop", gone["decommissioned"]), ("start", killed)]
    # The teardown brings the broker back as a stop would.
    assert (
        nemesis.teardown()["decommission-kill-leader"]["recommissioned"] == gone["decommissioned"]
    )


def test_remove_controller_removes_a_voter_and_adds_it_back_after_a_refusal() -> None:
    cluster = Reassigning()
    nemesis = ControllerRemoval("t", random.Random(1), sleep=lambda _: None)
    nemesis.setup(cluster)
    removed = nemesis.invoke("start-remove-controller")
    gone = removed["removed"]
    assert removed["voters"]["after"] == [c for c in ("c4", "c5", "c6") if c != gone]
    assert [s["step"] for s in removed["steps"]] == ["quorum", "remove-controller", "removed"]
    added = nemesis.invoke("stop-remove-controller")
    assert added["added"] == gone and cluster.voters == [4, 5, 6]
    steps = [s["step"] for s in added["steps"]]
    assert steps == ["add-controller-refused", "add-controller", "added"]
    assert nemesis.teardown() == {}


def test_the_controller_faults_are_skipped_with_fixed_voters_or_on_zookeeper() -> None:
    cluster = Reassigning()
    cluster.quorum_members = lambda avoid=(), directories=True: QuorumMembers(  # type: ignore[method-assign]
        4, 1, 10, (Voter(4, ""), Voter(5, ""), Voter(6, "")), ()
    )
    nemesis = ControllerRemoval("t", random.Random(1))
    nemesis.setup(cluster)
    assert "fixed" in _skipped(nemesis, "start-remove-controller")
    zookeeper = ControllerRemoval("t", random.Random(1))
    zookeeper.setup(FakeCluster())
    assert "KRaft" in _skipped(zookeeper, "start-remove-controller")


def _skipped(nemesis: ControllerRemoval, f: str) -> str:
    from nemesis.core import Skipped

    try:
        nemesis.invoke(f)
    except Skipped as why:
        return str(why)
    raise AssertionError("not skipped")
