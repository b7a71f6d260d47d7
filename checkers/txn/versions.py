"""What the transaction checkers share: who wrote each message, which transactions
committed, and each partition's version order (its messages by offset, as observed).

Jepsen's Kafka checker (jepsen.tests.kafka) builds the same three: `writer-of` (a
message's sending op), `must-have-committed?` (an ok op, or an info op one of whose sends
an ok poll read) and `version-orders` ("we infer version orders from sends only when we
can prove their effects were visible, but from *all* polls, including :info and :fail
ones"). A message is a value in a partition, as the queue checker keys it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import repeat

from checkers.queue.reader import Message, Poll, QueueHistory, Send, pairs
from checkers.txn.reader import TxnHistory, TxnOp

Writers = dict[tuple[int, Message], Send]
"""(partition, message) -> the send that wrote it."""
Read = tuple[Poll, int, int, Message]
"""One record a poll received: (the poll, its partition, offset and message)."""


@dataclass(frozen=True, slots=True)
class VersionOrder:
    """One partition's log as observed: the offsets anyone saw a message at, ascending,
    the message first seen at each, and each message's lowest offset."""

    offsets: list[int]
    messages: list[Message]
    offset_of: dict[Message, int]

    def between(self, low: int, high: int) -> list[tuple[int, Message]]:
        """Returns the (offset, message) observed strictly between two offsets."""
        start = bisect_right(self.offsets, low)
        stop = start
        while stop < len(self.offsets) and self.offsets[stop] < high:
            stop += 1
        return list(zip(self.offsets[start:stop], self.messages[start:stop], strict=True))


def writers(history: QueueHistory) -> Writers:
    """Takes a QueueHistory. Returns the send that wrote each message: of several sends of
    one message to one partition, the first that did not fail (else the first)."""
    found: Writers = {}
    for s in history.sends:
        key = (s.partition, s.value)
        before = found.get(key)
        if before is None or (before.outcome == "fail" and s.outcome != "fail"):
            found[key] = s
    return found


def reads(history: QueueHistory) -> list[Read]:
    """Takes a QueueHistory. Returns every record every poll received, in poll order: made
    once and read by each finder (at 100,000 transactions, seven passes that each rebuilt
    every poll's records took a quarter of the check)."""
    found: list[Read] = []
    for op in history.consumer_ops:
        if not isinstance(op, Poll):
            continue
        received = op.received
        if isinstance(received, array):  # partition, count, then (offset, message) pairs
            at = 0
            while at < len(received):
                start = at + 2
                at = start + 2 * received[at + 1]
                offsets, values = received[start:at:2], received[start + 1 : at : 2]
                found.extend(zip(repeat(op), repeat(received[start - 2]), offsets, values))
        else:
            for partition, records in received.items():
                found.extend((op, partition, o, m) for o, m in pairs(records))
    return found


def committed(history: TxnHistory, writer_of: Writers, records: list[Read]) -> dict[int, TxnOp]:
    """Takes a TxnHistory, its Writers and every record polled (reads). Returns, by
    index, the transactions known to have committed: every ok one, and every info one some
    ok poll or drain read a message of (kafka.clj must-have-committed?, with our final
    drains as reads: at read_committed only a committed message can be read)."""
    seen_info: set[int] = set()
    for poll, partition, _, message in records:
        if poll.outcome == "ok":
            _note_info_writer(writer_of, partition, message, seen_info)
    for drain in history.queue.drains.values():
        for _, message in pairs(drain.records):
            _note_info_writer(writer_of, drain.partition, message, seen_info)
    return {
        op.index: op
        for op in history.ops
        if op.outcome == "ok" or (op.outcome == "info" and op.index in seen_info)
    }


def graph_nodes(
    history: TxnHistory,
    writer_of: Writers,
    committed_ops: dict[int, TxnOp],
    records: list[Read],
) -> dict[int, TxnOp]:
    """Takes a TxnHistory, its Writers, committed transactions and every record polled
    (reads). Returns, by index, the
    dependency graph's nodes, as kafka.clj's writer-of and readers-of take every
    completion: the committed transactions, every info one a poll of any outcome read a
    message of (visible at read_committed, so committed, or an aborted read, which is G1a
    whatever the graph says), and every info or failed one that polled a record (what a
    poll returned was returned, whatever became of its transaction)."""
    every = {op.index: op for op in history.ops}
    nodes = dict(committed_ops)
    for poll, partition, _, message in records:
        s = writer_of.get((partition, message))
        if s is not None and s.outcome == "info" and s.index in every:
            nodes.setdefault(s.index, every[s.index])
        if poll.index in every:
            nodes.setdefault(poll.index, every[poll.index])
    return nodes


def _note_info_writer(
    writer_of: Writers, partition: int, message: Message, seen_info: set[int]
) -> None:
    s = writer_of.get((partition, message))
    if s is not None and s.outcome == "info":
        seen_info.add(s.index)


def version_orders(
    history: QueueHistory, committed_ops: dict[int, TxnOp], records: list[Read]
) -> dict[int, VersionOrder]:
    """Takes a QueueHistory, its committed transactions and every record polled (reads).
    Returns each partition's
    VersionOrder: what committed sends' acknowledgements (an info op's claimed offsets
    once it is proven committed), every poll (any outcome) and the final drains saw at
    each offset; where two messages were seen at one offset (the queue checker's
    inconsistent-offsets), the first observed."""
    at: dict[int, dict[int, Message]] = {}
    for s in history.sends:
        if s.offset is not None and s.index in committed_ops:
            at.setdefault(s.partition, {}).setdefault(s.offset, s.value)
    for index, partition, offset, message in history.claims:  # an info op's, once proven
        if index in committed_ops:
            at.setdefault(partition, {}).setdefault(offset, message)
    for _, partition, offset, message in records:
        at.setdefault(partition, {}).setdefault(offset, message)
    for drain in history.drains.values():
        log = at.setdefault(drain.partition, {})
        for offset, message in pairs(drain.records):
            log.setdefault(offset, message)
    return {partition: _ordered(log) for partition, log in at.items()}


def _ordered(log: dict[int, Message]) -> VersionOrder:
    offsets = sorted(log)
    messages = [log[o] for o in offsets]
    offset_of: dict[Message, int] = {}
    for o, m in zip(offsets, messages, strict=True):
        offset_of.setdefault(m, o)  # ascending: the lowest offset stays
    return VersionOrder(offsets, messages, offset_of)


def landed_at(s: Send, orders: dict[int, VersionOrder]) -> int | None:
    """Takes a send and the version orders. Returns the offset it landed at: the one
    acknowledged, else the lowest its message was observed at, else None."""
    if s.offset is not None:
        return s.offset
    order = orders.get(s.partition)
    return None if order is None else order.offset_of.get(s.value)
