"""The composed scenarios (nemesis/composed.py) without Docker, on a cluster whose ISR
follows its nodes: a node cut off, paused or powered off leaves it, the last member
stays as Kafka keeps it. Each scenario's steps in order, who is down when it returns,
and that stop and teardown bring every node back."""

from __future__ import annotations

import random
from typing import Any

import pytest

from nemesis.composed import COMPOSED, PartitionPowerLoss, PausePowerLoss, roles
from nemesis.core import Skipped
from nemesis.schedule import build_nemesis
from tests.support.fake_cluster import FakeCluster

CUT_MESSAGE = {"mounts": [{"files": 2, "unsynced_bytes": 100, "listed": []}], "exit": -9}


class IsrCluster(FakeCluster):
    """FakeCluster with a power switch, whose ISR is its running brokers that no rule
    cuts off (a node dropping every other node's packets is cut off)."""

    def __init__(self, stuck: bool = False) -> None:
        super().__init__()
        self.isolated: set[str] = set()
        self.isr = (1, 2, 3)
        self.stuck = stuck
        """The ISR never shrinks (a cluster that does not notice the fault)."""

    def exec(self, node: str, cmd: list[str]) -> tuple[int, str]:
        self.execs.append((node, cmd))
        script = cmd[-1]
        if "iptables -F" in script:
            self.isolated.discard(node)
        elif script.count("-j DROP") >= len(self.nodes) - 1:
            self.isolated.add(node)
        return 0, ""

    def power_off(self, node: str) -> dict[str, Any]:
        self.actions.append(("power-off", node))
        self.states[node] = "exited"
        return CUT_MESSAGE

    def committed_partitions(self, topic: str) -> list[Any]:
        from nemesis.cluster import PartitionState

        if not self.stuck:
            up = tuple(
                self.broker_id(n)
                for n in self.brokers
                if self.states[n] == "running" and n not in self.isolated
            )
            self.isr = up or self.isr[:1]  # Kafka keeps the last member
            self.leader = up[0] if up else -1
        return [PartitionState(0, self.leader, (1, 2, 3), self.isr)]

    def partitions(self, topic: str) -> list[Any]:
        return self.committed_partitions(topic)


def _run(nemesis: Any, cluster: IsrCluster) -> tuple[dict[str, Any], dict[str, Any]]:
    nemesis.setup(cluster)
    started = nemesis.invoke(f"start-{nemesis.fault}")
    between = dict(cluster.states)
    stopped = nemesis.invoke(f"stop-{nemesis.fault}")
    return started | {"states": between}, stopped


def _steps(value: dict[str, Any]) -> list[str]:
    return [s["step"] for s in value["steps"]]


def test_roles_are_a_minority_a_crasher_and_the_rest() -> None:
    stale, crasher, rest = roles(["n1", "n2", "n3", "n4", "n5"], random.Random(4))
    assert len(stale) == 2 and len(rest) == 2
    assert sorted([*stale, crasher, *rest]) == ["n1", "n2", "n3", "n4", "n5"]
    with pytest.raises(Skipped, match="3 brokers"):
        roles(["n1", "n2"], random.Random(1))


def test_partition_power_loss_cuts_a_minority_then_the_majority_loses_power() -> None:
    cluster = IsrCluster()
    nemesis = PartitionPowerLoss("t", random.Random(5), sleep=lambda s: None)
    started, stopped = _run(nemesis, cluster)
    assert _steps(started) == [
        "cut-off",
        "left-isr",
        "wrote-without",
        "powered-off",
        "healed",
        "watched",
    ]
    [stale], majority = started["stale"], started["majority"]
    assert started["set_up"] is True and sorted([stale, *majority]) == cluster.brokers
    assert {n: started["states"][n] for n in cluster.brokers} == {
        stale: "running",
        **dict.fromkeys(majority, "exited"),
    }
    assert started["steps"][3]["lost"][majority[0]]["unsynced_bytes"] == 100
    assert _steps(stopped) == ["powered-on", "rejoined"]
    assert all(state == "running" for state in cluster.states.values())
    assert not cluster.isolated and nemesis.teardown() == {}


def test_pause_power_loss_wakes_the_stale_minority_and_the_crasher_alone() -> None:
    cluster = IsrCluster()
    nemesis = PausePowerLoss("t", random.Random(5), sleep=lambda s: None)
    started, stopped = _run(nemesis, cluster)
    assert _steps(started) == [
        "paused",
        "left-isr",
        "wrote-without",
        "powered-off",
        "left-isr",
        "paused",
        "resumed",
        "powered-on",
        "watched",
    ]
    [stale], crasher, [rest] = started["stale"], started["crasher"], started["rest"]
    assert {n: started["states"][n] for n in cluster.brokers} == {
        stale: "running",
        crasher: "running",
        rest: "paused",
    }
    assert ("power-off", crasher) in cluster.actions
    assert started["steps"][-1]["awake"] == [stale, crasher]
    assert _steps(stopped) == ["resumed", "rejoined"]
    assert all(state == "running" for state in cluster.states.values())


def test_a_fault_the_cluster_does_not_notice_stops_before_any_power_is_cut() -> None:
    cluster = IsrCluster(stuck=True)
    clock = iter(range(0, 10_000, 5))
    nemesis = PausePowerLoss("t", random.Random(1), sleep=lambda s: None, clock=lambda: next(clock))
    nemesis.setup(cluster)
    started = nemesis.invoke("start-pause-power-loss")
    assert started["set_up"] is False
    assert _steps(started) == ["paused", "did-not-leave-isr"]
    assert not any(a == "power-off" for a, _ in cluster.actions)
    report = nemesis.teardown()
    assert report["pause-power-loss"]["revived"] == {started["stale"][0]: "paused"}
    assert all(state == "running" for state in cluster.states.values())


def test_teardown_brings_back_what_a_broken_start_left_down() -> None:
    cluster = IsrCluster()
    nemesis = PartitionPowerLoss("t", random.Random(5), sleep=lambda s: None)
    nemesis.setup(cluster)

    def broken(nodes: list[str], steps: Any) -> None:
        for node in nodes:
            cluster.power_off(node)
        raise RuntimeError("the switch broke")

    nemesis._power_off = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        nemesis.invoke("start-partition-power-loss")
    report = nemesis.teardown()["partition-power-loss"]
    assert report["healed"] is True
    assert all(state == "running" for state in cluster.states.values())
    with pytest.raises(Skipped):
        nemesis.invoke("stop-partition-power-loss")


def test_each_scenario_is_built_by_its_name() -> None:
    built = build_nemesis(tuple(COMPOSED), "t", random.Random(1))
    assert built.faults == ("partition-power-loss", "pause-power-loss")
    with pytest.raises(TypeError, match="power switch"):
        PausePowerLoss("t", random.Random(1)).setup(FakeCluster())
