"""A history.edn in the exact shape of Jepsen's Kafka workloads (jepsen.tests.kafka with
:txn? and both :sub-via, written by hand: no recorded one is at hand) and its JSON-lines
twin read to the same records, and `harness check` answers on it.

The history: assign and subscribe, one-send and two-send ops, a txn that polls nothing
(its consumer is not assigned yet), a send that ended info and was read later, a poll op
of two poll micro-ops, a txn that returned a record and then ended info, a partition
nemesis, crashed clients, and kafka.clj's final polls (:crash, :debug-topic-partitions,
an assign with :seek-to-beginning?, a poll of everything)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from checkers.queue.reader import (
    Poll,
    QueueHistory,
    QueueReader,
    Reposition,
    Send,
    pairs,
    read_queue_history,
)
from history import HistoryError, load
from tests.support import DATA

EDN, JSONL = DATA / "jepsen_queue.edn", DATA / "jepsen_queue.jsonl"


def streamed(path: Path) -> QueueHistory:
    """Reads a history as `harness check` does: each invocation as it is paired."""
    read = load(path, keep_events=False, reader=QueueReader(str(path))).read
    assert isinstance(read, QueueHistory)
    return read


def from_events(path: Path) -> QueueHistory:
    """Reads a history from its events, as `harness check` does to find a malformed op."""
    return read_queue_history(load(path).events)


@pytest.mark.parametrize("read", [streamed, from_events], ids=["streamed", "from events"])
def test_the_edn_and_its_json_lines_twin_read_alike(read: Callable[[Path], QueueHistory]) -> None:
    edn, jsonl = read(EDN), read(JSONL)
    assert (edn.sends, edn.consumer_ops, edn.drains) == (jsonl.sends, jsonl.consumer_ops, {})
    assert (edn.names, edn.sub_via) == (jsonl.names, jsonl.sub_via)
    assert (edn.names, edn.sub_via) == ({}, frozenset({"assign", "subscribe"}))


def test_the_sends_are_every_send_micro_op() -> None:
    sends = streamed(EDN).sends
    assert sends == [
        Send(4, 2, 0, 1, "ok", 0, 3500000, 5000000, 0),
        Send(5, 3, 1, 2, "ok", 0, 4000000, 6000000, 0),
        Send(5, 3, 0, 3, "ok", 1, 4000000, 6000000, 1),
        Send(8, 3, 1, 7, "ok", 1, 6500000, 7000000, 0),
        Send(14, 2, 2, 4, "info", None, 9500000, None, 0),  # read at offset 0 by op 18
        Send(15, 3, 2, 5, "ok", 1, 10000000, 20000000, 1),
        Send(20, 0, 0, 6, "info", None, 21500000, None, 1),
    ]


def test_the_consumer_ops_are_its_polls_and_boundaries() -> None:
    ops = streamed(EDN).consumer_ops
    shown = [
        (op.index, op.process, op.outcome, {p: list(pairs(rs)) for p, rs in op.records.items()})
        if isinstance(op, Poll)
        else (op.index, op.process, op.f, op.partitions)
        for op in ops
    ]
    assert shown == [
        (0, 0, "assign", frozenset({0, 1})),
        (2, 1, "subscribe", frozenset()),
        (10, 0, "ok", {0: [(0, 1), (1, 3)], 1: [(0, 2)]}),
        (15, 3, "ok", {}),
        (18, 1, "ok", {2: [(0, 4), (1, 5)]}),
        (20, 0, "info", {1: [(1, 7)]}),
        (22, 1, "crash", None),
        (26, 4, "crash", None),
        (30, 8, "assign", frozenset({0, 1, 2})),
        (32, 8, "ok", {0: [(0, 1), (1, 3)], 1: [(0, 2), (1, 7)], 2: [(0, 4), (1, 5)]}),
    ]
    assert all(isinstance(op, Poll | Reposition) for op in ops)


# A second pair, assign only, in the same shape, with four anomalies planted: a poll that
# skips offset 1 of partition 0, 21 acknowledged at partition 1 offset 1 and never read
# though a poll read offset 2 (lost and unseen), 30 at two offsets of partition 2.
PLANTED = DATA / "jepsen_queue_anomalies.edn", DATA / "jepsen_queue_anomalies.jsonl"


@pytest.mark.parametrize(
    ("edn_path", "jsonl_path"), [(EDN, JSONL), PLANTED], ids=["clean", "planted"]
)
def test_harness_check_answers_alike_on_both(edn_path: Path, jsonl_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "check", str(edn_path), str(jsonl_path), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode in (0, 1, 2), done.stderr  # a verdict, not malformed or a crash
    edn, jsonl = (json.loads(line) for line in done.stdout.splitlines())
    assert edn["model"] == jsonl["model"] == "queue"
    assert edn["format"] == "edn" and jsonl["format"] == "jsonl"
    drop = {"path", "format", "time", "seconds", "lost_acks"}
    for result in (edn, jsonl):
        del result["transactions"]["time"]
    assert {k: v for k, v in edn.items() if k not in drop} == {
        k: v for k, v in jsonl.items() if k not in drop
    }
    found = {kind: entry["count"] for kind, entry in edn["kinds"].items() if entry["count"]}
    if edn_path == EDN:
        assert (edn["valid"], found) == (True, {})
    else:
        planted = {"lost-write": 1, "unseen": 1, "duplicate": 1, "poll-skip": 1}
        assert (edn["valid"], found, edn["lost_from_polls"]) == (False, planted, 1)


# Every op's value has two elements: history.jepsen reads them as jepsen.independent's
# [key value], and the queue reader puts each value back together.
TWO_ELEMENTS = """\
{:index 0, :time 1, :type :invoke, :process 0, :f :assign, :value [:x :y]}
{:index 1, :time 2, :type :ok, :process 0, :f :assign, :value [:x :y]}
{:index 2, :time 3, :type :invoke, :process 1, :f :send, :value [[:send :x :a] [:send :y 5]]}
{:index 3, :time 4, :type :ok, :process 1, :f :send, :value [[:send :x [0 :a]] [:send :y [0 ACK]]]}
{:index 4, :time 5, :type :invoke, :process 0, :f :poll, :value [[:poll] [:poll]]}
{:index 5, :time 6, :type :ok, :process 0, :f :poll, :value [[:poll {:x [[0 :a]]}] [:poll {}]]}
"""


def test_a_history_of_two_element_values_reads_whole(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(TWO_ELEMENTS.replace("ACK", "5"), encoding="utf-8")
    history = streamed(path)
    x, y = sorted(history.names)
    assert [(s.partition, repr(s.value), s.offset) for s in history.sends] == [
        (x, ":a", 0),
        (y, "5", 0),
    ]
    assign, poll = history.consumer_ops
    assert isinstance(assign, Reposition)
    assert (assign.index, assign.partitions) == (0, frozenset({x, y}))
    assert isinstance(poll, Poll)
    assert {p: list(pairs(rs)) for p, rs in poll.records.items()} == {
        x: [(0, history.sends[0].value)]
    }


@pytest.mark.parametrize("events", [True, False])
def test_a_value_made_whole_names_its_line(tmp_path: Path, events: bool) -> None:
    path = tmp_path / "history.edn"
    path.write_text(TWO_ELEMENTS.replace("ACK", "6"), encoding="utf-8")
    with pytest.raises(HistoryError) as caught:
        if events:
            read_queue_history(load(path).events)
        else:
            streamed(path)
    assert caught.value.line == 4
    assert "acknowledges 6, not the sent 5" in caught.value.problem


# A consumer assigned partitions 0 and 1 polls both, is assigned them again with
# :seek-to-beginning? (so both positions restart), subscribes, and loses partition 0 in a
# rebalance its next poll's :rebalance-log records.
FIELDS_OF_ITS_OWN = """\
{:index 0, :time 1, :type :invoke, :process 0, :f :assign, :value [0 1]}
{:index 1, :time 2, :type :ok, :process 0, :f :assign, :value [0 1]}
{:index 2, :time 3, :type :invoke, :process 0, :f :poll, :value [[:poll]]}
{:index 3, :time 4, :type :ok, :process 0, :f :poll, :value [[:poll {0 [[0 1]], 1 [[0 2]]}]]}
{:index 4, :time 5, :type :invoke, :process 0, :f :assign, :value [0 1], :seek-to-beginning? true}
{:index 5, :time 6, :type :ok, :process 0, :f :assign, :value [0 1], :seek-to-beginning? true}
{:index 6, :time 7, :type :invoke, :process 0, :f :subscribe, :value [0 1]}
{:index 7, :time 8, :type :ok, :process 0, :f :subscribe, :value [0 1]}
{:index 8, :time 9, :type :invoke, :process 0, :f :poll, :value [[:poll]]}
{:index 9, :time 10, :type :ok, :process 0, :f :poll, :value [[:poll {1 [[1 3]]}]], \
:rebalance-log [{:type :revoked, :keys [0]}]}
"""


def test_jepsen_fields_of_their_own_reach_the_queue_reader(tmp_path: Path) -> None:
    # history.edn keeps :seek-to-beginning? and :rebalance-log as the JSON-lines reader
    # keeps every field: without them the reseek and the rebalance went unseen.
    path = tmp_path / "history.edn"
    path.write_text(FIELDS_OF_ITS_OWN, encoding="utf-8")
    for history in (streamed(path), from_events(path)):
        _, _, reassign, _, poll = history.consumer_ops
        assert isinstance(reassign, Reposition) and reassign.partitions == frozenset({0, 1})
        assert isinstance(poll, Poll) and poll.moved == frozenset({0})
