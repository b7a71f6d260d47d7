"""The consumer group checks (checkers/groups/consumer.py) on constructed histories: each with one
planted anomaly is found, and the same history without it gives none; a hypothesis test
on the simulated group (tests/support/group_sim.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.groups.consumer import auto_commit_reach, check_groups, group_lines
from checkers.groups.consumer_history import read_group_history
from checkers.queue.reader import read_queue_history
from tests.support.group_sim import GroupSimConfig, GroupSimulation

Event = dict[str, Any]
START = 5_000_000
"""The client clock at the history's time 0."""


class History:
    """Builds a group history one op at a time, each op one tick long, on one clock."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.time = 0

    def op(
        self,
        member: str,
        f: str,
        value: Any = None,
        *,
        key: int | None = None,
        outcome: str = "ok",
        log: Sequence[tuple[str, list[int]]] = (),
        extra: Event | None = None,
    ) -> None:
        extra = extra or {}
        process = int(member[1:])
        invoke: Event = {"process": process, "type": "invoke", "f": f, "value": None}
        if key is not None:
            invoke |= {"key": key, "value": value if f == "send" else None}
        self._add(invoke)
        done: Event = {**invoke, "type": outcome, "value": value, **extra}
        if f == "send":
            done["value"] = extra.pop("acked", None)
            done.pop("acked", None)
        else:
            done["member"] = member
        if log:
            done["group-log"] = [
                {"type": kind, "partitions": parts, "mono-ns": START + self.time + 1}
                for kind, parts in log
            ]
        self.time += 3
        if "group-log" in done or "auto-commits" in done:
            done["mono-ns"] = START + self.time
        self._add(done)
        self.time += 1

    def send(self, member: str, partition: int, offset: int, message: int) -> None:
        self.op(member, "send", message, key=partition, extra={"acked": [offset, message]})

    def _add(self, event: Event) -> None:
        self.events.append({**event, "index": len(self.events), "time": self.time})


def kinds(events: list[Event], lost: Sequence[Any] = (), auto: bool = False) -> dict[str, int]:
    result = check_groups(events, lost, auto)
    found = {k: v["count"] for k, v in result["kinds"].items() if v["count"]}
    assert result["valid"] is (not found)
    return found


def handover(late_revoke: bool) -> list[Event]:
    """p1 reads partition 0 and commits; it revokes, then p2 is assigned and reads on."""
    h = History()
    for offset, message in enumerate((1, 2, 3)):
        h.send("p9", 0, offset, message)
    h.op("p1", "poll", {"0": [[0, 1], [1, 2]]}, log=[("assigned", [0])])
    h.op("p1", "commit", {"0": 2})
    if not late_revoke:
        h.op("p1", "poll", {}, log=[("revoked", [0])])
    h.op("p2", "poll", {"0": [[2, 3]]}, log=[("assigned", [0])])
    if late_revoke:
        h.op("p1", "poll", {}, log=[("revoked", [0])])
    h.op("p2", "commit", {"0": 3})
    return h.events


def test_a_handover_in_the_protocols_order_is_no_anomaly() -> None:
    assert kinds(handover(late_revoke=False)) == {}
    result = check_groups(handover(late_revoke=False), [], False)
    assert result["callbacks"] == {"assigned": 2, "revoked": 1}
    assert result["commits"] == {"ok": 2, "fail": 0, "info": 0, "auto": 0}
    assert result["committed"] == {"0": 3}
    assert result["takeovers"] == {"judged": 1, "unjudged": {"no commit before": 1}}


def test_an_owner_that_revokes_after_its_successor_was_assigned_is_double_ownership() -> None:
    assert kinds(handover(late_revoke=True)) == {"double-ownership": 1}
    [case] = check_groups(handover(late_revoke=True), [], False)["kinds"]["double-ownership"][
        "cases"
    ]
    assert (case["partition"], case["member"], case["owner"], case["ended_by"]) == (
        0,
        "p2",
        "p1",
        "revoked",
    )


def test_an_owner_fenced_before_its_successor_was_assigned_is_counted_not_an_anomaly() -> None:
    events = handover(late_revoke=True)
    for e in events:
        for entry in e.get("group-log", []):
            if e.get("member") == "p1" and entry["type"] == "revoked":
                entry["type"] = "lost"
    assert kinds(events) == {}
    assert check_groups(events, [], False)["overlaps"] == {"fenced": 1, "unended": 0}


def test_an_owner_whose_client_had_closed_holds_nothing() -> None:
    h = History()
    h.op("p1", "poll", {}, log=[("assigned", [0])])  # then its client closes
    h.op("p2", "poll", {}, log=[("assigned", [0])])
    assert kinds(h.events) == {}
    assert check_groups(h.events, [], False)["overlaps"] == {"fenced": 0, "unended": 0}


def test_a_commit_below_an_earlier_completed_one_is_a_regression() -> None:
    h = History()
    h.op("p1", "poll", {}, log=[("assigned", [0, 1])])
    h.op("p1", "commit", {"0": 5, "1": 2})
    h.op("p1", "commit", {"0": 4, "1": 2})
    [case] = check_groups(h.events, [], False)["kinds"]["commit-regression"]["cases"]
    assert (case["partition"], case["offset"], case["earlier_offset"]) == (0, 4, 5)
    assert kinds(h.events) == {"commit-regression": 1}


def test_commits_that_overlap_in_time_are_not_ordered() -> None:
    h = History()
    h.op("p1", "commit", {"0": 5})
    h.op("p2", "commit", {"0": 4})
    # p2's invoke before p1's completion: the two events swap places, times and indexes.
    h.events[1], h.events[2] = h.events[2], h.events[1]
    for i in (1, 2):
        h.events[i] |= {"index": i, "time": h.events[3 - i]["time"]}
    assert kinds(h.events) == {}


def test_a_failed_commit_neither_regresses_nor_bounds() -> None:
    h = History()
    h.op("p1", "commit", {"0": 5})
    h.op("p1", "commit", {"0": 1}, outcome="fail", extra={"error": "ILLEGAL_GENERATION"})
    assert kinds(h.events) == {}


def test_a_successor_that_starts_above_the_committed_offset_skipped_records() -> None:
    events = handover(late_revoke=False)
    took = next(e for e in events if e.get("member") == "p2" and e["type"] == "ok")
    took["value"] = {"0": [[3, 4]]}  # committed 2, first read 3
    found = check_groups(events, [], False)["kinds"]["takeover-skip"]["cases"]
    assert [(c["partition"], c["first_offset"], c["committed"]) for c in found] == [(0, 3, 2)]
    # the message at offset 2 lies below p2's commit of 3 and nobody read it
    assert kinds(events) == {"takeover-skip": 1, "at-least-once": 1}


def test_the_successors_own_commit_before_reading_is_no_bound() -> None:
    h = History()
    h.op("p1", "poll", {"0": [[0, 1]]}, log=[("assigned", [0])])
    h.op("p1", "commit", {"0": 1})
    h.op("p1", "poll", {}, log=[("revoked", [0])])
    h.op("p2", "commit", {"0": 2}, log=[("assigned", [0])])  # its skipped start, committed
    h.op("p2", "poll", {"0": [[2, 3]]})
    assert kinds(h.events) == {"takeover-skip": 1}


def rejoin_in_one_op(first_record_ns: int | None) -> list[Event]:
    """p1 reads partition 0 to offset 1 and commits 1; in one op it revokes, is assigned
    it again and reads from offset 2 (a skip: the commit says 1)."""
    h = History()
    for offset, message in enumerate((1, 2, 3)):
        h.send("p9", 0, offset, message)
    h.op("p1", "poll", {"0": [[0, 1]]}, log=[("assigned", [0])])
    h.op("p1", "commit", {"0": 1})
    extra = {} if first_record_ns is None else {"first-record-ns": first_record_ns}
    h.op("p1", "poll", {"0": [[2, 3]]}, log=[("revoked", [0]), ("assigned", [0])], extra=extra)
    return h.events


def test_a_partition_revoked_and_assigned_in_one_op_is_judged_when_its_records_came_after() -> None:
    events = rejoin_in_one_op(None)
    unjudged = check_groups(events, [], False)["takeovers"]["unjudged"]
    assert unjudged == {"no commit before": 1, "revoked and assigned in one op": 1}
    callbacks = events[-1]["group-log"][-1]["mono-ns"]  # both at the op's start
    assert kinds(rejoin_in_one_op(callbacks + 1)) == {"takeover-skip": 1}
    assert (
        "revoked and assigned in one op"
        in (check_groups(rejoin_in_one_op(callbacks), [], False)["takeovers"]["unjudged"])
    )


def test_an_acknowledged_message_below_a_commit_that_nobody_polled_is_not_at_least_once() -> None:
    h = History()
    for offset, message in enumerate((1, 2, 3)):
        h.send("p9", 0, offset, message)
    h.op("p1", "poll", {"0": [[0, 1], [2, 3]]}, log=[("assigned", [0])])
    h.op("p1", "commit", {"0": 3})
    [case] = check_groups(h.events, [], False)["kinds"]["at-least-once"]["cases"]
    assert (case["partition"], case["offset"], case["value"], case["committed"]) == (0, 1, 2, 3)
    assert kinds(h.events) == {"at-least-once": 1}
    assert kinds(h.events, lost=[(0, 2)]) == {}  # Kafka lost it: the queue checker's, not ours
    # lost in another partition: no excuse for this one (issue 35)
    assert kinds(h.events, lost=[(1, 2)]) == {"at-least-once": 1}


def test_at_latest_what_came_before_a_start_without_a_commit_is_reset_skipped() -> None:
    # Offsets 0 and 1 were sent before p1 started the partition at its end, 3 before p2
    # took it over with nothing committed yet (auto.offset.reset=latest: documented);
    # offset 6, skipped after the first commit, is still a case.
    h = History()
    for offset, message in enumerate((1, 2, 3, 4, 5, 6, 7, 8)):
        h.send("p9", 0, offset, message)
    h.op("p1", "poll", {"0": [[2, 3]]}, log=[("assigned", [0])])
    h.op("p2", "poll", {"0": [[4, 5], [5, 6]]}, log=[("assigned", [0])])
    h.op("p2", "commit", {"0": 6})
    h.op("p2", "poll", {"0": [[7, 8]]})
    h.op("p2", "commit", {"0": 8})
    assert kinds(h.events) == {"at-least-once": 4}
    result = check_groups(h.events, [], False, from_latest=True)
    [case] = result["kinds"]["at-least-once"]["cases"]
    assert case["offset"] == 6 and result["reset_skipped"] == 3
    assert any("skipped by auto.offset.reset=latest" in line for line in group_lines(result))


def test_auto_commits_are_measured_against_what_the_polls_returned() -> None:
    h = History()
    h.op("p1", "poll", {"0": [[0, 1], [1, 2]]}, log=[("assigned", [0])])
    reports = [
        {"offsets": {"0": 2}, "mono-ns": START + 7},  # returned: the poll before ended at 1
        {"offsets": {"0": 1}, "mono-ns": START + 8},  # behind
        {"offsets": {"0": 4}, "mono-ns": START + 9},  # the same op returned 2 and 3
        {"offsets": {"0": 9}, "mono-ns": START + 9},  # ahead of anything returned
    ]
    h.op("p1", "poll", {"0": [[2, 3], [3, 4]]}, extra={"auto-commits": reports})
    reach = auto_commit_reach(read_group_history(h.events))
    assert reach["counts"] == {
        "ahead": 1,
        "same-op": 1,
        "returned": 1,
        "behind": 1,
        "nothing-returned": 0,
    }
    assert [c["offset"] for c in reach["ahead_cases"]] == [9]
    result = check_groups(h.events, [], True)
    assert result["valid"] is True and result["auto_commit"]["counts"]["ahead"] == 1
    assert result["takeovers"]["unjudged"] == {"auto-commit": 1}


def test_the_queue_reader_skips_the_commits() -> None:
    events = handover(late_revoke=False)
    commits = {e["index"] for e in events if e["f"] == "commit"}
    assert len(commits) == 4
    read = read_queue_history(events)
    assert not commits & {op.index for op in read.consumer_ops}
    without = [e for e in events if e["f"] != "commit"]
    assert read == read_queue_history(without)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    plant=st.sampled_from([None, "double-ownership", "commit-regression", "takeover-skip"]),
)
def test_a_simulated_group_shows_exactly_what_was_planted(seed: int, plant: str | None) -> None:
    sim = GroupSimulation(random.Random(seed), GroupSimConfig(plant=plant))
    found = kinds(sim.run())
    if plant is None:
        assert found == {}
    elif sim.planted:
        assert plant in found
