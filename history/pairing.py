"""Pairing a history's events: each invoke with the next completion on its process, under
the rules of a history (see history, step 1); nemesis events are set aside.

One rule depends on who wrote the history. Our history.jsonl retires a process after its
info completion (its op may still be in flight), so an event on it after that is our bug
and refused. Jepsen's analysis never asks that of a history (jepsen.tests.kafka's
kafka_test.clj goes on with a process after an info, and reads it as it is): in Jepsen's
formats such a process goes on, and a warning says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from history.events import EVENT_TYPES, JSONL, Event, HistoryError


@dataclass(frozen=True, slots=True)
class Invocation:
    """An invoke event and its completion, None while still in flight."""

    invoke: Event
    completion: Event | None


# One event's place in the pairing: (slot of its invocation, the invoke event, the invoke's
# line, the completion or None for an invoke).
Step = tuple[int, Event, int, Event | None]


def pair_invocations(
    events: Sequence[Event],
    *,
    path: str = "<events>",
    lines: Sequence[int] | None = None,
    retires: bool = True,
) -> tuple[list[Invocation], list[Event]]:
    """Takes events in history order and whether a process retires after an info (ours
    does, Jepsen's need not: read_strictly); returns (client invocations, nemesis
    events).

    Raises HistoryError naming the line (or the 1-based position when `lines`
    is not given) of the first event that breaks the rules of a history.
    """
    pairing = Pairing(path, retires=retires)
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


_REQUIRED_ORDER = ("index", "time", "process", "f")
_REQUIRED = frozenset(_REQUIRED_ORDER)


def read_strictly(fmt: str) -> bool:
    """Takes a history's format. Returns whether it is ours (history.jsonl), read strictly:
    what Jepsen's analysis reads as it is in its own formats (a process going on after its
    info, here; a completion naming other values than its invoke, in a checker) is our
    bug there, and refused. Jepsen's history.edn and logs are read as Jepsen reads them,
    with a warning."""
    return fmt == JSONL


class Pairing:
    """The state of one pass over a history: what each process has in flight."""

    def __init__(self, path: str, *, checked: bool = False, retires: bool = True) -> None:
        """Takes the history's path (for messages), whether its reader already held
        every event to history.events.check_event (then types and fields are not looked
        at twice, only the order of indexes) and whether a process retires after an info
        (read_strictly)."""
        self.path = path
        self.checked = checked
        self.retires = retires
        self.slots = 0
        self.in_flight: dict[Any, tuple[int, int, Event]] = {}  # process -> (slot, line, invoke)
        self.crashed: dict[Any, int] = {}  # process -> line of its info completion
        self.nemesis: list[Event] = []
        self.last_index: int | None = None
        self.last_line = 0
        # Processes that went on after an info, where they may: (process, line, the
        # info's line) of the first, and how many.
        self.went_on: tuple[Any, int, int] | None = None
        self.goers = 0

    def add(self, event: Event, line: int) -> Step | None:
        """Checks one event. Returns its Step, or None for a nemesis event."""
        # One function for the common events: a history has millions, and each call costs.
        if not self.checked:
            self._check_shape(event, line)
        index, before = event["index"], self.last_index
        if before is not None and not index > before:
            self._fail(
                line, f"index {index} does not follow index {before} on line {self.last_line}"
            )
        self.last_index, self.last_line = index, line
        process, in_flight = event["process"], self.in_flight
        if process.__class__ is not int and _is_nemesis(event, in_flight):
            self.nemesis.append(event)
            return None
        if process in self.crashed:
            self._went_on(process, line)
        kind = event["type"]
        if kind == "invoke":
            if process in in_flight:
                self._double_invoke(process, line)
            slot = self.slots
            self.slots = slot + 1
            in_flight[process] = (slot, line, event)
            return slot, event, line, None
        if process not in in_flight:
            return self.orphan(event, line)
        slot, invoke_line, invoke = in_flight.pop(process)
        if event["f"] != invoke["f"] or event["time"] < invoke["time"]:
            self._mismatch(event, invoke, invoke_line, line)
        if kind == "info":
            self.crashed[process] = line
        return slot, invoke, invoke_line, event

    def _went_on(self, process: Any, line: int) -> None:
        info_line = self.crashed.pop(process)
        if self.retires:
            self._fail(line, f"process {process} reused after its info on line {info_line}")
        self.went_on = self.went_on or (process, line, info_line)
        self.goers += 1

    def warnings(self) -> list[str]:
        """Returns what the pass found odd but read, as Jepsen's analysis reads it."""
        if self.went_on is None:
            return []
        process, line, info_line = self.went_on
        more = f" (and {self.goers - 1} more times)" if self.goers > 1 else ""
        return [
            f"line {line}: process {process} goes on after its info on line {info_line}"
            f"{more}: read as Jepsen's analysis reads it (ours retire such a process)"
        ]

    def orphan(self, event: Event, line: int) -> Step | None:
        """Takes a completion with no invoke in flight on its process. Raises HistoryError
        (history.halves' second half takes it instead: its invoke came before the seam)."""
        self._fail(line, f"{event['type']} completion without an invoke on {event['process']}")

    def _check_shape(self, event: Event, line: int) -> None:
        if event.get("type") not in EVENT_TYPES:
            self._fail(line, f"unknown type {event.get('type')!r}")
        if not event.keys() >= _REQUIRED:
            missing = [f for f in _REQUIRED_ORDER if f not in event]
            self._fail(line, f"bad event: missing {', '.join(missing)}")

    def _double_invoke(self, process: Any, line: int) -> NoReturn:
        other = self.in_flight[process][1]
        self._fail(line, f"process {process} invokes while its invoke on line {other} is in flight")

    def _mismatch(self, event: Event, invoke: Event, invoke_line: int, line: int) -> NoReturn:
        # A completion of another operation than its invoke's, or timed before it.
        if event["f"] != invoke["f"]:
            self._fail(
                line,
                f"completion f {event['f']!r} does not match the invoke's "
                f"{invoke['f']!r} on line {invoke_line}",
            )
        self._fail(
            line,
            f"completion at time {event['time']} precedes its invoke's time "
            f"{invoke['time']} on line {invoke_line}",
        )

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
