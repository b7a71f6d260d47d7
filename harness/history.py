"""History events and paired operations: the data every checker reads.

An event is one line of history.jsonl (a plain dict); an Op is an invoke paired
with its completion, the unit the checkers search over.

Reading a history (`load`) parses one of three formats (history_formats), then
validates and pairs its events in Knossos's named steps:

1. pair_invocations: match each invoke with the next completion on its process,
   refusing completions without an invoke or timed before it, double invokes,
   reused processes and indexes that do not increase; nemesis events are set aside;
2. drop_failures: a `fail` op certainly did not happen;
3. to_op: an ok op takes the completion's value (a read's result), an info op
   (crashed, or still in flight at the end) keeps the invoke's value and has no
   return time: it may take effect at any time after its invoke, or never.

`load` streams history.jsonl: each op is built as its completion is read, so a large
history costs its ops, not its events, unless the events are asked for.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NoReturn

from harness.frozen import freeze
from harness.history_formats import EVENT_TYPES, Event, HistoryError
from harness.history_source import (
    HISTORY_FILES,
    find_history_file,
    numbered_lines,
    open_history,
    read_events,
)
from harness.history_writer import HistoryWriter

__all__ = [
    "EVENT_TYPES",
    "HISTORY_FILES",
    "Event",
    "History",
    "HistoryError",
    "HistoryWriter",
    "Invocation",
    "MalformedOp",
    "Op",
    "drop_failures",
    "find_history_file",
    "freeze",
    "load",
    "pair",
    "pair_invocations",
    "split_by_key",
    "to_op",
]

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


@dataclass(frozen=True, slots=True)
class Invocation:
    """An invoke event and its completion, None while still in flight."""

    invoke: Event
    completion: Event | None


_SHAPE_FIELDS: Final = frozenset({"index", "time", "process", "f"})

# One event's place in the pairing: (slot of its invocation, the invoke event, the invoke's
# line, the completion or None for an invoke).
Step = tuple[int, Event, int, Event | None]


def pair_invocations(
    events: Sequence[Event], *, path: str = "<events>", lines: Sequence[int] | None = None
) -> tuple[list[Invocation], list[Event]]:
    """Takes events in history order; returns (client invocations, nemesis events).

    Raises HistoryError naming the line (or the 1-based position when `lines`
    is not given) of the first event that breaks the rules of a history.
    """
    pairing = _Pairing(path)
    invokes: list[Event] = []
    completions: dict[int, Event] = {}
    for position, event in enumerate(events):
        step = pairing.add(event, lines[position] if lines is not None else position + 1)
        if step is None:
            continue
        slot, invoke, _, completion = step
        if completion is None:
            invokes.append(invoke)
        else:
            completions[slot] = completion
    invocations = [Invocation(inv, completions.get(i)) for i, inv in enumerate(invokes)]
    return invocations, pairing.nemesis


class _Pairing:
    """The state of one pass over a history: what each process has in flight."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.slots = 0
        self.in_flight: dict[Any, tuple[int, int, Event]] = {}  # process -> (slot, line, invoke)
        self.crashed: dict[Any, int] = {}  # process -> line of its info completion
        self.nemesis: list[Event] = []
        self.last_index: tuple[int, int] | None = None  # (index, line)

    def add(self, event: Event, line: int) -> Step | None:
        """Checks one event. Returns its Step, or None for a nemesis event."""
        self._check_shape(event, line)
        process = event["process"]
        if process.__class__ is not int and _is_nemesis(event, self.in_flight):
            self.nemesis.append(event)
            return None
        if process in self.crashed:
            self._fail(
                line, f"process {process} reused after its info on line {self.crashed[process]}"
            )
        if event["type"] == "invoke":
            return self._invoke(event, line)
        return self._complete(event, line)

    def _check_shape(self, event: Event, line: int) -> None:
        if event.get("type") not in EVENT_TYPES:
            self._fail(line, f"unknown type {event.get('type')!r}")
        if not event.keys() >= _SHAPE_FIELDS:
            missing = [f for f in ("index", "time", "process", "f") if f not in event]
            self._fail(line, f"bad event: missing {', '.join(missing)}")
        index = event["index"]
        if self.last_index is not None and not index > self.last_index[0]:
            before, before_line = self.last_index
            self._fail(line, f"index {index} does not follow index {before} on line {before_line}")
        self.last_index = (index, line)

    def _invoke(self, event: Event, line: int) -> Step:
        process = event["process"]
        if process in self.in_flight:
            other = self.in_flight[process][1]
            self._fail(
                line, f"process {process} invokes while its invoke on line {other} is in flight"
            )
        slot = self.slots
        self.slots += 1
        self.in_flight[process] = (slot, line, event)
        return slot, event, line, None

    def _complete(self, event: Event, line: int) -> Step:
        process, kind = event["process"], event["type"]
        if process not in self.in_flight:
            self._fail(line, f"{kind} completion without an invoke on {process}")
        slot, invoke_line, invoke = self.in_flight.pop(process)
        if event["f"] != invoke["f"]:
            self._fail(
                line,
                f"completion f {event['f']!r} does not match the invoke's "
                f"{invoke['f']!r} on line {invoke_line}",
            )
        if event["time"] < invoke["time"]:
            self._fail(
                line,
                f"completion at time {event['time']} precedes its invoke's time "
                f"{invoke['time']} on line {invoke_line}",
            )
        if kind == "info":
            self.crashed[process] = line
        return slot, invoke, invoke_line, event

    def unfinished(self) -> list[Step]:
        """Returns the Steps of the invokes still in flight at the end."""
        return [(slot, inv, line, None) for slot, line, inv in self.in_flight.values()]

    def _fail(self, line: int, problem: str) -> NoReturn:
        raise HistoryError(self.path, line, problem)


def _is_nemesis(event: Event, in_flight: Mapping[Any, object]) -> bool:
    process = event.get("process")
    if type(process) is int:  # the common case, decided quickly
        return False
    if process == "nemesis":
        return True
    # Jepsen's nemesis and other named non-client actors log bare info events.
    is_client = isinstance(process, int) and not isinstance(process, bool)
    return not is_client and event.get("type") == "info" and process not in in_flight


def drop_failures(invocations: Iterable[Invocation]) -> list[Invocation]:
    """Takes invocations; returns those whose completion is not `fail`."""
    return [i for i in invocations if i.completion is None or i.completion["type"] != "fail"]


def to_op(invocation: Invocation) -> Op:
    """Takes an ok, info or unfinished invocation; returns its Op.

    An unfinished invocation becomes info: nothing says it did not happen.
    """
    return op_from(invocation.invoke, invocation.completion)


def op_from(invoke: Event, completion: Event | None) -> Op:
    """Takes an invoke and its ok, info or missing completion; returns the Op."""
    ok = completion if completion is not None and completion["type"] == "ok" else None
    value = invoke.get("value")
    if ok is not None and ok.get("value") is not None:
        value = ok["value"]
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
    lines of ops[i]'s invoke and of the event its value came from."""

    path: str
    format: str
    events: list[Event]
    ops: list[Op]
    nemesis: list[Event]
    fs: frozenset[str] = frozenset()
    invocations: int = 0
    invoke_lines: Sequence[int] = field(default_factory=list)
    value_lines: Sequence[int] = field(default_factory=list)

    def error(self, bad: MalformedOp) -> HistoryError:
        """Takes a checker's MalformedOp about one of these ops. Returns it as a HistoryError
        naming the line of the op's invoke, or of its value's event."""
        position = bisect_left([op.index for op in self.ops], bad.index)  # indexes increase
        lines = self.value_lines if bad.in_value else self.invoke_lines
        found = position < len(lines) and self.ops[position].index == bad.index
        line = lines[position] if found else 0
        return HistoryError(self.path, line, bad.problem)


class _HistoryBuilder:
    """Builds a History from located events, one at a time: an op as its completion comes."""

    def __init__(self, path: str, keep_events: bool) -> None:
        self.pairing = _Pairing(path)
        self.events: list[Event] | None = [] if keep_events else None
        self.ops: list[Op | None] = []
        self.invoke_lines = array("q")
        self.value_lines = array("q")
        # One object per distinct name: the reader makes a new string for each event.
        self.names: dict[str, str] = {}
        self.fs: set[str] = set()

    def add(self, line: int, event: Event) -> None:
        if self.events is not None:
            self.events.append(event)
        step = self.pairing.add(event, line)
        if step is not None:
            self.place(step, line)

    def place(self, step: Step, line: int) -> None:
        slot, invoke, invoke_line, completion = step
        if completion is None:  # an invoke: its slot waits for the completion
            invoke["f"] = self.names.setdefault(invoke["f"], invoke["f"])
            if invoke.get("key").__class__ is str:
                invoke["key"] = self.names.setdefault(invoke["key"], invoke["key"])
            self.fs.add(invoke["f"])
            self.ops.append(None)
            self.invoke_lines.append(invoke_line)
            self.value_lines.append(invoke_line)
            return
        if completion["type"] == "fail":
            return
        self.ops[slot] = op_from(invoke, completion)
        if completion["type"] == "ok" and completion.get("value") is not None:
            self.value_lines[slot] = line

    def history(self, path: str, fmt: str) -> History:
        for slot, invoke, _, _ in self.pairing.unfinished():
            self.ops[slot] = op_from(invoke, None)
        kept = [i for i, op in enumerate(self.ops) if op is not None]
        return History(
            path=path,
            format=fmt,
            events=self.events if self.events is not None else [],
            ops=[op for op in self.ops if op is not None],
            nemesis=self.pairing.nemesis,
            fs=frozenset(self.fs),
            invocations=len(self.ops),
            invoke_lines=array("q", (self.invoke_lines[i] for i in kept)),
            value_lines=array("q", (self.value_lines[i] for i in kept)),
        )


def load(path: str | os.PathLike[str], *, keep_events: bool = True) -> History:
    """Takes a history file (jsonl, EDN or Jepsen log), a results folder or "-" (stdin);
    returns the History, with every event unless keep_events is False.

    Raises HistoryError (`PATH:LINE: problem`) for unreadable or malformed input.
    """
    with open_history(path) as (name, stream):
        fmt, located = read_events(numbered_lines(stream, name), name)
        builder = _HistoryBuilder(name, keep_events)
        for line, event in located:
            builder.add(line, event)
    return builder.history(name, fmt)
