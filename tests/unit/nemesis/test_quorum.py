"""The faults that know the metadata leader: which node each one targets on KRaft and
on ZooKeeper, and which say they do not apply (the real effects run in tests/integration)."""

from __future__ import annotations

import random

import pytest

from nemesis.core import Skipped
from nemesis.partition import NetworkFault
from nemesis.process import ProcessFault
from tests.support.fake_cluster import FakeCluster


def _dropped(cluster: FakeCluster) -> dict[str, set[str]]:
    """Returns node -> the addresses its iptables rules drop, read from what was run."""
    drops: dict[str, set[str]] = {}
    for node, cmd in cluster.execs:
        script = " ".join(cmd)
        for part in script.split("-s ")[1:]:
            if "-j DROP" in part:
                drops.setdefault(node, set()).add(part.split()[0])
    return drops


def _ips(cluster: FakeCluster, *nodes: str) -> set[str]:
    return {cluster.ip(n) for n in nodes}


@pytest.mark.parametrize("kraft, target", [(True, "c4"), (False, "n1")])
@pytest.mark.parametrize("fault, verb", [("kill", "killed"), ("pause", "paused")])
def test_the_active_controller_is_the_target_in_either_mode(
    kraft: bool, target: str, fault: str, verb: str
) -> None:
    cluster = FakeCluster(kraft=kraft)
    nemesis = ProcessFault(f"{fault}-active-controller", "t", random.Random(1))
    nemesis.setup(cluster)
    done = nemesis.invoke(f"start-{fault}-active-controller")
    assert done[verb] == target and cluster.actions == [(fault, target)]
    restored = nemesis.invoke(f"stop-{fault}-active-controller")
    assert restored["restored"] == [target]


def test_no_active_controller_is_skipped_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nemesis.core.LEADER_WAIT_S", 0.0)
    cluster = FakeCluster(kraft=True)
    cluster.active = None  # type: ignore[assignment]
    nemesis = ProcessFault("kill-active-controller", "t", random.Random(1))
    nemesis.setup(cluster)
    with pytest.raises(Skipped, match="no active controller known"):
        nemesis.invoke("start-kill-active-controller")
    assert cluster.actions == []


def test_partition_controller_quorum_cuts_the_active_controller_from_the_others_only() -> None:
    cluster = FakeCluster(kraft=True)
    cluster.active = "c5"
    nemesis = NetworkFault("partition-controller-quorum", "t", random.Random(1))
    nemesis.setup(cluster)
    done = nemesis.invoke("start-partition-controller-quorum")
    assert done["isolated"] == "c5"
    assert done["grudge"] == {"c4": ["c5"], "c5": ["c4", "c6"], "c6": ["c5"]}
    assert _dropped(cluster) == {
        "c4": _ips(cluster, "c5"),
        "c5": _ips(cluster, "c4", "c6"),
        "c6": _ips(cluster, "c5"),
    }


def test_partition_brokers_from_controllers_leaves_brokers_and_controllers_whole() -> None:
    cluster = FakeCluster(kraft=True)
    nemesis = NetworkFault("partition-brokers-from-controllers", "t", random.Random(1))
    nemesis.setup(cluster)
    done = nemesis.invoke("start-partition-brokers-from-controllers")
    brokers, controllers = {"n1", "n2", "n3"}, {"c4", "c5", "c6"}
    assert {n: set(d) for n, d in done["grudge"].items()} == {
        **dict.fromkeys(brokers, controllers),
        **dict.fromkeys(controllers, brokers),
    }


@pytest.mark.parametrize(
    "fault", ["partition-controller-quorum", "partition-brokers-from-controllers"]
)
def test_quorum_partitions_say_they_do_not_apply_on_zookeeper(fault: str) -> None:
    cluster = FakeCluster()
    nemesis = NetworkFault(fault, "t", random.Random(1))
    nemesis.setup(cluster)
    with pytest.raises(Skipped, match="does not apply on ZooKeeper"):
        nemesis.invoke(f"start-{fault}")
    assert cluster.execs == []


def test_brokers_from_controllers_is_skipped_when_every_broker_is_a_controller() -> None:
    cluster = FakeCluster(kraft=True, combined=True)
    nemesis = NetworkFault("partition-brokers-from-controllers", "t", random.Random(1))
    nemesis.setup(cluster)
    with pytest.raises(Skipped, match="every broker is also a controller"):
        nemesis.invoke("start-partition-brokers-from-controllers")
