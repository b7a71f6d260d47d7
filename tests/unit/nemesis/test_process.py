"""Process faults target the leader the cluster reports at that moment, and every broker
they take down comes back on stop or teardown."""

from __future__ import annotations

import random

import pytest

from nemesis.cluster import Cluster
from nemesis.core import Skipped
from nemesis.process import ProcessFault, revive
from tests.support.fake_cluster import FakeCluster


def _fault(name: str, cluster: FakeCluster) -> ProcessFault:
    fault = ProcessFault(name, "t", random.Random(1))
    c: Cluster = cluster
    fault.setup(c)
    return fault


def test_kill_leader_targets_the_current_leader_and_stop_restarts_it() -> None:
    cluster = FakeCluster(leader=2)
    fault = _fault("kill-leader", cluster)
    done = fault.invoke("start-kill-leader")
    assert done["killed"] == "n2" and done["before"]["0"]["leader"] == "n2"
    cluster.leader = 3  # asked anew each time, never cached
    assert fault.invoke("stop-kill-leader")["restored"] == ["n2"]
    assert fault.invoke("start-kill-leader")["killed"] == "n3"
    assert cluster.actions == [("kill", "n2"), ("start", "n2"), ("kill", "n3")]


def test_no_leader_means_the_fault_is_skipped_with_the_reason() -> None:
    cluster = FakeCluster(leader=-1)
    fault = _fault("pause-leader", cluster)
    with pytest.raises(Skipped, match="no leader"):
        fault.invoke("start-pause-leader")
    with pytest.raises(Skipped, match="no node is paused"):
        fault.invoke("stop-pause-leader")
    assert cluster.actions == []


def test_teardown_restores_what_stop_could_not() -> None:
    cluster = FakeCluster()
    fault = _fault("kill-one", cluster)
    killed = fault.invoke("start-kill-one")["killed"]
    cluster.fail_start.add(killed)
    with pytest.raises(RuntimeError, match="could not restore"):
        fault.invoke("stop-kill-one")
    cluster.fail_start.clear()
    assert fault.teardown() == {"kill-one": {"restored": [killed]}}
    assert fault.teardown() == {}


def test_pause_random_never_picks_a_broker_already_down() -> None:
    cluster = FakeCluster()
    fault = _fault("pause-one", cluster)
    paused = {fault.invoke("start-pause-one")["paused"] for _ in range(3)}
    assert paused == {"n1", "n2", "n3"}
    with pytest.raises(Skipped, match="already down"):
        fault.invoke("start-pause-one")


def test_stopping_a_kill_also_starts_a_broker_that_died_by_itself() -> None:
    cluster = FakeCluster(leader=2)
    fault = _fault("kill-leader", cluster)
    fault.invoke("start-kill-leader")
    cluster.states["n3"] = "exited"  # e.g. its ZooKeeper session expired while starting
    cluster.states["n1"] = "paused"  # another fault's business: left alone during the run
    done = fault.invoke("stop-kill-leader")
    assert done["restored"] == ["n2"] and done["revived"] == {"n3": "exited"}
    assert cluster.states == {"n1": "paused", "n2": "running", "n3": "running", "zk1": "running"}


def test_revive_for_the_final_heal_starts_and_resumes_every_node() -> None:
    cluster = FakeCluster()
    cluster.states |= {"n1": "exited", "n3": "paused", "zk1": "dead"}
    assert revive(cluster, resume_paused=True) == {"n1": "exited", "n3": "paused", "zk1": "dead"}
    assert set(cluster.states.values()) == {"running"}
    assert revive(cluster, resume_paused=True) == {}


def test_a_majority_goes_down_at_once_and_every_node_comes_back_quorum_first() -> None:
    cluster = FakeCluster()
    fault = _fault("kill-majority", cluster)
    killed = fault.invoke("start-kill-majority")["killed"]
    assert isinstance(killed, list) and len(killed) == 2 and set(killed) <= set(cluster.brokers)
    assert fault.invoke("stop-kill-majority")["restored"] == killed
    every = _fault("pause-all", cluster)
    assert every.invoke("start-pause-all")["paused"] == ["n1", "n2", "n3", "zk1"]
    assert every.invoke("stop-pause-all")["restored"] == ["zk1", "n1", "n2", "n3"]


def test_the_transaction_coordinator_is_the_leader_of_the_transaction_log() -> None:
    cluster = FakeCluster(leader=3)  # every topic's partition 0 is led by n3 here
    done = _fault("kill-txn-coordinator", cluster).invoke("start-kill-txn-coordinator")
    assert done["killed"] == "n3" and done["role"] == "the transaction coordinator"
    with pytest.raises(Skipped, match="no transaction coordinator"):
        _fault("pause-txn-coordinator", FakeCluster(leader=-1)).invoke(
            "start-pause-txn-coordinator"
        )
