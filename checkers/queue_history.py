"""A queue history read into plain records: sends, the consumers' polls and repositionings,
and the final drains; plus every observation of a value at an offset, by any observer.

The queue checker's finders (checkers/queue_cases.py) read these records, never raw events.
A poll's `rebalanced` partitions, an assign's new or dropped partitions, a seek, a
subscribe and any consumer op that did not complete ok are boundaries: after one, the
consumer's position in those partitions is not known from what it read before.

Values keep their exact types. Every partition named, anywhere, is read by one method,
QueueReader.partition: an int from 0 to MAX_PARTITION or a string of its ASCII digits, so
"0", "00" and 0 are one partition; a message is exactly an int or a str. Anything else is
an UnreadableQueueOp naming its line: malformed input, never a verdict.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NoReturn, TypeAlias, TypeGuard

from history import Event, HistoryError, pair_invocations
from history.formats import short

SEND, POLL, ASSIGN, SEEK, SUBSCRIBE, DRAIN = "send", "poll", "assign", "seek", "subscribe", "drain"
QUEUE_FS = frozenset({SEND, POLL, ASSIGN, SEEK, SUBSCRIBE, DRAIN})

Message = int | str
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
    includes one still in flight at the end), and the acknowledged offset and time if ok.
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


@dataclass(slots=True)
class Poll:
    """One ok poll: per partition the records in the order received, the partitions the
    group moved during it (before its records), and when it completed (ns)."""

    index: int
    process: int | str
    time: int
    records: dict[int, Records]
    moved: frozenset[int]


@dataclass(slots=True)
class Reposition:
    """A consumer op after which its position is unknown in `partitions` (None: in every
    partition); `seek` holds, per partition, the offset its next record is at or after."""

    index: int
    process: int | str
    partitions: frozenset[int] | None
    seek: dict[int, int]


@dataclass(frozen=True, slots=True)
class Drain:
    """One ok final read of a partition: every record from the beginning to the high
    watermark; its invoke's and completion's indexes and times (ns), and its process."""

    index: int
    completion: int
    process: int | str
    partition: int
    invoked: int
    time: int
    records: Records


@dataclass(frozen=True, slots=True)
class QueueHistory:
    """A queue history's records: sends and consumer ops in invoke order, and the last ok
    drain of each partition (an earlier one was retried or superseded)."""

    sends: list[Send]
    consumer_ops: list[Poll | Reposition]
    drains: dict[int, Drain]


Observation = tuple[int, int, Message, str, int]
"""A value seen at an offset: (partition, offset, message, by, index), `by` naming the
observer (a send's acknowledgement, a poll or a drain) and `index` its op's invoke index.
Plain tuples: a long history holds millions."""


def read_queue_history(events: Sequence[Event]) -> QueueHistory:
    """Takes a history's events. Returns its QueueHistory.

    Raises HistoryError for a malformed history or a value not of the queue format, with
    the 1-based position of the offending event as its line.
    """
    invocations, _ = pair_invocations(events)
    reader = QueueReader("<events>", events)
    for inv in invocations:
        reader.add(inv.invoke, 0, inv.completion, 0)
    return reader.finish()


class QueueReader:
    """Reads a queue history's invocations into its records, in any order of completion
    (history's Reader): what each consumer is assigned, and the records.

    Lines name offending events in messages; a line of 0 means "find the event's 1-based
    position in `events`" (for events not read from a file)."""

    def __init__(self, path: str, events: Sequence[Event] = ()) -> None:
        self.path, self.events = path, events
        self.sends: list[Send] = []
        self.consumer_ops: list[Poll | Reposition] = []
        self.drains: dict[int, Drain] = {}
        # Per process the partitions it reads; a new consumer reads none, and after a
        # failed or crashed consumer op nothing is known (None).
        self.assigned: dict[Any, set[int] | None] = {}
        self.partitions: dict[str, int] = {}  # a partition's digits, as written -> partition
        self.lines: tuple[Event, int, Event | None, int] = ({}, 0, None, 0)

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation: its invoke, the completion (None: still in flight at the
        end) and their lines. A process's invocations come in their order."""
        self.lines = (invoke, invoke_line, completion, line)
        f = invoke["f"]
        if f not in QUEUE_FS:
            self.malformed(invoke, f"{short(f)} is not a queue op ({', '.join(sorted(QUEUE_FS))})")
        ok = completion if completion is not None and completion["type"] == "ok" else None
        if f == SEND:
            self.sends.append(self.send(invoke, completion))
        elif f == DRAIN:
            if ok is not None:
                self.drain(invoke, ok)
        elif ok is None:
            self.lose_position(invoke)
        elif f == POLL:
            self.poll(invoke, ok)
        else:
            self.reposition(invoke, ok)

    def finish(self) -> QueueHistory:
        """Returns the QueueHistory of every invocation added."""
        by_index = attrgetter("index")  # invoke order: completions may come in any
        self.sends.sort(key=by_index)
        self.consumer_ops.sort(key=by_index)
        return QueueHistory(self.sends, self.consumer_ops, dict(sorted(self.drains.items())))

    def send(self, invoke: Event, done: Event | None) -> Send:
        partition, message = self.partition(invoke, invoke.get("key")), invoke.get("value")
        if not _is_message(message):
            self.malformed(invoke, f"send value {short(message)} is not a message (int or string)")
        outcome = "info" if done is None else str(done["type"])
        offset: int | None = None
        if done is not None and outcome == "ok":
            offset, acknowledged = self.record(done, done.get("value"))
            if acknowledged != message:
                self.malformed(
                    done,
                    f"ok send acknowledges {short(acknowledged)}, not the sent {short(message)}",
                )
        acked = done["time"] if offset is not None and done is not None else None
        index, process = invoke["index"], invoke["process"]
        return Send(index, process, partition, message, outcome, offset, invoke["time"], acked)

    def poll(self, invoke: Event, ok: Event) -> None:
        value = ok.get("value")
        if not isinstance(value, dict):
            self.malformed(ok, f"ok poll value {short(value)} is not a map of partition to records")
        records: dict[int, Records] = {}
        known = self.partitions
        for p, rs in value.items():
            # Inline for the common case: millions of partitions' records in a history.
            partition = known.get(p) if p.__class__ is str else None
            flat = _int_pairs(rs) if rs.__class__ is list else None
            if partition is None:
                partition = self.partition(ok, p)
            records[partition] = flat if flat is not None else self.records(ok, rs)
        if len(records) != len(value):
            self.malformed(ok, f"ok poll value {short(value)} names a partition twice")
        moved = self.rebalanced(ok)
        self.consumer_ops.append(
            Poll(invoke["index"], invoke["process"], ok["time"], records, moved)
        )

    def rebalanced(self, ok: Event) -> frozenset[int]:
        moves = ok.get("rebalanced")
        if moves is None:
            return frozenset()
        if not isinstance(moves, dict) or not moves.keys() <= {"assigned", "revoked"}:
            self.malformed(ok, f"rebalanced {short(moves)} is not a map of assigned and revoked")
        gained = self.partition_list(ok, moves.get("assigned", []), "rebalanced assigned")
        lost = self.partition_list(ok, moves.get("revoked", []), "rebalanced revoked")
        held = self.assigned.get(ok["process"], set())
        if held is not None:
            self.assigned[ok["process"]] = (held - lost) | gained
        return frozenset(gained | lost)

    def reposition(self, invoke: Event, ok: Event) -> None:
        process, f, value = invoke["process"], invoke["f"], ok.get("value")
        partitions: frozenset[int] | None = None
        seek: dict[int, int] = {}
        if f == ASSIGN:
            wanted = self.partition_list(ok, value, "assign value")
            held = self.assigned.get(process, set())
            # Kept partitions read on from where they were; only changes are boundaries.
            partitions = None if held is None else frozenset(wanted ^ held)
            self.assigned[process] = wanted
        elif f == SEEK:
            if not isinstance(value, dict):
                self.malformed(ok, f"seek value {short(value)} is not a map of partition to offset")
            seek = {self.partition(ok, p): self.offset(ok, o) for p, o in value.items()}
            if len(seek) != len(value):
                self.malformed(ok, f"seek value {short(value)} names a partition twice")
            partitions = frozenset(seek)
        else:  # subscribe: partitions now come and go through rebalances
            self.assigned[process] = set()
        self.consumer_ops.append(Reposition(invoke["index"], process, partitions, seek))

    def lose_position(self, invoke: Event) -> None:
        # A consumer op that failed or crashed may have moved or reassigned anything.
        self.assigned[invoke["process"]] = None
        self.consumer_ops.append(Reposition(invoke["index"], invoke["process"], None, {}))

    def drain(self, invoke: Event, ok: Event) -> None:
        partition = self.partition(invoke, invoke.get("key"))
        drain = Drain(
            index=invoke["index"],
            completion=ok["index"],
            process=invoke["process"],
            partition=partition,
            invoked=invoke["time"],
            time=ok["time"],
            records=self.records(ok, ok.get("value")),
        )
        if partition not in self.drains or self.drains[partition].completion < drain.completion:
            self.drains[partition] = drain

    def records(self, event: Event, value: Any) -> Records:
        if not isinstance(value, list):
            self.malformed(event, f"{short(value)} is not a list of [offset, message] records")
        flat = _int_pairs(value)
        if flat is None:
            return [self.record(event, r) for r in value]
        return flat

    def record(self, event: Event, value: Any) -> Record:
        if not isinstance(value, list | tuple) or len(value) != 2:
            self.malformed(event, f"{short(value)} is not an [offset, message] record")
        offset, message = value
        if not _is_message(message):
            self.malformed(event, f"record {short(value)}: message is not an int or string")
        return self.offset(event, offset), message

    def offset(self, event: Event, value: Any) -> int:
        if type(value) is not int or value < 0:
            self.malformed(event, f"offset {short(value)} is not a non-negative integer")
        return value

    def partition_list(self, event: Event, value: Any, what: str) -> set[int]:
        if not isinstance(value, list):
            self.malformed(event, f"{what} {short(value)} is not a list of partitions")
        return {self.partition(event, p) for p in value}

    def partition(self, event: Event, value: Any) -> int:
        """Takes a partition as an event names it, anywhere. Returns it as an int; refuses
        what is no partition, as the module docstring says."""
        # Exact classes: True, 0.0 or an EDN keyword "0" would pass for 1, 0 or "0".
        if value.__class__ is int:
            partition: int = value
            if 0 <= partition <= MAX_PARTITION:
                return partition
        elif value.__class__ is str:
            known = self.partitions.get(value)  # a history names few partitions, very often
            if known is not None:
                return known
            # JSON's object keys are strings: ASCII digits only, never "²" or "٣", which
            # str.isdigit takes too; leading zeros are dropped and the length checked first,
            # for int() refuses over 4,300 digits.
            digits = value.lstrip("0")
            if value.isascii() and value.isdigit() and len(digits) <= len(str(MAX_PARTITION)):
                partition = int(digits or "0")
                if partition <= MAX_PARTITION:
                    self.partitions[value] = partition
                    return partition
        self.malformed(
            event,
            f"partition {short(value)} is not a non-negative integer (at most {MAX_PARTITION}) "
            "or a string of its decimal digits",
        )

    def malformed(self, event: Event, problem: str) -> NoReturn:
        invoke, invoke_line, completion, line = self.lines
        in_completion = event is completion
        line = invoke_line if event is invoke else line if in_completion else 0
        if not line:
            line = next((i + 1 for i, e in enumerate(self.events) if e is event), 0)
        problem = f"index {event.get('index')}: {problem}"
        raise UnreadableQueueOp(self.path, line, problem, invoke["index"], in_completion)


def _is_message(value: Any) -> TypeGuard[Message]:
    # Exact classes: True would pass for 1, and a str subclass (an EDN keyword :a) for "a",
    # hiding a lost write behind a message of another type.
    return value.__class__ is int or value.__class__ is str


def _int_pairs(records: list[Any]) -> array[int] | None:
    # A history holds millions of records: the common shape, [offset, message] lists of
    # non-negative 64-bit offsets and 64-bit integer messages, is checked inline and kept
    # flat (a ninth of the lists' memory). None: any other shape.
    flat: list[int] = []
    r: Any
    for r in records:
        if r.__class__ is list and len(r) == 2:
            offset, message = r
            if offset.__class__ is int and offset >= 0 and message.__class__ is int:
                flat += r
                continue
        return None
    try:
        return array("q", flat)
    except OverflowError:
        return None


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
