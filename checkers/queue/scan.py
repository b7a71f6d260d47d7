"""One pass over a queue history's records for the finders: every value seen at an offset
indexed (checkers/queue/cases.py), when each message was first polled, each consumer's
jumps (checkers/queue/consumers.py) and the offsets seeks stepped over.

A long history holds millions of polled records, and most of them are the same message
at the same offset read again by another consumer: each record is visited once, and
the checks made on it are the cheap ones first (a record already settled in the index
adds nothing to it). What each part means is said where its finders are.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from checkers.queue.cases import ObservationIndex, observe, observe_records
from checkers.queue.consumers import Gaps, Step, merged_gaps
from checkers.queue.losses import Seen
from checkers.queue.reader import (
    DRAIN,
    POLL,
    SEND,
    Message,
    Observation,
    Poll,
    QueueHistory,
    Reposition,
    Send,
)
from checkers.queue.records import flattened

Settled = dict[int, Message]
"""One partition's offset -> message of each record first seen where its message was first
seen, by one observation: seeing it again adds nothing to the index."""
_Tables = tuple[dict[int, Observation], dict[Message, Observation], Settled, dict[Message, int]]
Positions = dict[int | str, dict[int, tuple[int, int]]]
"""Per process, per partition, the offset its consumer last read there in an op that
completed ok and that op's index (or, after a seek to O, O - 1 and the seek's index)."""


@dataclass(frozen=True, slots=True)
class Scan:
    """What the pass gathers: the ObservationIndex; per partition each message any poll
    returned and when it first did (kafka.clj's op->max-poll-offsets takes :ok and :info
    polls); the consumers' jumps from one op to another and within one op, in history
    order; per partition the offsets some consumer's seek stepped over; and the polls that
    returned records without completing ok (a read of theirs proves no commit)."""

    index: ObservationIndex
    polled: Seen
    across: list[Step]
    within: list[Step]
    gaps: Gaps
    unsure: list[Poll]


def scan(history: QueueHistory) -> Scan:
    """Takes a QueueHistory. Returns its Scan: the index fed each ok send's
    acknowledgement, then every poll's records, then every drain's."""
    index = ObservationIndex({}, {}, {}, {})
    settled: dict[int, Settled] = {}
    _observe_sends(index, settled, history.sends)
    polls = _PollPass(index, settled)
    polls.run(history)
    for d in history.drains.values():
        observe_records(index, settled, d.partition, DRAIN, d.index, d.records)
    gaps = {partition: merged_gaps(spans) for partition, spans in polls.gaps.items()}
    return Scan(index, polls.polled, polls.across, polls.within, gaps, polls.unsure)


def _observe_sends(index: ObservationIndex, settled: dict[int, Settled], sends: list[Send]) -> None:
    # observe_records for each acknowledgement, inline: a history has a million sends.
    tables: dict[int, tuple[dict[int, Observation], dict[Message, Observation], Settled]] = {}
    for s in sends:
        offset = s.offset
        if offset is None:
            continue
        partition, message = s.partition, s.value
        table = tables.get(partition)
        if table is None:
            table = tables[partition] = (
                index.at.setdefault(partition, {}),
                index.of.setdefault(partition, {}),
                settled.setdefault(partition, {}),
            )
        at, of, known = table
        if known.get(offset, known) == message:
            continue
        observe(index, at, of, (partition, offset, message, SEND, s.index))
        if at[offset] is of[message]:
            known[offset] = message


class _PollPass:
    """The consumers' ops in history order, each poll's records visited once."""

    def __init__(self, index: ObservationIndex, settled: dict[int, Settled]) -> None:
        self.index = index
        self.settled = settled
        self.polled: Seen = {}
        self.across: list[Step] = []
        self.within: list[Step] = []
        self.positions: Positions = {}
        # Per process, per partition, the last offset read in an ok poll (or before a seek's
        # target): where a seek steps from. Unlike `positions`, a rebalance leaves it.
        self.sought: dict[int | str, dict[int, int]] = {}
        self.gaps: dict[int, list[tuple[int, int]]] = {}
        self.tables: dict[int, _Tables] = {}
        self.unsure: list[Poll] = []

    def table(self, partition: int) -> _Tables:
        """Takes a partition. Returns its index's `at` and `of`, its settled records and its
        polled messages, made if new: looked up once per poll, not four times."""
        made = (
            self.index.at.setdefault(partition, {}),
            self.index.of.setdefault(partition, {}),
            self.settled.setdefault(partition, {}),
            self.polled.setdefault(partition, {}),
        )
        self.tables[partition] = made
        return made

    def run(self, history: QueueHistory) -> None:
        for op in history.consumer_ops:
            if isinstance(op, Poll):
                self.poll(op)
            else:
                self.reposition(op)

    def reposition(self, op: Reposition) -> None:
        mine = self.positions.setdefault(op.process, {})
        sought = self.sought.setdefault(op.process, {})
        for partition, target in op.seek.items():
            first = sought.get(partition, -1) + 1
            if target > first:
                self.gaps.setdefault(partition, []).append((first, target - 1))
        if op.partitions is None:
            mine.clear()
            sought.clear()
        else:
            for partition in op.partitions:
                mine.pop(partition, None)
                sought.pop(partition, None)
            for partition, target in op.seek.items():
                mine[partition] = (target - 1, op.index)
        for partition, target in op.seek.items():
            sought[partition] = target - 1

    def poll(self, op: Poll) -> None:
        process, op_index, time, moved = op.process, op.index, op.time, op.moved
        mine = self.positions.setdefault(process, {})
        sought = self.sought.setdefault(process, {})
        ok = op.outcome == "ok"
        if not ok:
            self.unsure.append(op)
        for partition in moved:
            mine.pop(partition, None)
        index, tables = self.index, self.tables
        flat = flattened(op.received)
        for partition in flat:
            count = next(flat)
            table = tables.get(partition) or self.table(partition)
            if not count:
                continue
            at, of, known, firsts = table
            prior, prior_index = mine.get(partition, (None, op_index))
            # Steps within this op in a partition it moved are no jumps (Jepsen's
            # int-poll-skip+nonmonotonic-cases leaves out a transaction's rebalanced keys).
            free = partition in moved
            # Offsets and messages alternate: each islice takes the next of `flat` in turn. The
            # reader made the count, so zip is not told `strict`: a keyword argument costs the
            # call a slower path, on each of millions of blocks (a seventh of the scan).
            pairs = zip(islice(flat, count), islice(flat, count))  # noqa: B905
            for offset, message in pairs:
                if known.get(offset, known) != message:
                    observe(index, at, of, (partition, offset, message, POLL, op_index))
                    if at[offset] is of[message]:
                        known[offset] = message
                if firsts.get(message, time) >= time:
                    firsts[message] = time
                if prior is not None and offset != prior + 1:
                    step = (process, partition, prior, prior_index, offset, op_index)
                    if prior_index != op_index:
                        self.across.append(step)
                    elif not free:
                        self.within.append(step)
                prior, prior_index = offset, op_index
            if ok:
                mine[partition] = (offset, op_index)
                sought[partition] = offset
