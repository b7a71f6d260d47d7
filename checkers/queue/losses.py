"""The queue checker's finders of acknowledged sends never read: lost writes, judged by
the final drains and from the polls alone, and unseen messages.

- lost-write by the drains: an acknowledged send the last ok drain of its partition does
  not hold, when that drain is final (invoked after the partition's sends settled);
  decided by checkers.lost_acks on the history seen as a set.
- lost-write from the polls alone, as Jepsen's Kafka checker has it (jepsen.tests.kafka,
  `lost-write-cases`): in a partition, the polls show the log reached the lowest offset
  of each message they read; take the highest such offset. Every acknowledged send whose
  message was seen at that offset or below (and nowhere above) should have been read by
  some poll, for consumers read a partition in order; one no poll read is lost. Unlike
  Jepsen, a poll that did not complete ok counts too (it read what was there), and
  offsets a consumer's seek stepped over are excused (no consumer had to read them).
- The verdict's lost-write takes, per partition, the final drain where there is one (it
  reads the whole log: what it holds is there, whatever the polls missed; what it lacks
  is gone, though a poll read it before), else the polls.
- unseen: an acknowledged send that no poll and no drain read by the end of the history
  (Jepsen's `unseen`, as it stands at the end, after its final polls; our final reads
  are the drains). Unlike Jepsen, polls that did not complete ok count as reads.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from checkers.queue.cases import Case, ObservationIndex, offset_range
from checkers.queue.consumers import Gaps, in_gap
from checkers.queue.reader import Message, Poll, QueueHistory, Send, messages
from checkers.queue.records import flattened

UNSEEN_POINTS = 200
"""At most this many points in the unseen count over time."""
Seen = dict[int, dict[Message, int]]
"""Per partition, per message read there, when (ns) it was first read."""


def first_seen(history: QueueHistory, polled: Seen) -> Seen:
    """Takes a QueueHistory and the messages polls returned (queue_scan.Scan.polled).
    Returns them with, added, each message only a drain read, at the drain's completion."""
    seen = dict(polled)  # a partition's own copy only where a drain adds to it
    for d in history.drains.values():
        mine = seen[d.partition] = dict(seen.get(d.partition, {}))
        for value in messages(d.records):
            mine.setdefault(value, d.time)
    return seen


def drained_partitions(lost_view: dict[str, Any]) -> set[int]:
    """Takes lost-acks' result on a queue history. Returns the partitions a final drain
    judged."""
    return {r["key"] for r in lost_view["by_key"] if r["final_reads"]}


def drain_lost_cases(sends: Iterable[Send], lost_view: dict[str, Any]) -> list[Case]:
    """Takes the sends and lost-acks' result on them. Returns each acknowledged send the
    final drain of its partition does not hold (checkers.lost_acks: Jepsen's set check)."""
    lost = {(r["key"], c["value"]) for r in lost_view["by_key"] for c in r["cases"]["lost"]}
    return [
        _send_case(s) | {"judged_by": "drain"}
        for s in sends
        if s.outcome == "ok" and (s.partition, s.value) in lost
    ]


@dataclass(frozen=True, slots=True)
class PollBound:
    """How far the polls show a partition's log reached: an offset, and a message a poll
    read whose lowest offset it is."""

    offset: int
    value: Message


def poll_bounds(polled: Seen, index: ObservationIndex) -> dict[int, PollBound]:
    """Takes the polled messages (queue_scan.Scan.polled) and the ObservationIndex. Returns
    per partition the highest lowest offset of a message polls read (kafka.clj
    lost-write-cases: `bound`)."""
    bounds: dict[int, PollBound] = {}
    for partition, mine in polled.items():
        of, elsewhere = index.of.get(partition, {}), index.elsewhere.get(partition, {})
        top, top_value = -1, None
        for value in mine:
            # A message a poll read was first seen by a send or a poll (drains come after
            # both in the index): its first offset is its lowest unless it has others.
            low = of[value][1]
            if value in elsewhere:
                seen = offset_range(index, partition, value, drains=False)
                low = low if seen is None else seen[0]
            if low > top:
                top, top_value = low, value
        if top_value is not None:
            bounds[partition] = PollBound(top, top_value)
    return bounds


def polls_lost_cases(
    history: QueueHistory,
    polled: Seen,
    bounds: dict[int, PollBound],
    index: ObservationIndex,
    gaps: Gaps,
) -> list[Case]:
    """Takes a QueueHistory, the polled messages, poll_bounds, the ObservationIndex and the
    seeks' gaps. Returns each ok send no poll read, seen at or below the bound (kafka.clj
    lost-write-cases)."""
    lost: list[Send] = []
    judged: set[tuple[int, Message]] = set()
    for s in history.sends:
        partition, value = s.partition, s.value
        bound = bounds.get(partition)
        if s.outcome != "ok" or bound is None or value in polled.get(partition, {}):
            continue
        seen = offset_range(index, partition, value, drains=False)
        if seen is None or seen[1] > bound.offset or in_gap(gaps, partition, seen[1]):
            continue
        if (partition, value) not in judged:
            judged.add((partition, value))
            lost.append(s)
    readers = _first_readers(history, {s.partition: bounds[s.partition].value for s in lost})
    return [
        _send_case(s) | _bound_case(bounds[s.partition], readers.get(s.partition)) for s in lost
    ]


def _bound_case(bound: PollBound, reader: int | None) -> Case:
    return {
        "judged_by": "polls",
        "max_read_offset": bound.offset,
        "max_read_value": bound.value,
        "max_read_index": reader,
    }


def _first_readers(history: QueueHistory, wanted: dict[int, Message]) -> dict[int, int]:
    # Per partition, the first poll that read its given message: one scan for them all,
    # cheaper than keeping every message's reader.
    readers: dict[int, int] = {}
    for op in history.consumer_ops if wanted else ():
        if not isinstance(op, Poll):
            continue
        flat = flattened(op.received)
        for partition in flat:
            records = list(islice(flat, 2 * next(flat)))  # offset, message, offset, ...
            wants = partition in wanted and partition not in readers
            if wants and wanted[partition] in records[1::2]:
                readers[partition] = op.index
    return readers


def lost_write_cases(
    drain_cases: list[Case], poll_cases: list[Case], drained: set[int], seen: Seen
) -> list[Case]:
    """Takes drain_lost_cases, polls_lost_cases, drained_partitions and first_seen. Returns
    the verdict's: the drain's where one is final, else the polls' (ours: module docstring)."""
    undrained = [
        c
        for c in poll_cases
        if c["partition"] not in drained and c["value"] not in seen.get(c["partition"], {})
    ]
    return sorted([*drain_cases, *undrained], key=lambda c: int(c["index"]))


def unseen_cases(sends: Iterable[Send], seen: Seen) -> list[Case]:
    """Takes the sends and first_seen's map. Returns each acknowledged send no poll and no
    drain read by the end (kafka.clj unseen, its last entry: after the final polls)."""
    return [
        _send_case(s)
        for s in sends
        if s.outcome == "ok" and s.value not in seen.get(s.partition, {})
    ]


def unjudged(
    unseen: Iterable[Case],
    lost: Iterable[Case],
    drained: set[int],
    bounds: dict[int, PollBound],
    names: dict[int, str],
) -> list[str]:
    """Takes unseen_cases, lost_write_cases, drained_partitions, poll_bounds and how the
    history named its partitions, where not by number. Returns, per partition with no final
    drain, why its unseen sends the polls could not judge leave its losses unknown."""
    judged = {(c["partition"], c["value"]) for c in lost}
    open_: dict[int, int] = {}
    for c in unseen:
        if c["partition"] not in drained and (c["partition"], c["value"]) not in judged:
            open_[c["partition"]] = open_.get(c["partition"], 0) + 1
    reasons = []
    for partition, n in sorted(open_.items()):
        sends = f"{n} acknowledged send{'s' if n != 1 else ''} no poll read"
        bound = bounds.get(partition)
        reach = f"offset {bound.offset}" if bound else "any offset (no poll read it)"
        reasons.append(
            f"partition {names.get(partition, partition)} has no final drain, and {sends} "
            f"lie beyond {reach}, where the polls reached: whether they were lost cannot be "
            "judged"
        )
    return reasons


def unseen_over_time(
    sends: Iterable[Send], seen: Seen, points: int = UNSEEN_POINTS
) -> list[list[int]]:
    """Takes the sends and first_seen's map. Returns [[t_ns, count], ...]: how many sends
    acknowledged by t nothing had read by t, at up to `points` evenly spaced times (the
    last one when the count last changed)."""
    acked: list[int] = []  # when each such send was acknowledged
    read: list[int] = []  # when each of them that was read at last was first read
    for s in sends:
        if s.acked is None:
            continue
        first = seen.get(s.partition, {}).get(s.value)
        if first is None or first > s.acked:
            acked.append(s.acked)
            if first is not None:
                read.append(first)
    if not acked:
        return []
    # The count at t is the acknowledgements by t less the first reads by t: two sorted
    # lists of ints and a binary search per point, not a million (time, change) pairs.
    acked.sort()
    read.sort()
    end = max(acked[-1], read[-1] if read else acked[-1])
    times = sorted({end * i // points for i in range(1, points + 1)})
    return [[t, bisect_right(acked, t) - bisect_right(read, t)] for t in times]


def _send_case(s: Send) -> Case:
    return {
        "index": s.index,
        "process": s.process,
        "partition": s.partition,
        "offset": s.offset,
        "value": s.value,
    }
