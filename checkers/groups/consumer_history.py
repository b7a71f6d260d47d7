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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from history import Event, pair_invocations

GROUP_ONLY_FS = frozenset({"commit"})
"""The ops of a group that no queue checker reads."""


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
    """Every acknowledged send: (partition, offset, message)."""
    last_seen: dict[str, int] = field(default_factory=dict)
    """Per member, when its last op completed (its client closed soon after, or the run
    ended): it held nothing after."""


def read_group_history(events: Sequence[Event]) -> GroupHistory:
    """Takes a queue history's events (one-message ops). Returns its GroupHistory."""
    invocations, _ = pair_invocations(events)
    start = clock_start(inv.completion for inv in invocations)
    group = GroupHistory()
    for inv in invocations:
        invoke, done = inv.invoke, inv.completion
        if done is None:  # in flight at the end: a commit's offsets are not known
            continue
        member = str(done.get("member", invoke["process"]))
        if "member" in done:
            group.last_seen[member] = max(group.last_seen.get(member, 0), done["time"])
        _read_op(group, member, invoke, done, start)
    return group


def clock_start(completions: Iterable[Event | None]) -> int:
    """Takes completions. Returns the client clock's reading at the history's time 0, as
    the module docstring says (0 when none carries `mono-ns`)."""
    return max((c["mono-ns"] - c["time"] for c in completions if c and "mono-ns" in c), default=0)


def _read_op(group: GroupHistory, member: str, invoke: Event, done: Event, start: int) -> None:
    f, index = invoke.get("f"), invoke["index"]
    for entry in done.get("group-log", []):
        at = entry["mono-ns"] - start
        group.callbacks.append(
            Callback(member, entry["type"], tuple(entry["partitions"]), at, index)
        )
    for entry in done.get("auto-commits", []):
        outcome = "fail" if "error" in entry else "ok"
        offsets = _offsets(entry["offsets"])
        at = entry["mono-ns"] - start
        group.commits.append(Commit(member, index, outcome, offsets, 0, at, auto=True))
    if f == "commit":
        offsets = _offsets(done.get("value") or {})
        completed = done["time"]
        group.commits.append(
            Commit(member, index, done["type"], offsets, invoke["time"], completed)
        )
    elif f == "poll" and isinstance(done.get("value"), dict):
        _read_poll(group, member, index, done, start)
    elif f == "send" and done["type"] == "ok":
        offset, message = done["value"]
        group.acked.append((int(invoke["key"]), offset, message))


def _read_poll(group: GroupHistory, member: str, index: int, done: Event, start: int) -> None:
    handed = done.get("first-record-ns")
    first_at = None if handed is None else handed - start
    for p, records in done["value"].items():
        if not records:
            continue
        partition = int(p)
        group.polled.setdefault(partition, set()).update(m for _, m in records)
        offsets = [o for o, _ in records]
        group.fetches.append(
            Fetch(member, index, partition, offsets[0], max(offsets), done["time"], first_at)
        )


def _offsets(value: dict[Any, Any]) -> dict[int, int]:
    return {int(p): int(o) for p, o in value.items()}


def by_member(items: Iterable[Any]) -> Iterator[tuple[str, list[Any]]]:
    """Takes callbacks, commits or fetches. Yields each member's, in their order."""
    members: dict[str, list[Any]] = {}
    for item in items:
        members.setdefault(item.member, []).append(item)
    yield from members.items()
