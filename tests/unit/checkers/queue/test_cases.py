"""Tests of the queue checker on hand-built histories: each anomaly kind is caught and names
the right ops, and the look-alikes that are not anomalies (boundaries, sparse offsets) are not.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from checkers.queue import checker as queue
from tests.support.queue_builder import QueueHistoryBuilder

DRAINER = 99


def check(b: QueueHistoryBuilder, **policy: Any) -> dict[str, Any]:
    return queue.check(b.events, **policy)


def counts(result: dict[str, Any]) -> dict[str, int]:
    return {k: v["count"] for k, v in result["kinds"].items() if v["count"]}


def three_sent() -> QueueHistoryBuilder:
    """Messages 10, 11, 12 acknowledged at offsets 0, 1, 2 of partition 0."""
    b = QueueHistoryBuilder()
    for offset, message in enumerate((10, 11, 12)):
        b.send(0, 0, message, offset)
    return b


ALL_THREE = [(0, 10), (1, 11), (2, 12)]


def test_a_clean_history_has_no_anomaly() -> None:
    b = three_sent()
    b.nemesis("start-partition")
    b.poll(1, {0: ALL_THREE[:2]}, rebalanced={"assigned": [0], "revoked": []})
    b.poll(1, {0: ALL_THREE[2:]})
    b.drain(DRAINER, 0, ALL_THREE)
    result = check(b)
    assert result["valid"] is True
    assert counts(result) == {}
    assert (result["sends"], result["acknowledged"], result["lost"]) == (3, 3, 0)
    assert result["unknown"] == []
    assert result["lost_acks"]["valid"] is True


def test_lost_write_names_the_send_and_its_offset() -> None:
    b = three_sent()
    b.drain(DRAINER, 0, [(0, 10), (2, 12)])
    result = check(b)
    assert result["valid"] is False
    lost = result["kinds"]["lost-write"]
    assert lost["invalidating"] is True
    assert lost["cases"] == [
        {"index": 2, "process": 0, "partition": 0, "offset": 1, "value": 11, "judged_by": "drain"}
    ]
    assert (result["lost"], result["lost_messages"]) == (1, [11])
    assert result["lost_fraction"] == pytest.approx(1 / 3)
    assert (result["lost_acks"]["ack_count"], result["lost_acks"]["lost_count"]) == (3, 1)
    lines = queue.explain(result)
    assert lines[0] == "3 sends, 3 acknowledged, 1 lost (33.3%)"
    assert "lost-write: 1 (makes the history invalid)" in lines
    assert any("send of 11 (op 2" in line and "offset 1" in line for line in lines)


def test_the_last_ok_drain_of_a_partition_is_what_survived() -> None:
    b = three_sent()
    b.drain(DRAINER, 0, ALL_THREE)
    b.drain(DRAINER, 0, [], outcome="fail")
    b.drain(DRAINER, 0, ALL_THREE[1:])  # a retry after the log was truncated
    result = check(b)
    assert [c["value"] for c in result["kinds"]["lost-write"]["cases"]] == [10]


def test_indeterminate_and_failed_sends_are_never_lost() -> None:
    b = three_sent()
    b.send(0, 0, 13, None, outcome="info")
    b.send(1, 0, 14, None, outcome="fail")
    b.drain(DRAINER, 0, ALL_THREE)
    result = check(b)
    assert result["valid"] is True
    assert (result["sends"], result["acknowledged"]) == (5, 3)


def test_no_drain_and_no_poll_means_losses_cannot_be_judged() -> None:
    # Changed with the polls' judgement of losses: what nothing read is unseen (invalid),
    # and unknown only as a loss.
    b = three_sent()
    result = check(b)
    assert result["valid"] is False
    assert counts(result) == {"unseen": 3}
    assert result["unknown"] == [
        "partition 0 has no final drain, and 3 acknowledged sends no poll read lie beyond "
        "any offset (no poll read it), where the polls reached: whether they were lost "
        "cannot be judged"
    ]
    assert result["unknown"][0] in queue.explain(result)
    assert check(b, ignore={"unseen"})["valid"] == "unknown"


def test_an_undrained_partition_is_named() -> None:
    b = three_sent()
    b.send(0, 1, 20, 0)
    b.drain(DRAINER, 0, ALL_THREE)
    result = check(b, ignore={"unseen"})
    assert result["valid"] == "unknown"
    assert [r.split(",")[0] for r in result["unknown"]] == ["partition 1 has no final drain"]


def test_a_loss_elsewhere_still_makes_it_invalid() -> None:
    b = three_sent()
    b.send(0, 1, 20, 0)
    b.drain(DRAINER, 0, ALL_THREE[1:])
    assert check(b)["valid"] is False


def test_unseen_counts_acknowledged_sends_nothing_read() -> None:
    # Changed: a drain's read counts (Jepsen's final polls), and unseen makes it invalid.
    b = three_sent()
    b.poll(1, {0: ALL_THREE[:1]})
    result = check(b)
    assert result["valid"] is False
    unseen = result["kinds"]["unseen"]
    assert (unseen["count"], unseen["invalidating"]) == (2, True)
    assert [c["value"] for c in unseen["cases"]] == [11, 12]
    series = result["unseen_over_time"]
    # The last change: the poll that received 10 leaves 11 and 12 unseen.
    assert series[-1] == [b.events[7]["time"], 2]
    assert max(count for _, count in series) == 3  # before the poll


def test_unseen_over_time_rises_and_falls() -> None:
    b = three_sent()
    b.poll(1, {0: ALL_THREE})
    b.drain(DRAINER, 0, ALL_THREE)
    series = check(b)["unseen_over_time"]
    assert max(count for _, count in series) == 3
    assert series[-1][1] == 0
    assert all(later[0] > earlier[0] for earlier, later in itertools.pairwise(series))


def test_duplicate_names_both_positions() -> None:
    b = three_sent()
    poll = b.poll(1, {0: [*ALL_THREE, (3, 11)]})
    b.drain(DRAINER, 0, [*ALL_THREE, (3, 11)])
    result = check(b)
    assert result["valid"] is False
    [case] = result["kinds"]["duplicate"]["cases"]
    assert case["value"] == 11
    assert case["positions"] == [[0, 1], [0, 3]]
    assert [(o["by"], o["index"]) for o in case["observed"]] == [("send", 2), ("poll", poll)]
    assert case["partition"] == 0


def test_inconsistent_offsets_names_each_observer() -> None:
    b = three_sent()
    poll = b.poll(1, {0: [(0, 10), (1, 77)]})
    b.drain(DRAINER, 0, ALL_THREE)
    result = check(b)
    assert result["valid"] is False
    [case] = result["kinds"]["inconsistent-offsets"]["cases"]
    assert (case["partition"], case["offset"], case["values"]) == (0, 1, [11, 77])
    assert [(o["by"], o["index"]) for o in case["observed"]] == [("send", 2), ("poll", poll)]
    assert any(
        "partition 0 offset 1 held 11 (send op 2) and 77 (poll op" in line
        for line in queue.explain(result)
    )


def test_two_sends_acknowledged_at_one_offset_are_inconsistent() -> None:
    b = three_sent()
    b.send(1, 0, 13, 2)
    b.drain(DRAINER, 0, ALL_THREE)
    result = check(b)
    [case] = result["kinds"]["inconsistent-offsets"]["cases"]
    assert case["values"] == [12, 13]
    assert result["kinds"]["lost-write"]["count"] == 1


def test_nonmonotonic_poll_within_and_across_polls() -> None:
    # Changed: within one poll it is Jepsen's int-nonmonotonic-poll; under assign, invalid.
    b = three_sent()
    first = b.poll(1, {0: ALL_THREE[:2]})
    second = b.poll(1, {0: ALL_THREE[1:]})
    third = b.poll(1, {0: [(2, 12), (0, 10)]})
    b.drain(DRAINER, 0, ALL_THREE)
    result = check(b)
    assert result["valid"] is False
    steps = {
        kind: [(c["prior_offset"], c["prior_index"], c["offset"], c["index"]) for c in cases]
        for kind in ("nonmonotonic-poll", "int-nonmonotonic-poll")
        for cases in [result["kinds"][kind]["cases"]]
    }
    assert steps == {
        "nonmonotonic-poll": [(1, first, 1, second), (2, second, 2, third)],
        "int-nonmonotonic-poll": [(2, third, 0, third)],
    }
    case = result["kinds"]["nonmonotonic-poll"]["cases"][0]
    assert case["process"] == 1 and case["partition"] == 0


@pytest.mark.parametrize(
    "boundary",
    ["assign-away-and-back", "rebalanced", "seek", "subscribe", "failed-poll", "other-process"],
)
def test_a_boundary_forgets_the_position(boundary: str) -> None:
    b = three_sent()
    b.consumer_op(1, "assign", [0, 1])
    b.poll(1, {0: ALL_THREE})
    extra: dict[str, Any] = {}
    process = 1
    if boundary == "assign-away-and-back":
        b.consumer_op(1, "assign", [1])
        b.consumer_op(1, "assign", [0, 1])
    elif boundary == "rebalanced":
        extra = {"rebalanced": {"assigned": [0], "revoked": []}}
    elif boundary == "seek":
        b.consumer_op(1, "seek", {"0": 0})
    elif boundary == "subscribe":
        b.consumer_op(1, "subscribe", ["topic"])
    elif boundary == "failed-poll":
        b.poll(1, {}, outcome="fail")
    else:
        process = 2
    b.poll(process, {0: ALL_THREE}, **extra)
    b.drain(DRAINER, 0, ALL_THREE)
    assert counts(check(b)) == {}


def test_a_kept_partition_is_no_boundary() -> None:
    b = three_sent()
    b.consumer_op(1, "assign", [0, 1])
    b.poll(1, {0: ALL_THREE})
    b.consumer_op(1, "assign", [0])
    b.poll(1, {0: ALL_THREE[2:]}, rebalanced={"assigned": [], "revoked": [1]})
    b.drain(DRAINER, 0, ALL_THREE)
    assert counts(check(b)) == {"nonmonotonic-poll": 1}


def test_a_poll_below_a_seek_is_nonmonotonic() -> None:
    b = three_sent()
    seek = b.consumer_op(1, "seek", {"0": 2})
    poll = b.poll(1, {0: ALL_THREE[1:]})
    b.drain(DRAINER, 0, ALL_THREE)
    [case] = check(b)["kinds"]["nonmonotonic-poll"]["cases"]
    assert (case["prior_offset"], case["prior_index"], case["offset"], case["index"]) == (
        1,
        seek,
        1,
        poll,
    )


def test_poll_skip_names_the_skipped_offsets() -> None:
    b = three_sent()
    b.send(0, 0, 13, 3)
    first = b.poll(1, {0: [(0, 10)]})
    second = b.poll(1, {0: [(3, 13)]})
    b.drain(DRAINER, 0, [*ALL_THREE, (3, 13)])
    result = check(b)
    assert result["valid"] is False  # changed: under assign, a skip is invalid
    [case] = result["kinds"]["poll-skip"]["cases"]
    assert case == {
        "process": 1,
        "partition": 0,
        "prior_offset": 0,
        "prior_index": first,
        "offset": 3,
        "index": second,
        "skipped": [1, 2],
        "skipped_count": 2,
    }
    assert any(
        "skipping 2 offsets that others saw values at (1, 2)" in line
        for line in queue.explain(result)
    )


def test_sparse_offsets_are_no_skip() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(0, 0, 11, 3)  # offsets 1 and 2 hold transaction markers
    b.poll(1, {0: [(0, 10)]})
    b.poll(1, {0: [(3, 11)]})
    b.drain(DRAINER, 0, [(0, 10), (3, 11)])
    assert counts(check(b)) == {}


def test_a_skip_after_a_seek_is_none() -> None:
    b = three_sent()
    b.poll(1, {0: [(0, 10)]})
    b.consumer_op(1, "seek", {"0": 2})
    b.poll(1, {0: [(2, 12)]})
    b.drain(DRAINER, 0, ALL_THREE)
    assert counts(check(b)) == {}  # 11: no poll read it, but the drain did


def test_nonmonotonic_send_per_producer_and_partition() -> None:
    b = QueueHistoryBuilder()
    first = b.send(0, 0, 10, 5)
    b.send(0, 1, 11, 0)  # another partition
    b.send(1, 0, 12, 2)  # another producer
    second = b.send(0, 0, 13, 3)
    b.drain(DRAINER, 0, [(2, 12), (3, 13), (5, 10)])
    b.drain(DRAINER, 1, [(0, 11)])
    result = check(b)
    assert result["valid"] is False
    [case] = result["kinds"]["nonmonotonic-send"]["cases"]
    assert case == {
        "process": 0,
        "partition": 0,
        "prior_offset": 5,
        "prior_index": first,
        "prior_value": 10,
        "offset": 3,
        "index": second,
        "value": 13,
        "outcome": "ok",
    }


def test_explain_has_a_line_per_kind_found_and_one_for_the_rest() -> None:
    b = three_sent()
    b.drain(DRAINER, 0, [(0, 10), (2, 12)])
    result = check(b, sub_via="subscribe")
    assert list(result["kinds"]) == list(queue.KINDS)
    lines = queue.explain(result)
    assert lines[1:] == [
        "lost writes: 0 from the polls alone, 1 by the final drains",
        "lost-write: 1 (makes the history invalid)",
        "unseen: 1 (reported: the final drains judge losses)",
        f"no case of the {len(queue.KINDS) - 2} other anomaly kinds",
        "  lost-write: send of 11 (op 2, process 0) acknowledged at partition 0 offset 1; the "
        "final drain of partition 0 does not hold it",
        "  unseen: send of 11 (op 2) acknowledged at partition 0 offset 1; nothing read it",
    ]


def test_a_failed_or_never_sent_message_that_is_seen_is_unexpected() -> None:
    b = three_sent()
    b.send(2, 0, 13, None, outcome="fail")  # certainly not written: but a poll sees it
    b.send(3, 0, 14, None, outcome="info")  # may have landed: seeing it is fine
    b.send(4, 0, 15, None, outcome="fail")
    b.send(4, 0, 15, 5, outcome="ok")  # the same message sent again, acknowledged
    seen = [*ALL_THREE, (3, 13), (4, 14), (5, 15)]
    poll = b.poll(1, {0: seen}, rebalanced={"assigned": [0], "revoked": []})
    drain = b.drain(DRAINER, 0, [*seen, (6, 99)])
    result = check(b)
    assert result["valid"] is False
    assert result["kinds"]["unexpected"]["cases"] == [
        {"partition": 0, "offset": 3, "value": 13, "by": "poll", "index": poll, "write": "failed"},
        {
            "partition": 0,
            "offset": 6,
            "value": 99,
            "by": "drain",
            "index": drain,
            "write": "never sent",
        },
    ]
    assert "13 whose send certainly failed, seen at partition 0 offset 3 (poll op" in "\n".join(
        queue.explain(result)
    )
