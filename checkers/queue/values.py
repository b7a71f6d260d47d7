"""The values inside a queue history's ops read one way everywhere: partitions, offsets,
messages and [offset, message] records; anything else is refused, naming its line.

A partition is an int from 0 to MAX_PARTITION, a string of its ASCII digits (JSON's object
keys are strings), so "0", "00" and 0 are one partition, or an EDN keyword: Jepsen's
kafka.clj names partitions by abstract keys, integers in its suites' clients and keywords
in its own examples (`[:send :x [0 :a]]`, realtime-lag's docstring). A keyword is
numbered above every Kafka partition, in order of first appearance, so it never meets a
real one, and `names` spells it back (`:x`). A message is exactly an int, a str or an EDN
keyword; an offset a non-negative int.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, NoReturn, TypeGuard

from checkers.queue.records import (
    MAX_PARTITION,
    Message,
    Oddity,
    Record,
    Records,
    UnreadableQueueOp,
)
from history import Event, Keyword, short

Lines = tuple[Event, int, Event | None, int]
"""The op being read: its invoke, the invoke's line, its completion (or None), its line."""


class QueueValues:
    """Reads the values of one queue history's ops, one op at a time (`lines`).

    Lines name offending events in messages; a line of 0 means "find the event's 1-based
    position in `events`" (for events not read from a file)."""

    def __init__(self, path: str, events: Sequence[Event] = ()) -> None:
        self.path, self.events = path, events
        self.partitions: dict[str, int] = {}  # a partition's digits, as written -> partition
        self.named: dict[Keyword, int] = {}  # a partition's EDN keyword -> partition
        self.lines: Lines = ({}, 0, None, 0)
        self.oddity: Oddity | None = None
        self.oddities = 0

    def names(self) -> dict[int, str]:
        """Returns the partitions named by keyword, each with its spelling."""
        return {partition: repr(keyword) for keyword, partition in self.named.items()}

    def records(self, event: Event, value: Any) -> Records:
        """Takes a list of [offset, message] records as an event holds it. Returns it as
        Records."""
        if not isinstance(value, list):
            self.malformed(event, f"{short(value)} is not a list of [offset, message] records")
        flat = int_pairs(value)
        if flat is None:
            return [self.record(event, r) for r in value]
        return flat

    def record(self, event: Event, value: Any) -> Record:
        """Takes one [offset, message] record. Returns it as an (offset, message) tuple."""
        if not isinstance(value, list | tuple) or len(value) != 2:
            self.malformed(event, f"{short(value)} is not an [offset, message] record")
        offset, message = value
        if not is_message(message):
            problem = f"record {short(value)}: message is not an int, a string or an EDN keyword"
            self.malformed(event, problem)
        return self.offset(event, offset), message

    def message(self, event: Event, value: Any, what: str) -> Message:
        """Takes what an event says is a message. Returns it, or refuses it."""
        if not is_message(value):
            problem = f"{what} {short(value)} is not a message (an int, a string or an EDN keyword)"
            self.malformed(event, problem)
        return value

    def offset(self, event: Event, value: Any) -> int:
        """Takes what an event says is an offset. Returns it, or refuses it."""
        if type(value) is not int or value < 0:
            self.malformed(event, f"offset {short(value)} is not a non-negative integer")
        return value

    def partition_list(self, event: Event, value: Any, what: str) -> set[int]:
        """Takes what an event says is a list of partitions. Returns them as a set."""
        if not isinstance(value, list):
            self.malformed(event, f"{what} {short(value)} is not a list of partitions")
        return {self.partition(event, p) for p in value}

    def partition(self, event: Event, value: Any) -> int:
        """Takes a partition as an event names it, anywhere. Returns it as an int; refuses
        what is no partition, as the module docstring says."""
        if value.__class__ is int and 0 <= value <= MAX_PARTITION:  # the common case, first
            partition: int = value
            return partition
        found = self.as_partition(value)
        if found is None:
            self.malformed(
                event,
                f"partition {short(value)} is not a non-negative integer (at most "
                f"{MAX_PARTITION}), a string of its decimal digits or an EDN keyword",
            )
        return found

    def as_partition(self, value: Any) -> int | None:
        """Takes a value. Returns the partition it names, or None if it names none."""
        # Exact classes: True or 0.0 would pass for 1 or 0.
        if value.__class__ is int:
            return value if 0 <= value <= MAX_PARTITION else None
        if value.__class__ is Keyword:
            return self.named.setdefault(value, MAX_PARTITION + 1 + len(self.named))
        if value.__class__ is not str:
            return None
        known = self.partitions.get(value)  # a history names few partitions, very often
        if known is not None:
            return known
        # ASCII digits only, never "²" or "٣", which str.isdigit takes too; leading zeros
        # are dropped and the length checked first, for int() refuses over 4,300 digits.
        digits = value.lstrip("0")
        if not (value.isascii() and value.isdigit() and len(digits) <= len(str(MAX_PARTITION))):
            return None
        partition = int(digits or "0")
        if partition > MAX_PARTITION:
            return None
        self.partitions[value] = partition
        return partition

    def unsplit(self, invoke: Event, completion: Event | None) -> tuple[Event, Event | None]:
        """Takes an op whose events have a key, which no queue op has but a one-message
        send or drain. Returns it with each event's value whole again, [key, value].

        history.jepsen reads a two-element value as jepsen.independent's [key value] when
        every op's value in a Jepsen history has two elements, as in a short one of
        two-key assigns and two-micro-op txns."""
        whole = _whole(invoke), None if completion is None else _whole(completion)
        _, invoke_line, _, line = self.lines
        self.lines = (whole[0], invoke_line, whole[1], line)
        return whole

    def malformed(self, event: Event, problem: str) -> NoReturn:
        """Takes an event of the op being read and what is wrong with it. Raises the
        UnreadableQueueOp naming its line."""
        raise self.located(event, problem)

    def odd(self, event: Event, problem: str) -> None:
        """Takes an event of the op being read and what is odd in it, which Jepsen's
        analysis reads as it is and ours refuses (checkers.queue.checker.judge_reading
        decides which, by the history's format). Notes the first, and counts them."""
        if self.oddity is None:
            bad = self.located(event, problem)
            self.oddity = Oddity(bad.line, bad.problem, bad.index, bad.in_completion)
        self.oddities += 1

    def located(self, event: Event, problem: str) -> UnreadableQueueOp:
        """Takes an event of the op being read and what is wrong with it. Returns the
        UnreadableQueueOp naming its line."""
        invoke, invoke_line, completion, line = self.lines
        in_completion = event is completion
        line = invoke_line if event is invoke else line if in_completion else 0
        if not line:  # the event as read, or its copy made whole (unsplit)
            line = next((i + 1 for i, e in enumerate(self.events) if e is event), 0)
            line = line or next((i + 1 for i, e in enumerate(self.events) if _same(e, event)), 0)
        problem = f"index {event.get('index')}: {problem}"
        return UnreadableQueueOp(self.path, line, problem, invoke["index"], in_completion)


def is_message(value: Any) -> TypeGuard[Message]:
    """Whether a value is a message: exactly an int, a str or an EDN keyword."""
    # Exact classes: True would pass for 1, and a str subclass for a string, hiding a
    # lost write behind a message of another type. A keyword equals only a keyword.
    cls = value.__class__
    return cls is int or cls is str or cls is Keyword


def int_pairs(records: list[Any]) -> array[int] | None:
    """Takes a list of records. Returns them flat in an array when every one is an
    [offset, message] list of a non-negative 64-bit offset and a 64-bit integer message;
    else None."""
    # A history holds millions of records: the common shape is kept flat (a ninth of the
    # lists' memory).
    flat: list[int] = []
    if not add_int_pairs(flat, records):
        return None
    try:
        return array("q", flat)
    except OverflowError:
        return None


def add_int_pairs(flat: list[int], records: list[Any]) -> bool:
    """Takes a list of ints and a list of records. Adds each record's offset and message
    to it, in order, while they are [offset, message] lists of a non-negative offset and
    an int message. Returns whether every record was (64 bits are for the caller to try)."""
    # The common shape, checked inline: millions of records in a history.
    r: Any
    for r in records:
        if r.__class__ is list and len(r) == 2:
            offset, message = r
            if offset.__class__ is int and offset >= 0 and message.__class__ is int:
                flat += r
                continue
        return False
    return True


def _whole(event: Event) -> Event:
    if "key" not in event:
        return event
    whole = {k: v for k, v in event.items() if k != "key"}
    whole["value"] = [event["key"], event.get("value")]
    return whole


def _same(event: Event, whole: Event) -> bool:
    return all(event.get(k) == whole.get(k) for k in ("index", "process", "type", "f", "time"))
