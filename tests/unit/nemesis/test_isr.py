"""The isr-shrink nemesis's steps against a scripted cluster: what it records, what it
refuses to claim, and that it heals (the real sequence runs in tests/integration)."""

from __future__ import annotations

import random

import pytest

from nemesis.cluster import PartitionState
from nemesis.core import Skipped
from nemesis.isr import ISR_SHRINK_WAIT_S, IsrShrink
from tests.support.fake_cluster import FakeCluster

TOPIC = "q"
REPLICAS = ((1, 2, 3), (2, 3, 1), (3, 1, 2))
RESTART_S = 3.0


class ScriptedCluster(FakeCluster):
    """Three partitions with rotating preferred leaders and broker 1 as the controller.
    Cutting broker 1 from its followers shrinks its partitions' ISR after `lag` seconds
    of the fake clock; killing it elects a follower if `unclean`, else nobody. A started
    broker is back `RESTART_S` later."""

    def __init__(
        self, unclean: bool, shrinks: bool = True, kraft: bool = False, combined: bool = False
    ) -> None:
        super().__init__(kraft=kraft, combined=combined)
        self.now = 0.0
        self.unclean = unclean
        self.shrinks = shrinks
        self.leaders = [2, 2, 3]  # partition 0 is not on its preferred leader yet
        self.cut_at: float | None = None
        self.killed_at: float | None = None
        self.started_at: float | None = None

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        script = " ".join(cmd)
        if node == "n1" and "-s 10.0.0.2 -j DROP" in script and self.cut_at is None:
            self.cut_at = self.now
        if "iptables -F" in script:
            self.cut_at = None
        return super().exec(node, cmd)

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        self.leaders = [r[0] for r in REPLICAS]
        return dict.fromkeys(range(3), "")

    def kill(self, node: str) -> None:
        super().kill(node)
        self.killed_at = self.now

    def start(self, node: str) -> None:
        super().start(node)
        self.started_at = self.now

    def partitions(self, topic: str) -> list[PartitionState]:
        parts = []
        for p, replicas in enumerate(REPLICAS):
            leader, isr = self.leaders[p], replicas
            cut_long_enough = self.cut_at is not None and self.now - self.cut_at >= 5
            if leader == 1 and self.shrinks and cut_long_enough:
                isr = (1,)
            back = self.started_at is not None and self.now - self.started_at >= RESTART_S
            if leader == 1 and self.killed_at is not None and not back:
                elected = self.now - self.killed_at >= 7
                leader = 2 if elected and self.unclean else -1
                isr = (2,) if leader == 2 else (1,)
            parts.append(PartitionState(p, leader, replicas, tuple(sorted(isr))))
        return parts

    def server_log(self, node: str, pattern: str, lines: int = 50) -> list[str]:
        return [f"Truncating partition {TOPIC}-0 with TruncationState(offset=40, completed=true)"]


def nemesis_on(cluster: ScriptedCluster) -> IsrShrink:
    nemesis = IsrShrink(TOPIC, random.Random(1), sleep=cluster.sleep, clock=cluster.clock)
    nemesis.setup(cluster)
    return nemesis


def steps(value: dict[str, object]) -> list[str]:
    return [s["step"] for s in value["steps"]]  # type: ignore[attr-defined, index]


def test_unsafe_sequence_records_each_step_and_the_truncation() -> None:
    cluster = ScriptedCluster(unclean=True)
    nemesis = nemesis_on(cluster)
    started = nemesis.invoke("start-isr-shrink")
    assert steps(started) == [
        "placed",
        "cut-from-followers",
        "isr-shrunk",
        "killed",
        "follower-elected",
    ]
    assert started["leader"] == "n1" and started["partitions"] == [0]
    assert started["set_up"] is True
    shrunk = started["steps"][2]
    assert shrunk["state"]["0"] == {"leader": "n1", "epoch": -1, "isr": ["n1"]}
    times = [s["after_s"] for s in started["steps"]]
    assert times == sorted(times) and times[-1] >= 12  # 5 s shrink, 4 s alone, 7 s election
    stopped = nemesis.invoke("stop-isr-shrink")
    assert steps(stopped) == ["healed", "rejoined"]
    assert "Truncating partition q-0" in stopped["steps"][-1]["truncation"][0]
    assert ("kill", "n1") in cluster.actions and ("start", "n1") in cluster.actions


def test_safe_sequence_says_nobody_was_elected_and_claims_no_loss() -> None:
    cluster = ScriptedCluster(unclean=False)
    started = nemesis_on(cluster).invoke("start-isr-shrink")
    assert steps(started)[-1] == "no-leader-elected"
    assert started["set_up"] is False


def test_after_nobody_was_elected_the_leader_rejoins_only_once_it_leads_again() -> None:
    # The committed ISR still names the dead leader the moment it is started again;
    # "rejoined" must wait for its partitions to be led, not take that stale ISR's word.
    cluster = ScriptedCluster(unclean=False)
    nemesis = nemesis_on(cluster)
    nemesis.invoke("start-isr-shrink")
    started_at = cluster.now
    stopped = nemesis.invoke("stop-isr-shrink")
    assert steps(stopped) == ["healed", "rejoined"]
    assert stopped["steps"][-1]["after_s"] >= RESTART_S
    assert cluster.now - started_at >= RESTART_S


def test_an_isr_that_never_shrinks_stops_the_sequence_before_any_kill() -> None:
    cluster = ScriptedCluster(unclean=True, shrinks=False)
    nemesis = nemesis_on(cluster)
    started = nemesis.invoke("start-isr-shrink")
    assert steps(started)[-1] == "isr-did-not-shrink"
    assert started["steps"][-1]["within_s"] == ISR_SHRINK_WAIT_S
    assert started["set_up"] is False
    assert not any(a == "kill" for a, _ in cluster.actions)
    assert steps(nemesis.invoke("stop-isr-shrink"))[0] == "healed"
    assert cluster.cut_at is None


class OnePartition(ScriptedCluster):
    """The kv store's topic: one partition, whose preferred leader is broker 2, not the
    controller (broker 1); reordering its replicas is what makes broker 1 lead it."""

    def __init__(self, reorder_refused: str = "", idle_elections: int = 0) -> None:
        super().__init__(unclean=True)
        self.replicas = (2, 3, 1)
        self.reorder_refused = reorder_refused
        self.idle_elections = idle_elections

    def prefer_leader(self, topic: str, partition: int, broker: int) -> str:
        self.actions.append(("prefer", f"{topic}-{partition}:{broker}"))
        if self.reorder_refused:
            return self.reorder_refused
        self.replicas = (broker, *(r for r in self.replicas if r != broker))
        return ""

    def elect_preferred_leaders(self, topic: str) -> dict[int, str]:
        self.actions.append(("elect", topic))
        if self.idle_elections:  # answered as done, the old leader left in place
            self.idle_elections -= 1
        else:
            self.leaders[0] = self.replicas[0]
        return {0: ""}

    def partitions(self, topic: str) -> list[PartitionState]:
        (part,) = [p for p in super().partitions(topic) if p.partition == 0]
        return [PartitionState(0, part.leader, self.replicas, part.isr)]


def test_a_controller_that_leads_nothing_is_made_to_lead_one_partition() -> None:
    cluster = OnePartition()
    started = nemesis_on(cluster).invoke("start-isr-shrink")
    assert ("prefer", f"{TOPIC}-0:1") in cluster.actions
    placed = started["steps"][0]
    assert placed["step"] == "placed" and placed["made_preferred"] == {"0": ""}
    assert started["partitions"] == [0] and started["leader"] == "n1"
    assert steps(started)[-1] == "follower-elected" and started["set_up"] is True


def test_an_election_that_leaves_the_old_leader_is_made_again_until_the_controller_leads() -> None:
    cluster = OnePartition(idle_elections=2)
    started = nemesis_on(cluster).invoke("start-isr-shrink")
    assert started["steps"][0]["made_preferred"] == {"0": ""}
    assert sum(action == "elect" for action, _ in cluster.actions) >= 3
    assert started["leader"] == "n1" and started["set_up"] is True


def test_a_controller_that_cannot_be_made_to_lead_is_skipped_with_the_reason() -> None:
    cluster = OnePartition(reorder_refused="error 41 (not the controller)")
    with pytest.raises(Skipped, match=r"led by the controller n1.*error 41"):
        nemesis_on(cluster).invoke("start-isr-shrink")
    assert not any(action == "kill" for action, _ in cluster.actions)


def test_a_controller_that_leads_already_is_not_reassigned() -> None:
    cluster = ScriptedCluster(unclean=True)
    nemesis_on(cluster).invoke("start-isr-shrink")
    assert not any(action == "prefer" for action, _ in cluster.actions)


def test_stop_without_start_is_skipped_and_teardown_heals_a_half_done_start() -> None:
    cluster = ScriptedCluster(unclean=True)
    nemesis = nemesis_on(cluster)
    with pytest.raises(Skipped):
        nemesis.invoke("stop-isr-shrink")
    nemesis.invoke("start-isr-shrink")
    report = nemesis.teardown()
    assert report["isr-shrink"]["revived"] == {"n1": "exited"}
    assert cluster.cut_at is None
    assert cluster.states["n1"] == "running"


def test_on_kraft_a_broker_apart_from_the_controllers_is_isolated_and_the_quorum_named() -> None:
    cluster = ScriptedCluster(unclean=True, kraft=True)
    cluster.elect_preferred_leaders = lambda topic: {}  # type: ignore[method-assign]
    cluster.leaders = [1, 1, 1]
    started = nemesis_on(cluster).invoke("start-isr-shrink")
    assert steps(started)[-1] == "follower-elected"
    assert started["leader"] == "n1" and started["partitions"] == [0, 1, 2]
    assert started["steps"][0]["controller"] == "c4"
    cut = started["steps"][1]
    assert cut["followers"] == ["n2", "n3"]  # never a controller: the quorum stays reachable


def test_on_combined_kraft_nodes_it_is_skipped_because_the_leader_would_lose_the_quorum() -> None:
    cluster = ScriptedCluster(unclean=True, kraft=True, combined=True)
    with pytest.raises(Skipped, match="needs brokers apart from the controllers"):
        nemesis_on(cluster).invoke("start-isr-shrink")
    assert not any(a == "kill" for a, _ in cluster.actions)
