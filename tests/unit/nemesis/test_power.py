"""Power faults cut the nodes Jepsen's node specs name (one, the leader, the leader and
its followers, a minority, a majority, all; of the brokers, of the metadata quorum, of
every node), record what each node's layer lost, and power every node they cut on
again, the metadata quorum first. A run asking for one puts its nodes on faultfs."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.cli import build_parser
from harness.commands.run import spec_from_args
from nemesis.cluster import Cluster
from nemesis.core import Skipped
from nemesis.power import PowerLoss, summary
from nemesis.targets import majority, minority
from tests.support.fake_cluster import FakeCluster


class PoweredCluster(FakeCluster):
    """A FakeCluster whose nodes can lose power; each cut loses 4096 bytes of one file."""

    def power_off(self, node: str) -> dict[str, Any]:
        self.actions.append(("power-off", node))
        self.states[node] = "exited"
        listed = [{"path": "t-0/00.log", "unsynced_bytes": 4096}]
        return {
            "exit": "signal 9 (killed)",
            "mounts": [{"files": 1, "unsynced_bytes": 4096, "listed": listed}],
        }


def _fault(name: str, cluster: FakeCluster, seed: int = 1) -> PowerLoss:
    fault = PowerLoss(name, "t", random.Random(seed))
    c: Cluster = cluster
    fault.setup(c)
    return fault


def _cut(name: str, cluster: FakeCluster) -> list[str]:
    return list(_fault(name, cluster).invoke(f"start-{name}")["powered-off"])


def test_the_leader_loses_power_says_what_it_lost_and_comes_back() -> None:
    cluster = PoweredCluster(leader=2)
    fault = _fault("power-loss-leader", cluster)
    done = fault.invoke("start-power-loss-leader")
    assert done["powered-off"] == ["n2"] and done["partition"] == 0
    assert done["lost"]["n2"]["files"] == 1 and done["lost"]["n2"]["unsynced_bytes"] == 4096
    assert done["lost"]["n2"]["largest"] == [{"path": "t-0/00.log", "unsynced_bytes": 4096}]
    assert fault.invoke("stop-power-loss-leader")["powered-on"] == ["n2"]
    assert cluster.actions == [("power-off", "n2"), ("start", "n2")]


def test_the_leader_and_its_followers_lose_power_together() -> None:
    assert _cut("power-loss-leader-and-followers", PoweredCluster(leader=3)) == ["n3", "n1", "n2"]


@pytest.mark.parametrize(("n", "fewer", "more"), [(1, 0, 1), (3, 1, 2), (4, 1, 3), (5, 2, 3)])
def test_a_minority_is_fewer_than_half_and_a_majority_more(n: int, fewer: int, more: int) -> None:
    nodes = [f"n{i}" for i in range(n)]
    assert len(minority(nodes, random.Random(1))) == fewer
    assert len(majority(nodes, random.Random(1))) == more


def test_broker_targets_take_the_brokers_only() -> None:
    assert len(_cut("power-loss-minority", PoweredCluster())) == 1
    assert len(_cut("power-loss-majority", PoweredCluster())) == 2
    assert _cut("power-loss-brokers", PoweredCluster()) == ["n1", "n2", "n3"]
    assert _cut("power-loss-one", PoweredCluster())[0] in {"n1", "n2", "n3"}


def test_quorum_targets_take_zookeeper_or_the_kraft_controllers() -> None:
    assert _cut("power-loss-quorum", PoweredCluster()) == ["zk1"]
    assert _cut("power-loss-quorum", PoweredCluster(kraft=True)) == ["c4", "c5", "c6"]
    assert _cut("power-loss-quorum", PoweredCluster(kraft=True, combined=True)) == [
        "n1",
        "n2",
        "n3",
    ]
    assert len(_cut("power-loss-quorum-majority", PoweredCluster(kraft=True))) == 2
    assert _cut("power-loss-active-controller", PoweredCluster(kraft=True)) == ["c4"]
    with pytest.raises(Skipped, match="no node to take"):
        _cut("power-loss-quorum-minority", PoweredCluster())  # a minority of one is nobody


def test_everything_loses_power_and_the_quorum_comes_back_first() -> None:
    cluster = PoweredCluster()
    fault = _fault("power-loss-all", cluster)
    assert fault.invoke("start-power-loss-all")["powered-off"] == ["n1", "n2", "n3", "zk1"]
    assert fault.invoke("stop-power-loss-all")["powered-on"] == ["zk1", "n1", "n2", "n3"]


def test_a_cluster_without_a_power_switch_is_refused() -> None:
    with pytest.raises(TypeError, match="no power switch"):
        _fault("power-loss-one", FakeCluster())


def test_teardown_powers_on_what_stop_could_not() -> None:
    cluster = PoweredCluster()
    fault = _fault("power-loss-brokers", cluster)
    fault.invoke("start-power-loss-brokers")
    cluster.fail_start.add("n2")
    with pytest.raises(RuntimeError, match="could not power on n2"):
        fault.invoke("stop-power-loss-brokers")
    cluster.fail_start.clear()
    assert fault.teardown() == {"power-loss-brokers": {"powered-on": ["n2"]}}
    assert fault.teardown() == {}
    with pytest.raises(Skipped, match="no node is powered off"):
        fault.invoke("stop-power-loss-brokers")


def test_a_layer_that_could_not_say_is_recorded_as_an_error() -> None:
    assert summary({"error": "faultfs ctl cut exited 1: no socket"}) == {
        "error": "faultfs ctl cut exited 1: no socket"
    }


def test_a_power_fault_puts_the_run_on_faultfs() -> None:
    def spec(*argv: str) -> bool:
        return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1).cluster.faultfs

    assert spec("--nemesis", "kill-leader,power-loss-brokers")
    assert spec("--nemesis", "kill-leader", "--faultfs")
    assert not spec("--nemesis", "all")
    assert spec_from_args(
        build_parser().parse_args(["run", "--nemesis", "power-loss-one"]), seed=1
    ).cluster.faultfs
