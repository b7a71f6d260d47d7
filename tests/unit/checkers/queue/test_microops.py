"""Tests of reading ops of micro-ops, Jepsen's shape: sends in order, polls merged or split
by a rebalance, partial completions, keyword partitions and messages, and the shapes that
are refused."""

from __future__ import annotations

from typing import Any

import pytest

from checkers.queue.reader import (
    MAX_PARTITION,
    Poll,
    QueueHistory,
    Reposition,
    Send,
    pairs,
    read_queue_history,
)
from history import HistoryError
from history.edn_values import Keyword
from tests.support.queue_builder import QueueHistoryBuilder


def read(b: QueueHistoryBuilder) -> QueueHistory:
    return read_queue_history(b.events)


def polls(history: QueueHistory) -> list[Poll]:
    return [op for op in history.consumer_ops if isinstance(op, Poll)]


def received(poll: Poll) -> dict[int, list[tuple[int, Any]]]:
    return {p: list(pairs(rs)) for p, rs in poll.records.items()}


def test_one_op_sends_each_message_in_its_order() -> None:
    b = QueueHistoryBuilder()
    index = b.micro(
        3,
        "txn",
        [["send", 1, 10], ["poll"], ["send", 0, 11], ["send", 1, 12]],
        [["send", 1, [4, 10]], ["poll", {}], ["send", 0, [None, 11]], ["send", 1, [5, 12]]],
    )
    history = read(b)
    done = b.events[-1]["time"]
    assert history.sends == [
        Send(index, 3, 1, 10, "ok", 4, 0, done, 0),
        Send(index, 3, 0, 11, "ok", None, 0, done, 2),  # acknowledged, offset not known
        Send(index, 3, 1, 12, "ok", 5, 0, done, 3),
    ]


def test_an_op_s_polls_are_one_poll_in_the_order_received() -> None:
    b = QueueHistoryBuilder()
    b.micro(
        1,
        "poll",
        [["poll"], ["poll"], ["poll"]],
        [["poll", {"0": [[0, 10]], "1": [[3, "m"]]}], ["poll", {}], ["poll", {"0": [[1, 11]]}]],
    )
    [poll] = polls(read(b))
    assert received(poll) == {0: [(0, 10), (1, 11)], 1: [(3, "m")]}
    assert (poll.moved, poll.outcome) == (frozenset(), "ok")


def test_a_rebalance_during_the_op_splits_its_polls() -> None:
    # Jepsen's rebalance log does not say between which polls it came: each poll is then
    # a fresh start in the moved partitions, never a jump from the one before.
    b = QueueHistoryBuilder()
    log: dict[str, Any] = {
        "rebalance-log": [{"type": "revoked", "keys": [0]}, {"type": "assigned", "keys": [0, 2]}]
    }
    polled = [["poll", {"0": [[7, 10]]}], ["poll", {"0": [[2, 11]]}]]
    b.micro(1, "txn", [["poll"], ["poll"]], polled, **log)
    first, second = polls(read(b))
    assert (received(first), received(second)) == ({0: [(7, 10)]}, {0: [(2, 11)]})
    assert first.moved == second.moved == frozenset({0, 2})


def test_a_rebalance_in_an_op_that_polled_nothing_is_a_boundary() -> None:
    b = QueueHistoryBuilder()
    index = b.micro(1, "send", [["send", 0, 1]], [["send", 0, [0, 1]]], rebalanced={"revoked": [3]})
    assert read(b).consumer_ops == [Reposition(index, 1, frozenset({3}), {}, "send")]


def test_an_indeterminate_txn_keeps_what_it_completed() -> None:
    b = QueueHistoryBuilder()
    index = b.micro(
        2,
        "txn",
        [["poll"], ["send", 0, 20], ["send", 0, 21]],
        [["poll", {"1": [[4, 9]]}], ["send", 0, [6, 20]], ["send", 0, 21]],
        outcome="info",
    )
    history = read(b)
    # Only an ok op's sends were acknowledged: an offset in an info op is no promise.
    assert [(s.value, s.outcome, s.offset, s.acked, s.mop) for s in history.sends] == [
        (20, "info", None, None, 1),
        (21, "info", None, None, 2),
    ]
    [poll] = polls(history)
    assert (poll.index, poll.outcome, received(poll)) == (index, "info", {1: [(4, 9)]})


@pytest.mark.parametrize("outcome", ["info", "fail"])
def test_a_consumer_txn_that_returned_nothing_is_a_boundary(outcome: str) -> None:
    b = QueueHistoryBuilder()
    index = b.micro(2, "txn", [["poll"], ["send", 0, 20]], None, outcome=outcome)
    history = read(b)
    assert history.consumer_ops == [Reposition(index, 2, None, {}, "txn")]
    assert [s.outcome for s in history.sends] == [outcome]


def test_a_producer_op_that_failed_is_no_consumer_op() -> None:
    b = QueueHistoryBuilder()
    b.micro(2, "send", [["send", 0, 20]], None, outcome="fail")
    assert read(b).consumer_ops == []


def test_edn_keywords_name_partitions_and_messages() -> None:
    x, y, a = Keyword("x"), Keyword("y"), Keyword("a")
    b = QueueHistoryBuilder()
    b.micro(0, "send", [[Keyword("send"), y, a]], [[Keyword("send"), y, [0, a]]])
    b.micro(1, "poll", [[Keyword("poll")]], [[Keyword("poll"), {x: [[0, "a"]], y: [[0, a]]}]])
    b.consumer_op(1, "assign", [x, 3])
    history = read(b)
    ys, xs = MAX_PARTITION + 1, MAX_PARTITION + 2  # numbered in order of first appearance
    assert history.names == {ys: ":y", xs: ":x"}
    assert [(s.partition, s.value) for s in history.sends] == [(ys, a)]
    [poll] = polls(history)
    assert received(poll) == {xs: [(0, "a")], ys: [(0, a)]}
    assert received(poll)[xs][0][1] != a  # the string "a" is not the keyword :a
    # It polled :x and :y: the assign drops :y and adds 3, keeping :x.
    assert history.consumer_ops[-1] == Reposition(4, 1, frozenset({ys, 3}), {}, "assign")


def test_one_message_ops_and_micro_ops_read_alike_in_one_history() -> None:
    b = QueueHistoryBuilder()
    one = b.send(0, 0, 10, 0)
    many = b.micro(0, "send", [["send", 0, 11]], [["send", 0, [1, 11]]])
    b.poll(1, {0: [(0, 10)]})
    b.micro(1, "poll", [["poll"]], [["poll", {0: [[1, 11]]}]])
    history = read(b)
    assert [(s.index, s.offset) for s in history.sends] == [(one, 0), (many, 1)]
    assert [received(p) for p in polls(history)] == [{0: [(0, 10)]}, {0: [(1, 11)]}]


def test_debug_topic_partitions_is_ignored() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(0, "debug-topic-partitions", {"0": {"leader": "n1"}})
    assert read(b) == QueueHistory([], [], {})


def malformed(invoked: Any, completed: Any, f: str = "txn") -> list[dict[str, Any]]:
    b = QueueHistoryBuilder()
    b.micro(0, f, invoked, completed)
    return b.events


@pytest.mark.parametrize(
    ("events", "line", "problem"),
    [
        (malformed([["read", 0]], None), 1, "micro-op ['read', 0] is not [send, key, value]"),
        (malformed([["send", 0]], None), 1, "is not [send, key, value] or [poll]"),
        (malformed([["poll"]], []), 2, "is not the invoke's 1 micro-ops, completed"),
        (malformed([["poll"]], [["send", 0, 1]]), 2, "does not complete ['poll']"),
        (malformed([["send", 0, 1]], [["send", 0, [0, 2]]]), 2, "acknowledges 2, not the sent 1"),
        (malformed([["send", 0, 1]], [["send", 0, [0, True]]]), 2, "acknowledges True"),
        (malformed([["send", 0, 1]], [["send", 1, [0, 1]]]), 2, "names another partition"),
        (malformed([["send", 0, 1]], [["send", 0, [-1, 1]]]), 2, "offset -1 is not"),
        (malformed([["send", 0, 1.5]], None), 1, "send 1.5 is not a message"),
        (malformed([["poll"]], [["poll", [[0, 1]]]]), 2, "is not [poll, {partition: records}]"),
        (malformed([["poll"]], [["poll", {"0": [[0, 1]], 0: []}]]), 2, "names a partition twice"),
        (malformed(3, 3), 1, "txn value 3 is not a list of micro-ops"),
    ],
)
def test_malformed_micro_ops_are_refused(
    events: list[dict[str, Any]], line: int, problem: str
) -> None:
    with pytest.raises(HistoryError) as caught:
        read_queue_history(events)
    assert caught.value.line == line
    assert problem in caught.value.problem
