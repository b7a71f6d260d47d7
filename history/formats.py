"""Readers for the three history formats: history.jsonl, Jepsen history.edn, Jepsen text logs.

Each turns text into (line, event) pairs in the history.jsonl shape; the format is detected
from the content, never from the file name. The three are equally strict (`check_event`):
an event they cannot read exactly is refused with its line, never skipped or guessed at.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any, Final

from history import edn
from history.frozen import MAX_NESTING, Exact, freeze, nesting

Event = dict[str, Any]
Located = list[tuple[int, Event]]

JSONL = "jsonl"
EDN = "edn"
JEPSEN_LOG = "jepsen-log"
EVENT_TYPES: Final = ("invoke", "ok", "fail", "info")

_INDEPENDENT_TUPLE = "jepsen.independent/tuple"
_PLAIN_SCALARS: Final = frozenset({int, str, bool, float, type(None)})
_JSONL_FIELDS = ("type", "process", "f", "time")
_JSONL_FIELD_SET = frozenset(_JSONL_FIELDS)
# `jepsen.util - 3  :invoke  :cas  [1 4]`: the logger name, then process, type, f, value.
_LOG_LINE = re.compile(
    r"jepsen\.util\s*[-:]\s*(?P<process>-?\d+|:[\w.-]+)\s+:(?P<type>invoke|ok|fail|info)"
    r"\s+(?P<f>:?[^\s]+)(?P<rest>.*)$",
    re.MULTILINE,
)
# What every op line starts with; a line that starts so but is not a whole op is refused.
_LOG_OP_START = re.compile(r"jepsen\.util\s*[-:]\s*(?P<process>-?\d+|:[\w.-]+)(?=\s|$)")
# A whole op line, blanks never crossing a line end, so it can search a whole log: when it
# finds as many op lines as _LOG_OP_START finds starts, every start begins a whole op.
_LOG_OP_LINE = re.compile(
    r"jepsen\.util[^\S\n]*[-:][^\S\n]*(?P<process>-?\d+|:[\w.-]+)(?=\s|$)"
    r"[^\S\n]+:(?P<type>[^\s]+)[^\S\n]+(?P<f>:?[^\s]+)(?P<rest>.*)$",
    re.MULTILINE,
)


class HistoryError(Exception):
    """A history that cannot be read or is not well formed.

    `str()` is one line, `PATH:LINE: problem`, in the style of compilers and grep.
    """

    def __init__(self, path: str, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


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


def short(value: Any, limit: int = 60) -> str:
    """Takes any decoded value. Returns its repr, cut to about `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def detect_format(text: str) -> str | None:
    """Takes a history's text; returns JSONL, EDN, JEPSEN_LOG, or None when none fits."""
    stripped = text.lstrip()
    if not stripped:
        return JSONL
    if stripped.startswith("{"):
        return JSONL if starts_jsonl(stripped) else EDN
    # Before EDN: a log may open with a bracketed timestamp or thread name.
    if _LOG_LINE.search(text):
        return JEPSEN_LOG
    if stripped[0] in "[(#;":
        return EDN
    return None


def starts_jsonl(line: str) -> bool:
    """Takes a history's first non-blank line. Returns whether it opens a JSON object (EDN
    maps open with a keyword instead)."""
    stripped = line.lstrip()
    return stripped.startswith("{") and stripped[1:].lstrip()[:1] in ('"', "}")


def parse_history(text: str, path: str) -> tuple[str, Located]:
    """Takes a history's text and its path (for messages); returns (format, located events)."""
    fmt = detect_format(text)
    if fmt is None:
        first = next(i for i, line in enumerate(text.split("\n"), 1) if line.strip())
        raise HistoryError(
            path, first, "unrecognised history: expected JSON lines, EDN or a Jepsen log"
        )
    readers: dict[str, Callable[[str, str], Located]] = {
        JSONL: read_jsonl,
        EDN: read_edn,
        JEPSEN_LOG: read_jepsen_log,
    }
    return fmt, readers[fmt](text, path)


def read_jsonl(text: str, path: str) -> Located:
    """Takes history.jsonl text; returns (line, event) for every non-blank line."""
    return list(read_jsonl_lines(enumerate(text.split("\n"), 1), path))


def read_jsonl_lines(lines: Iterable[tuple[int, str]], path: str) -> Iterable[tuple[int, Event]]:
    """Takes numbered lines of history.jsonl; yields (line, event) for every non-blank one."""
    position = 0
    for line_no, line in lines:
        if line.isspace() or not line:
            continue
        yield line_no, jsonl_event(line, path, line_no, position)
        position += 1


def jsonl_event(line: str, path: str, line_no: int, position: int) -> Event:
    """Takes one line of history.jsonl and its position among events; returns its event."""
    event = _json_line(line, path, line_no)
    if not event.keys() >= _JSONL_FIELD_SET:
        _require(event, _JSONL_FIELDS, path, line_no)
    event.setdefault("index", position)
    event.setdefault("value", None)
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


def read_edn(text: str, path: str) -> Located:
    """Takes Jepsen history.edn text (maps, one per line or in one vector); returns events."""
    try:
        forms = edn.read_forms(text)
    except edn.EdnError as e:
        raise HistoryError(path, e.line, f"bad EDN: {e.problem}") from None
    if len(forms) == 1 and isinstance(forms[0][1], list):
        # A whole history printed as one vector: lines of its elements are not kept.
        forms = [(forms[0][0], f) for f in forms[0][1]]
    raw: Located = []
    for line_no, form in forms:
        if isinstance(form, edn.Tagged):  # an op printed as a record, #jepsen.history.Op{...}
            form = form.value
        if not isinstance(form, dict):
            raise HistoryError(path, line_no, "bad event: expected an EDN map")
        raw.append((line_no, _edn_event(form, len(raw), path, line_no)))
    _unwrap_independent_keys(raw)
    return raw


def _edn_event(form: dict[Any, Any], position: int, path: str, line_no: int) -> Event:
    _require(form, ("type", "process", "f"), path, line_no)
    event: Event = {
        "index": form.get("index", position),
        "time": form.get("time", position),
        "process": plain(form["process"]),
        "type": plain(form["type"]),
        "f": plain(form["f"]),
        "value": form.get("value"),
    }
    check_event(event, path, line_no)
    if "key" in form:
        event["key"] = plain(form["key"])
    if form.get("error") is not None:
        event["error"] = plain(form["error"])
    return event


def _unwrap_independent_keys(events: Located, values_plain: bool = False) -> None:
    # jepsen.independent writes a keyed op's value as [k v]. A plain two-element
    # vector is read that way only when every client event has one and the values
    # cannot be unkeyed cas pairs ([old new]), so an unkeyed history stays as it is.
    # values_plain: every value is in JSON's shapes already, none tagged (a log's).
    client = [e for _, e in events if e["process"].__class__ is int and "key" not in e]
    tagged = any(isinstance(e["value"], edn.Tagged) for e in client)
    keyed = bool(client) and not tagged and all(_is_pair(e["value"]) for e in client)
    if keyed and all(e["f"] == "cas" for e in client):
        keyed = all(_is_pair(e["value"][1]) for e in client)  # [k [old new]]
    if keyed:
        for event in client:
            key, event["value"] = event["value"]
            event["key"] = plain(key)
    if values_plain:
        return
    for _, event in events:
        value = event["value"]
        if (
            isinstance(value, edn.Tagged)
            and value.tag == _INDEPENDENT_TUPLE
            and _is_pair(value.value)
        ):
            event["key"], value = plain(value.value[0]), value.value[1]
        event["value"] = plain(value)


def _is_pair(value: Any) -> bool:
    if isinstance(value, edn.Tagged):
        return value.tag == _INDEPENDENT_TUPLE and _is_pair(value.value)
    return isinstance(value, list) and len(value) == 2


def read_jepsen_log(text: str, path: str) -> Located:
    """Takes a Jepsen text log; returns one event per `jepsen.util` op line, others ignored.

    A line that starts like an op line (`jepsen.util - 3 `) but is not a whole one (a
    truncated last line, say) is refused. The line number stands in for the time, which
    these logs do not carry; keyed ops ([k v] values from jepsen.independent) are read as
    for EDN.
    """
    out: Located = []
    op_lines = _op_lines(text, path)
    values = edn.read_simple([match["rest"] for _, match in op_lines])
    for (line_no, match), simple in zip(op_lines, values, strict=True):
        process_text, kind, f = match.group("process", "type", "f")
        process: int | str = int(process_text) if process_text[0] != ":" else process_text[1:]
        kind, f = kind.lstrip(":"), f.lstrip(":")
        event: Event = {
            "index": len(out),
            "time": line_no,
            "process": process,
            "type": kind,
            "f": f,
            "value": simple,
        }
        if kind not in EVENT_TYPES or not f:  # the rest holds by _LOG_OP_LINE's groups
            check_event(event, path, line_no)
        if simple is edn.NOT_SIMPLE:  # a rare line: the EDN reader (nearly all are JSON's)
            event.update(_log_value_and_error(match["rest"], event, path, line_no))
        out.append((line_no, event))
    _unwrap_independent_keys(out, values_plain=True)  # read_simple's and plain's shapes
    return out


def _op_lines(text: str, path: str) -> list[tuple[int, re.Match[str]]]:
    """Takes a log. Returns (line, match of _LOG_OP_LINE) for each op line; raises
    HistoryError for the first line that starts like an op line but is not one."""
    found = list(_LOG_OP_LINE.finditer(text))
    if len(found) == len(_LOG_OP_START.findall(text)):  # one regex pass over the whole log
        located: list[tuple[int, re.Match[str]]] = []
        line_no, counted_to = 1, 0
        for match in found:
            line_no += text.count("\n", counted_to, match.start())
            counted_to = match.start()
            located.append((line_no, match))
        return located
    located = []  # a line mentions jepsen.util twice, or one is not a whole op: line by line
    for line_no, line in enumerate(text.split("\n"), 1):
        start = _LOG_OP_START.search(line)
        if start is None:
            continue
        whole = _LOG_OP_LINE.match(line, start.start())
        if whole is None:
            raise HistoryError(path, line_no, "truncated op line: expected process, type and f")
        located.append((line_no, whole))
    return located


def _log_value_and_error(rest: str, event: Event, path: str, line_no: int) -> Event:
    op_type = event["type"]
    try:
        forms = edn.read_forms(rest, line_no)
    except edn.EdnError as e:
        if not isinstance(event["process"], int):
            # A nemesis prints whatever its faults return (#<Object ...> and the like);
            # no check reads it, so it is kept as text rather than refused.
            return {"value": rest.strip()}
        raise HistoryError(path, line_no, f"bad EDN in log line: {e.problem}") from None
    values = [plain(form) for _, form in forms]
    if not values:
        return {"value": None}
    # `:fail :read :timed-out` carries only an error: Jepsen prints the error
    # after the value, and a lone keyword on a failed or crashed op is that error.
    if len(values) == 1 and op_type in ("fail", "info") and isinstance(forms[0][1], edn.Keyword):
        return {"value": None, "error": values[0]}
    result: Event = {"value": values[0]}
    if len(values) > 1:
        errors = values[1:]
        result["error"] = errors[0] if len(errors) == 1 else " ".join(map(str, errors))
    return result


def plain(value: Any) -> Any:
    """Takes a value read from EDN; returns it in JSON's shapes (keywords as plain strings)."""
    if value.__class__ in _PLAIN_SCALARS:  # the common case, decided quickly
        return value
    if value.__class__ is Exact:  # a set member or map key that the EDN reader froze
        return value.value
    if isinstance(value, edn.Keyword | edn.Symbol):
        return str(value)
    if isinstance(value, edn.Tagged):
        return plain(value.value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, frozenset | set):
        items = [plain(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=repr)
    if isinstance(value, dict):
        return {freeze(plain(k)): plain(v) for k, v in value.items()}
    return value


def _require(event: dict[Any, Any], fields: tuple[str, ...], path: str, line_no: int) -> None:
    missing = [f for f in fields if f not in event]
    if missing:
        raise HistoryError(path, line_no, f"bad event: missing {', '.join(missing)}")
