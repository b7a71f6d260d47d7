"""What the transaction checkers share: who wrote each message, which transactions
committed, and each partition's version order (its messages by offset, as observed).

Jepsen's Kafka checker (jepsen.tests.kafka) builds the same three: `writer-of` (a
message's sending op), `must-have-committed?` (an ok op, or an info op one of whose sends
an ok poll read) and `version-orders` ("we infer version orders from sends only when we
can prove their effects were visible, but from *all* polls, including :info and :fail
ones"). A message is a value in a partition, as the queue checker keys it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from checkers.queue.reader import Message, Poll, QueueHistory, Send, pairs
from checkers.txn.reader import TxnHistory, TxnOp

Writers = dict[tuple[int, Message], Send]
"""(partition, message) -> the send that wrote it."""


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


def reads(history: QueueHistory) -> Iterator[tuple[Poll, int, int, Message]]:
    """Takes a QueueHistory. Yields every record every poll received: (the poll, its
    partition, offset and message)."""
    for op in history.consumer_ops:
        if isinstance(op, Poll):
            for partition, records in op.records.items():
                for offset, message in pairs(records):
                    yield op, partition, offset, message


def committed(history: TxnHistory, writer_of: Writers) -> dict[int, TxnOp]:
    """Takes a TxnHistory and its Writers. Returns, by index, the transactions known to
    have committed: every ok one, and every info one some ok poll or drain read a message
    of (kafka.clj must-have-committed?, with our final drains as reads: at read_committed
    only a committed message can be read)."""
    seen_info: set[int] = set()
    for poll, partition, _, message in reads(history.queue):
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
    history: TxnHistory, writer_of: Writers, committed_ops: dict[int, TxnOp]
) -> dict[int, TxnOp]:
    """Takes a TxnHistory, its Writers and committed transactions. Returns, by index, the
    dependency graph's nodes, as kafka.clj's writer-of and readers-of take every
    completion: the committed transactions, every info one a poll of any outcome read a
    message of (visible at read_committed, so committed, or an aborted read, which is G1a
    whatever the graph says), and every info or failed one that polled a record (what a
    poll returned was returned, whatever became of its transaction)."""
    every = {op.index: op for op in history.ops}
    nodes = dict(committed_ops)
    for poll, partition, _, message in reads(history.queue):
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
    history: QueueHistory, committed_ops: dict[int, TxnOp]
) -> dict[int, VersionOrder]:
    """Takes a QueueHistory and its committed transactions. Returns each partition's
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
    for _, partition, offset, message in reads(history):
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
