"""A share workload's history read from its raw events: the sends, and every delivery of a
record to a member with the acknowledgement it got and its commit's result.

workloads/share_client.py records a poll's (or a drain's) completion value as a list of
rounds, each {began-ns, polled-ns, deliveries: [[partition, offset, message, delivery
count]], acks: [[partition, offset, accept|release|reject]], acked-ns, committed:
{partition: None or the error}, commit-error, committed-ns}; times on the client's
monotonic clock, placed on the history's as checkers/groups/consumer_history.clock_start
says. An acknowledgement is `ok` only when commit_sync reported its partition committed
without error; any other result (an error, no answer, a commit that raised) leaves it
`unknown`: the broker may still have applied it. A drain that found nothing is `[]`.

Every value is read once, with its exact type, as the queue checker reads it
(checkers/queue/values.py): a send by QueueReader.send (its partition, its message, and
an acknowledgement [offset, message] naming the message sent), a partition anywhere as a
queue partition ("0" and 0 are one), an offset a non-negative int, a message exactly an
int, a string or an EDN keyword (`true` or `1.0` is never the `1` sent), a delivery count
a positive int or null, each time an int. Anything else is an UnreadableQueueOp naming
its line: malformed input, never a verdict. Nothing is overwritten: every acknowledged
send is kept, two at one record included (share.py reports the clash).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers.groups.consumer_history import client_time, clock_start, member_of
from checkers.queue.reader import QueueReader, Send, UnreadableQueueOp
from history import Event, History, HistoryError, MalformedOp, pair_invocations, short

Record = tuple[int, int]
"""A record of the topic: (partition, offset)."""
READS = frozenset({"poll", "drain"})
SHARE_FS = READS | {"send"}
ACKS = frozenset({"accept", "release", "reject"})
ROUND_TIMES = ("began-ns", "polled-ns")


@dataclass(frozen=True, slots=True)
class Delivery:
    """One record handed to a member by a poll (history ns throughout): `began` when its
    poll began, `handed` when it returned; its acknowledgement (None if none was made),
    when the commit carrying it was asked (`ack_sent`) and returned (`ack_done`), and
    whether the broker reported it applied (`ack_ok`)."""

    member: str
    index: int
    record: Record
    message: Any
    count: int | None
    began: int
    handed: int
    ack: str | None = None
    ack_sent: int | None = None
    ack_done: int | None = None
    ack_ok: bool = False


@dataclass
class ShareHistory:
    """A share workload's history, as the module docstring says."""

    sends: list[Send] = field(default_factory=list)
    """Every send, in invoke order (ok, info and fail)."""
    deliveries: dict[Record, list[Delivery]] = field(default_factory=dict)
    """Every record's deliveries, in the order their polls returned."""
    crashed_polls: int = 0
    drained: bool = False
    """Whether a final drain ended ok (nothing more to hand out)."""
    ack_reports: dict[str, int] = field(default_factory=lambda: {"ok": 0, "error": 0})
    """Offsets the acknowledgement commit callback reported, committed ok or not."""

    @property
    def acked(self) -> list[Send]:
        """The acknowledged sends whose offset is known, in invoke order."""
        return [s for s in self.sends if s.offset is not None]


class ShareReader(QueueReader):
    """Reads a share history's invocations into a ShareHistory (the queue reader's values,
    its sends; its polls are the share rounds read here)."""

    def __init__(self, path: str, events: Sequence[Event] = (), start: int = 0) -> None:
        super().__init__(path, events)
        self.start = start
        self.share = ShareHistory()

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does."""
        self.lines = (invoke, invoke_line, completion, line)
        f = invoke["f"]
        if f not in SHARE_FS:
            self.malformed(invoke, f"{short(f)} is not a share op (send, poll, drain)")
        if f == "send":
            self.share.sends.append(self.send(invoke, completion))
            return
        if completion is None:  # in flight at the end: what it was handed is not known
            return
        value = completion.get("value")
        if value is None:
            return
        if not isinstance(value, list):
            problem = f"a share {f}'s value must be a list of rounds, not {short(value)}"
            self.malformed(completion, problem)
        member = member_of(self, invoke, completion)
        for r in value:
            self.round(member, invoke["index"], completion, r)
        self.share.crashed_polls += "crashed" in completion
        self.share.drained |= f == "drain" and completion["type"] == "ok"

    def round(self, member: str, index: int, done: Event, r: Any) -> None:
        """Reads one round of a read's value into the deliveries."""
        if r.__class__ is not dict or r.get("deliveries").__class__ is not list:
            self.malformed(done, f"a round must be a map with its deliveries: {short(r)}")
        began, handed = (self.time(done, r.get(t), t) for t in ROUND_TIMES)
        acks = self.acks(done, r.get("acks", []))
        applied = self.committed(done, r)
        for report in self.list_of(done, r, "ack-reports"):
            self.ack_report(done, report)
        sent, committed = (self.maybe_time(done, r.get(t), t) for t in ("acked-ns", "committed-ns"))
        for d in r["deliveries"]:
            record, message, count = self.delivery(done, d)
            ack = acks.get(record)
            delivery = Delivery(
                member,
                index,
                record,
                message,
                count,
                began,
                handed,
                ack,
                sent,
                committed,
                ack is not None and record[0] in applied,
            )
            self.share.deliveries.setdefault(record, []).append(delivery)

    def delivery(self, done: Event, d: Any) -> tuple[Record, Any, int | None]:
        """Takes [partition, offset, message, count]. Returns its record, message, count."""
        if d.__class__ is not list or len(d) != 4:
            shape = "[partition, offset, message, count]"
            self.malformed(done, f"a delivery must be {shape}, not {short(d)}")
        partition, offset = self.partition(done, d[0]), self.offset(done, d[1])
        message = self.message(done, d[2], "delivered message")
        count = d[3]
        if count is not None and (count.__class__ is not int or count < 1):
            self.malformed(done, f"delivery count {short(count)} is not a positive int or null")
        return (partition, offset), message, count

    def acks(self, done: Event, acks: Any) -> dict[Record, str]:
        """Takes a round's acks. Returns each record's acknowledgement."""
        if acks.__class__ is not list:
            self.malformed(done, f"a round's acks must be a list, not {short(acks)}")
        read: dict[Record, str] = {}
        for a in acks:
            if (
                a.__class__ is not list
                or len(a) != 3
                or a[2].__class__ is not str
                or a[2] not in ACKS
            ):
                shape = "[partition, offset, accept|release|reject]"
                self.malformed(done, f"an ack must be {shape}, not {short(a)}")
            record = (self.partition(done, a[0]), self.offset(done, a[1]))
            if read.setdefault(record, a[2]) != a[2]:
                self.malformed(done, f"a round acknowledges {short(list(record))} two ways")
        return read

    def committed(self, done: Event, r: dict[str, Any]) -> set[int]:
        """Takes a round. Returns the partitions whose acknowledgements its commit applied:
        those reported committed without error, none when the commit raised."""
        committed = r.get("committed", {})
        if committed.__class__ is not dict:
            problem = f"committed must be a map of partition to error, not {short(committed)}"
            self.malformed(done, problem)
        applied = {self.partition(done, p) for p, error in committed.items() if error is None}
        if len({self.partition(done, p) for p in committed}) != len(committed):
            self.malformed(done, f"committed {short(committed)} names a partition twice")
        if any(e is not None and e.__class__ is not str for e in committed.values()):
            self.malformed(done, f"a commit's error must be a string or null: {short(committed)}")
        return set() if "commit-error" in r else applied

    def ack_report(self, done: Event, report: Any) -> None:
        """Counts what one report of the acknowledgement commit callback said."""
        offsets = report.get("offsets") if report.__class__ is dict else None
        error = report.get("error") if report.__class__ is dict else None
        if offsets.__class__ is not list or not (error is None or error.__class__ is str):
            problem = "an ack report must be {error: null or a string, offsets: [...]}"
            self.malformed(done, f"{problem}: {short(report)}")
        self.share.ack_reports["ok" if error is None else "error"] += len(offsets)

    def list_of(self, done: Event, r: dict[str, Any], name: str) -> list[Any]:
        """Returns a round's list `name` (empty when absent); refuses anything else."""
        value = r.get(name, [])
        if value.__class__ is not list:
            self.malformed(done, f"a round's {name} must be a list, not {short(value)}")
        return value

    def time(self, done: Event, mono_ns: Any, name: str) -> int:
        """Takes a client clock reading. Returns it in history ns (client_time)."""
        return client_time(self, done, mono_ns, name) - self.start

    def maybe_time(self, done: Event, mono_ns: Any, name: str) -> int | None:
        """Takes a client clock reading or None. Returns it in history ns, or None."""
        return None if mono_ns is None else self.time(done, mono_ns, name)


def read_share_history(events: Sequence[Event], path: str = "<events>") -> ShareHistory:
    """Takes a share history's events. Returns its ShareHistory.

    Raises UnreadableQueueOp for a value it cannot read, naming its line."""
    invocations, _ = pair_invocations(events)
    reader = ShareReader(path, events)
    reader.start = clock_start(reader, [inv.completion for inv in invocations])
    for inv in invocations:
        reader.add(inv.invoke, 0, inv.completion, 0)
    share = reader.share
    for found in share.deliveries.values():
        found.sort(key=lambda d: d.handed)
    return share


def share_shape(invoke: Event, completion: Event | None) -> bool | None:
    """Takes an invocation. Returns whether it shows a share workload's history (True), a
    queue's (False), or says nothing (None): a drain without a partition is a share's, a
    read's list of rounds too; a queue's poll is a map and its drain names its partition;
    an empty list (a share drain that found nothing) could be either."""
    f = invoke.get("f")
    if f not in READS:
        return None
    if f == "drain" and "key" not in invoke:
        return True
    value = None if completion is None else completion.get("value")
    if value is None or value == []:
        return None
    return is_share_value(value)


def is_share_value(value: Any) -> bool:
    """Takes a poll's or drain's completion value. Returns whether it is a share workload's,
    a non-empty list of rounds each with its deliveries (a queue poll's is a map of
    partitions, a Jepsen micro-op poll's a list of lists)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(r, dict) and "deliveries" in r for r in value)
    )


def share_events(events: Sequence[Event]) -> bool:
    """Takes a history's events. Returns whether its first read that tells (share_shape)
    is a share workload's."""
    invokes: dict[Any, Event] = {}
    for e in events:
        if e.get("type") == "invoke":
            invokes[e.get("process")] = e
            continue
        invoke = invokes.pop(e.get("process"), None)
        shape = None if invoke is None else share_shape(invoke, e)
        if shape is not None:
            return shape
    return False


class Shaped(Exception):
    """ShapeProbe met the first read that tells: `share` says whose it is."""

    def __init__(self, share: bool) -> None:
        super().__init__("share" if share else "not share")
        self.share = share


class ShapeProbe:
    """A history Reader that stops the load (raises Shaped) at the first read that tells
    (share_shape), so that a long history is told apart from its first lines."""

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does; raises Shaped at the first read
        that tells."""
        shape = share_shape(invoke, completion)
        if shape is not None:
            raise Shaped(shape)

    def finish(self) -> object:
        """Returns None: no read told."""
        return None


def reject_malformed(history: History) -> None:
    """Takes a share history loaded with its events. Raises the HistoryError (`PATH:LINE:
    problem`) of the first value read_share_history cannot read."""
    try:
        read_share_history(history.events, history.path)
    except UnreadableQueueOp as e:
        # As the queue checker's: the op's lines as loaded name it, or, for a failed op
        # (not kept), the event's position.
        located = history.error(MalformedOp(e.index, e.problem, in_value=e.in_completion))
        raise located if located.line else HistoryError(history.path, e.line, e.problem) from None
