"""A queue history's consumer group read from its raw events: each member's rebalance
callbacks, the group's commits, what each member's polls returned, the acknowledged sends.

The queue workload records a group as workloads/group_log.py writes it: consumer ops'
completions name their `member` (the client; one client may outlive several processes,
since an info op retires its process and not its client) and carry `group-log` (assigned,
revoked, lost: partitions and `mono-ns`), `auto-commits` and, beside a group-log, the
`first-record-ns` of a poll's first record; a `commit` op's value is the
offsets it asked to commit, partition -> next offset to read. Callbacks are timed on the
client's monotonic clock; the history's `time` is that clock less the run's start, which
is read back as the largest `mono-ns - time` of any completion carrying both (a completion
is written just after the client returns, so that is the start to within the write's
delay). The queue checker's reader skips `commit` ops (checkers/queue/reader.py).

Every value is read once, with its exact type (GroupReader): the sends and polls by the
queue checker's own reader, either shape (one message, or Jepsen's micro-ops), and the
group's fields as the queue reads values (checkers/queue/values.py): a partition "0" is
partition 0 in a callback as in a poll, an offset is a non-negative int (an auto-commit's
any int: librdkafka reports its logical offsets), a time an int, a member a string, and a
map naming a partition twice is refused. Anything else is an UnreadableQueueOp naming its
line: malformed input, never a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers.queue.reader import GROUP_ONLY_FS, Poll, QueueReader, UnreadableQueueOp, pairs
from checkers.queue.values import QueueValues
from history import Event, History, HistoryError, MalformedOp, pair_invocations, short

KINDS = frozenset({"assigned", "revoked", "lost"})
"""The rebalance callbacks a member serves."""
ENDS = frozenset({"revoked", "lost"})
"""The callbacks that end a member's ownership of a partition."""


@dataclass(frozen=True, slots=True)
class Callback:
    """A rebalance callback a member served: assigned, revoked or lost, at `at` (history ns),
    during the op invoked at `index`."""

    member: str
    kind: str
    partitions: tuple[int, ...]
    at: int
    index: int


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit of the group: a commit op, or an auto-commit report (`auto`: invoked
    unknown, so 0; completed when served, during the op at `index`). Outcome ok, fail or
    info; offsets: partition -> next offset to read."""

    member: str
    index: int
    outcome: str
    offsets: dict[int, int]
    invoked: int
    completed: int
    auto: bool = False


@dataclass(frozen=True, slots=True)
class Fetch:
    """What one poll op of a member returned of one partition: its first and last offsets;
    first_at, when the op's first record was handed over (history ns), if recorded."""

    member: str
    index: int
    partition: int
    first: int
    last: int
    completed: int
    first_at: int | None = None


@dataclass
class GroupHistory:
    """A group's history, as the module docstring says; ops in invoke order."""

    callbacks: list[Callback] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    fetches: list[Fetch] = field(default_factory=list)
    polled: dict[int, set[Any]] = field(default_factory=dict)
    """Per partition, every message a member's poll returned (whatever the op's outcome)."""
    acked: list[tuple[int, int, Any]] = field(default_factory=list)
    """Every acknowledged send whose offset is known: (partition, offset, message)."""
    last_seen: dict[str, int] = field(default_factory=dict)
    """Per member, when its last op completed (its client closed soon after, or the run
    ended): it held nothing after."""
    names: dict[int, str] = field(default_factory=dict)
    """The partitions the history named by EDN keyword, spelled (QueueHistory.names)."""


class GroupReader(QueueReader):
    """Reads a group's history: its sends and polls as the queue checker reads them, and
    each completion's group fields and each commit op, as the module docstring says."""

    def __init__(self, path: str, events: Sequence[Event] = (), start: int = 0) -> None:
        super().__init__(path, events)
        self.start = start
        self.group = GroupHistory()
        self.op_members: dict[int, str] = {}  # an op's index -> its member
        self.first_records: dict[int, int] = {}  # a poll op's index -> its first-record-ns

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as history's Reader does."""
        if invoke["f"] in GROUP_ONLY_FS:
            self.lines = (invoke, invoke_line, completion, line)
        else:
            super().add(invoke, invoke_line, completion, line)  # refuses a queue value first
        if completion is None:  # in flight at the end: a commit's offsets are not known
            return
        member = member_of(self, invoke, completion)
        index = invoke["index"]
        self.op_members[index] = member
        if "member" in completion:
            seen = self.group.last_seen.get(member, 0)
            self.group.last_seen[member] = max(seen, completion["time"])
        self.group_fields(member, index, completion)
        if invoke["f"] in GROUP_ONLY_FS:
            value = completion.get("value")  # null: nothing asked (no position yet)
            offsets = {} if value is None else self.offsets(completion, value, "commit value")
            invoked = invoke["time"]
            commit = Commit(member, index, completion["type"], offsets, invoked, completion["time"])
            self.group.commits.append(commit)

    def group_fields(self, member: str, index: int, done: Event) -> None:
        """Reads a completion's rebalance callbacks, auto-commit reports and first-record-ns."""
        for entry in self.listed(done, "group-log"):
            kind = entry.get("type") if entry.__class__ is dict else None
            if kind.__class__ is not str or kind not in KINDS:
                self.malformed(
                    done, f"group-log entry {short(entry)} is not assigned, revoked or lost"
                )
            listed = entry.get("partitions")
            if listed.__class__ is not list:
                self.malformed(done, f"callback {short(entry)} has no list of partitions")
            named = tuple(dict.fromkeys(self.partition(done, p) for p in listed))
            if len(named) != len(listed):
                self.malformed(done, f"callback {short(entry)} names a partition twice")
            at = self.time(done, entry.get("mono-ns"), "a callback's mono-ns")
            self.group.callbacks.append(Callback(member, kind, named, at, index))
        for entry in self.listed(done, "auto-commits"):
            if entry.__class__ is not dict:
                self.malformed(done, f"auto-commit report {short(entry)} is not a map")
            outcome = "fail" if "error" in entry else "ok"
            offsets = self.offsets(done, entry.get("offsets"), "auto-commit offsets", logical=True)
            at = self.time(done, entry.get("mono-ns"), "an auto-commit's mono-ns")
            self.group.commits.append(Commit(member, index, outcome, offsets, 0, at, auto=True))
        handed = done.get("first-record-ns")
        if handed is not None:
            self.first_records[index] = self.time(done, handed, "first-record-ns")

    def listed(self, done: Event, name: str) -> list[Any]:
        """Returns a completion's list `name` (empty when absent); refuses anything else."""
        value = done.get(name, [])
        if value.__class__ is not list:
            self.malformed(done, f"{name} {short(value)} is not a list")
        return value

    def offsets(
        self, done: Event, value: Any, what: str, *, logical: bool = False
    ) -> dict[int, int]:
        """Takes a map of partition to offset. Returns it read: partitions as the queue reads
        them, offsets non-negative ints (any int when `logical`: librdkafka's -1001 and
        others), no partition named twice."""
        if value.__class__ is not dict:
            self.malformed(done, f"{what} {short(value)} is not a map of partition to offset")
        read: dict[int, int] = {}
        for p, o in value.items():
            read[self.partition(done, p)] = (
                o if logical and o.__class__ is int else self.offset(done, o)
            )
        if len(read) != len(value):
            self.malformed(done, f"{what} {short(value)} names a partition twice")
        return read

    def time(self, done: Event, mono_ns: Any, what: str) -> int:
        """Takes a client clock reading. Returns it in history ns (client_time)."""
        return client_time(self, done, mono_ns, what) - self.start

    def finish_group(self) -> GroupHistory:
        """Returns the GroupHistory of every invocation added."""
        queue = self.finish()
        group = self.group
        group.names = queue.names
        group.acked = [
            (s.partition, s.offset, s.value) for s in queue.sends if s.offset is not None
        ]
        for op in queue.consumer_ops:
            if isinstance(op, Poll):
                self.fetched(op)
        return group

    def fetched(self, poll: Poll) -> None:
        """Adds a poll's records: its fetches and the messages polled."""
        member = self.op_members.get(poll.index, str(poll.process))
        first_at = self.first_records.get(poll.index)
        for p, records in poll.records.items():
            read = list(pairs(records))
            if not read:
                continue
            self.group.polled.setdefault(p, set()).update(m for _, m in read)
            last = max(o for o, _ in read)
            fetch = Fetch(member, poll.index, p, read[0][0], last, poll.time, first_at)
            self.group.fetches.append(fetch)


def client_time(values: QueueValues, done: Event, mono_ns: Any, what: str) -> int:
    """Takes a reading of the client's monotonic clock (ns) in an op's completion. Returns
    it; refuses anything but an integer."""
    if mono_ns.__class__ is not int:
        values.malformed(done, f"{what} {short(mono_ns)} is not an integer (ns)")
    return int(mono_ns)


def member_of(values: QueueValues, invoke: Event, done: Event) -> str:
    """Takes an op's events. Returns its member: the client its completion names (a
    string), else its process."""
    member = done.get("member")
    if member is None:
        return str(invoke["process"])
    if member.__class__ is not str:
        values.malformed(done, f"member {short(member)} is not a string")
    return member


def read_group_history(events: Sequence[Event], path: str = "<events>") -> GroupHistory:
    """Takes a queue history's events. Returns its GroupHistory.

    Raises UnreadableQueueOp for a value it cannot read, naming its line."""
    invocations, _ = pair_invocations(events)
    reader = GroupReader(path, events)
    reader.start = clock_start(reader, [inv.completion for inv in invocations])
    for inv in invocations:
        reader.add(inv.invoke, 0, inv.completion, 0)
    return reader.finish_group()


def clock_start(values: QueueValues, completions: Iterable[Event | None]) -> int:
    """Takes a reader and completions. Returns the client clock's reading at the history's
    time 0, as the module docstring says (0 when none carries `mono-ns`); refuses a
    `mono-ns` that is not an integer."""
    start = 0
    for c in completions:
        if c is not None and "mono-ns" in c:
            values.lines = (c, 0, c, 0)
            start = max(start, client_time(values, c, c["mono-ns"], "mono-ns") - c["time"])
    return start


def read_located(history: History) -> GroupHistory:
    """Takes a queue history of a consumer group loaded with its events. Returns its
    GroupHistory; raises the HistoryError (`PATH:LINE: problem`) of the first value
    read_group_history cannot read, so that it is refused as malformed input, never a
    verdict."""
    try:
        return read_group_history(history.events, history.path)
    except UnreadableQueueOp as e:
        # As the queue checker's: the op's lines as loaded name it, or, for a failed op
        # (not kept), the event's position.
        located = history.error(MalformedOp(e.index, e.problem, in_value=e.in_completion))
        raise located if located.line else HistoryError(history.path, e.line, e.problem) from None


def by_member(items: Iterable[Any]) -> Iterator[tuple[str, list[Any]]]:
    """Takes callbacks, commits or fetches. Yields each member's, in their order."""
    members: dict[str, list[Any]] = {}
    for item in items:
        members.setdefault(item.member, []).append(item)
    yield from members.items()
