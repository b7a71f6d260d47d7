"""Jepsen's Kafka anomaly catalogue on a queue history: lost writes, unseen sends,
duplicates, inconsistent offsets, nonmonotonic or skipping polls, nonmonotonic sends.

What each kind means (a message is a value in a partition; the finders are in
checkers/queue/cases.py, queue_consumers.py and queue_losses.py):

- lost-write: an acknowledged send a final drain of its partition does not hold, or, in
  a partition no final drain judged, one no poll read although polls read past it;
- unexpected: a message a poll or drain saw that no send to its partition attempted, or
  whose every send there certainly failed;
- unseen: an acknowledged send nothing read by the end, with the count over time;
- duplicate: one message seen at two offsets of its partition;
- inconsistent-offsets: two messages seen at one offset of one partition, by any two
  observers (a send's acknowledgement, a poll, a drain);
- nonmonotonic-poll, poll-skip: a consumer's next op reads a partition at or below the
  offset it last read, or over offsets that hold messages, with no boundary between (an
  assign or rebalance that moved the partition, a seek, a subscribe); int-nonmonotonic-
  poll and int-poll-skip: the same within one op;
- nonmonotonic-send: a producer's send to a partition lands at or below its previous
  one (a send that ended info counts once read); int-nonmonotonic-send: within one op;
- stuck-consumer: a final drain (read_committed, after the faults healed) that stayed
  below its partition's high watermark past its catch-up time (checkers/queue/stuck.py).

Which kinds make the history invalid is checkers/queue/policy.py's table; a kind the
user ignores is reported and never counts. The drains decide losses where they are
final; elsewhere the polls do, and acknowledged sends they cannot judge (no poll read
past them) make the result "unknown", with the reasons in `unknown`; so does a history
where no send was acknowledged, no poll ended ok and no drain ran, which gives nothing
to judge (Elle's empty-transaction-graph, which Jepsen's checker counts against
validity). Result layout:

    {"valid", "sub_via": "assign" or "subscribe", "ignored": [kind, ...],
     "kinds": {kind: {"count", "cases": the first CASES_KEPT, "invalidating", "ignored"}},
     "sends", "acknowledged", "lost", "lost_fraction", "lost_messages": every lost
     message, "lost_records": every lost [partition, message], in op order (a partition
     named by EDN keyword spelled), "lost_from_polls": losses the polls alone show,
     "lost_from_drains": losses the final drains show (None: none was final),
     "unseen_over_time": [[t_ns, count], ...], "unknown": [reason, ...], "partitions",
     "polls", "txn_ops": ops that are
     transactions of several micro-ops (checkers/txn/checker.py), "acyclic": whether its
     transaction graph surely holds no cycle (checkers/queue/acyclic.py), "time" (s),
     "lost_acks": checkers.lost_acks's result}

An op index in a case is the index of the op's invoke event.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from checkers import lost_acks
from checkers.fork_pool import forked_beside
from checkers.queue import breakout
from checkers.queue.acyclic import acyclic
from checkers.queue.cases import (
    Case,
    ObservationIndex,
    duplicate_cases,
    inconsistent_offset_cases,
    nonmonotonic_send_cases,
    observed_offsets,
    unexpected_cases,
    within_one_op,
)
from checkers.queue.commits import observe_claims, proven_info
from checkers.queue.consumers import Gaps, Step, nonmonotonic_poll_cases, poll_skip_cases
from checkers.queue.explain import explain
from checkers.queue.losses import (
    PollBound,
    Seen,
    drain_lost_cases,
    drained_partitions,
    first_seen,
    lost_write_cases,
    poll_bounds,
    polls_lost_cases,
    unjudged,
    unseen_cases,
    unseen_over_time,
)
from checkers.queue.policy import KINDS, SubVia, counts_against, sub_via_of
from checkers.queue.reader import (
    SUBSCRIBE,
    Poll,
    QueueHistory,
    QueueReader,
    Stream,
    UnreadableQueueOp,
    messages,
    read_queue_history,
)
from checkers.queue.scan import scan
from checkers.queue.stuck import stuck_cases
from checkers.result import Validity, merge_valid
from history import (
    Event,
    History,
    HistoryError,
    MalformedOp,
    collector_paused,
    read_strictly,
)

__all__ = [
    "CASES_KEPT",
    "KINDS",
    "Evidence",
    "QueueStream",
    "check",
    "check_read",
    "explain",
    "find_cases",
    "gather_evidence",
    "judge_reading",
    "lost_acks_view",
    "polls_lost_cases",
    "reject_malformed",
]

CASES_KEPT = 20


def check(
    events: Sequence[Event],
    *,
    sub_via: SubVia | None = None,
    ignore: Collection[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    """Takes a queue history's events, how its consumers read (None: subscribe if any
    consumer subscribed with an ok op, else assign), the kinds to ignore and how many
    processes may check it (gather_evidence). Returns the result laid out as the module
    docstring says.

    Raises HistoryError when the events are not a well-formed queue history.
    """
    started = time.monotonic()
    with collector_paused():
        return _check(read_queue_history(events), sub_via, ignore, started, jobs)


def check_read(
    read: object,
    *,
    sub_via: SubVia | None = None,
    ignore: Collection[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    """Takes what a QueueStream read while its history was loaded (History.read), and
    what `check` takes besides the events. Returns the result, as `check` does.

    Raises the HistoryError the stream met, as `check` would have raised it.
    """
    if isinstance(read, HistoryError):
        raise read
    if not isinstance(read, QueueHistory):
        raise TypeError(f"not a queue history as a QueueStream reads it: {type(read).__name__}")
    with collector_paused():
        return _check(read, sub_via, ignore, time.monotonic(), jobs)


def reject_malformed(history: History) -> None:
    """Takes a queue history as loaded, read by a QueueStream or with its events. Raises
    the HistoryError (`PATH:LINE: problem`) of the first value the check cannot read, so
    that it is refused as malformed input, never a verdict: in our own format, that
    includes what Jepsen's analysis would read as it is (judge_reading)."""
    if isinstance(history.read, HistoryError):
        raise history.read
    if isinstance(history.read, QueueHistory):
        judge_reading(history.read, history)
        return
    try:
        with collector_paused():
            read = read_queue_history(history.events, strictly=read_strictly(history.format))
    except UnreadableQueueOp as e:
        raise _located(history, e.line, e.problem, e.index, e.in_completion) from None
    judge_reading(read, history)


def judge_reading(read: QueueHistory, history: History) -> list[str]:
    """Takes a queue history's records and the History they were read from. Returns the
    warnings of what was read as Jepsen's analysis reads it (in Jepsen's formats: an ok
    send naming another message than its invoke sent counts as the message it names).
    Raises the HistoryError of the first such value in our own format (history.jsonl),
    where it is our bug (history.read_strictly)."""
    odd = read.oddity
    if odd is None:
        return []
    if read_strictly(history.format):  # as read_queue_history refuses it, located
        raise _located(history, odd.line, odd.problem, odd.index, odd.in_completion)
    more = f" (and {read.oddities - 1} more)" if read.oddities > 1 else ""
    where = f"line {odd.line}: " if odd.line else ""
    return [
        f"{where}{odd.problem}{more}: the sends acknowledge another message than their "
        "invokes sent, and count as the message acknowledged, as Jepsen's analysis reads a "
        "completion"
    ]


def _located(history: History, line: int, problem: str, index: int, in_value: bool) -> HistoryError:
    # Events read without lines name no line: the op's lines as loaded name it, or, for a
    # failed op (not kept), the event's position.
    located = history.error(MalformedOp(index, problem, in_value=in_value))
    return located if located.line else HistoryError(history.path, line, problem)


class QueueStream(Stream[QueueReader, QueueHistory]):
    """A Reader for history.load that reads a queue history as it is loaded (a Stream of
    a QueueReader): `finish` gives the QueueHistory, or the HistoryError for
    reject_malformed (or check_read) to raise."""

    def __init__(self, path: str) -> None:
        super().__init__(QueueReader(path), QueueReader.finish)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the finders share, made once per history: every observation indexed, when each
    message was first polled and first read at all, how far the polls reached in each
    partition, the consumers' jumps across ops and within one, what seeks stepped over,
    lost-acks' result and the partitions it judged, and the info ops proven committed
    (checkers/queue/commits.py), whose claimed offsets the index holds."""

    index: ObservationIndex
    polled: Seen
    seen: Seen
    bounds: dict[int, PollBound]
    across: list[Step]
    within: list[Step]
    gaps: Gaps
    lost_view: dict[str, Any]
    drained: set[int]
    proven: frozenset[int]


EMPTY = (
    "empty-transaction-graph: no send was acknowledged, no poll ended ok and no drain ran, "
    "so there is nothing to check (Jepsen's checker calls such a history invalid: Elle's "
    "empty graph)"
)
"""Why a history with nothing written or read is unknown."""
FORK_AT = 50_000
"""Sends from which a second process pays: below, forking and sending the result back
cost more than the lost-acks view it takes off this one."""


def gather_evidence(history: QueueHistory, *, fork: bool = False) -> Evidence:
    """Takes a QueueHistory and whether a forked process may take part. Returns its
    Evidence; the lost-acks view is then made there while the scan is made here."""
    with forked_beside(partial(lost_acks_view, history), fork=fork) as made:
        scanned = scan(history)
        lost_view = made()
    seen = first_seen(history, scanned.polled)
    proven = proven_info(history, seen, scanned.unsure)
    observe_claims(scanned.index, history.claims, proven)
    return Evidence(
        index=scanned.index,
        polled=scanned.polled,
        seen=seen,
        bounds=poll_bounds(scanned.polled, scanned.index),
        across=scanned.across,
        within=scanned.within,
        gaps=scanned.gaps,
        lost_view=lost_view,
        drained=drained_partitions(lost_view),
        proven=proven,
    )


def _check(
    history: QueueHistory,
    sub_via: SubVia | None,
    ignore: Collection[str],
    started: float,
    jobs: int,
) -> dict[str, Any]:
    how: SubVia = sub_via or sub_via_of(SUBSCRIBE in history.sub_via)
    evidence = gather_evidence(history, fork=jobs > 1 and len(history.sends) >= FORK_AT)
    from_polls = polls_lost_cases(
        history, evidence.polled, evidence.bounds, evidence.index, evidence.gaps, evidence.proven
    )
    cases = find_cases(history, evidence, from_polls)
    acknowledged = sum(1 for s in history.sends if s.outcome == "ok")
    lost = cases["lost-write"]
    unknown = unjudged(cases["unseen"], lost, evidence.drained, evidence.bounds, history.names)
    if not (
        history.drains
        or any(s.outcome == "ok" for s in history.sends)
        or any(isinstance(op, Poll) and op.outcome == "ok" for op in history.consumer_ops)
    ):
        unknown.append(EMPTY)
    drained = bool(history.drains)
    kinds = {
        kind: _kind_entry(kind, cases[kind], how, ignore, drained, history.names) for kind in KINDS
    }
    found_invalid = any(k["count"] and k["invalidating"] for k in kinds.values())
    found = [kind for kind in KINDS if kinds[kind]["count"]]
    valid: Validity = merge_valid(not found_invalid, "unknown" if unknown else True)
    return {
        "valid": valid,
        "sub_via": how,
        "ignored": [kind for kind in KINDS if kind in ignore],
        "kinds": kinds,
        "sends": len(history.sends),
        "acknowledged": acknowledged,
        "lost": len(lost),
        "lost_fraction": len(lost) / acknowledged if acknowledged else 0.0,
        "lost_messages": _sorted_values(lost),
        "lost_records": [
            [history.names.get(c["partition"], c["partition"]), c["value"]] for c in lost
        ],
        "lost_from_polls": len(from_polls),
        "lost_from_drains": evidence.lost_view["lost_count"] if evidence.drained else None,
        "unseen_over_time": unseen_over_time(history.sends, evidence.seen),
        "unknown": unknown,
        "partitions": len({s.partition for s in history.sends} | set(history.drains)),
        "polls": sum(1 for op in history.consumer_ops if isinstance(op, Poll)),
        "txn_ops": history.txn_ops,
        "acyclic": acyclic(history, evidence.index, evidence.seen, found),
        "time": time.monotonic() - started,
        "lost_acks": evidence.lost_view,
        "store_gone": _store_gone(history),
    }


def _store_gone(history: QueueHistory) -> dict[str, Any] | None:
    """Returns {"drains": how many final drains were told the store no longer exists,
    "store": what the server said}, or None when none was (checkers/gone.py)."""
    drains = (*history.drains.values(), *history.node_drains.values())
    said = {d.index: d.gone for d in drains if d.gone is not None}
    return {"drains": len(said), "store": next(iter(said.values()))} if said else None


def _kind_entry(
    kind: str,
    found: Sequence[Case],
    sub_via: SubVia,
    ignore: Collection[str],
    drained: bool,
    names: dict[int, str],
) -> dict[str, Any]:
    return {
        "count": len(found),
        "cases": [_spelled(c, names) for c in found[:CASES_KEPT]],
        "invalidating": counts_against(kind, sub_via, ignore, drained=drained),
        "ignored": kind in ignore,
    }


def _spelled(case: Case, names: dict[int, str]) -> Case:
    # A partition the history named by EDN keyword is shown as it was named (`:x`).
    if not names:
        return case
    out = dict(case)
    if "partition" in out:
        out["partition"] = names.get(out["partition"], out["partition"])
    if "observed" in out:
        out["observed"] = [_spelled(o, names) for o in out["observed"]]
    if "positions" in out:
        out["positions"] = [[names.get(p, p), offset] for p, offset in out["positions"]]
    return out


def find_cases(
    history: QueueHistory, evidence: Evidence, from_polls: list[Case]
) -> dict[str, Sequence[Case]]:
    """Takes a QueueHistory, its Evidence and the losses the polls alone show
    (polls_lost_cases). Returns every case of every kind."""
    index, across, within = evidence.index, evidence.across, evidence.within
    offsets = observed_offsets(index)
    sends_across, sends_within = within_one_op(nonmonotonic_send_cases(history.sends, index))
    from_drains = drain_lost_cases(history.sends, evidence.lost_view, evidence.proven, index)
    return {
        "lost-write": lost_write_cases(from_drains, from_polls, evidence.drained, evidence.seen),
        "unexpected": unexpected_cases(history.sends, index),
        "unseen": unseen_cases(history.sends, evidence.seen),
        "duplicate": duplicate_cases(index),
        "inconsistent-offsets": inconsistent_offset_cases(index),
        "nonmonotonic-poll": nonmonotonic_poll_cases(across),
        "poll-skip": poll_skip_cases(across, offsets),
        "nonmonotonic-send": sends_across,
        "int-nonmonotonic-poll": nonmonotonic_poll_cases(within),
        "int-poll-skip": poll_skip_cases(within, offsets),
        "int-nonmonotonic-send": sends_within,
        "stuck-consumer": stuck_cases(history.stalled, history.sends, history.drains),
    }


def _sorted_values(cases: Sequence[Case]) -> list[Any]:
    # Messages are ints, strings or EDN keywords: ints first, in order, then the others
    # by their spelling.
    return sorted(
        (c["value"] for c in cases),
        key=lambda v: (0, v, "") if type(v) is int else (1, 0, repr(v)),
    )


def lost_acks_view(history: QueueHistory) -> dict[str, Any]:
    """Takes a QueueHistory. Returns checkers.lost_acks's result on it seen as a set: each
    send a write of its message to its partition, and the last ok drain of each partition
    a read of that partition returning its messages (final if invoked after every send to
    the partition settled); with "breakout", its lost writes split per writer into prefix,
    middle and postfix (checkers.queue.breakout), and "breakout_by_node" the same for
    what each node's drain lacks when drains name their node."""
    started = time.monotonic()
    # Each Send is a lost_acks.Attempt, keyed by the partition as the reader normalised it,
    # as the drains are: a send naming partition "0" and a drain naming 0 are of one.
    sends = history.sends
    settled = lost_acks.settled_by_key(
        (s.partition, lost_acks.settled_at(s.outcome, s.invoked, s.acked)) for s in sends
    )
    drains = sorted(history.drains.values(), key=lambda d: d.index)  # invoke order
    final = [d for d in drains if lost_acks.is_final(d.invoked, d.partition, settled)]
    reads = [
        lost_acks.FinalRead(d.partition, tuple(messages(d.records)), d.completion) for d in final
    ]
    view = lost_acks.judge(sends, reads, len(sends) + len(drains), started)
    return view | breakout.sections(sends, final, history.node_drains)
