"""Tests of the queue checker's definitions that follow Jepsen's Kafka checker: lost writes
from the polls alone, a message as (partition, value), sends that ended info taking part
in ordering once read, and polls that did not complete ok. Each history is built by hand,
in events or directly in the reader's records.
"""

from __future__ import annotations

from typing import Any

from checkers.queue import checker as queue
from checkers.queue.reader import Drain, Poll, QueueHistory, Reposition, Send
from tests.support.queue_builder import QueueHistoryBuilder

DRAINER = 99


def check(b: QueueHistoryBuilder, **policy: Any) -> dict[str, Any]:
    return queue.check(b.events, **policy)


def counts(result: dict[str, Any]) -> dict[str, int]:
    return {k: v["count"] for k, v in result["kinds"].items() if v["count"]}


def sent(*offsets: int, partition: int = 0, first: int = 10) -> QueueHistoryBuilder:
    """Messages first, first+1, ... acknowledged at the given offsets of one partition."""
    b = QueueHistoryBuilder()
    for i, offset in enumerate(offsets):
        b.send(0, partition, first + i, offset)
    return b


# --- 1. lost-write from the polls alone -------------------------------------------------


def test_without_a_drain_a_send_below_what_polls_read_and_never_read_is_lost() -> None:
    b = sent(0, 1, 2)
    b.poll(1, {0: [(0, 10)]})
    reader = b.poll(1, {0: [(2, 12)]})
    result = check(b)
    assert result["valid"] is False
    assert result["unknown"] == []
    [case] = result["kinds"]["lost-write"]["cases"]
    assert case == {
        "index": 2,
        "process": 0,
        "partition": 0,
        "offset": 1,
        "value": 11,
        "judged_by": "polls",
        "max_read_offset": 2,
        "max_read_value": 12,
        "max_read_index": reader,
    }
    assert (result["lost"], result["lost_from_polls"], result["lost_from_drains"]) == (1, 1, None)
    assert "poll op 8 read 12, at offset 2" in "\n".join(queue.explain(result))


def test_without_a_drain_polls_that_read_everything_decide_valid() -> None:
    b = sent(0, 1, 2)
    b.poll(1, {0: [(0, 10), (1, 11), (2, 12)]})
    result = check(b)
    assert (result["valid"], result["unknown"], counts(result)) == (True, [], {})


def test_a_send_above_what_polls_reached_is_unseen_and_unjudged() -> None:
    b = sent(0, 1, 2)
    b.poll(1, {0: [(0, 10)]})
    result = check(b)
    assert counts(result) == {"unseen": 2}
    assert result["unknown"] == [
        "partition 0 has no final drain, and 2 acknowledged sends no poll read lie beyond "
        "offset 0, where the polls reached: whether they were lost cannot be judged"
    ]
    assert check(b, ignore={"unseen"})["valid"] == "unknown"


def test_the_drain_decides_where_it_is_final_and_both_figures_are_kept() -> None:
    held = sent(0, 1, 2)
    held.poll(1, {0: [(0, 10)]})
    held.poll(1, {0: [(2, 12)]})
    held.drain(DRAINER, 0, [(0, 10), (1, 11), (2, 12)])  # 11 is there: consumers missed it
    result = check(held)
    assert (result["lost"], result["lost_from_polls"], result["lost_from_drains"]) == (0, 1, 0)
    assert counts(result) == {"poll-skip": 1}
    gone = sent(0, 1, 2)
    gone.poll(1, {0: [(0, 10), (1, 11), (2, 12)]})
    gone.drain(DRAINER, 0, [(0, 10), (2, 12)])  # read once, then truncated away
    result = check(gone)
    assert (result["lost"], result["lost_from_polls"], result["lost_from_drains"]) == (1, 0, 1)
    assert result["kinds"]["lost-write"]["cases"][0]["judged_by"] == "drain"


def test_the_bound_is_where_a_read_message_was_first_seen() -> None:
    # 12 was also read again at offset 3 (a duplicate): the polls show the log reached
    # offset 2 only, so 13, acknowledged at 4 and never read, is not judged lost.
    b = sent(0, 1, 2)
    b.send(0, 0, 13, 4)
    b.poll(1, {0: [(0, 10), (1, 11), (2, 12)]})
    b.poll(2, {0: [(3, 12)]})
    result = check(b)
    assert result["kinds"]["lost-write"]["count"] == 0
    assert result["kinds"]["duplicate"]["count"] == 1


def test_what_a_seek_stepped_over_is_not_lost_from_the_polls() -> None:
    b = sent(0, 1, 2, 3)
    b.poll(1, {0: [(0, 10)]})
    b.consumer_op(1, "seek", {"0": 3})
    b.poll(1, {0: [(3, 13)]})
    result = check(b)
    assert result["kinds"]["lost-write"]["count"] == 0
    assert counts(result) == {"unseen": 2}  # 11 and 12: no one read them


def test_a_poll_that_did_not_complete_ok_counts_toward_the_bound_and_as_a_read() -> None:
    sends = [Send(i, 0, 0, 10 + i, "ok", i, i, i + 1) for i in range(3)]
    ops: list[Poll | Reposition] = [
        Poll(10, 1, 11, {0: [(0, 10), (1, 11)]}, frozenset(), "ok"),
        Poll(12, 2, 13, {0: [(2, 12)]}, frozenset(), "fail"),
    ]
    history = QueueHistory(sends, ops, {})
    evidence = queue.gather_evidence(history)
    assert evidence.bounds[0].offset == 2
    assert set(evidence.seen[0]) == {10, 11, 12}
    from_polls = queue.polls_lost_cases(
        history, evidence.polled, evidence.bounds, evidence.index, evidence.gaps
    )
    cases = queue.find_cases(history, evidence, from_polls)
    assert cases["lost-write"] == cases["unseen"] == []


# --- 2. a message is a (partition, value) -----------------------------------------------


def test_one_value_sent_to_two_partitions_is_two_messages() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(1, 1, 10, 0)
    b.poll(2, {0: [(0, 10)], 1: [(0, 10)]})
    b.drain(DRAINER, 0, [(0, 10)])
    b.drain(DRAINER, 1, [(0, 10)])
    result = check(b)
    assert (result["valid"], counts(result)) == (True, {})


def test_a_value_read_in_a_partition_it_was_not_sent_to_is_unexpected() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    poll = b.poll(2, {0: [(0, 10)], 1: [(0, 10)]})
    b.drain(DRAINER, 0, [(0, 10)])
    result = check(b)
    assert result["kinds"]["unexpected"]["cases"] == [
        {
            "partition": 1,
            "offset": 0,
            "value": 10,
            "by": "poll",
            "index": poll,
            "write": "sent to partition 0",
        }
    ]
    assert "10 sent to partition 0, seen at partition 1 offset 0" in "\n".join(
        queue.explain(result)
    )


def test_reads_count_per_partition_for_unseen_and_lost() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(0, 1, 10, 0)
    b.send(0, 1, 11, 1)
    b.poll(2, {0: [(0, 10)], 1: [(1, 11)]})  # partition 1's 10 was never read
    result = check(b)
    assert [(c["partition"], c["value"]) for c in result["kinds"]["unseen"]["cases"]] == [(1, 10)]
    assert [(c["partition"], c["value"]) for c in result["kinds"]["lost-write"]["cases"]] == [
        (1, 10)
    ]


# --- 3. a send that ended info takes part in ordering once read ---------------------------


def test_an_info_send_read_at_an_offset_is_in_its_producers_order() -> None:
    # A process whose send ended info is not used again: the info send is its last.
    b = QueueHistoryBuilder()
    first = b.send(0, 0, 10, 5)
    second = b.send(0, 0, 11, None, outcome="info")
    b.poll(1, {0: [(3, 11), (5, 10)]})
    result = check(b)
    [case] = result["kinds"]["nonmonotonic-send"]["cases"]
    assert case == {
        "process": 0,
        "partition": 0,
        "prior_offset": 5,
        "prior_index": first,
        "prior_value": 10,
        "offset": 3,
        "index": second,
        "value": 11,
        "outcome": "info",
    }
    assert result["valid"] is False
    assert "send of 11 (op 2) ended info, read at offset 3, after its send of 10" in "\n".join(
        queue.explain(result)
    )


def test_an_info_send_never_read_takes_no_part() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 5)
    b.send(0, 0, 11, None, outcome="info")
    b.poll(1, {0: [(5, 10)]})
    assert counts(check(b)) == {}


def test_two_sends_of_one_op_going_backwards_are_int_nonmonotonic_send() -> None:
    sends = [Send(0, 0, 0, 10, "ok", 4, 0, 1), Send(0, 0, 0, 11, "info", None, 0, None)]
    ops: list[Poll | Reposition] = [Poll(2, 1, 3, {0: [(2, 11), (4, 10)]}, frozenset())]
    history = QueueHistory(sends, ops, {})
    evidence = queue.gather_evidence(history)
    cases = queue.find_cases(history, evidence, [])
    assert cases["nonmonotonic-send"] == []
    [case] = cases["int-nonmonotonic-send"]
    assert (case["value"], case["offset"], case["outcome"]) == (11, 2, "info")


# --- 4. polls that returned records and did not complete ok -------------------------------


def consumer_history(*polls: Poll) -> QueueHistory:
    sends = [Send(i, 0, 0, 10 + i, "ok", i, i, i + 1) for i in range(6)]
    records = [(i, 10 + i) for i in range(6)]
    return QueueHistory(sends, list(polls), {0: Drain(90, 91, 9, 0, 90, 91, records)})


def jumps(history: QueueHistory) -> dict[str, list[tuple[int, int, int, int]]]:
    evidence = queue.gather_evidence(history)
    cases = queue.find_cases(history, evidence, [])
    return {
        kind: [(c["prior_offset"], c["prior_index"], c["offset"], c["index"]) for c in found]
        for kind, found in cases.items()
        if kind.endswith("-poll") or kind.endswith("poll-skip")
        if found
    }


def test_a_consumer_going_on_after_an_aborted_poll_skips_what_it_read() -> None:
    # KAFKA-17582: the abort did not rewind the consumer, which then read on from 4.
    history = consumer_history(
        Poll(10, 1, 11, {0: [(0, 10), (1, 11)]}, frozenset()),
        Poll(12, 1, 13, {0: [(2, 12), (3, 13)]}, frozenset(), "fail"),
        Poll(14, 1, 15, {0: [(4, 14), (5, 15)]}, frozenset()),
    )
    assert jumps(history) == {"poll-skip": [(1, 10, 4, 14)]}


def test_a_consumer_rewound_after_an_aborted_poll_is_no_anomaly() -> None:
    history = consumer_history(
        Poll(10, 1, 11, {0: [(0, 10), (1, 11)]}, frozenset()),
        Poll(12, 1, 13, {0: [(2, 12), (3, 13)]}, frozenset(), "fail"),
        Poll(14, 1, 15, {0: [(2, 12), (3, 13)]}, frozenset()),
    )
    assert jumps(history) == {}


def test_an_aborted_poll_is_checked_against_the_position_too() -> None:
    history = consumer_history(
        Poll(10, 1, 11, {0: [(0, 10), (1, 11)]}, frozenset()),
        Poll(12, 1, 13, {0: [(1, 11), (4, 14), (3, 13)]}, frozenset(), "info"),
    )
    assert jumps(history) == {
        "nonmonotonic-poll": [(1, 10, 1, 12)],
        "int-nonmonotonic-poll": [(4, 12, 3, 12)],
        "int-poll-skip": [(1, 12, 4, 12)],
    }


def test_steps_within_an_op_in_a_partition_it_moved_are_left_out() -> None:
    history = consumer_history(
        Poll(10, 1, 11, {0: [(0, 10), (3, 13), (1, 11)]}, frozenset({0})),
    )
    assert jumps(history) == {}


def test_an_aborted_poll_in_a_history_is_read_and_skipped_over() -> None:
    b = sent(0, 1, 2, 3, 4)
    b.poll(1, {0: [(0, 10), (1, 11)]})
    aborted = b.poll(1, {}, outcome="fail")
    b.events[-1]["value"] = {"0": [[2, 12], [3, 13]]}  # returned records, then failed
    later = b.poll(1, {0: [(4, 14)]})
    result = check(b)
    [case] = result["kinds"]["poll-skip"]["cases"]
    assert (case["prior_offset"], case["offset"], case["index"]) == (1, 4, later)
    assert case["skipped"] == [2, 3]
    assert (result["kinds"]["unseen"]["count"], result["lost"]) == (0, 0)  # the abort read them
    assert aborted < later
