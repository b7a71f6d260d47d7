"""A queue history's plain records, as the queue checker's finders read them: sends, the
consumers' polls and repositionings, and the final drains; plus every observation of a
value at an offset, by any observer.

checkers/queue/reader.py reads a history into these; checkers/queue/cases.py reads them.
A message is an int, a str or an EDN keyword (kafka.clj's examples send `:a`), each only
ever equal to its own kind; a partition is an int (see QueueHistory.names).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, TypeAlias

from history import HistoryError, Keyword

SEND, POLL, TXN, ASSIGN, SEEK, SUBSCRIBE, DRAIN = (
    "send",
    "poll",
    "txn",
    "assign",
    "seek",
    "subscribe",
    "drain",
)
CRASH, DEBUG = "crash", "debug-topic-partitions"
COMMIT = "commit"
"""A consumer group's commit op: the group checks read it (checkers/groups/), the queue
checker does not (it moves no position)."""
GROUP_ONLY_FS = frozenset({COMMIT})
"""The ops of a consumer group that no queue checker reads."""

Message = int | str | Keyword
MAX_PARTITION = 2**31 - 1
"""Kafka's partition ids are 32-bit signed integers: none is above this."""
Record = Sequence[Any]
"""One record as a consumer received it: [offset, message], an int and a Message."""
Records: TypeAlias = "array[int] | list[Record]"
"""One partition's records of a poll or drain, in the order received: when every message
is an integer, flat in an array (offset, message, offset, message, ...), else a list of
Records. Read them with `pairs`."""


class UnreadableQueueOp(HistoryError):
    """A queue value the checker cannot read: a HistoryError (`PATH:LINE: problem`) that
    also names its op, by its invoke's index, and says whether the value is in the op's
    completion (else in its invoke)."""

    def __init__(self, path: str, line: int, problem: str, index: int, in_completion: bool) -> None:
        super().__init__(path, line, problem)
        self.index = index
        self.in_completion = in_completion


@dataclass(frozen=True, slots=True)
class Oddity:
    """A value Jepsen's analysis reads as it is and ours refuses (an ok send naming
    another message than its invoke sent): where it is, as an UnreadableQueueOp names it
    (line 0: not read from a file), and what it is."""

    line: int
    problem: str
    index: int
    in_completion: bool


def pairs(records: Records) -> Iterable[tuple[int, Message]]:
    """Takes Records. Returns its (offset, message) pairs, in order."""
    if isinstance(records, array):
        flat = iter(records)
        return zip(flat, flat, strict=True)
    return ((offset, message) for offset, message in records)


def messages(records: Records) -> Iterable[Message]:
    """Takes Records. Returns their messages, in order."""
    if isinstance(records, array):
        return records[1::2]
    return (message for _, message in records)


@dataclass(slots=True)
class Send:
    """One send attempt: its message and partition, its outcome (ok, fail, or info, which
    includes one still in flight at the end), the acknowledged offset if ok and known, the
    acknowledgement's time if ok, and its place among its op's micro-ops (0 for an op of
    one message; the sends of one op are kept in that order).
    Send, Poll and Reposition are not frozen: a frozen dataclass is made several times
    slower, which counts for a million of them; nothing changes one once it is made."""

    index: int
    process: int | str
    partition: int
    value: Message
    outcome: str
    offset: int | None
    invoked: int
    acked: int | None
    mop: int = 0

    @property
    def key(self) -> int:
        """The partition: a send is a write of its message to its partition's log, the key
        lost-acks judges it by (checkers.lost_acks.Attempt)."""
        return self.partition


Claim = tuple[int, int, int, Message]
"""An offset an info send's completion gave: (its op's index, partition, offset, message).
The op may not have committed: the offset counts once it is proven to have."""

Received: TypeAlias = "array[int] | dict[int, Records]"
"""A poll's records: per partition, the Records in the order received; or, when every
record is an [offset, message] of 64-bit integers, all flat in one array, each partition's
as its number, its count of records, then its (offset, message) pairs (a third of the
memory of a dict of arrays). Read them with `flattened`."""


@dataclass(slots=True)
class Poll:
    """One poll: its records (Received; `records` has them per partition), the partitions
    the group moved during it (before its records), when it completed (ns), and its
    outcome: ok, or info or fail for an op that returned records and then did not
    complete ok (the consumer's position moved all the same: an abort does not rewind it,
    KAFKA-17582)."""

    index: int
    process: int | str
    time: int
    received: Received
    moved: frozenset[int]
    outcome: str = "ok"

    @property
    def records(self) -> dict[int, Records]:
        """Per partition, the records in the order received."""
        if isinstance(self.received, dict):
            return self.received
        flat = self.received
        out: dict[int, Records] = {}
        at = 0
        while at < len(flat):
            start = at + 2
            at = start + 2 * flat[at + 1]
            out[flat[start - 2]] = flat[start:at]
        return out


def flattened(received: Received) -> Iterator[Any]:
    """Takes a poll's Received. Returns it as one flat stream, the shape of the array: per
    partition its number, its count of records, then each record's offset and message."""
    if isinstance(received, array):
        return iter(received)
    return chain.from_iterable(_flattened(p, records) for p, records in received.items())


def _flattened(partition: int, records: Records) -> Iterator[Any]:
    yield partition
    yield len(records) // 2 if isinstance(records, array) else len(records)
    for offset, message in pairs(records):
        yield offset
        yield message


@dataclass(slots=True)
class Reposition:
    """A consumer op after which its position is unknown in `partitions` (None: in every
    partition); `seek` holds, per partition, the offset its next record is at or after;
    `f` names the op (assign, seek, subscribe, crash, or the consumer op that failed)."""

    index: int
    process: int | str
    partitions: frozenset[int] | None
    seek: dict[int, int]
    f: str = ""


@dataclass(frozen=True, slots=True)
class Drain:
    """One ok final read of a partition: every record from the beginning to the high
    watermark; its invoke's and completion's indexes and times (ns), its process, and the
    node it read through when it names one (NATS drains one per server), and what the
    server said when the store it drains no longer existed (checkers/gone.py)."""

    index: int
    completion: int
    process: int | str
    partition: int
    invoked: int
    time: int
    records: Records
    node: str | None = None
    gone: str | None = None


@dataclass(frozen=True, slots=True)
class Stalled:
    """A final read (a drain, at read_committed) that gave up before the high watermark:
    its invoke's index and time and its completion's time (ns), its process and
    partition, the high watermark it was to reach, the position it had reached when it
    gave up and the last record it read before ([offset, message], None: none)."""

    index: int
    process: int | str
    partition: int
    invoked: int
    time: int
    high_watermark: int
    position: int
    last_read: Record | None


@dataclass(frozen=True, slots=True)
class QueueHistory:
    """A queue history's records: sends and consumer ops in invoke order, and the last ok
    drain of each partition (an earlier one was retried or superseded); `names` spells the
    partitions a history named by EDN keyword (numbered above MAX_PARTITION), `sub_via`
    says how its consumers chose partitions: "assign", "subscribe", both, or neither, and
    `txn_ops` counts its transactions (checkers/txn/checker.py checks them)."""

    sends: list[Send]
    consumer_ops: list[Poll | Reposition]
    drains: dict[int, Drain]
    names: dict[int, str] = field(default_factory=dict)
    sub_via: frozenset[str] = frozenset()
    txn_ops: int = 0
    """Ops that are transactions of more than one micro-op, or named txn."""
    oddity: Oddity | None = None
    """The first value read as Jepsen's analysis reads it that ours refuses, if any."""
    oddities: int = 0
    """How many such values there were."""
    claims: list[Claim] = field(default_factory=list)
    """Offsets info sends' completions gave, in invoke order: true once the op is proven
    committed."""
    node_drains: dict[str, Drain] = field(default_factory=dict)
    """The last ok drain through each node, for drains that name one."""
    stalled: list[Stalled] = field(default_factory=list)
    """The final reads that gave up short of their high watermark, in invoke order."""


Observation = tuple[int, int, Message, str, int]
"""A value seen at an offset: (partition, offset, message, by, index), `by` naming the
observer (a send's acknowledgement, a poll or a drain) and `index` its op's invoke index.
Plain tuples: a long history holds millions."""

Batch = tuple[int, str, int, Records]
"""Records one observer saw in one partition: (partition, by, index, records), `by` and
`index` as in an Observation."""


def observed_batches(history: QueueHistory) -> Iterator[Batch]:
    """Takes a QueueHistory. Yields every value seen at an offset, a Batch per observer and
    partition: each ok send's acknowledgement, then every poll's records, then every
    drain's."""
    for s in history.sends:
        if s.offset is not None:
            yield (s.partition, SEND, s.index, [(s.offset, s.value)])
    for op in history.consumer_ops:
        if isinstance(op, Poll):
            for partition, records in op.records.items():
                yield (partition, POLL, op.index, records)
    for d in history.drains.values():
        yield (d.partition, DRAIN, d.index, d.records)


def observations(history: QueueHistory) -> Iterator[Observation]:
    """Takes a QueueHistory. Yields every value seen at an offset, in observed_batches'
    order, one Observation each."""
    for partition, by, index, records in observed_batches(history):
        for offset, value in pairs(records):
            yield (partition, offset, value, by, index)
