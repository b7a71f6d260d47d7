"""Jepsen's Kafka anomaly catalogue on a queue history: lost writes, unseen sends,
duplicates, inconsistent offsets, nonmonotonic or skipping polls, nonmonotonic sends.

What each kind means (the finders are in checkers/queue_cases.py):

- lost-write: an acknowledged send that the last ok drain of its partition does not hold.
  Decided by checkers.lost_acks on the history seen as a set (send M to key P; the drain
  of P as the final read of P), so `lost_acks` in the result counts exactly the same;
- unexpected: a message a poll or drain saw that no send attempted, or whose every send
  certainly failed (lost-acks' `unexpected`, and polls too);
- unseen: an acknowledged send no poll received by the end, with the count over time;
- duplicate: one message seen at two (partition, offset) positions;
- inconsistent-offsets: two messages seen at one offset of one partition, by any two
  observers (a send's acknowledgement, a poll, a drain);
- nonmonotonic-poll: a consumer receives from a partition an offset at or below the one
  it received before, with no boundary between (an assign or rebalance that moved the
  partition, a seek, a subscribe, a failed consumer op);
- poll-skip: a consumer steps over offsets that hold values someone observed, with no
  boundary between (offsets may be sparse: transaction markers, compaction);
- nonmonotonic-send: a producer's acknowledged sends to a partition get an offset at or
  below its previous one.

Which kinds make the history invalid is set in one place, `INVALIDATING`. Lost writes
need drains: no drain at all, or a partition that had sends but no ok drain after they
settled, makes the result "unknown", with the reason in `unknown`. Result layout:

    {"valid", "idempotent",
     "kinds": {kind: {"count", "cases": the first CASES_KEPT, "invalidating"}},
     "sends", "acknowledged", "lost", "lost_fraction", "lost_messages": every lost
     message, "unseen_over_time": [[t_ns, count], ...], "unknown": [reason, ...],
     "partitions", "polls", "time" (s), "lost_acks": checkers.lost_acks's result}

An op index in a case is the index of the op's invoke event.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from checkers import lost_acks
from checkers.queue_cases import (
    Case,
    consumer_jumps,
    duplicate_cases,
    first_polled,
    inconsistent_offset_cases,
    index_observations,
    lost_write_cases,
    nonmonotonic_poll_cases,
    nonmonotonic_send_cases,
    observed_offsets,
    poll_skip_cases,
    unexpected_cases,
    unseen_cases,
    unseen_over_time,
)
from checkers.queue_explain import explain
from checkers.queue_history import (
    Message,
    Poll,
    QueueHistory,
    QueueReader,
    UnreadableQueueOp,
    messages,
    observed_batches,
    read_queue_history,
)
from checkers.result import Validity, merge_valid
from history import Event, History, HistoryError, MalformedOp, collector_paused

__all__ = [
    "CASES_KEPT",
    "INVALIDATING",
    "KINDS",
    "QueueStream",
    "check",
    "check_read",
    "explain",
    "find_cases",
    "invalidating",
    "lost_acks_view",
    "reject_malformed",
]

KINDS = (
    "lost-write",
    "unexpected",
    "unseen",
    "duplicate",
    "inconsistent-offsets",
    "nonmonotonic-poll",
    "poll-skip",
    "nonmonotonic-send",
)
ALWAYS, IDEMPOTENT = "always", "with idempotence"
INVALIDATING = {
    "lost-write": ALWAYS,
    "unexpected": ALWAYS,
    "inconsistent-offsets": ALWAYS,
    # Without idempotence a producer's retry may land twice or out of order by design.
    "duplicate": IDEMPOTENT,
    "nonmonotonic-send": IDEMPOTENT,
}
"""Kinds that make the history invalid, and when; the others are reported only."""
CASES_KEPT = 20


def invalidating(kind: str, *, idempotent: bool) -> bool:
    """Takes an anomaly kind and whether the producers were idempotent. Returns whether
    one case of it makes the history invalid."""
    when = INVALIDATING.get(kind)
    return when == ALWAYS or (when == IDEMPOTENT and idempotent)


def check(events: Sequence[Event], *, idempotent: bool) -> dict[str, Any]:
    """Takes a queue history's events and whether its producers were idempotent. Returns
    the result laid out as the module docstring says.

    Raises HistoryError when the events are not a well-formed queue history.
    """
    started = time.monotonic()
    with collector_paused():
        return _check(read_queue_history(events), idempotent, started)


def check_read(read: object, *, idempotent: bool) -> dict[str, Any]:
    """Takes what a QueueStream read while its history was loaded (History.read) and
    whether the producers were idempotent. Returns the result, as `check` does.

    Raises the HistoryError the stream met, as `check` would have raised it.
    """
    if isinstance(read, HistoryError):
        raise read
    if not isinstance(read, QueueHistory):
        raise TypeError(f"not a queue history as a QueueStream reads it: {type(read).__name__}")
    with collector_paused():
        return _check(read, idempotent, time.monotonic())


def reject_malformed(history: History) -> None:
    """Takes a queue history as loaded, read by a QueueStream or with its events. Raises
    the HistoryError (`PATH:LINE: problem`) of the first value the check cannot read, so
    that it is refused as malformed input, never a verdict."""
    if isinstance(history.read, HistoryError):
        raise history.read
    if history.read is not None:
        return
    try:
        with collector_paused():
            read_queue_history(history.events)
    except UnreadableQueueOp as e:
        # The events carry no lines: the op's lines as loaded name it, or, for a failed op
        # (not kept), the event's position.
        bad = MalformedOp(e.index, e.problem, in_value=e.in_completion)
        located = history.error(bad)
        raise located if located.line else HistoryError(history.path, e.line, e.problem) from None


class QueueStream:
    """A Reader for history.load: reads a queue history as it is loaded, so that
    neither its events nor its ops are kept. A value not of the queue format stops the
    reading; its HistoryError is what `finish` returns, for reject_malformed (or
    check_read) to raise."""

    def __init__(self, path: str) -> None:
        self.reader: QueueReader | None = QueueReader(path)
        self.error: HistoryError | None = None

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does."""
        if self.reader is None:
            return
        try:
            self.reader.add(invoke, invoke_line, completion, line)
        except HistoryError as e:
            self.error, self.reader = e, None  # what was read is no use any more

    def finish(self) -> QueueHistory | HistoryError:
        """Returns the QueueHistory read, or the HistoryError that stopped the reading."""
        if self.reader is None:
            assert self.error is not None
            return self.error
        return self.reader.finish()


def _check(history: QueueHistory, idempotent: bool, started: float) -> dict[str, Any]:
    lost_view = lost_acks_view(history)
    polled = first_polled(history)
    cases = find_cases(history, lost_view, polled)
    acknowledged = sum(1 for s in history.sends if s.outcome == "ok")
    lost = cases["lost-write"]
    unknown = unjudged(history, lost_view)
    kinds = {
        kind: {
            "count": len(found),
            "cases": found[:CASES_KEPT],
            "invalidating": invalidating(kind, idempotent=idempotent),
        }
        for kind, found in cases.items()
    }
    found_invalid = any(k["count"] and k["invalidating"] for k in kinds.values())
    valid: Validity = merge_valid(not found_invalid, "unknown" if unknown else True)
    return {
        "valid": valid,
        "idempotent": idempotent,
        "kinds": kinds,
        "sends": len(history.sends),
        "acknowledged": acknowledged,
        "lost": len(lost),
        "lost_fraction": len(lost) / acknowledged if acknowledged else 0.0,
        "lost_messages": sorted(c["value"] for c in lost),
        "unseen_over_time": unseen_over_time(history.sends, polled),
        "unknown": unknown,
        "partitions": len({s.partition for s in history.sends} | set(history.drains)),
        "polls": sum(1 for op in history.consumer_ops if isinstance(op, Poll)),
        "time": time.monotonic() - started,
        "lost_acks": lost_view,
    }


def find_cases(
    history: QueueHistory, lost_view: dict[str, Any], polled: dict[Message, int]
) -> dict[str, list[Case]]:
    """Takes a QueueHistory, lost-acks' result on it and first_polled's map. Returns every
    case of every kind."""
    lost = {(r["key"], c["value"]) for r in lost_view["by_key"] for c in r["cases"]["lost"]}
    observed = index_observations(observed_batches(history))
    jumps = list(consumer_jumps(history))
    return {
        "lost-write": lost_write_cases(history.sends, lost),
        "unexpected": unexpected_cases(history.sends, observed),
        "unseen": unseen_cases(history.sends, polled),
        "duplicate": duplicate_cases(observed),
        "inconsistent-offsets": inconsistent_offset_cases(observed),
        "nonmonotonic-poll": nonmonotonic_poll_cases(jumps),
        "poll-skip": poll_skip_cases(jumps, observed_offsets(observed)),
        "nonmonotonic-send": nonmonotonic_send_cases(history.sends),
    }


def unjudged(history: QueueHistory, lost_view: dict[str, Any]) -> list[str]:
    """Takes a QueueHistory and lost-acks' result on it. Returns why losses could not be
    judged: no drain at all, or one reason per partition not drained after its sends."""
    if not history.drains:
        return ["no partition was drained: losses cannot be judged"]
    return [
        f"partition {r['key']} was not drained after its sends settled: its losses cannot be judged"
        for r in lost_view["by_key"]
        if r["valid"] == "unknown"
    ]


def lost_acks_view(history: QueueHistory) -> dict[str, Any]:
    """Takes a QueueHistory. Returns checkers.lost_acks's result on it seen as a set: each
    send a write of its message to its partition, and the last ok drain of each partition
    a read of that partition returning its messages (final if invoked after every send to
    the partition settled)."""
    started = time.monotonic()
    writes, moments = [], []
    for s in history.sends:
        # Keyed by the partition as the reader normalised it, as the drains are: a send
        # naming partition "0" and a drain naming 0 are of one partition.
        writes.append(lost_acks.Write(s.partition, s.value, s.outcome, s.process, s.index))
        moments.append((s.partition, lost_acks.settled_at(s.outcome, s.invoked, s.acked)))
    settled = lost_acks.settled_by_key(moments)
    drains = sorted(history.drains.values(), key=lambda d: d.index)  # invoke order
    reads = [
        lost_acks.FinalRead(d.partition, tuple(messages(d.records)), d.completion)
        for d in drains
        if lost_acks.is_final(d.invoked, d.partition, settled)
    ]
    return lost_acks.judge(writes, reads, len(writes) + len(drains), started)
