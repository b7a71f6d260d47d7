"""Readers for the three history formats: history.jsonl, Jepsen history.edn, Jepsen text logs.

Each turns text into (line, event) pairs in the history.jsonl shape; the format
is detected from the content, never from the file name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from harness import edn
from harness.frozen import freeze

Event = dict[str, Any]
Located = list[tuple[int, Event]]

JSONL = "jsonl"
EDN = "edn"
JEPSEN_LOG = "jepsen-log"

_INDEPENDENT_TUPLE = "jepsen.independent/tuple"
_JSONL_FIELDS = ("type", "process", "f", "time")
_JSONL_FIELD_SET = frozenset(_JSONL_FIELDS)
_JSON = json.JSONDecoder()
# `jepsen.util - 3  :invoke  :cas  [1 4]`: the logger name, then process, type, f, value.
_LOG_LINE = re.compile(
    r"jepsen\.util\s*[-:]\s*(?P<process>-?\d+|:[\w.-]+)\s+:(?P<type>invoke|ok|fail|info)"
    r"\s+(?P<f>:?[^\s]+)(?P<rest>.*)$",
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


def detect_format(text: str) -> str | None:
    """Takes a history's text; returns JSONL, EDN, JEPSEN_LOG, or None when none fits."""
    stripped = text.lstrip()
    if not stripped:
        return JSONL
    if stripped.startswith("{"):
        second = stripped[1:].lstrip()[:1]
        return JSONL if second in ('"', "}") else EDN
    # Before EDN: a log may open with a bracketed timestamp or thread name.
    if _LOG_LINE.search(text):
        return JEPSEN_LOG
    if stripped[0] in "[(#;":
        return EDN
    return None


def parse_history(text: str, path: str) -> tuple[str, Located]:
    """Takes a history's text and its path (for messages); returns (format, located events)."""
    fmt = detect_format(text)
    if fmt is None:
        first = next(i for i, line in enumerate(text.splitlines(), 1) if line.strip())
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
    out: Located = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        event = _json_line(line, path, line_no)
        if not event.keys() >= _JSONL_FIELD_SET:
            _require(event, _JSONL_FIELDS, path, line_no)
        event.setdefault("index", len(out))
        event.setdefault("value", None)
        _check_process(event["process"], path, line_no)
        out.append((line_no, event))
    return out


def _json_line(line: str, path: str, line_no: int) -> Event:
    try:
        # raw_decode skips json.loads' wrappers, a third of the time on big histories.
        event, end = _JSON.raw_decode(line, len(line) - len(line.lstrip()))
    except json.JSONDecodeError as e:
        raise HistoryError(path, line_no, f"bad JSON: {e.msg} (column {e.colno})") from None
    if line[end:].strip():
        raise HistoryError(path, line_no, f"bad JSON: Extra data (column {end + 1})")
    if not isinstance(event, dict):
        raise HistoryError(path, line_no, "bad event: expected a JSON object")
    return event


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
    _check_process(event["process"], path, line_no)
    if "key" in form:
        event["key"] = plain(form["key"])
    if form.get("error") is not None:
        event["error"] = plain(form["error"])
    return event


def _unwrap_independent_keys(events: Located) -> None:
    # jepsen.independent writes a keyed op's value as [k v]. A plain two-element
    # vector is read that way only when every client event has one, so an
    # unkeyed cas history ([old new]) stays as it is.
    client = [e for _, e in events if isinstance(e["process"], int) and "key" not in e]
    tagged = any(isinstance(e["value"], edn.Tagged) for e in client)
    keyed = bool(client) and all(_is_pair(e["value"]) for e in client)
    client_ids = {id(e) for e in client}
    for _, event in events:
        value = event["value"]
        if (
            isinstance(value, edn.Tagged)
            and value.tag == _INDEPENDENT_TUPLE
            and _is_pair(value.value)
        ):
            event["key"], event["value"] = plain(value.value[0]), value.value[1]
        elif keyed and not tagged and id(event) in client_ids:
            event["key"], event["value"] = plain(value[0]), value[1]
        event["value"] = plain(event["value"])


def _is_pair(value: Any) -> bool:
    if isinstance(value, edn.Tagged):
        return value.tag == _INDEPENDENT_TUPLE and _is_pair(value.value)
    return isinstance(value, list) and len(value) == 2


def read_jepsen_log(text: str, path: str) -> Located:
    """Takes a Jepsen text log; returns one event per `jepsen.util` op line, others ignored.

    The line number stands in for the time, which these logs do not carry;
    keyed ops ([k v] values from jepsen.independent) are read as for EDN.
    """
    out: Located = []
    for line_no, line in enumerate(text.splitlines(), 1):
        match = _LOG_LINE.search(line)
        if match is None:
            continue
        process_text = match["process"]
        process: int | str = (
            int(process_text) if not process_text.startswith(":") else process_text[1:]
        )
        event: Event = {
            "index": len(out),
            "time": line_no,
            "process": process,
            "type": match["type"],
            "f": match["f"].lstrip(":"),
        }
        event.update(_log_value_and_error(match["rest"], event, path, line_no))
        out.append((line_no, event))
    _unwrap_independent_keys(out)
    return out


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


def _check_process(process: Any, path: str, line_no: int) -> None:
    if type(process) is int or type(process) is str:  # the common case, checked quickly
        return
    if isinstance(process, bool) or not isinstance(process, int | str):
        raise HistoryError(path, line_no, f"bad process {process!r}: expected an integer or name")
