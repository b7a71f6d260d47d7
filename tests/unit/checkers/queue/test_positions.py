"""Tests of the boundaries the reader records: a consumer op is a boundary only for the
partitions whose position it may have changed (checkers/queue/positions.py), an op that
returned records and then failed is a poll, and a crash loses every position."""

from __future__ import annotations

from typing import Any

import pytest

from checkers.queue.reader import Poll, QueueHistory, Reposition, pairs, read_queue_history
from tests.support.queue_builder import QueueHistoryBuilder


def read(b: QueueHistoryBuilder) -> QueueHistory:
    return read_queue_history(b.events)


def last(b: QueueHistoryBuilder) -> Poll | Reposition:
    return read(b).consumer_ops[-1]


def boundary(b: QueueHistoryBuilder) -> frozenset[int] | None:
    op = last(b)
    assert isinstance(op, Reposition)
    return op.partitions


@pytest.mark.parametrize("outcome", ["info", "fail"])
def test_a_poll_that_returned_records_and_then_failed_is_a_poll(outcome: str) -> None:
    b = QueueHistoryBuilder()
    index = b.poll(1, {0: [(0, 10), (1, 11)]}, outcome=outcome)
    op = last(b)
    assert isinstance(op, Poll)
    assert (op.index, op.outcome) == (index, outcome)
    assert {p: list(pairs(rs)) for p, rs in op.records.items()} == {0: [(0, 10), (1, 11)]}


@pytest.mark.parametrize("outcome", ["info", "fail"])
def test_a_consumer_op_that_failed_with_no_records_is_a_boundary_everywhere(outcome: str) -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [0])
    index = b.poll(1, {}, outcome=outcome)
    assert last(b) == Reposition(index, 1, None, {}, "poll")


def test_after_a_failed_op_what_the_consumer_holds_is_unknown() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [0])
    b.poll(1, {0: [(0, 10)]}, outcome="fail")
    b.consumer_op(1, "assign", [0])
    assert boundary(b) is None


def test_a_crash_loses_the_position() -> None:
    # Jepsen's :crash ends info, so its process is never used again (history.pairing).
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [0, 1])
    b.poll(1, {0: [(0, 10)]})
    crash = b.crash(1)
    assert last(b) == Reposition(crash, 1, None, {}, "crash")


def test_subscribing_again_keeps_what_the_group_assigned() -> None:
    # Kafka keeps the assignment of a consumer subscribing to its topic again until a
    # rebalance, which its polls record.
    b = QueueHistoryBuilder()
    b.consumer_op(1, "subscribe", None)
    b.poll(1, {0: [(0, 10), (1, 11)]}, rebalanced={"assigned": [0, 1], "revoked": []})
    b.consumer_op(1, "subscribe", None)
    assert boundary(b) == frozenset()
    b.poll(1, {}, rebalanced={"assigned": [], "revoked": [1]})
    b.consumer_op(1, "assign", [2])
    assert boundary(b) == frozenset({0, 2})  # from the group's assignment, every partition


def test_a_subscribe_naming_keys_drops_the_held_partitions_it_does_not_name() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "subscribe", [0, 1])
    b.poll(1, {0: [(0, 10)], 1: [(0, 11)]})
    b.consumer_op(1, "subscribe", [1, 2])
    assert boundary(b) == frozenset({0})


def test_a_subscribe_after_an_assign_ends_the_assignment() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [0, 1])
    b.poll(1, {0: [(0, 10)]})
    b.consumer_op(1, "subscribe", ["topic"])
    assert boundary(b) == frozenset({0, 1})


def test_a_partition_polled_without_an_assign_is_held() -> None:
    # An assign that drops it resets the position there, as one that drops an assigned one.
    b = QueueHistoryBuilder()
    b.poll(1, {0: [(0, 10)]})
    b.consumer_op(1, "assign", [1])
    assert boundary(b) == frozenset({0, 1})


def test_a_partition_polled_beside_its_assignment_is_held() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [1])
    b.poll(1, {0: [(0, 10)], 1: [(0, 11)]})
    b.consumer_op(1, "assign", [1])
    assert boundary(b) == frozenset({0})


def test_a_partition_sought_is_held() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "seek", {"2": 5})
    b.consumer_op(1, "assign", [1])
    assert boundary(b) == frozenset({1, 2})


def test_a_partition_a_rebalance_assigned_is_held_until_revoked() -> None:
    b = QueueHistoryBuilder()
    b.poll(1, {}, rebalanced={"assigned": [0, 1], "revoked": []})
    log: dict[str, Any] = {"rebalance-log": [{"type": "revoked", "keys": [1]}]}
    b.poll(1, {}, **log)
    b.consumer_op(1, "assign", [2])
    assert boundary(b) == frozenset({0, 2})


def test_seeking_to_the_beginning_restarts_every_assigned_partition() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [0])
    b.event(1, "invoke", "assign", [0, 1], **{"seek-to-beginning?": True})
    b.event(1, "ok", "assign", [0, 1])
    assert boundary(b) == frozenset({0, 1})


def test_how_consumers_chose_partitions_is_recorded() -> None:
    b = QueueHistoryBuilder()
    b.consumer_op(1, "assign", [0])
    assert read(b).sub_via == frozenset({"assign"})
    b.consumer_op(2, "subscribe", None)
    assert read(b).sub_via == frozenset({"assign", "subscribe"})
