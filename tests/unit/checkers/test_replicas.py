"""The replica comparison (checkers/replicas.py): divergence planted below and above the
high watermark, replicas that cannot be read, acknowledged sends a replica lacks, and a
property: replicas that agree below the high watermark, each with any prefix of the
leader's tail above it, are always valid."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from checkers import check_replicas

NODES = ["n1", "n2", "n3"]
ASSIGNED = {0: NODES}


def log(*values: int, start: int = 0) -> dict[int, str]:
    return {start + i: str(v) for i, v in enumerate(values)}


def test_identical_replicas_agree() -> None:
    logs = {n: {0: log(10, 11, 12)} for n in NODES}
    acked = [(0, 0, 10), (0, 1, 11), (0, 2, 12)]
    result = check_replicas(logs, ASSIGNED, {0: 3}, acked, {0: "n1"})
    assert result["valid"] is True
    assert result["divergent_below_hw"] == 0 and result["lost"] == 0
    entry = result["partitions"]["0"]
    assert entry["replicas"]["n2"] == {
        "records": 3,
        "log_end": 3,
        "divergent_below_hw": 0,
        "lacks_acked": 0,
        "lacks": [],
    }


def test_another_record_below_the_high_watermark_is_invalid_and_names_the_replica() -> None:
    logs = {"n1": {0: log(10, 11, 12)}, "n2": {0: log(10, 99, 12)}, "n3": {0: log(10, 11, 12)}}
    result = check_replicas(logs, ASSIGNED, {0: 3}, [(0, 1, 11)], {0: "n1"})
    assert result["valid"] is False
    assert result["divergent_below_hw"] == 1
    case = result["partitions"]["0"]["divergences"][0]
    assert case == {"offset": 1, "held": {"n1": "11", "n2": "99", "n3": "11"}, "diverge": ["n2"]}
    assert result["nodes"]["n2"] == {"divergent_below_hw": 1, "lacks_acked": 1, "partitions": [0]}
    assert result["nodes"]["n1"]["divergent_below_hw"] == 0
    assert result["lost"] == 0  # n1 and n3 still hold it


def test_a_replica_missing_a_record_below_the_high_watermark_is_invalid() -> None:
    short = log(10, 11)
    logs = {"n1": {0: log(10, 11, 12)}, "n2": {0: short}, "n3": {0: log(10, 11, 12)}}
    result = check_replicas(logs, ASSIGNED, {0: 3}, [], {0: "n1"})
    assert result["valid"] is False
    assert result["partitions"]["0"]["divergences"][0]["held"]["n2"] is None
    assert result["nodes"]["n2"]["divergent_below_hw"] == 1


def test_a_replica_out_of_the_isr_may_lag_but_an_in_sync_one_may_not() -> None:
    # A follower whose fetcher failed on its changed segment (a truncate-log run on 4.4.0)
    # stays out of the ISR with a prefix: nobody reads it, so it is behind, not divergent.
    logs = {"n1": {0: log(10, 11, 12)}, "n2": {0: log(10)}, "n3": {0: log(10, 11, 12)}}
    out = check_replicas(logs, ASSIGNED, {0: 3}, [], {0: "n1"}, in_sync={0: ["n1", "n3"]})
    assert out["valid"] is True and out["divergent_below_hw"] == 0
    assert out["behind_out_of_isr"] == 2
    assert out["partitions"]["0"]["replicas"]["n2"]["in_isr"] is False
    still = check_replicas(logs, ASSIGNED, {0: 3}, [], {0: "n1"}, in_sync={0: NODES})
    assert still["valid"] is False and still["divergent_below_hw"] == 2
    other = {**logs, "n3": {0: log(10, 99, 12)}}  # an in-sync replica differs too
    mixed = check_replicas(other, ASSIGNED, {0: 3}, [], {0: "n1"}, in_sync={0: ["n1", "n3"]})
    assert mixed["valid"] is False


def test_a_replica_that_holds_nothing_of_an_assigned_partition_diverges() -> None:
    logs = {"n1": {0: log(10)}, "n2": {}, "n3": {0: log(10)}}
    result = check_replicas(logs, ASSIGNED, {0: 1}, [(0, 0, 10)], {0: "n1"})
    assert result["valid"] is False
    assert result["nodes"]["n2"] == {"divergent_below_hw": 1, "lacks_acked": 1, "partitions": [0]}


def test_differences_above_the_high_watermark_are_reported_but_valid() -> None:
    logs = {"n1": {0: log(10, 11, 12)}, "n2": {0: log(10, 11)}, "n3": {0: log(10, 11, 77)}}
    result = check_replicas(logs, ASSIGNED, {0: 2}, [], {0: "n1"})
    assert result["valid"] is True
    assert result["divergent_above_hw"] == 1 and result["divergent_below_hw"] == 0


def test_offsets_no_replica_holds_are_no_divergence() -> None:
    # A transaction marker's offset holds no data record on any replica.
    gap = {0: "10", 2: "12"}
    logs = {n: {0: dict(gap)} for n in NODES}
    assert check_replicas(logs, ASSIGNED, {0: 3}, [], {0: "n1"})["valid"] is True


def test_a_tie_is_broken_by_the_leader() -> None:
    nodes = ["n1", "n2"]
    logs = {"n1": {0: log(10)}, "n2": {0: log(20)}}
    result = check_replicas(logs, {0: nodes}, {0: 1}, [], {0: "n2"})
    assert result["partitions"]["0"]["divergences"][0]["diverge"] == ["n1"]
    leaderless = check_replicas(logs, {0: nodes}, {0: 1}, [], {})
    assert leaderless["partitions"]["0"]["divergences"][0]["diverge"] == ["n1", "n2"]


def test_an_unreadable_replica_or_an_unknown_high_watermark_is_unknown() -> None:
    logs = {n: {0: log(10, 11)} for n in NODES}
    unread = check_replicas(logs, ASSIGNED, {0: 2}, [], {0: "n1"}, unreadable=["n3"])
    assert unread["valid"] == "unknown"
    assert unread["partitions"]["0"]["unreadable"] == ["n3"]
    no_hw = check_replicas(logs, ASSIGNED, {}, [], {0: "n1"})
    assert no_hw["valid"] == "unknown" and "unknown" in no_hw["partitions"]["0"]
    # A difference below a known high watermark is invalid even with a replica unread.
    logs["n2"] = {0: log(10, 99)}
    assert check_replicas(logs, ASSIGNED, {0: 2}, [], {}, unreadable=["n3"])["valid"] is False


def test_acknowledged_sends_lacking_from_each_replica_and_from_every_one() -> None:
    # After a power cut of every broker: n1 kept 10 and 11, the others only 10.
    logs = {"n1": {0: log(10, 11)}, "n2": {0: log(10)}, "n3": {0: log(10)}}
    acked = [(0, 0, 10), (0, 1, 11), (0, 2, 12)]
    result = check_replicas(logs, ASSIGNED, {0: 1}, acked, {0: "n2"})
    assert result["valid"] is True  # they agree below the high watermark, 1
    entry = result["partitions"]["0"]
    assert {n: r["lacks"] for n, r in entry["replicas"].items()} == {
        "n1": [12],
        "n2": [11, 12],
        "n3": [11, 12],
    }
    assert entry["lost_everywhere"] == [12] and result["lost"] == 1
    assert result["nodes"]["n2"]["lacks_acked"] == 2


def test_a_message_held_at_another_offset_is_not_lacking() -> None:
    logs = {n: {0: log(10, 11)} for n in NODES}
    result = check_replicas(logs, ASSIGNED, {0: 2}, [(0, 5, 11)], {0: "n1"})
    assert result["lost"] == 0


def test_partitions_are_judged_apart() -> None:
    logs = {n: {0: log(1, 2), 1: log(3, 4)} for n in NODES}
    logs["n3"][1] = log(3, 5)
    result = check_replicas(logs, {0: NODES, 1: NODES}, {0: 2, 1: 2}, [], {0: "n1", 1: "n1"})
    assert result["partitions"]["0"]["valid"] is True
    assert result["partitions"]["1"]["valid"] is False
    assert result["nodes"]["n3"]["partitions"] == [1]


@st.composite
def agreeing(draw: st.DrawFn) -> tuple[dict[str, dict[int, dict[int, str]]], int, list[int]]:
    """Replicas that agree below a high watermark, each with a prefix of the leader's tail
    above it (a follower a fetch behind), over sparse offsets (markers)."""
    offsets = sorted(draw(st.sets(st.integers(0, 60), max_size=30)))
    leader = {o: str(draw(st.integers(0, 3))) for o in offsets}
    hw = draw(st.integers(0, 62))
    committed = {o: v for o, v in leader.items() if o < hw}
    tail = [o for o in offsets if o >= hw]
    logs = {"n1": {0: dict(leader)}}
    for node in ("n2", "n3"):
        kept = draw(st.integers(0, len(tail)))
        logs[node] = {0: committed | {o: leader[o] for o in tail[:kept]}}
    acked = [int(v) for o, v in committed.items()]
    return logs, hw, acked


@given(agreeing())
def test_replicas_that_agree_below_the_high_watermark_are_valid(
    drawn: tuple[dict[str, dict[int, dict[int, str]]], int, list[int]],
) -> None:
    logs, hw, acked = drawn
    sends = [(0, i, m) for i, m in enumerate(acked)]
    result = check_replicas(logs, ASSIGNED, {0: hw}, sends, {0: "n1"})
    assert result["valid"] is True
    assert result["divergent_below_hw"] == 0
    assert result["lost"] == 0
    assert all(e["lacks_acked"] == 0 for e in result["nodes"].values())
    assert result["partitions"]["0"]["divergences"] == []


def test_an_unknown_verdict_says_why() -> None:
    logs = {n: {0: log(10)} for n in NODES}
    result = check_replicas(logs, {0: NODES, 1: NODES}, {0: 1}, [], unreadable=["n2"])
    assert result["unknown"] == [
        "partition 0: the replicas on n2 could not be read",
        "partition 1: the replicas on n2 could not be read; no high watermark known "
        "(no final drain of this partition)",
    ]
