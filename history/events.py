"""A history's events as every reader makes them, and the one error a reader raises.

An event is a dict in the history.jsonl shape (`index`, `time`, `process`, `type`, `f`,
`value`, maybe `key` and `error`); `check_event` holds every reader to the same types, so
that the three formats are equally strict.
"""

from __future__ import annotations

import math
from typing import Any, Final

Event = dict[str, Any]
Located = list[tuple[int, Event]]

JSONL: Final = "jsonl"
EDN: Final = "edn"
JEPSEN_LOG: Final = "jepsen-log"
EVENT_TYPES: Final = ("invoke", "ok", "fail", "info")
UNRECOGNISED: Final = "unrecognised history: expected JSON lines, EDN or a Jepsen log"
# What a token of an event's text (a JSON or EDN atom, bracket or separator) may cost once
# parsed, at most about: an object and its slot in a collection. Readers hold each event to
# a budget of memory counted so, before it is all parsed.
TOKEN_BYTES: Final = 48
# An event's value that would take more is refused: a line of a history.jsonl is at most 64
# MiB, and 60 MiB of `{}` objects would take over a GiB.
VALUE_BUDGET: Final = 512 * 2**20


class HistoryError(Exception):
    """A history that cannot be read or is not well formed.

    `str()` is one line, `PATH:LINE: problem`, in the style of compilers and grep.
    """

    def __init__(self, path: str, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


def short(value: Any, limit: int = 60) -> str:
    """Takes any decoded value. Returns its repr, cut to about `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def could_exceed(text: str, budget: int) -> bool:
    """Takes an event's text (or a value's) and a budget in bytes. Returns whether its value
    could take more: a character starts at most one token."""
    return len(text) * (TOKEN_BYTES + 1) > budget


def over_budget(budget: int) -> str:
    """Takes a budget in bytes. Returns the problem of an event that would exceed it."""
    return f"a value that would take too much memory (over {budget // 2**20} MiB)"


def check_event(event: Event, path: str, line_no: int) -> None:
    """Takes an event with every field present. Raises HistoryError unless each field has
    a type a history can hold: type one of EVENT_TYPES, process an integer or a name, f a
    name, time a finite number, index an integer."""
    kind, process, f = event["type"], event["process"], event["f"]
    at, index = event["time"], event["index"]
    if kind.__class__ is not str or kind not in EVENT_TYPES:
        raise HistoryError(path, line_no, f"unknown type {short(kind)}")
    if process.__class__ is not int and process.__class__ is not str:
        raise HistoryError(
            path, line_no, f"bad process {short(process)}: expected an integer or name"
        )
    if f.__class__ is not str or not f:
        raise HistoryError(path, line_no, f"bad f {short(f)}: expected an operation name")
    if at.__class__ is not int and not (at.__class__ is float and math.isfinite(at)):
        raise HistoryError(path, line_no, f"bad time {short(at)}: expected a number")
    if index.__class__ is not int:
        raise HistoryError(path, line_no, f"bad index {short(index)}: expected an integer")


def require(event: dict[Any, Any], fields: tuple[Any, ...], path: str, line_no: int) -> None:
    """Takes an event (or an EDN map) and the fields it must have. Raises HistoryError
    naming those it lacks."""
    missing = [str(f) for f in fields if f not in event]
    if missing:
        raise HistoryError(path, line_no, f"bad event: missing {', '.join(missing)}")
