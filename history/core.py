"""History events and paired operations: the data every checker reads.

An event is one line of history.jsonl (a plain dict); an Op is an invoke paired
with its completion, the unit the checkers search over.

Reading a history (`load`) parses one of three formats (history.formats), then
validates and pairs its events in Knossos's named steps:

1. pair_invocations: match each invoke with the next completion on its process,
   refusing completions without an invoke or timed before it, double invokes,
   reused processes (ours: Jepsen's formats warn instead, history.pairing) and indexes
   that do not increase; nemesis events are set aside;
2. drop_failures: a `fail` op certainly did not happen;
3. to_op: an ok op takes the completion's value (a read's result), an info op
   (crashed, or still in flight at the end) keeps the invoke's value and has no
   return time: it may take effect at any time after its invoke, or never.

`load` streams every format: each op is built as its completion is read, so a large
history costs its ops, not its events, unless the events are asked for. A checker with its
own compact form of a history can take each invocation as it is paired instead (a Reader):
then no op is kept either. A Jepsen history whose first events misled the reader
(history.jepsen) is read again, from a fresh builder.
"""

from __future__ import annotations

import gc
import os
from array import array
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from history.events import JSONL, Event, HistoryError
from history.frozen import freeze
from history.jepsen import Reading, Reread
from history.pairing import Invocation, Pairing, pair_invocations, read_strictly
from history.source import HistorySource, open_history

OpType = Literal["ok", "info"]


@dataclass(frozen=True, slots=True)
class Op:
    """One client operation: an invoke paired with its ok or info completion.

    `fail` operations never took effect and are dropped before any check.
    `value` is the completion's value for ok ops (a read's result) and the
    invoke's value for info ops. `ret` is None for info ops: they may take
    effect at any time after `call`, or never.
    """

    index: int
    process: int | str
    f: str
    key: Any
    value: Any
    type: OpType
    call: int
    ret: int | None
    error: str | None = None


class MalformedOp(ValueError):
    """An op a checker cannot read (an operation its model does not have, a value of the
    wrong shape): the input is malformed, which is never a verdict. Names the op by its
    index; `in_value` says whether the problem is in its value rather than its operation."""

    def __init__(self, index: int, problem: str, *, in_value: bool = False) -> None:
        super().__init__(f"op {index}: {problem}")
        self.index = index
        self.problem = problem
        self.in_value = in_value


class Reader(Protocol):
    """Takes a history's invocations as `load` pairs them, into a checker's own form."""

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation when its completion is read (ok, fail or info), or at the
        end while still in flight (completion None, line the invoke's)."""

    def finish(self) -> object:
        """Returns what was read, after the last invocation; it becomes History.read."""


class OpFound(Exception):
    """`load` met an invoke of an operation it was told to stop at (its `stop_at`)."""

    def __init__(self, f: str) -> None:
        super().__init__(f"found a {f!r} op")
        self.f = f


def drop_failures(invocations: Iterable[Invocation]) -> list[Invocation]:
    """Takes invocations; returns those whose completion is not `fail`."""
    return [i for i in invocations if i.completion is None or i.completion["type"] != "fail"]


def to_op(invocation: Invocation) -> Op:
    """Takes an ok, info or unfinished invocation; returns its Op.

    An unfinished invocation becomes info: nothing says it did not happen.
    """
    return op_from(invocation.invoke, invocation.completion)


def op_from(invoke: Event, completion: Event | None) -> Op:
    """Takes an invoke and its ok, info or missing completion; returns the Op. An ok op's
    value is its completion's (a read of null read null), or its invoke's when the
    completion has none."""
    ok = completion if completion is not None and completion["type"] == "ok" else None
    value = ok["value"] if ok is not None and "value" in ok else invoke.get("value")
    key = invoke["key"] if "key" in invoke else (completion or {}).get("key")
    error = (completion or {}).get("error")
    return Op(
        index=invoke["index"],
        process=invoke["process"],
        f=invoke["f"],
        key=freeze(key),
        value=value,
        type="info" if ok is None else "ok",
        call=invoke["time"],
        ret=None if ok is None else ok["time"],
        error=None if error is None else str(error),
    )


def pair(events: Sequence[Event]) -> list[Op]:
    """Takes events in history order; returns the client ops Knossos-style, by invoke order.

    Raises HistoryError for a malformed history (lines are 1-based positions).
    """
    invocations, _ = pair_invocations(events)
    return [to_op(i) for i in drop_failures(invocations)]


def split_by_key(ops: Iterable[Op]) -> dict[Hashable, list[Op]]:
    """Takes ops; returns them grouped by key, each group in the original order."""
    groups: dict[Hashable, list[Op]] = {}
    for op in ops:
        groups.setdefault(freeze(op.key), []).append(op)
    return groups


@dataclass(frozen=True, slots=True)
class History:
    """A validated history: the client ops, the nemesis events, and every event when it was
    loaded with them (else `events` is empty). `fs` names the client operations (failed ones
    included), `invocations` counts them; `invoke_lines[i]` and `value_lines[i]` are the
    lines of ops[i]'s invoke and of the event its value came from. When a Reader took the
    invocations, `read` is what it made of them and `ops` is empty; `fails` counts the
    client operations that completed `fail` either way."""

    path: str
    format: str
    events: list[Event]
    ops: list[Op]
    nemesis: list[Event]
    fs: frozenset[str] = frozenset()
    invocations: int = 0
    invoke_lines: Sequence[int] = field(default_factory=list)
    value_lines: Sequence[int] = field(default_factory=list)
    fails: int = 0
    read: object = None
    warnings: tuple[str, ...] = ()
    """What the reading found odd in a Jepsen history and read as Jepsen's analysis
    reads it (history.pairing, history.jepsen), a sentence each; ours has none."""

    def error(self, bad: MalformedOp) -> HistoryError:
        """Takes a checker's MalformedOp about one of these ops. Returns it as a HistoryError
        naming the line of the op's invoke, or of its value's event."""
        position = bisect_left([op.index for op in self.ops], bad.index)  # indexes increase
        lines = self.value_lines if bad.in_value else self.invoke_lines
        found = position < len(lines) and self.ops[position].index == bad.index
        line = lines[position] if found else 0
        return HistoryError(self.path, line, bad.problem)


class _HistoryBuilder:
    """Builds a History from located events, one at a time: an op as its completion comes,
    or each invocation handed to a Reader."""

    def __init__(
        self,
        path: str,
        keep_events: bool,
        reader: Reader | None,
        stop_at: frozenset[str],
        retires: bool = True,
    ) -> None:
        self.pairing = Pairing(path, checked=True, retires=retires)  # readers ran check_event
        self.events: list[Event] | None = [] if keep_events else None
        self.reader = reader
        self.stop_at = stop_at
        self.ops: list[Op | None] = []
        self.invoke_lines = array("q")
        self.value_lines = array("q")
        # One object per distinct name: the reader makes a new string for each event.
        self.names: dict[str, str] = {}
        self.fs: set[str] = set()
        self.invocations = self.fails = 0

    def add(self, line: int, event: Event) -> None:
        # One function for every event, the invoke's part inline: a history has millions.
        if self.events is not None:
            self.events.append(event)
        step = self.pairing.add(event, line)
        if step is None:
            return
        slot, invoke, invoke_line, completion = step
        if completion is not None:
            self.complete(slot, invoke, invoke_line, completion, line)
            return
        names = self.names
        f = invoke["f"] = names.setdefault(invoke["f"], invoke["f"])
        if f in self.stop_at:
            raise OpFound(f)
        key = invoke.get("key")
        if key.__class__ is str:
            invoke["key"] = names.setdefault(key, key)
        self.fs.add(f)
        self.invocations += 1
        if self.reader is None:  # the op's slot waits for its completion
            self.ops.append(None)
            self.invoke_lines.append(line)
            self.value_lines.append(line)

    def complete(
        self, slot: int, invoke: Event, invoke_line: int, completion: Event, line: int
    ) -> None:
        kind = completion["type"]
        if kind == "fail":
            self.fails += 1
        if self.reader is not None:
            self.reader.add(invoke, invoke_line, completion, line)
        elif kind != "fail":
            self.ops[slot] = op_from(invoke, completion)
            if kind == "ok" and "value" in completion:
                self.value_lines[slot] = line

    def history(self, path: str, fmt: str, noted: Sequence[str] = ()) -> History:
        """Takes the history's path, its format and what its reading noted (warnings).
        Returns the History of every event added."""
        for slot, invoke, line, _ in self.pairing.unfinished():
            if self.reader is not None:
                self.reader.add(invoke, line, None, line)
            else:
                self.ops[slot] = op_from(invoke, None)
        kept = [i for i, op in enumerate(self.ops) if op is not None]
        return History(
            path=path,
            format=fmt,
            events=self.events if self.events is not None else [],
            ops=[op for op in self.ops if op is not None],
            nemesis=self.pairing.nemesis,
            fs=frozenset(self.fs),
            invocations=self.invocations,
            invoke_lines=array("q", (self.invoke_lines[i] for i in kept)),
            value_lines=array("q", (self.value_lines[i] for i in kept)),
            fails=self.fails,
            read=None if self.reader is None else self.reader.finish(),
            warnings=(*noted, *self.pairing.warnings()),
        )


def load(
    path: str | os.PathLike[str],
    *,
    keep_events: bool = True,
    reader: Reader | None = None,
    stop_at: frozenset[str] = frozenset(),
) -> History:
    """Takes a history file (jsonl, EDN or Jepsen log), a results folder or "-" (stdin);
    returns the History, with every event unless keep_events is False. With a reader, each
    invocation goes to it as it is paired and no op is kept.

    Raises HistoryError (`PATH:LINE: problem`) for unreadable or malformed input, and
    OpFound at the first invoke of an operation named in stop_at.
    """
    with collector_paused(), open_history(path) as (name, stream):
        source = HistorySource(stream, name)
        reading = Reading()
        while True:
            try:
                return _read(source, reading, keep_events, reader, stop_at)
            except Reread as again:
                reading = again.reading


def _read(
    source: HistorySource,
    reading: Reading,
    keep_events: bool,
    reader: Reader | None,
    stop_at: frozenset[str],
) -> History:
    """Reads the history once, with the facts in `reading`. Returns it."""
    fmt, located = source.events(reading)
    if reader is not None and fmt != JSONL:
        reader = _Deferred(reader)
    builder = _HistoryBuilder(source.name, keep_events, reader, stop_at, read_strictly(fmt))
    for line, event in located:
        builder.add(line, event)
    return builder.history(source.name, fmt, reading.warnings())


class _Deferred:
    """A Reader whose invocations are held until the history is read to its end: a Jepsen
    history may be read twice (history.jepsen), and a Reader takes each invocation once."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.calls: list[tuple[Event, int, Event | None, int]] = []

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        self.calls.append((invoke, invoke_line, completion, line))

    def finish(self) -> object:
        for call in self.calls:
            self.reader.add(*call)
        return self.reader.finish()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pauses the cyclic garbage collector for the block, and restores it after.

    Reading or checking a long history makes millions of small containers and no cycles:
    the collector would rescan the whole growing history every few thousand of them, for
    nothing (four fifths of the time of loading a 1,000,000-op queue history). What the
    block drops is freed by reference counting all the same."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
