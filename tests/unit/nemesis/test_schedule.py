"""The --nemesis option and the order of fault ops."""

from __future__ import annotations

import itertools
import random

import pytest

from nemesis.composed import COMPOSED
from nemesis.controllers import REMOVE_CONTROLLER, REMOVE_CONTROLLER_PARTITIONED
from nemesis.core import Compose, split_f
from nemesis.decommission import DECOMMISSION_BROKER, DECOMMISSION_KILL_LEADER
from nemesis.expand import ADD_PARTITIONS
from nemesis.file_faults import CORRUPTIONS, FILE_GROUPS
from nemesis.isr import FAULT as ISR_FAULT
from nemesis.late import FAULTS as LATE
from nemesis.names import (
    CLIENT_FAULTS,
    COMPOSED_FAULTS,
    CORRUPT_FAULTS,
    GROUP_FAULTS,
    IN_ALL,
    TARGETS,
)
from nemesis.partition import CUTS
from nemesis.peer_removal import REMOVE_SERVER
from nemesis.schedule import (
    NEMESES,
    build_nemesis,
    fault_ops,
    faults_started,
    parse_nemeses,
    plan_faults,
)
from nemesis.targets import PICKS
from tests.support.fake_cluster import FakeCluster


def test_parse_none_all_and_lists() -> None:
    assert parse_nemeses("none") == ()
    assert len(NEMESES) == 107
    zookeeper, kraft = parse_nemeses("all"), parse_nemeses("all", "kraft")
    # The group faults need a run's group; power, proxy and many-node faults are named.
    groupless = set(IN_ALL) - set(GROUP_FAULTS)
    assert set(zookeeper) == groupless - {
        "partition-controller-quorum",
        "partition-brokers-from-controllers",
    }
    assert set(kraft) == groupless - {"partition-zookeeper"}
    assert parse_nemeses("partition-zookeeper", "kraft") == ("partition-zookeeper",)
    assert parse_nemeses("kill-leader, partition-leader,kill-leader") == (
        "kill-leader",
        "partition-leader",
    )


@pytest.mark.parametrize("text", ["", "bogus", "kill-leader,bogus", "all,none"])
def test_parse_refuses_unknown_names(text: str) -> None:
    with pytest.raises(ValueError, match="nemesis"):
        parse_nemeses(text)


def test_fault_ops_alternate_start_and_stop_and_cover_every_fault_each_round() -> None:
    names = ("kill-leader", "pause-one", "partition-zookeeper")
    ops = list(itertools.islice(fault_ops(names, random.Random(3)), 6 * 4))
    for start, stop in zip(ops[::2], ops[1::2], strict=True):
        assert split_f(start)[0] == "start" and split_f(stop) == ("stop", split_f(start)[1])
    for r in range(4):
        round_faults = [split_f(f)[1] for f in ops[r * 6 : (r + 1) * 6 : 2]]
        assert sorted(round_faults) == sorted(names)


def test_no_fault_ops_without_nemeses() -> None:
    assert list(fault_ops((), random.Random(1))) == []


def test_build_routes_every_fault() -> None:
    composed = build_nemesis(NEMESES, "t", random.Random(1), "t-group")
    assert isinstance(composed, Compose)
    assert composed.faults == NEMESES


@pytest.mark.parametrize("f", ["start", "begin-kill-leader", "stop-"])
def test_split_f_refuses_other_names(f: str) -> None:
    with pytest.raises(ValueError):
        split_f(f)


@pytest.mark.parametrize(
    ("time_limit", "interval", "started"),
    [(120, 10, 6), (120, 6, 10), (60, 10, 3), (10, 10, 0), (10.5, 10, 1), (5, 10, 0)],
)
def test_faults_started_counts_starts_before_the_end(
    time_limit: float, interval: float, started: int
) -> None:
    assert faults_started(time_limit, interval) == started


def test_every_nemesis_name_has_its_fault_and_every_fault_its_name() -> None:
    verbs = [f"{verb}-{t}" for verb in ("kill", "pause") for t in TARGETS]
    power = [f"power-loss-{t}" for t in PICKS]
    proxied = (*LATE, "slow-leader", "slow-network", *CLIENT_FAULTS)
    disk = (*CORRUPT_FAULTS, *COMPOSED)
    clocks = [f"{verb}-clock-{t}" for verb in ("bump", "strobe") for t in PICKS]
    client_clocks = [f"{verb}-clock-clients" for verb in ("bump", "strobe")]
    grown = (ADD_PARTITIONS,)
    membership = (
        REMOVE_CONTROLLER,
        REMOVE_CONTROLLER_PARTITIONED,
        DECOMMISSION_BROKER,
        DECOMMISSION_KILL_LEADER,
        REMOVE_SERVER,
    )
    named = (
        *(*CUTS, *verbs, ISR_FAULT, "partition-coordinator", *power, *disk, *proxied),
        *(*clocks, *client_clocks, *grown, *membership),
    )
    assert named == NEMESES
    assert tuple(PICKS) == TARGETS
    assert tuple(f"{how}-{files}" for files in FILE_GROUPS for how in CORRUPTIONS) == CORRUPT_FAULTS
    assert tuple(COMPOSED) == COMPOSED_FAULTS


def test_renamed_faults_are_read_by_their_new_names() -> None:
    assert parse_nemeses("kill-random,pause-random") == ("kill-one", "pause-one")


def test_a_plan_holds_the_composed_nemesis_and_the_ops_a_seed_gives() -> None:
    names = ("kill-leader", "pause-one")
    plan = plan_faults(names, "t", 60.0, 10.0, random.Random(7))
    assert plan.nemesis.faults == names
    again = random.Random(7)
    build_nemesis(names, "t", again)  # draws nothing: the ops' seed is the next draw
    expected = list(itertools.islice(fault_ops(names, random.Random(again.random())), 8))
    assert list(itertools.islice(plan.ops, 8)) == expected


def test_a_plans_heal_tears_down_and_brings_back_dead_and_paused_nodes() -> None:
    cluster = FakeCluster()
    plan = plan_faults(("kill-leader",), "t", 60.0, 10.0, random.Random(1))
    plan.nemesis.setup(cluster)
    cluster.states["n2"], cluster.states["zk1"] = "exited", "paused"
    report = plan.heal(cluster)
    assert report["revived"] == {"n2": "exited", "zk1": "paused"}
    assert cluster.states["n2"] == cluster.states["zk1"] == "running"


def test_every_corruption_of_a_run_is_one_nemesis() -> None:
    names = ("bitflip-log", "kill-leader", "truncate-index")
    composed = build_nemesis(names, "t", random.Random(1))
    assert sorted(composed.faults) == sorted(names)
    assert len({id(composed._routes[n]) for n in ("bitflip-log", "truncate-index")}) == 1
