"""The history.jsonl reader: one JSON object per line, read line by line.

A line whose value would take more memory than a budget is refused before it is parsed:
JSON's small containers cost Python far more than their text (`{}` is 2 bytes of text and
72 of memory), so a line of 60 MiB of them would take gigabytes. An ok completion without
a value takes its invoke's (history.core); one whose value is null read null.

Lines are parsed by orjson, which reads JSON about twice as fast as the standard library
and to the same values, types included, except two kinds of line: those it refuses
(malformed JSON, NaN, a lone surrogate, 1e999, nesting over 1024 levels) and those with an
integer beyond 64 bits, which it reads as a float. Both are read again by the standard
library's parser, so that every value, error and message is what it always was. A line
ended by LF alone is parsed as the bytes read, never decoded first (history.lines): orjson
refuses any that is not UTF-8, and those are decoded and read as text. An object naming a
key twice is refused (both parsers read it last-wins, which would hide a value); only a
line with more colons than keys read is checked for it (_keys_once).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

import orjson

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
from history.lines import line_text

_FIELDS = ("type", "process", "f", "time")
_FIELD_SET = frozenset(_FIELDS)
_COMMON_FIELDS = frozenset((*_FIELDS, "index", "value"))


class _Refused(ValueError):
    """A JSON number or constant a history cannot hold, or an object naming a key twice."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number a history can hold")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(f"number out of range: {text[:40]}")
    return number


# Every digit and minus sign made 0, so that one search finds a long integer: the shortest
# orjson reads as floats are -9223372036854775809 (below -2**63) and 2**64.
_SIGNS_AS_ZERO: Final = bytes.maketrans(b"-123456789", b"0000000000")
_LONG_INTEGER: Final = b"0" * 20
# Both opening brackets made [, so that one count finds the containers a line may open.
_OPENING_AS_ONE: Final = bytes.maketrans(b"{", b"[")


def _keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Takes a JSON object's pairs. Returns them as a dict; refuses a key named twice, which
    orjson and the standard library both read last-wins, hiding the first value.

    Refused only where it can be: every key of the text is followed by a colon, so a line
    whose colons are as many as the keys of its event and of its value, as read, names no
    key twice. Only the other lines (a nested object, a colon inside a string, a repeated
    key) are read again by the standard library with this hook."""
    read = dict(pairs)
    if len(read) == len(pairs):
        return read
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Refused(f"duplicate key {key!r:.60} in an object")
        seen.add(key)
    raise AssertionError("a key was read twice")


def _keys_read(event: dict[str, Any]) -> int:
    """Takes an event as read. Returns how many keys it and the maps among its fields (its
    value, a poll's rebalanced) hold."""
    return len(event) + sum(len(field) for field in event.values() if field.__class__ is dict)


_JSON = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_keys_once
)
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
    lines: Iterable[tuple[int, str | bytes]], path: str, budget: int, position: int = 0
) -> Iterator[tuple[int, Event]]:
    """Takes numbered lines of history.jsonl (some may be undecoded: history.lines), a
    budget in bytes for each line's value, and the position among events of the first (an
    event without an index takes its position); yields (line, event) for every non-blank
    one."""
    longest = budget // (TOKEN_BYTES + 1)  # no line this long or shorter can exceed it
    for line_no, line in lines:
        # The common line, read here in one go: a history has millions. It is a JSON object
        # within the budget and MAX_NESTING (by its length, or by its brackets: each level
        # takes two), without long integers, that orjson reads (it refuses any text not
        # UTF-8) to an event with every field. Any other line is read as text by
        # jsonl_event, to the same event or the error it makes.
        text = line if isinstance(line, bytes) else _utf8(line)
        event: Any = None
        if (
            text[:1] == b"{"
            and len(text) <= longest
            and (len(text) <= 2 * MAX_NESTING + 1 or _openings(text) <= MAX_NESTING)
            and text.translate(_SIGNS_AS_ZERO).find(_LONG_INTEGER) < 0
        ):
            try:
                event = orjson.loads(text)
            except orjson.JSONDecodeError:
                event = None
        if event.__class__ is dict and event.keys() >= _COMMON_FIELDS:
            value = event["value"]
            keys = len(event) + len(value) if value.__class__ is dict else len(event)
            # A key read twice, or colons elsewhere (another map among the fields, or in a
            # string): _keys_once says, unless the fields' maps account for every colon.
            colons = text.count(b":")
            if colons != keys and colons != _keys_read(event):
                _exact_json(text.decode(), path, line_no)
            check_event(event, path, line_no)
        else:
            if isinstance(line, bytes):
                line = line_text(line[:-1], path, line_no)
            if not line or line.isspace():
                continue
            event = jsonl_event(line, path, line_no, position, budget)
        yield line_no, event
        position += 1


def _utf8(line: str) -> bytes:
    """Takes a line's text. Returns it as UTF-8 if it may be a common line, else b""."""
    if line[:1] != "{":
        return b""
    try:
        return line.encode()
    except UnicodeEncodeError:  # a lone surrogate, in text that was never UTF-8
        return b""


def _openings(text: bytes) -> int:
    return text.translate(_OPENING_AS_ONE).count(b"[")


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
    event: Any = None
    try:
        text = line.encode()
    except UnicodeEncodeError:  # a lone surrogate, in text that was never UTF-8
        text = line.encode(errors="surrogatepass")
    else:
        event = _fast_json(text)
        if event.__class__ is dict and text.count(b":") != _keys_read(event):
            event = None  # a key read twice, maybe: the standard library says (_keys_once)
    if event is None:  # refused by orjson or not trusted to it (or a line of null)
        event = _exact_json(line, path, line_no)
    if event.__class__ is not dict:
        raise HistoryError(path, line_no, "bad event: expected a JSON object")
    # Deeper than MAX_NESTING takes more brackets than that, opened and closed; counting
    # them is quick, and only a line with that many is measured exactly.
    if (
        len(text) > 2 * MAX_NESTING
        and _openings(text) > MAX_NESTING
        and nesting(event) > MAX_NESTING
    ):
        raise HistoryError(path, line_no, f"nested deeper than {MAX_NESTING} levels")
    return event


def _fast_json(text: bytes) -> Any:
    """Takes a line as UTF-8. Returns its value as orjson reads it, or None when orjson
    refuses it (not JSON, NaN, 1e999, too deep...) or may read an integer as a float."""
    # orjson reads an integer beyond 64 bits as a float: digits enough for one (those of
    # a float or a string too, which only cost time) go to the standard library.
    # Nanosecond times, even since 1970, have 19 digits and no sign.
    if text.translate(_SIGNS_AS_ZERO).find(_LONG_INTEGER) >= 0:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _exact_json(line: str, path: str, line_no: int) -> Any:
    """Takes a line. Returns its value as the standard library reads it; raises HistoryError
    naming what it cannot read."""
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
    return event
