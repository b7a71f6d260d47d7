"""History events and paired operations: the data every checker reads.

An event is one line of history.jsonl (a plain dict); an Op is an invoke paired
with its completion, the unit the checkers search over.

Reading a history (`load`) parses one of three formats (history_formats), then
validates and pairs its events in Knossos's named steps:

1. pair_invocations: match each invoke with the next completion on its process,
   refusing completions without an invoke, double invokes and reused processes;
   nemesis events are set aside;
2. drop_failures: a `fail` op certainly did not happen;
3. to_op: an ok op takes the completion's value (a read's result), an info op
   (crashed, or still in flight at the end) keeps the invoke's value and has no
   return time: it may take effect at any time after its invoke, or never.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NoReturn

from harness.frozen import freeze
from harness.history_formats import Event, HistoryError, parse_history

__all__ = [
    "Event",
    "History",
    "HistoryError",
    "HistoryWriter",
    "Invocation",
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
EVENT_TYPES = ("invoke", "ok", "fail", "info")
HISTORY_FILES = ("history.jsonl", "history.edn")
_REQUIRED = frozenset({"index", "time", "process", "f"})


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


class HistoryWriter:
    """Appends events to history.jsonl, one JSON object per line, as they happen.

    Each line goes to the file in one write(2) with no user-space buffer, so a
    process killed at any moment leaves only whole lines behind. Safe to share
    between worker threads; `append` assigns the index under a lock so indices
    follow the file's order.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = False,
        clock: Callable[[], int] = time.monotonic_ns,
        start_ns: int | None = None,
    ) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._clock = clock
        self._start = clock() if start_ns is None else start_ns
        self._lock = threading.Lock()
        self._next_index = 0
        self._fd: int | None = os.open(
            self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644
        )

    def append(self, event: Mapping[str, Any]) -> Event:
        """Takes an event; writes it with the next index (and a time if it has none).

        Returns the event as written.
        """
        with self._lock:
            if self._fd is None:
                raise ValueError(f"{self.path}: writer is closed")
            written: Event = {"index": self._next_index}
            written.update((k, v) for k, v in event.items() if k != "index")
            written.setdefault("time", self._clock() - self._start)
            data = (json.dumps(written, default=_jsonable) + "\n").encode()
            _write_all(self._fd, data)
            if self._fsync:
                os.fsync(self._fd)
            self._next_index += 1
            return written

    def close(self) -> None:
        """Closes the file; later appends raise ValueError."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        try:
            return sorted(value)
        except TypeError:
            return sorted(value, key=repr)
    raise TypeError(f"cannot write {type(value).__name__} to a history: {value!r}")


@dataclass(frozen=True, slots=True)
class Invocation:
    """An invoke event and its completion, None while still in flight."""

    invoke: Event
    completion: Event | None


def pair_invocations(
    events: Sequence[Event], *, path: str = "<events>", lines: Sequence[int] | None = None
) -> tuple[list[Invocation], list[Event]]:
    """Takes events in history order; returns (client invocations, nemesis events).

    Raises HistoryError naming the line (or the 1-based position when `lines`
    is not given) of the first event that breaks the rules of a history.
    """
    pairing = _Pairing(path)
    for position, event in enumerate(events):
        pairing.add(event, lines[position] if lines is not None else position + 1)
    return pairing.invocations(), pairing.nemesis


class _Pairing:
    """The state of one pass over a history: what each process has in flight."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.invokes: list[Event] = []
        self.completions: dict[int, Event] = {}
        self.in_flight: dict[Any, tuple[int, int]] = {}  # process -> (slot in invokes, line)
        self.crashed: dict[Any, int] = {}  # process -> line of its info completion
        self.nemesis: list[Event] = []

    def add(self, event: Event, line: int) -> None:
        self._check_shape(event, line)
        if _is_nemesis(event, self.in_flight):
            self.nemesis.append(event)
            return
        process = event["process"]
        if process in self.crashed:
            self._fail(
                line, f"process {process} reused after its info on line {self.crashed[process]}"
            )
        if event["type"] == "invoke":
            self._invoke(event, line)
        else:
            self._complete(event, line)

    def _check_shape(self, event: Event, line: int) -> None:
        if event.get("type") not in EVENT_TYPES:
            self._fail(line, f"unknown type {event.get('type')!r}")
        if event.keys() >= _REQUIRED:
            return
        missing = [f for f in ("index", "time", "process", "f") if f not in event]
        if missing:
            self._fail(line, f"bad event: missing {', '.join(missing)}")

    def _invoke(self, event: Event, line: int) -> None:
        process = event["process"]
        if process in self.in_flight:
            other = self.in_flight[process][1]
            self._fail(
                line, f"process {process} invokes while its invoke on line {other} is in flight"
            )
        self.in_flight[process] = (len(self.invokes), line)
        self.invokes.append(event)

    def _complete(self, event: Event, line: int) -> None:
        process, kind = event["process"], event["type"]
        if process not in self.in_flight:
            self._fail(line, f"{kind} completion without an invoke on {process}")
        slot, invoke_line = self.in_flight.pop(process)
        invoked_f = self.invokes[slot]["f"]
        if event["f"] != invoked_f:
            self._fail(
                line,
                f"completion f {event['f']!r} does not match the invoke's "
                f"{invoked_f!r} on line {invoke_line}",
            )
        self.completions[slot] = event
        if kind == "info":
            self.crashed[process] = line

    def _fail(self, line: int, problem: str) -> NoReturn:
        raise HistoryError(self.path, line, problem)

    def invocations(self) -> list[Invocation]:
        return [Invocation(inv, self.completions.get(i)) for i, inv in enumerate(self.invokes)]


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
    invoke, completion = invocation.invoke, invocation.completion
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
    """A validated history: every event, the client ops, and the nemesis events."""

    path: str
    format: str
    events: list[Event]
    ops: list[Op]
    nemesis: list[Event]


def find_history_file(path: str | os.PathLike[str]) -> Path:
    """Takes a history file or a results folder; returns the history file to read."""
    p = Path(path)
    if not p.is_dir():
        return p
    for name in HISTORY_FILES:
        if (p / name).is_file():
            return p / name
    raise HistoryError(str(p), 0, f"no {' or '.join(HISTORY_FILES)} in this folder")


def load(path: str | os.PathLike[str]) -> History:
    """Takes a history file (jsonl, EDN or Jepsen log) or a results folder; returns the History.

    Raises HistoryError (`PATH:LINE: problem`) for unreadable or malformed input.
    """
    file = find_history_file(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or e
        raise HistoryError(str(file), 0, f"cannot read: {reason}") from None
    fmt, located = parse_history(text, str(file))
    events = [e for _, e in located]
    invocations, nemesis = pair_invocations(
        events, path=str(file), lines=[line for line, _ in located]
    )
    ops = [to_op(i) for i in drop_failures(invocations)]
    return History(path=str(file), format=fmt, events=events, ops=ops, nemesis=nemesis)
