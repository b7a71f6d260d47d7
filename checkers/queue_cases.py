"""The queue checker's anomaly finders, one per Jepsen name, each returning small dicts a
person can verify against the history: op indexes, partitions, offsets and values.

Each finder reads a QueueHistory (checkers/queue_history.py), or what one yields, and
returns every case it finds, in history order; checkers/queue.py decides what they mean.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from checkers.queue_history import (
    Batch,
    Message,
    Observation,
    Poll,
    QueueHistory,
    Send,
    messages,
    pairs,
)

Case = dict[str, Any]
UNSEEN_POINTS = 200
"""At most this many points in the unseen count over time."""


def lost_write_cases(sends: Iterable[Send], lost: set[tuple[int, Message]]) -> list[Case]:
    """Takes the sends and the (partition, message) pairs lost-acks found lost. Returns each
    acknowledged send no final drain holds, with the offset Kafka acknowledged."""
    return [_send_case(s) for s in sends if s.outcome == "ok" and (s.partition, s.value) in lost]


def _send_case(s: Send) -> Case:
    return {
        "index": s.index,
        "process": s.process,
        "partition": s.partition,
        "offset": s.offset,
        "value": s.value,
    }


def unexpected_cases(sends: Iterable[Send], index: ObservationIndex) -> list[Case]:
    """Takes the sends and the ObservationIndex. Returns each message a poll or drain saw
    that no send attempted, or whose every send certainly failed, with where it was first
    seen."""
    outcomes: dict[Message, set[str]] = {}
    for s in sends:
        outcomes.setdefault(s.value, set()).add(s.outcome)
    return [
        _observer(o) | {"write": "failed" if message in outcomes else "never sent"}
        for message, o in index.of.items()
        if outcomes.get(message, {"fail"}) == {"fail"}
    ]


def first_polled(history: QueueHistory) -> dict[Message, int]:
    """Takes a QueueHistory. Returns, per message any poll received, when (ns) the first
    such poll completed."""
    first: dict[Message, int] = {}
    for op in history.consumer_ops:
        if isinstance(op, Poll):
            time = op.time
            for records in op.records.values():
                for value in messages(records):
                    if value not in first or time < first[value]:
                        first[value] = time
    return first


def unseen_cases(sends: Iterable[Send], polled: dict[Message, int]) -> list[Case]:
    """Takes the sends and first_polled's map. Returns each acknowledged send that no poll
    received by the end of the history."""
    return [_send_case(s) for s in sends if s.outcome == "ok" and s.value not in polled]


def unseen_over_time(
    sends: Iterable[Send], polled: dict[Message, int], points: int = UNSEEN_POINTS
) -> list[list[int]]:
    """Takes the sends and first_polled's map. Returns [[t_ns, count], ...]: how many sends
    acknowledged by t no poll had received by t, at up to `points` evenly spaced times
    (the last one when the count last changed)."""
    changes: list[tuple[int, int]] = []
    for s in sends:
        if s.acked is None:
            continue
        seen = polled.get(s.value)
        if seen is None or seen > s.acked:
            changes.append((s.acked, 1))
            if seen is not None:
                changes.append((seen, -1))
    if not changes:
        return []
    changes.sort()
    end = changes[-1][0]
    times = sorted({end * i // points for i in range(1, points + 1)})
    series: list[list[int]] = []
    count = at = 0
    for t in times:
        while at < len(changes) and changes[at][0] <= t:
            count += changes[at][1]
            at += 1
        series.append([t, count])
    return series


@dataclass(frozen=True, slots=True)
class ObservationIndex:
    """Every value seen at an offset, indexed both ways: per partition and offset the first
    observation there (`at`) and the first of each other message seen there (`others`);
    per message its first observation (`of`) and the first at each other (partition,
    offset) it was seen at (`elsewhere`)."""

    at: dict[int, dict[int, Observation]]
    of: dict[Message, Observation]
    others: dict[tuple[int, int], dict[Message, Observation]]
    elsewhere: dict[Message, dict[tuple[int, int], Observation]]


def index_observations(batches: Iterable[Batch]) -> ObservationIndex:
    """Takes observed batches, in history order. Returns their ObservationIndex."""
    index = ObservationIndex({}, {}, {}, {})
    # Per partition, offset -> message of each record first seen where its message was
    # first seen, by one observation: seeing it again adds nothing to the index.
    settled: dict[int, dict[int, Message]] = {}
    for partition, by, op_index, records in batches:
        at = index.at.setdefault(partition, {})
        known = settled.setdefault(partition, {})
        for offset, message in pairs(records):
            if known.get(offset, known) == message:  # the common case, decided quickly
                continue
            _observe(index, at, (partition, offset, message, by, op_index))
            if at[offset] is index.of[message]:
                known[offset] = message
    return index


def _observe(index: ObservationIndex, at: dict[int, Observation], o: Observation) -> None:
    partition, offset, message = o[0], o[1], o[2]
    here = at.setdefault(offset, o)
    if here[2] != message:
        index.others.setdefault((partition, offset), {}).setdefault(message, o)
    first = index.of.setdefault(message, o)
    if first[0] != partition or first[1] != offset:
        index.elsewhere.setdefault(message, {}).setdefault((partition, offset), o)


def duplicate_cases(index: ObservationIndex) -> list[Case]:
    """Takes an ObservationIndex. Returns each message seen at two or more (partition,
    offset) positions, with the first observer of each position."""
    cases = []
    for value, others in index.elsewhere.items():
        where = [index.of[value], *others.values()]
        cases.append(
            {
                "value": value,
                "positions": [[o[0], o[1]] for o in where],
                "observed": [_observer(o) for o in where],
            }
        )
    return cases


def inconsistent_offset_cases(index: ObservationIndex) -> list[Case]:
    """Takes an ObservationIndex. Returns each (partition, offset) seen holding two or more
    different messages, with the first observer of each message."""
    cases = []
    for (partition, offset), others in sorted(index.others.items()):
        which = [index.at[partition][offset], *others.values()]
        cases.append(
            {
                "partition": partition,
                "offset": offset,
                "values": [o[2] for o in which],
                "observed": [_observer(o) for o in which],
            }
        )
    return cases


def _observer(o: Observation) -> Case:
    partition, offset, value, by, index = o
    return {"partition": partition, "offset": offset, "value": value, "by": by, "index": index}


Step = tuple[int | str, int, int, int, int, int]
"""Two records one consumer received in turn from one partition with no boundary between:
(process, partition, prior_offset, prior_index, offset, index); the prior record came
from op prior_index (or is the offset just before a seek's, from the seek op)."""


def consumer_jumps(history: QueueHistory) -> Iterator[Step]:
    """Takes a QueueHistory. Yields, in history order, every Step of a consumer to any
    offset but the next one (the only steps an anomaly can be in). A boundary (a
    Reposition, or a poll's rebalanced partitions) ends a consumer's run in those
    partitions; a seek to O starts one as if offset O-1 had been read."""
    last: dict[int | str, dict[int, tuple[int, int]]] = {}
    for op in history.consumer_ops:
        process = op.process
        mine = last.setdefault(process, {})
        if isinstance(op, Poll):
            index = op.index
            for partition in op.moved:
                mine.pop(partition, None)
            for partition, records in op.records.items():
                if not records:
                    continue
                prior, prior_index = mine.get(partition, (None, index))
                for offset, _ in pairs(records):
                    if prior is not None and offset != prior + 1:
                        yield (process, partition, prior, prior_index, offset, index)
                    prior, prior_index = offset, index
                if prior is not None:
                    mine[partition] = (prior, index)
        elif op.partitions is None:
            mine.clear()
        else:
            for partition in op.partitions:
                mine.pop(partition, None)
            for partition, offset in op.seek.items():
                mine[partition] = (offset - 1, op.index)


def nonmonotonic_poll_cases(jumps: Iterable[Step]) -> list[Case]:
    """Takes consumer jumps. Returns each to an offset at or below the one before."""
    return [_step_case(s) for s in jumps if s[4] <= s[2]]


def observed_offsets(index: ObservationIndex) -> dict[int, list[int]]:
    """Takes an ObservationIndex. Returns, per partition, the sorted offsets anyone saw a
    value at."""
    return {partition: sorted(at) for partition, at in index.at.items()}


def poll_skip_cases(jumps: Iterable[Step], offsets: dict[int, list[int]]) -> list[Case]:
    """Takes consumer jumps and observed_offsets' map. Returns each jump over offsets that
    hold values someone observed (offsets may be sparse: a gap alone is no skip)."""
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


def nonmonotonic_send_cases(sends: Iterable[Send]) -> list[Case]:
    """Takes the sends. Returns each acknowledged send whose offset is at or below the one
    its producer (process) was acknowledged before in the same partition."""
    last: dict[tuple[int | str, int], Send] = {}
    cases = []
    for s in sends:
        if s.offset is None:
            continue
        prior = last.get((s.process, s.partition))
        if prior is not None and prior.offset is not None and s.offset <= prior.offset:
            cases.append(
                {
                    "process": s.process,
                    "partition": s.partition,
                    "prior_offset": prior.offset,
                    "prior_index": prior.index,
                    "prior_value": prior.value,
                    "offset": s.offset,
                    "index": s.index,
                    "value": s.value,
                }
            )
        last[s.process, s.partition] = s
    return cases
