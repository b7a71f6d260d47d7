"""Whether a queue history without transactions can hold a dependency cycle at all: when it
cannot, the transaction checker (checkers/txn/) need not build its graph, which for a
history of a million one-message ops would cost more than the rest of its check.

The graph (checkers/txn/graph.py, as Elle builds it): every op that wrote or read is a
node (a failed send never writes); ww edges join successive writers of a partition in
offset order, wr edges a writer to each op that read its message, process edges an ok op
to the ops of its process that follow it, and real-time edges an ok op to every op
invoked after it completed. With one message per send, and no op both sending and
polling, a node's out-edges are few: a send's are ww and wr (and process and real-time
order when ok), a poll's only process and real-time order (when ok).

Claim: if no message was seen at two offsets (duplicate), no offset held two messages
(inconsistent-offsets), no message read was never sent or only by sends that failed
(unexpected), and in each partition every writer was invoked no later than each offset at
or above its own was first known (E below), the graph has no cycle. The queue checker
tells (its result's `acyclic`), and checkers/registry.py runs the transaction checks on
every queue history where it may hold one: a poll that returned a message before its
send began is a G1c-realtime with or without transactions (Elle's, as kafka.clj's
`cycles!` runs it on every history).

Let a(X) be when op X was invoked, and, for a writer S at offset o(S), E(S) the first time
its message was known: its acknowledgement's time if ok, or the completion of the first
poll or drain that returned it. The condition: a(S) <= E(S') whenever o(S) <= o(S').
Follow any cycle, cut into steps: a run of ww edges through one partition from S to S'
(o(S) < o(S')), ended by a real-time or process edge out of S' to Y, or by a wr edge to a
poll P and then one out of P to Y (a poll has no other out-edge); or a lone real-time or
process edge X -> Y. Each step raises the invoke time: a(S) <= E(S') <= the completion
of S' or of P < a(Y) (E is the earliest completion of any poll that returned the
message, losses.first_seen), and a(X) < a(Y). Only a run of ww edges that closes on itself, a
message at two offsets, could go round without one; so no cycle can close. Conversely a
writer invoked after a higher offset was known already breaks it, and the search runs.

Checking it costs one pass over the sends and, per partition, a running maximum over its
offsets (itertools.accumulate, in C).
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import accumulate
from operator import gt

from checkers.queue.cases import ObservationIndex
from checkers.queue.losses import Seen
from checkers.queue.reader import QueueHistory

_NEVER = float("inf")
_BEFORE_ALL = float("-inf")


def acyclic(
    history: QueueHistory, index: ObservationIndex, seen: Seen, found: Collection[str]
) -> bool:
    """Takes a QueueHistory, its ObservationIndex, when each message was first read
    (losses.first_seen) and the queue kinds found in it. Returns whether its dependency
    graph surely has no cycle (the module docstring's claim); False means: search it."""
    if history.txn_ops or {"duplicate", "inconsistent-offsets", "unexpected"} & set(found):
        return False
    invoked: dict[int, list[float]] = {}  # per partition, per offset: its writer's invoke
    known: dict[int, list[float]] = {}  # per partition, per offset: when it was first known
    for partition, at in index.at.items():
        size = max(at, default=-1) + 1
        invoked[partition] = [_BEFORE_ALL] * size
        known[partition] = [_NEVER] * size
    of = index.of
    for s in history.sends:
        offset, partition = s.offset, s.partition
        if offset is None:  # an info send, or one acknowledged with no offset: where seen
            if s.outcome == "fail":
                continue
            first = of.get(partition, {}).get(s.value)
            if first is None:
                continue  # never seen: no edge has it
            offset = first[1]
        read = seen[partition].get(s.value, _NEVER) if partition in seen else _NEVER
        acked = s.acked if s.acked is not None else _NEVER
        writers_at = invoked[partition]
        if s.invoked > writers_at[offset]:
            writers_at[offset] = s.invoked
        first_known = known[partition]
        first_known[offset] = min(first_known[offset], acked, read)
    return not any(any(map(gt, accumulate(invoked[p], max), known[p])) for p in invoked)
