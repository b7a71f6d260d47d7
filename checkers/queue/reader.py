"""A queue history read into plain records (checkers/queue/records.py): sends, the
consumers' polls and repositionings, and the final drains.

Two shapes of op read alike, in one history or apart:

- one message, the queue workload's: f send (key: the partition, value: the message; ok
  value [offset, message]), poll (ok value: partition -> records), assign, seek,
  subscribe, drain;
- micro-ops, Jepsen's (jepsen.tests.kafka, kafka.clj): f send, poll or txn whose value is
  a list of [send, key, value] and [poll] micro-ops (checkers/queue/microops.py); and its
  :crash (the process's client is replaced: its position is lost) and
  :debug-topic-partitions (an admin query, ignored) ops. A completion's rebalances are
  our `rebalanced` or Jepsen's :rebalance-log. When every value of a Jepsen history has
  two elements, history.jepsen reads each as jepsen.independent's [key value]; no queue
  op has such a key, and the reader puts the value back together (QueueValues.unsplit).

What becomes of each op:

- each send, one Send, in op order; an op's sends keep their order (Send.mop). An ok one
  is acknowledged at its completion, at the offset Kafka gave, if known. An info one
  whose completion gives an offset (Jepsen's micro-ops may) is a Claim beside it: true
  once its op is proven committed (checkers/queue/checker.py), as kafka.clj's
  version-orders takes an info op's offsets once must-have-committed? holds;
- an op that polled, one Poll: several poll micro-ops of one op are merged, each
  partition's records in the order received, unless the group moved partitions during the
  op; then one Poll per poll micro-op, each with the op's moves (Jepsen's rebalance log
  does not say between which micro-ops it came; kafka.clj's int-poll-skip+nonmonotonic
  -cases likewise ignores such keys within the op);
- a consumer op that ended info or fail but returned records is a Poll with that outcome:
  the records were received and the position moved (an abort does not rewind it,
  KAFKA-17582; kafka.clj's version-orders reads "all polls, including :info and :fail
  ones"), after which what the consumer holds is not known; one that returned none is a
  Reposition of every partition, as is a crash;
- an op that only sent, but whose completion records a rebalance, a Reposition of the
  partitions moved;
- an ok assign, seek or subscribe is a Reposition of the partitions it may have changed
  (checkers/queue/positions.py says which);
- the last ok drain of each partition is its final read; a drain that gave up saying
  where it stopped (`position`) is a Stalled read (checkers/queue/stuck.py);
- a consumer group's commit op is the group checks' (checkers/groups/consumer.py): it
  moves no position, and no record comes of it.

Values keep their exact types and are read as checkers/queue/values.py says; anything
else is an UnreadableQueueOp naming its line: malformed input, never a verdict.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, Generic, TypeVar

from checkers.gone import gone_said
from checkers.queue.microops import MicroOps, merged, read_micro_ops
from checkers.queue.positions import NOTHING, Holdings
from checkers.queue.records import (
    ASSIGN,
    COMMIT,
    CRASH,
    DEBUG,
    DRAIN,
    GROUP_ONLY_FS,
    MAX_PARTITION,
    POLL,
    SEEK,
    SEND,
    SUBSCRIBE,
    TXN,
    Batch,
    Claim,
    Drain,
    Message,
    Observation,
    Poll,
    QueueHistory,
    Received,
    Record,
    Records,
    Reposition,
    Send,
    Stalled,
    UnreadableQueueOp,
    messages,
    observations,
    observed_batches,
    pairs,
)
from checkers.queue.values import QueueValues, add_int_pairs
from history import Event, HistoryError, pair_invocations, short

__all__ = [
    "ASSIGN",
    "CRASH",
    "DEBUG",
    "DRAIN",
    "GROUP_ONLY_FS",
    "MAX_PARTITION",
    "POLL",
    "QUEUE_FS",
    "SEEK",
    "SEND",
    "SUBSCRIBE",
    "TXN",
    "Batch",
    "Claim",
    "Drain",
    "Message",
    "Observation",
    "Poll",
    "QueueHistory",
    "QueueReader",
    "Record",
    "Records",
    "Reposition",
    "Send",
    "Stalled",
    "UnreadableQueueOp",
    "messages",
    "observations",
    "observed_batches",
    "pairs",
    "read_queue_history",
    "refuse_oddity",
]

QUEUE_FS = frozenset({SEND, POLL, TXN, ASSIGN, SEEK, SUBSCRIBE, DRAIN, CRASH, DEBUG, COMMIT})
SKIPPED_FS = frozenset({DEBUG, COMMIT})
"""The ops no queue record comes of: Jepsen's admin query, a consumer group's commit."""
MICRO_FS = frozenset({SEND, POLL, TXN})
"""The ops whose value may be a list of micro-ops (a txn's must be)."""


def read_queue_history(events: Sequence[Event], *, strictly: bool = True) -> QueueHistory:
    """Takes a history's events and whether it is read strictly, as ours
    (history.read_strictly: a process retires after an info, an ok send acknowledges the
    message its invoke sent). Returns its QueueHistory.

    Raises HistoryError for a malformed history or a value not of the queue format, with
    the 1-based position of the offending event as its line.
    """
    invocations, _ = pair_invocations(events, retires=strictly)
    reader = QueueReader("<events>", events)
    for inv in invocations:
        reader.add(inv.invoke, 0, inv.completion, 0)
    read = reader.finish()
    if strictly:
        refuse_oddity(read, reader.path)
    return read


def refuse_oddity(read: QueueHistory, path: str) -> None:
    """Takes a queue history's records, read strictly, and its path. Raises the
    UnreadableQueueOp of the first value Jepsen's analysis would read as it is (an ok send
    naming another message than its invoke sent), if any: in our format, our bug."""
    odd = read.oddity
    if odd is not None:
        raise UnreadableQueueOp(path, odd.line, odd.problem, odd.index, odd.in_completion)


class QueueReader(QueueValues):
    """Reads a queue history's invocations into its records, in any order of completion
    (history's Reader), as the module docstring says."""

    def __init__(self, path: str, events: Sequence[Event] = ()) -> None:
        super().__init__(path, events)
        self.sends: list[Send] = []
        self.consumer_ops: list[Poll | Reposition] = []
        self.drains: dict[int, Drain] = {}
        self.node_drains: dict[str, Drain] = {}
        self.stalled: list[Stalled] = []
        self.holdings = Holdings(self)
        self.txn_ops = 0
        self.claims: list[Claim] = []

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation: its invoke, the completion (None: still in flight at the
        end) and their lines. A process's invocations come in their order."""
        self.lines = (invoke, invoke_line, completion, line)
        f = invoke["f"]
        if f not in QUEUE_FS:
            self.malformed(invoke, f"{short(f)} is not a queue op ({', '.join(sorted(QUEUE_FS))})")
        if f == DRAIN:
            if completion is not None and completion["type"] == "ok":
                self.drain(invoke, completion)
            elif completion is not None and completion.get("position") is not None:
                self.stall(invoke, completion)
            return
        value = invoke.get("value")
        if f == SEND and value.__class__ is not list:
            self.sends.append(self.send(invoke, completion))
            return
        if invoke.get("key") is not None:  # no queue op's but a one-message send's or drain's
            invoke, completion = self.unsplit(invoke, completion)
            value = invoke["value"]
        if value.__class__ is list and f in MICRO_FS:
            self.txn_ops += f == TXN or len(value) > 1
            self.micro(invoke, completion, read_micro_ops(self, invoke, completion))
        elif f == POLL:
            self.poll(invoke, completion)
        elif f == TXN:
            problem = f"txn value {short(invoke.get('value'))} is not a list of micro-ops"
            self.malformed(invoke, problem)
        elif f == CRASH:
            self.holdings.crashed(invoke["process"])
            self.consumer_ops.append(Reposition(invoke["index"], invoke["process"], None, {}, f))
        elif f in SKIPPED_FS:
            return
        elif completion is None or completion["type"] != "ok":
            self.lose_position(invoke)
        else:
            self.reposition(invoke, completion)

    def finish(self) -> QueueHistory:
        """Returns the QueueHistory of every invocation added."""
        by_index = attrgetter("index")  # invoke order: completions may come in any
        self.sends.sort(key=by_index)  # stable: one op's sends stay in their order
        self.consumer_ops.sort(key=by_index)
        self.claims.sort(key=_first)
        drains = dict(sorted(self.drains.items()))
        via = frozenset(self.holdings.sub_via)
        read = QueueHistory(
            self.sends,
            self.consumer_ops,
            drains,
            self.names(),
            via,
            self.txn_ops,
            self.oddity,
            self.oddities,
            self.claims,
            dict(sorted(self.node_drains.items())),
            sorted(self.stalled, key=by_index),
        )
        # The history owns the records now: this reader and its holdings are a cycle, which
        # only the collector frees (never, once gc.freeze has run), and must not keep a
        # million records alive until then, nor the last op's events (one line may hold
        # a million records, parsed: 156 MiB for a 20 MB poll).
        self.sends, self.consumer_ops, self.drains, self.claims = [], [], {}, []
        self.node_drains, self.stalled = {}, []
        self.lines = ({}, 0, None, 0)
        return read

    def send(self, invoke: Event, done: Event | None) -> Send:
        partition = self.partition(invoke, invoke.get("key"))
        message = invoke.get("value")
        if message.__class__ is not int:  # checked inline for the common case
            message = self.message(invoke, message, "send value")
        outcome = "info" if done is None else str(done["type"])
        offset: int | None = None
        if done is not None and outcome == "ok":
            ack: Any = done.get("value")
            at, acknowledged = ack if ack.__class__ is list and len(ack) == 2 else (None, None)
            if at.__class__ is int and at >= 0 and acknowledged.__class__ is int:
                offset = at  # the common acknowledgement, read inline
            elif at is None and acknowledged is not None:  # acknowledged, offset not told
                acknowledged = self.message(done, acknowledged, "ok send acknowledges")
            else:
                offset, acknowledged = self.record(done, ack)
            if acknowledged != message:  # both messages: equal only if of one kind
                problem = (
                    f"ok send acknowledges {short(acknowledged)}, not the sent {short(message)}"
                )
                self.odd(done, problem)
                message = acknowledged  # the completion's value, as Jepsen's analysis reads
        acked = done["time"] if outcome == "ok" and done is not None else None
        index, process = invoke["index"], invoke["process"]
        return Send(index, process, partition, message, outcome, offset, invoke["time"], acked)

    def poll(self, invoke: Event, done: Event | None) -> None:
        if done is None or done["type"] != "ok":
            value = None if done is None else done.get("value")
            if done is None or not isinstance(value, dict) or not any(value.values()):
                self.lose_position(invoke)  # it returned no records
                return
        value = done.get("value")
        if not isinstance(value, dict):
            problem = f"ok poll value {short(value)} is not a map of partition to records"
            self.malformed(done, problem)
        received: Received
        flat = self.flat(done, value)
        if flat is None:  # read as the common case is, but with every problem named
            records: dict[int, Records] = {}
            for p, rs in value.items():
                partition = self.partition(done, p)
                records[partition] = self.records(done, rs)
            if len(records) != len(value):
                self.malformed(done, f"poll value {short(value)} names a partition twice")
            received, named = records, set(records)
        else:
            received, named = flat
        process, outcome = invoke["process"], done["type"]
        moved = self.holdings.poll(process, done, named)
        self.consumer_ops.append(
            Poll(invoke["index"], process, done["time"], received, moved, outcome)
        )
        if outcome != "ok":
            self.holdings.unknown(process)

    def flat(self, done: Event, value: dict[Any, Any]) -> tuple[array[int], set[int]] | None:
        """Takes an ok poll's value. Returns its records flat (queue_records.Received) and
        its partitions; None unless every partition is well named, once, and every record
        is an [offset, message] of a non-negative 64-bit offset and a 64-bit message."""
        # The common case, checked inline: millions of partitions' records in a history.
        flat: list[int] = []
        known = self.partitions
        named: set[int] = set()
        for p, rs in value.items():
            partition = known.get(p) if p.__class__ is str else None
            if partition is None:
                partition = self.partition(done, p)
            if partition in named or rs.__class__ is not list:
                return None
            named.add(partition)
            flat += (partition, len(rs))
            if not add_int_pairs(flat, rs):
                return None
        try:
            return array("q", flat), named
        except OverflowError:
            return None

    def micro(self, invoke: Event, done: Event | None, ops: MicroOps) -> None:
        index, process, invoked = invoke["index"], invoke["process"], invoke["time"]
        outcome = "info" if done is None else str(done["type"])
        acked = done["time"] if done is not None and outcome == "ok" else None
        for place, partition, message, offset in ops.sends:
            at = offset if acked is not None else None  # only an ok send was acknowledged
            if offset is not None and outcome == "info":  # true once the op is proven committed
                self.claims.append((index, partition, offset, message))
            self.sends.append(
                Send(index, process, partition, message, outcome, at, invoked, acked, place)
            )
        if done is not None and (any(ops.polls) if outcome != "ok" else ops.polled):
            self.polled(invoke, done, ops.polls)
        elif ops.polled and outcome != "ok":
            self.lose_position(invoke)  # it returned no records
        elif done is not None:  # it asked no poll, yet the group may have moved partitions
            moved = self.holdings.rebalanced(process, done)
            if moved:
                self.consumer_ops.append(Reposition(index, process, moved, {}, invoke["f"]))

    def polled(self, invoke: Event, done: Event, polls: list[dict[int, Records]]) -> None:
        """Takes a consumer op that returned records (or completed ok) and the records of
        each of its polls, in order. Records its Polls."""
        index, process, time = invoke["index"], invoke["process"], done["time"]
        outcome = str(done["type"])
        moved = self.holdings.rebalanced(process, done)
        received = [records for records in polls if records]
        if not moved or len(received) < 2:
            received = [merged(received) if received else {}]
        for records in received:
            self.holdings.polled(process, records)
            self.consumer_ops.append(Poll(index, process, time, records, moved, outcome))
        if outcome != "ok":
            self.holdings.unknown(process)

    def reposition(self, invoke: Event, ok: Event) -> None:
        process, f, value = invoke["process"], invoke["f"], ok.get("value")
        partitions: frozenset[int] | None = NOTHING
        seek: dict[int, int] = {}
        if f == ASSIGN:
            wanted = self.partition_list(ok, value, "assign value")
            restart = invoke.get("seek-to-beginning?") is True
            partitions = self.holdings.assigned(process, wanted, restart)
        elif f == SEEK:
            if not isinstance(value, dict):
                self.malformed(ok, f"seek value {short(value)} is not a map of partition to offset")
            seek = {self.partition(ok, p): self.offset(ok, o) for p, o in value.items()}
            if len(seek) != len(value):
                self.malformed(ok, f"seek value {short(value)} names a partition twice")
            partitions = frozenset(seek)
            self.holdings.polled(process, seek)  # Kafka seeks only in an assigned partition
        else:
            partitions = self.holdings.subscribed(process, self.subscription(invoke.get("value")))
        self.consumer_ops.append(Reposition(invoke["index"], process, partitions, seek, f))

    def subscription(self, value: object) -> set[int] | None:
        """Takes a subscribe's invoke value. Returns the partitions it names (Jepsen's
        keys), or None when it names topics, or nothing: the whole topic."""
        if not isinstance(value, list):
            return None
        named = {self.as_partition(p) for p in value}
        return None if None in named else {p for p in named if p is not None}

    def lose_position(self, invoke: Event) -> None:
        # A consumer op that failed or crashed may have moved or reassigned anything.
        self.holdings.unknown(invoke["process"])
        index, process = invoke["index"], invoke["process"]
        self.consumer_ops.append(Reposition(index, process, None, {}, invoke["f"]))

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
            node=str(invoke["node"]) if invoke.get("node") is not None else None,
            gone=gone_said(ok),
        )
        earlier = self.node_drains.get(drain.node) if drain.node is not None else None
        if drain.node is not None and (earlier is None or earlier.completion < drain.completion):
            self.node_drains[drain.node] = drain
        if partition not in self.drains or self.drains[partition].completion < drain.completion:
            self.drains[partition] = drain

    def stall(self, invoke: Event, gave_up: Event) -> None:
        """Takes a drain that gave up, whose completion says the position it had reached
        (`position`), the high watermark it was to reach and its last record read."""
        last = gave_up.get("last-read")
        self.stalled.append(
            Stalled(
                index=invoke["index"],
                process=invoke["process"],
                partition=self.partition(invoke, invoke.get("key")),
                invoked=invoke["time"],
                time=gave_up["time"],
                high_watermark=self.offset(gave_up, gave_up.get("high-watermark")),
                position=self.offset(gave_up, gave_up["position"]),
                last_read=None if last is None else self.record(gave_up, last),
            )
        )


def _first(claim: Claim) -> int:
    return claim[0]


Reading = TypeVar("Reading", bound=QueueReader)
Read = TypeVar("Read")


class Stream(Generic[Reading, Read]):
    """A Reader for history.load that reads a history with a QueueReader (or a subclass) as
    it is loaded, so that neither its events nor its ops are kept. A value the reader
    refuses stops the reading; `finish` returns what the reader made of the history, or
    that HistoryError, for the checker to raise."""

    def __init__(self, reader: Reading, finished: Callable[[Reading], Read]) -> None:
        self.reader: Reading | None = reader
        self.finished = finished
        self.error: HistoryError | None = None

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does."""
        if self.reader is None:
            return
        try:
            self.reader.add(invoke, invoke_line, completion, line)
        except HistoryError as e:
            self.error, self.reader = e, None  # what was read is no use any more

    def finish(self) -> Read | HistoryError:
        """Returns what the reader made of the history, or the HistoryError that stopped
        the reading."""
        if self.reader is None:
            assert self.error is not None
            return self.error
        return self.finished(self.reader)
