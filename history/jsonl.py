"""The history.jsonl reader: one JSON object per line, read line by line.

A line whose value would take more memory than a budget is refused before it is parsed:
JSON's small containers cost Python far more than their text (`{}` is 2 bytes of text and
72 of memory), so a line of 60 MiB of them would take gigabytes. An ok completion without
a value takes its invoke's (history.core); one whose value is null read null.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from history.events import (
    TOKEN_BYTES,
    Event,
    HistoryError,
    check_event,
    could_exceed,
    over_budget,
    require,
)
from history.frozen import MAX_NESTING, nesting

_FIELDS = ("type", "process", "f", "time")
_FIELD_SET = frozenset(_FIELDS)


class _Refused(ValueError):
    """A JSON number or constant a history cannot hold."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number a history can hold")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(f"number out of range: {text[:40]}")
    return number


_JSON = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
# What _JSON.raw_decode calls; typeshed does not declare the attribute.
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = _JSON.scan_once  # type: ignore[attr-defined]


def starts_jsonl(line: str) -> bool:
    """Takes a history's first non-blank line. Returns whether it opens a JSON object (EDN
    maps open with a keyword instead)."""
    stripped = line.lstrip()
    return stripped.startswith("{") and stripped[1:].lstrip()[:1] in ('"', "}")


def json_cost(text: str) -> int:
    """Takes JSON text. Returns about the most memory its value may take once parsed: each
    comma, colon or opening bracket starts at most one new object, and its slot."""
    starts = text.count(",") + text.count(":") + text.count("[") + text.count("{") + 1
    return starts * TOKEN_BYTES + len(text)


def read_jsonl_lines(
    lines: Iterable[tuple[int, str]], path: str, budget: int
) -> Iterator[tuple[int, Event]]:
    """Takes numbered lines of history.jsonl and a budget in bytes for each line's value;
    yields (line, event) for every non-blank one."""
    position = 0
    for line_no, line in lines:
        if line.isspace() or not line:
            continue
        yield line_no, jsonl_event(line, path, line_no, position, budget)
        position += 1


def jsonl_event(line: str, path: str, line_no: int, position: int, budget: int) -> Event:
    """Takes one line of history.jsonl, its position among events and a budget in bytes for
    its value; returns its event."""
    if could_exceed(line, budget) and json_cost(line) > budget:
        raise HistoryError(path, line_no, over_budget(budget))
    event = _json_line(line, path, line_no)
    if not event.keys() >= _FIELD_SET:
        require(event, _FIELDS, path, line_no)
    event.setdefault("index", position)
    if "value" not in event and event["type"] != "ok":  # an ok's absent value is its invoke's
        event["value"] = None
    check_event(event, path, line_no)
    return event


def _json_line(line: str, path: str, line_no: int) -> Event:
    try:
        # The decoder's scanner, called as raw_decode calls it: json.loads' wrappers were a
        # third of the time on big histories, raw_decode's own frame a few percent more.
        event, end = _SCAN(line, len(line) - len(line.lstrip()))
    except StopIteration as stop:  # what raw_decode turns into "Expecting value"
        e = json.JSONDecodeError("Expecting value", line, stop.value)
        raise HistoryError(path, line_no, f"bad JSON: {e.msg} (column {e.colno})") from None
    except json.JSONDecodeError as e:
        raise HistoryError(path, line_no, f"bad JSON: {e.msg} (column {e.colno})") from None
    except _Refused as e:
        raise HistoryError(path, line_no, f"bad JSON: {e}") from None
    except RecursionError:
        raise HistoryError(path, line_no, f"nested deeper than {MAX_NESTING} levels") from None
    except ValueError:  # the only other: an integer too long to convert
        limit = sys.get_int_max_str_digits()
        raise HistoryError(path, line_no, f"integer with more than {limit} digits") from None
    if end != len(line) and line[end:].strip():
        raise HistoryError(path, line_no, f"bad JSON: Extra data (column {end + 1})")
    if not isinstance(event, dict):
        raise HistoryError(path, line_no, "bad event: expected a JSON object")
    # Counting brackets is quick; only a line with many is measured exactly.
    if line.count("[") + line.count("{") > MAX_NESTING and nesting(event) > MAX_NESTING:
        raise HistoryError(path, line_no, f"nested deeper than {MAX_NESTING} levels")
    return event
