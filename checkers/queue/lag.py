"""Realtime lag of a queue history's consumers: at each poll, how long the consumer had
been behind the log's tail in the partitions it reads, and by how many offsets.

The definition is Jepsen's (`realtime-lag` in jepsen/src/jepsen/tests/kafka.clj,
jepsen-io/jepsen), written afresh here:

- an offset is known to exist from the first moment any op showed it or a higher offset
  of its partition: a send's acknowledgement, a poll's records (whatever the poll's
  outcome), a drain's records, each at its completion;
- a consumer's position in a partition is the highest offset it has received there;
- the lag of an ok poll in a partition is the time from the moment the offset after its
  position (the first it had not read) was known to exist to the poll's invocation, or
  0 if that offset was not known by then. It is a lower bound: the poll may have taken
  effect as early as its invocation, and a message may have existed before anyone saw it.

`behind`, the same poll's distance in offsets (the newest offset known to exist by the
poll's invocation minus the position), is this project's addition: Jepsen measures time
only. Offsets can be sparse (transaction markers), so it bounds messages from above.

Where this differs from Jepsen, deliberately: a QueueHistory keeps a consumer's
repositionings, not its assignment, so a partition counts from the consumer's first
record there (Jepsen counts a freshly assigned partition from position -1, as it does
under subscribe); any boundary (an assign or rebalance that moved the partition, a seek,
a subscribe, a consumer op that did not complete ok) forgets the position, and a seek
sets it to just before the offset sought. Jepsen ignores a poll that was not ok; here
its records still move the position, as the reader's Poll says (KAFKA-17582).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter

from checkers.queue.reader import Poll, QueueHistory, Records, Reposition, pairs
from history import Event

Process = int | str


@dataclass(frozen=True, slots=True)
class Frontier:
    """One partition's tail as known over time: from `times[i]` (ns) on, offsets up to
    `newest[i]` were known to exist. Both lists increase; `newest` strictly."""

    times: list[int]
    newest: list[int]

    def known_at(self, offset: int) -> int | None:
        """Takes an offset. Returns when (ns) it was first known to exist, or None."""
        i = bisect.bisect_left(self.newest, offset)
        return self.times[i] if i < len(self.times) else None

    def newest_by(self, time: int) -> int:
        """Takes a time (ns). Returns the newest offset known to exist by then, or -1."""
        i = bisect.bisect_right(self.times, time)
        return self.newest[i - 1] if i else -1


NOTHING_KNOWN = Frontier([], [])


@dataclass(frozen=True, slots=True)
class LagPoint:
    """One ok poll's lag, the worst over the partitions its consumer reads: when it was
    invoked (ns), its process, the partition where the lag is worst, the lag (ns) and
    the most offsets it was behind in any of those partitions."""

    time: int
    process: Process
    partition: int
    lag: int
    behind: int


def frontiers(history: QueueHistory) -> dict[int, Frontier]:
    """Takes a QueueHistory. Returns, per partition, its Frontier: when each offset was
    first known to exist, from every acknowledgement and every record read."""
    seen: dict[int, list[tuple[int, int]]] = {}
    for partition, time, offset in _sightings(history):
        seen.setdefault(partition, []).append((time, offset))
    return {p: _frontier(sorted(sightings)) for p, sightings in sorted(seen.items())}


def _sightings(history: QueueHistory) -> Iterator[tuple[int, int, int]]:
    # (partition, time, highest offset) for each op that showed offsets of a partition.
    for s in history.sends:
        if s.offset is not None and s.acked is not None:
            yield s.partition, s.acked, s.offset
    for op in history.consumer_ops:
        if isinstance(op, Poll):
            for partition, records in op.records.items():
                top = _highest(records)
                if top is not None:
                    yield partition, op.time, top
    for d in history.drains.values():
        top = _highest(d.records)
        if top is not None:
            yield d.partition, d.time, top


def _highest(records: Records) -> int | None:
    if isinstance(records, array):  # flat (offset, message, ...): max in C, for millions
        return max(records[0::2]) if records else None
    return max((offset for offset, _ in pairs(records)), default=None)


def _frontier(sightings: list[tuple[int, int]]) -> Frontier:
    # Sorted by time: keep only the sightings that raised the newest offset known.
    times: list[int] = []
    newest: list[int] = []
    for time, offset in sightings:
        if not newest or offset > newest[-1]:
            times.append(time)
            newest.append(offset)
    return Frontier(times, newest)


def poll_invocations(events: Sequence[Event], history: QueueHistory) -> dict[int, int]:
    """Takes a history's events and its QueueHistory. Returns, per poll (by its invoke's
    index), when it was invoked (ns)."""
    wanted = {op.index for op in history.consumer_ops if isinstance(op, Poll)}
    return {
        e["index"]: e["time"]
        for e in events
        if e.get("type") == "invoke" and e.get("index") in wanted
    }


def realtime_lag(history: QueueHistory, invoked: dict[int, int]) -> list[LagPoint]:
    """Takes a QueueHistory and poll_invocations' map. Returns a LagPoint per ok poll whose
    consumer had a position, in invoke order, as the module docstring defines them.

    A poll missing from `invoked` is timed at its completion, which can only overstate
    its lag, by at most the poll's own latency."""
    tails = frontiers(history)
    positions: dict[Process, dict[int, int]] = {}
    points: list[LagPoint] = []
    for op in history.consumer_ops:
        held = positions.setdefault(op.process, {})
        if isinstance(op, Reposition):
            reposition(held, op)
            continue
        advance(held, op)
        if op.outcome == "ok" and held:
            points.append(poll_lag(op, held, tails, invoked.get(op.index, op.time)))
    return points


def reposition(held: dict[int, int], op: Reposition) -> None:
    """Takes a consumer's positions and a Reposition of it. Forgets the positions the
    op makes unknown (all, for None) and sets each sought one before its offset."""
    if op.partitions is None:
        held.clear()
        return
    for partition in op.partitions:
        held.pop(partition, None)
    for partition, offset in op.seek.items():
        held[partition] = offset - 1


def advance(held: dict[int, int], poll: Poll) -> None:
    """Takes a consumer's positions and a poll of it. Forgets the partitions the group
    moved during the poll, then raises each position to the highest offset received."""
    for partition in poll.moved:
        held.pop(partition, None)
    for partition, records in poll.records.items():
        top = _highest(records)
        if top is not None and top > held.get(partition, -1):
            held[partition] = top


def poll_lag(poll: Poll, held: dict[int, int], tails: dict[int, Frontier], at: int) -> LagPoint:
    """Takes an ok poll, its consumer's positions after it, the Frontiers and when the poll
    was invoked (ns). Returns its LagPoint (`held` must not be empty)."""
    measured: list[tuple[int, int]] = []  # (lag, partition), by partition
    behind = 0
    for partition, position in sorted(held.items()):
        tail = tails.get(partition, NOTHING_KNOWN)
        known = tail.known_at(position + 1)
        measured.append((max(0, at - known) if known is not None else 0, partition))
        behind = max(behind, tail.newest_by(at) - position)
    lag, partition = max(measured, key=itemgetter(0))  # the lowest partition, on a tie
    return LagPoint(at, poll.process, partition, lag, behind)


def worst_lags(points: Iterable[LagPoint]) -> dict[Process, LagPoint]:
    """Takes LagPoints. Returns, per process, its point of greatest lag (the first, on a
    tie), in order of process."""
    worst: dict[Process, LagPoint] = {}
    for p in points:
        if p.process not in worst or p.lag > worst[p.process].lag:
            worst[p.process] = p
    return dict(sorted(worst.items(), key=lambda item: process_order(item[0])))


def process_order(process: Process) -> tuple[bool, int, str]:
    """Takes a process. Returns its sort key: integers in order, then names."""
    return (isinstance(process, str), process if isinstance(process, int) else 0, str(process))


def lag_points(events: Sequence[Event], history: QueueHistory) -> list[LagPoint]:
    """Takes a queue history's events and its QueueHistory. Returns its LagPoints
    (realtime_lag, each poll timed at its invocation)."""
    return realtime_lag(history, poll_invocations(events, history))


def worst_realtime_lag(
    points: Sequence[LagPoint], names: dict[int, str]
) -> dict[str, object] | None:
    """Takes a history's LagPoints and its partitions' names (QueueHistory.names). Returns
    its worst realtime lag as plain data, as kafka.clj's checker reports
    :worst-realtime-lag: when (s since the start), which consumer and partition, the lag
    (s) and the offsets behind; None with no ok poll."""
    if not points:
        return None
    worst = max(points, key=lambda p: p.lag)  # the first, on a tie
    return {
        "time": worst.time / 1e9,
        "process": worst.process,
        "partition": names.get(worst.partition, worst.partition),
        "lag": worst.lag / 1e9,
        "behind": worst.behind,
    }
