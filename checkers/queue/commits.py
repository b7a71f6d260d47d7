"""Which info ops are proven to have committed, and what that proves besides: the offsets
their completions gave (Claims) hold, and their messages are owed to the final reads.

Jepsen's Kafka checker (jepsen.tests.kafka, `must-have-committed?`): "the transaction was
:ok, or ... :info and we can prove that some send from this transaction was read", by an
ok read; our final drains read too (at read_committed only a committed message is read).
A transaction commits whole, so one of its messages read proves every other:
kafka_test.clj's lost-write-test (atomic) and inconsistent-offsets-test draw lost writes
and conflicting offsets from an info op's other sends so, and its version-orders-test
takes an info op's offsets once one of its messages was read.
"""

from __future__ import annotations

from collections.abc import Iterable

from checkers.queue.cases import ObservationIndex, observe
from checkers.queue.losses import Seen
from checkers.queue.reader import SEND, Claim, Message, Poll, QueueHistory, messages


def proven_info(history: QueueHistory, seen: Seen, unsure: Iterable[Poll]) -> frozenset[int]:
    """Takes a QueueHistory, when each message was first read by any poll or drain
    (losses.first_seen) and the polls that returned records without completing ok.
    Returns the indexes of the info ops a message of which an ok poll or a drain read."""
    info: dict[tuple[int, Message], list[int]] = {}
    for s in history.sends:
        if s.outcome == "info":
            info.setdefault((s.partition, s.value), []).append(s.index)
    read = {key: ops for key, ops in info.items() if key[1] in seen.get(key[0], ())}
    doubted = _read_by(unsure, read.keys())  # perhaps read by those polls alone
    if doubted:
        ok_polls = (
            op for op in history.consumer_ops if isinstance(op, Poll) and op.outcome == "ok"
        )
        confirmed = _read_by(ok_polls, doubted)
        confirmed |= _drained(history, doubted)
        read = {key: ops for key, ops in read.items() if key not in doubted - confirmed}
    return frozenset(index for ops in read.values() for index in ops)


def observe_claims(
    index: ObservationIndex, claims: Iterable[Claim], proven: frozenset[int]
) -> None:
    """Takes the ObservationIndex, the claims and the proven info ops. Adds each claim of
    a proven op as what a send's acknowledgement saw."""
    for op_index, partition, offset, message in claims:
        if op_index in proven:
            at = index.at.setdefault(partition, {})
            of = index.of.setdefault(partition, {})
            observe(index, at, of, (partition, offset, message, SEND, op_index))


def _read_by(
    polls: Iterable[Poll], wanted: Iterable[tuple[int, Message]]
) -> set[tuple[int, Message]]:
    # The wanted messages some of the polls read.
    wanted = set(wanted)
    found: set[tuple[int, Message]] = set()
    if not wanted:
        return found
    for poll in polls:
        for partition, records in poll.records.items():
            found.update((partition, m) for m in messages(records) if (partition, m) in wanted)
    return found


def _drained(history: QueueHistory, wanted: set[tuple[int, Message]]) -> set[tuple[int, Message]]:
    return {
        (d.partition, m)
        for d in history.drains.values()
        for m in messages(d.records)
        if (d.partition, m) in wanted
    }
