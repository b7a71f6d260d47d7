"""The queue checker's finders of consumers stepping wrong: a poll going back to or below
an offset already read (nonmonotonic-poll), or over offsets that hold messages
(poll-skip), between two ops of one consumer or within one op (Jepsen's int- kinds).

A consumer's position in a partition is the offset it last read there in an op that
completed ok, as in Jepsen's Kafka checker (jepsen.tests.kafka,
`poll-skip+nonmonotonic-cases`: an info or failed op leaves the last reads as they
were). A poll that returned records and did not complete ok is checked against that
position, and the next poll against the same one: an aborted transaction does not
rewind the consumer (KAFKA-17582), so a consumer that goes on after it has skipped what
the aborted poll read, and is caught doing so. A boundary (an assign or rebalance that
moved the partition, a seek, a subscribe, a consumer op the reader could not follow)
forgets the position; a seek to O then reads on as if O-1 had been read.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator

from checkers.queue_cases import Case
from checkers.queue_history import Poll, QueueHistory, Records, Reposition, pairs

Step = tuple[int | str, int, int, int, int, int]
"""Two records one consumer read in turn from one partition with no boundary between:
(process, partition, prior_offset, prior_index, offset, index); the prior record came
from op prior_index (or is the offset just before a seek's, from the seek op)."""
Gaps = dict[int, list[tuple[int, int]]]
"""Per partition, the (first, last) offsets some consumer's seek stepped over, sorted and
apart."""


def consumer_jumps(history: QueueHistory) -> Iterator[Step]:
    """Takes a QueueHistory. Yields, in history order, every Step of a consumer to any
    offset but the next one (the only steps an anomaly can be in), leaving out steps
    within one op in a partition that op moved (Jepsen's `int-poll-skip+nonmonotonic-cases`
    leaves out a transaction's rebalanced keys)."""
    last: dict[int | str, dict[int, tuple[int, int]]] = {}
    for op in history.consumer_ops:
        mine = last.setdefault(op.process, {})
        if isinstance(op, Poll):
            yield from _poll_steps(op, mine)
        elif op.partitions is None:
            mine.clear()
        else:
            for partition in op.partitions:
                mine.pop(partition, None)
            for partition, offset in op.seek.items():
                mine[partition] = (offset - 1, op.index)


def _poll_steps(op: Poll, mine: dict[int, tuple[int, int]]) -> Iterator[Step]:
    # Takes a poll and its consumer's positions; yields its jumps, and moves the positions
    # only if the poll completed ok.
    index, process = op.index, op.process
    for partition in op.moved:
        mine.pop(partition, None)
    for partition, records in op.records.items():
        if not records:
            continue
        prior, prior_index = mine.get(partition, (None, index))
        moved = partition in op.moved
        for offset, _ in pairs(records):
            if prior is not None and offset != prior + 1 and not (moved and prior_index == index):
                yield (process, partition, prior, prior_index, offset, index)
            prior, prior_index = offset, index
        if prior is not None and op.outcome == "ok":
            mine[partition] = (prior, index)


def split_by_op(jumps: Iterable[Step]) -> tuple[list[Step], list[Step]]:
    """Takes consumer jumps. Returns those from one op to another, and those within one op."""
    across: list[Step] = []
    within: list[Step] = []
    for s in jumps:
        (within if s[3] == s[5] else across).append(s)
    return across, within


def nonmonotonic_poll_cases(jumps: Iterable[Step]) -> list[Case]:
    """Takes consumer jumps. Returns each to an offset at or below the one before (kafka.clj
    poll-skip+nonmonotonic-cases :nonmonotonic; int-nonmonotonic-poll within one op)."""
    return [_step_case(s) for s in jumps if s[4] <= s[2]]


def poll_skip_cases(jumps: Iterable[Step], offsets: dict[int, list[int]]) -> list[Case]:
    """Takes consumer jumps and per partition the sorted offsets anyone saw a value at.
    Returns each jump over such offsets (kafka.clj poll-skip+nonmonotonic-cases :skip)."""
    cases = []
    for s in jumps:
        _, partition, prior, _, offset, _ = s
        if offset <= prior + 1:
            continue
        held = offsets.get(partition, [])
        lo = bisect.bisect_right(held, prior)
        hi = bisect.bisect_left(held, offset)
        if hi > lo:
            skipped = {"skipped": held[lo : min(hi, lo + 5)], "skipped_count": hi - lo}
            cases.append(_step_case(s) | skipped)
    return cases


def _step_case(s: Step) -> Case:
    process, partition, prior_offset, prior_index, offset, index = s
    return {
        "process": process,
        "partition": partition,
        "prior_offset": prior_offset,
        "prior_index": prior_index,
        "offset": offset,
        "index": index,
    }


def seek_gaps(history: QueueHistory) -> Gaps:
    """Takes a QueueHistory. Returns, per partition, the offset ranges a consumer's seek
    stepped over: from its position (or the beginning, with none known) to the target."""
    gaps: Gaps = {}
    if not any(isinstance(op, Reposition) and op.seek for op in history.consumer_ops):
        return gaps
    last: dict[int | str, dict[int, int]] = {}
    for op in history.consumer_ops:
        mine = last.setdefault(op.process, {})
        if isinstance(op, Poll):
            if op.outcome == "ok":
                for partition, records in op.records.items():
                    if records:
                        mine[partition] = _last_offset(records)
            continue
        for partition, target in op.seek.items():
            first = mine.get(partition, -1) + 1
            if target > first:
                gaps.setdefault(partition, []).append((first, target - 1))
        if op.partitions is None:
            mine.clear()
        for partition in op.partitions or ():
            mine.pop(partition, None)
        for partition, target in op.seek.items():
            mine[partition] = target - 1
    return {partition: _merged(spans) for partition, spans in gaps.items()}


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    # Sorted and joined where they overlap or touch, for in_gap's binary search.
    out: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _last_offset(records: Records) -> int:
    if isinstance(records, array):
        return records[-2]  # flat: offset, message, offset, message, ...
    last: int = records[-1][0]
    return last


def _first(span: tuple[int, int]) -> int:
    return span[0]


def in_gap(gaps: Gaps, partition: int, offset: int) -> bool:
    """Takes seek_gaps' map, a partition and an offset. Returns whether a seek stepped over
    the offset."""
    spans = gaps.get(partition)
    if not spans:
        return False
    at = bisect.bisect_right(spans, offset, key=_first) - 1
    return at >= 0 and spans[at][0] <= offset <= spans[at][1]
