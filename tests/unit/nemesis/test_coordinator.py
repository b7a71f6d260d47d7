"""The group faults aim at the broker FindCoordinator names at each start, say which
group it coordinated, bring it back on stop, and exist only for runs with a group; and
FindCoordinator's v4 request and answer as the protocol lays them out (no Docker)."""

from __future__ import annotations

import random

import pytest

from harness.cluster.coordinator import find_coordinator_body, read_find_coordinator
from harness.cluster.wire import Reader, WireError, Writer
from nemesis import grudge as g
from nemesis.cluster import Cluster
from nemesis.core import Nemesis, Skipped
from nemesis.names import GROUP_FAULTS, IN_ALL
from nemesis.schedule import build_nemesis, parse_nemeses
from tests.support.fake_cluster import FakeCluster


def _fault(name: str, cluster: FakeCluster, group: str = "t-group") -> Nemesis:
    nemesis = build_nemesis([name], "t", random.Random(1), group)
    c: Cluster = cluster
    nemesis.setup(c)
    return nemesis


def test_kill_coordinator_kills_the_node_named_at_each_start() -> None:
    cluster = FakeCluster()
    cluster.coordinators["t-group"] = "n2"
    fault = _fault("kill-coordinator", cluster)
    done = fault.invoke("start-kill-coordinator")
    assert done["killed"] == "n2" and done["coordinates"] == "t-group"
    cluster.coordinators["t-group"] = "n3"  # asked anew: the last fault may have moved it
    assert fault.invoke("stop-kill-coordinator")["restored"] == ["n2"]
    assert fault.invoke("start-kill-coordinator")["killed"] == "n3"
    assert cluster.actions == [("kill", "n2"), ("start", "n2"), ("kill", "n3")]


def test_pause_coordinator_pauses_and_resumes_it() -> None:
    cluster = FakeCluster()
    cluster.coordinators["t-group"] = "n1"
    fault = _fault("pause-coordinator", cluster)
    assert fault.invoke("start-pause-coordinator")["paused"] == "n1"
    assert fault.invoke("stop-pause-coordinator")["restored"] == ["n1"]
    assert cluster.actions == [("pause", "n1"), ("resume", "n1")]


def test_partition_coordinator_cuts_it_from_every_other_node() -> None:
    cluster = FakeCluster()
    cluster.coordinators["t-group"] = "n3"
    done = _fault("partition-coordinator", cluster).invoke("start-partition-coordinator")
    assert done["isolated"] == "n3" and done["coordinates"] == "t-group"
    assert done["grudge"] == g.describe(g.isolate("n3", cluster.nodes))
    assert {node for node, _ in cluster.execs} == set(cluster.nodes)


def test_no_coordinator_known_skips_the_fault_with_the_reason() -> None:
    cluster = FakeCluster()
    fault = _fault("kill-coordinator", cluster)
    with pytest.raises(Skipped, match="no coordinator of group 't-group' known"):
        fault.invoke("start-kill-coordinator")
    assert cluster.actions == []


def test_group_faults_need_a_run_with_a_group() -> None:
    with pytest.raises(ValueError, match="needs a queue workload with --sub-via subscribe"):
        parse_nemeses("kill-leader,kill-coordinator")
    assert not set(GROUP_FAULTS) & set(parse_nemeses("all", "kraft"))
    in_all = set(GROUP_FAULTS) & set(IN_ALL)
    assert in_all and in_all <= set(parse_nemeses("all", "kraft", grouped=True))
    assert parse_nemeses("pause-coordinator", grouped=True) == ("pause-coordinator",)
    with pytest.raises(ValueError, match="this run has none"):
        build_nemesis(["kill-coordinator"], "t", random.Random(1), None)


def _answer(*entries: tuple[str, int, int]) -> Reader:
    w = Writer().int32(0).array_length(len(entries))
    for key, node_id, error in entries:
        w.string(key).int32(node_id).string(f"n{node_id}").int32(9092).int16(error)
        w.string("not available" if error else "").no_tags()
    return Reader(bytes(w.no_tags().data))


def test_find_coordinator_request_and_answer_follow_the_v4_schema() -> None:
    request = Reader(find_coordinator_body("t-group"))
    assert request.int8() == 0 and request.array_length() == 1
    assert request.string() == "t-group" and request.tags() == {}
    found = read_find_coordinator(_answer(("other", 1, 0), ("t-group", 3, 0)), "t-group")
    assert (found.error, found.node_id, found.host, found.port) == (0, 3, "n3", 9092)
    refused = read_find_coordinator(_answer(("t-group", -1, 15)), "t-group")
    assert (refused.error, refused.message) == (15, "not available")
    with pytest.raises(WireError, match="nothing about group 't-group'"):
        read_find_coordinator(_answer(("other", 1, 0)), "t-group")
