"""Tests of reading queue histories: the recorded fixture with a loss gives its counts,
JSON's string partition keys and int ones read alike, and malformed values are refused
with the position of the offending event.
"""

from __future__ import annotations

import json
from array import array
from typing import Any

import pytest

from checkers.queue import checker as queue
from checkers.queue.reader import Poll, messages, pairs, read_queue_history
from checkers.queue.records import flattened
from history import HistoryError, load
from tests.support.queue_builder import QueueHistoryBuilder
from tests.support.queue_sim import FIXTURE, FIXTURE_CONFIG, FIXTURE_SEED, simulate


def test_the_fixture_is_what_the_simulation_writes() -> None:
    events, _ = simulate(FIXTURE_SEED, FIXTURE_CONFIG)
    recorded = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert recorded == events


def test_the_fixture_with_a_loss_gives_its_counts() -> None:
    result = queue.check(load(FIXTURE).events)
    assert result["valid"] is False
    assert (result["sends"], result["acknowledged"], result["lost"]) == (60, 54, 3)
    assert result["lost_messages"] == [18, 35, 49]
    counts = {k: v["count"] for k, v in result["kinds"].items() if v["count"]}
    assert counts == {"lost-write": 3}  # the lost ones were polled: none is unseen
    view = result["lost_acks"]
    assert (view["valid"], view["ack_count"], view["lost_count"]) == (False, 54, 3)
    assert queue.explain(result)[0] == "60 sends, 54 acknowledged, 3 lost (5.6%)"


def test_partition_keys_may_be_ints() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.poll(1, {0: [(0, 10)]})
    b.events[-1]["value"] = {0: [[0, 10]]}
    poll = read_queue_history(b.events).consumer_ops[0]
    assert isinstance(poll, Poll)
    assert {p: list(pairs(rs)) for p, rs in poll.records.items()} == {0: [(0, 10)]}


def test_records_of_any_message_read_alike() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 7, 0)
    b.poll(1, {0: [(0, "m"), (1, 7)], 1: [(0, 7), (1, 2**70)], 2: [(0, 7), (3, 8)]})
    poll = read_queue_history(b.events).consumer_ops[0]
    assert isinstance(poll, Poll)
    assert list(pairs(poll.records[0])) == [(0, "m"), (1, 7)]
    assert list(pairs(poll.records[1])) == [(0, 7), (1, 2**70)]
    assert list(pairs(poll.records[2])) == [(0, 7), (3, 8)]
    assert [list(messages(rs)) for rs in poll.records.values()] == [["m", 7], [7, 2**70], [7, 8]]


def test_a_poll_of_integers_is_kept_flat_and_reads_as_any_other() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 7, 0)
    b.poll(1, {2: [(5, 6)], 3: [], 0: [(2, 8)]})
    b.poll(2, {1: [(0, "m")], 0: [(3, 5)]})
    flat, mixed = read_queue_history(b.events).consumer_ops
    assert isinstance(flat, Poll) and isinstance(mixed, Poll)
    assert isinstance(flat.received, array) and isinstance(mixed.received, dict)
    assert list(flat.received) == [2, 1, 5, 6, 3, 0, 0, 1, 2, 8]
    read = {p: list(pairs(rs)) for p, rs in flat.records.items()}
    assert read == {2: [(5, 6)], 3: [], 0: [(2, 8)]}
    assert list(flattened(flat.received)) == list(flat.received)
    assert list(flattened(mixed.received)) == [1, 1, 0, "m", 0, 1, 3, 5]


@pytest.mark.parametrize("records", [[[4, 2]], [[4, "m"]]])
def test_a_partition_named_twice_is_refused_whatever_its_records(records: Any) -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 7, 0)
    b.poll(1, {0: [(0, 7)]})
    b.events[-1]["value"]["00"] = records  # "00" names partition 0 again
    with pytest.raises(HistoryError, match="names a partition twice"):
        read_queue_history(b.events)


def malformed(change: str) -> list[dict[str, Any]]:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.poll(1, {0: [(0, 10)]})
    b.drain(2, 0, [(0, 10)])
    send_ok, poll_ok, drain_ok = b.events[1], b.events[3], b.events[5]
    if change == "acknowledged another message":
        send_ok["value"] = [0, 11]
    elif change == "negative offset":
        send_ok["value"] = [-1, 10]
    elif change == "poll value a list":
        poll_ok["value"] = [[0, 10]]
    elif change == "partition not a number":
        poll_ok["value"] = {"p0": [[0, 10]]}
    elif change == "record not a pair":
        drain_ok["value"] = [[0, 10, 3]]
    elif change == "not a queue op":
        b.events[0]["f"] = b.events[1]["f"] = "read"
    return b.events


@pytest.mark.parametrize(
    ("change", "line", "problem"),
    [
        ("acknowledged another message", 2, "acknowledges 11, not the sent 10"),
        ("negative offset", 2, "offset -1 is not a non-negative integer"),
        ("poll value a list", 4, "is not a map of partition to records"),
        ("partition not a number", 4, "partition 'p0' is not a non-negative integer"),
        ("record not a pair", 6, "is not an [offset, message] record"),
        ("not a queue op", 1, "'read' is not a queue op"),
    ],
)
def test_malformed_values_are_refused(change: str, line: int, problem: str) -> None:
    with pytest.raises(HistoryError) as caught:
        queue.check(malformed(change))
    assert caught.value.line == line
    assert problem in caught.value.problem


def test_an_ok_send_whose_offset_was_not_told_is_acknowledged_all_the_same() -> None:
    # librdkafka may report a delivery with no offset: the clients write null, and the
    # send counts as acknowledged (lost if never read), its offset unknown.
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, None)
    b.send(0, 0, 11, 1)
    b.send(1, 1, 12, None)
    b.drain(2, 0, [(0, 10), (1, 11)])
    b.drain(2, 1, [])
    read = read_queue_history(b.events)
    assert [(s.outcome, s.offset) for s in read.sends] == [("ok", None), ("ok", 1), ("ok", None)]
    assert all(s.acked is not None for s in read.sends)
    result = queue.check(b.events)
    assert (result["acknowledged"], result["lost"], result["lost_messages"]) == (3, 1, [12])
    with pytest.raises(HistoryError, match="message is not an int"):  # null is no message
        b.events[1]["value"] = [None, None]
        queue.check(b.events)
