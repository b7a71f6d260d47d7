"""The reader of Jepsen's text logs: one event per op record (`INFO jepsen.util - 3
:invoke :cas [1 4]`), every other line ignored, read a batch of lines at a time.

A line that starts like an op record (`jepsen.util - 3 `) but is not a whole one (a
truncated last line, say) is refused. Two records logged onto one line (interleaved
logging) are two events: the line is cut at each record's start, and the text the next
record's logger put before it (a level, maybe a timestamp and a thread) is dropped.
These logs carry no time: each event's position stands in for it. Keys come out of
jepsen.independent's [k v] values as in history.jepsen. A record with no value has none:
an ok one takes its invoke's (history.core); a nil value read nil.

A batch whose every line is UTF-8 and holds no record or one common record (its value made
of vectors, nil, booleans and small integers, maybe an error keyword after it) is read in
one go: its records by one regular expression, their values through JSON. Any other batch
is read line by line, to the same events or to the error of its line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from itertools import compress, islice, repeat
from operator import contains, itemgetter, ne
from typing import Any, Final

import orjson

from history.edn_values import Keyword, name_of
from history.events import (
    EVENT_TYPES,
    UNRECOGNISED,
    Event,
    HistoryError,
    check_event,
    could_exceed,
)
from history.frozen import MAX_NESTING
from history.jepsen import Facts, Reading
from history.lines import batch_text, decoded

# `jepsen.util - 3  :invoke  :cas  [1 4]`: the logger name, then process, type, f, value.
LOG_LINE: Final = re.compile(
    r"jepsen\.util\s*[-:]\s*(?P<process>-?\d+|:[\w.-]+)\s+:(?P<type>invoke|ok|fail|info)"
    r"\s+(?P<f>:?[^\s]+)(?P<rest>.*)$",
    re.MULTILINE,
)
# What every op record starts with; one that starts so but is not a whole op is refused.
_OP_START = re.compile(r"jepsen\.util\s*[-:]\s*(?P<process>-?\d+|:[\w.-]+)(?=\s|$)")
_OP_RECORD = re.compile(
    r"jepsen\.util\s*[-:]\s*(?P<process>-?\d+|:[\w.-]+)\s+:(?P<type>\S+)\s+(?P<f>:?\S+)(?P<rest>.*)"
)
# What a logger puts before a record (an optional timestamp, a level, an optional thread),
# at the end of the text before the next record on the same line.
_NEXT_PREFIX = re.compile(
    r"(?:\d{4}-\d\d-\d\d[T ][\d:.,]+(?:\{\w+\})?\s*(?:[A-Z]+\s+)?|"
    r"(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s+)(?:\[[^\]\n]*\]\s*)?$"
)
# An op record as nearly every one is, on a line of a batch joined by newlines: blanks
# are tabs and spaces, its value (if any) is free of colons, then at most an error keyword.
# Groups a process number (of up to 18 digits) or name, type, f, value and error; each
# group ends where its text does (none can be cut short for the rest to match). Where
# _OP_RECORD reads such a line, it finds the same process, type and f (its one colon
# dropped), and its rest is blanks, the value, the error keyword and blanks.
_QUICK_RECORD: Final = re.compile(
    r"jepsen\.util[ \t]*[-:][ \t]*(?:(-?[0-9]{1,18})|:([\w.-]+))[ \t]+:(invoke|ok|fail|info)"
    r"[ \t]+:?([^\s:]\S*)(?!\S)[ \t]*([^\n:]*)(?::([^\W\d][\w.-]*)[ \t]*)?$",
    re.MULTILINE,
)
# What _quick_values reads: each character it may meet is deleted, and digits made 0 so
# that an integer of 19 digits or more (beyond what orjson reads as an integer) and an
# exponent (1e5, a float in both) show.
_QUICK_CHARS: Final = str.maketrans("", "", "0123456789-[] \t,nilfaseutr")
_DIGITS_AS_ZERO: Final = str.maketrans("-123456789", "0000000000")
_LONG_OR_FLOAT: Final = re.compile("0{19}|0e")
_BATCH: Final = 512  # lines read in one go (more would cost memory)


def read_log_events(
    lines: Iterable[tuple[int, str | bytes]],
    path: str,
    reading: Reading,
    budget: int,
    first: int,
) -> Iterator[tuple[int, Event]]:
    """Takes a log's numbered lines (some may be undecoded: history.lines), the facts to
    read it with, a budget in bytes for each value and the log's first non-blank line.
    Yields (line, event) for each op record. Raises HistoryError for a malformed record or
    a line not UTF-8, or at `first` for a log with none; and Reread when a fact guessed
    proves wrong."""
    facts = Facts(reading)
    lines = iter(lines)
    position = 0
    while batch := list(islice(lines, _BATCH)):
        located = _quick_events(batch, position, facts, budget)
        if located is None:  # some line is not a common one: each is read on its own
            records = [
                (line_no, record)
                for line_no, line in decoded(batch, path)
                if "jepsen.util" in line  # most lines of a log, passed over quickly
                for record in _records(line, path, line_no)
            ]
            yield from _events(records, position, facts, path, budget)
            position += len(records)
        else:
            yield from located
            position += len(located)
    if position == 0:
        raise HistoryError(path, first, UNRECOGNISED)
    facts.finish()


def _records(line: str, path: str, line_no: int) -> list[re.Match[str]]:
    """Takes a line. Returns a match of _OP_RECORD for each record that starts on it."""
    if line.count("jepsen.util") == 1:  # one record at most, as nearly every line holds
        found = _OP_START.search(line)
        if found is None:
            return []
        record = _OP_RECORD.fullmatch(line, found.start())
        if record is None:
            raise HistoryError(path, line_no, "truncated op line: expected process, type and f")
        return [record]
    starts = [m.start() for m in _OP_START.finditer(line)]
    records = []
    for i, start in enumerate(starts):
        text = line[start : starts[i + 1]] if i + 1 < len(starts) else line[start:]
        prefix = _NEXT_PREFIX.search(text) if i + 1 < len(starts) else None
        if prefix is not None:
            text = text[: prefix.start()]
        record = _OP_RECORD.fullmatch(text)
        if record is None:
            raise HistoryError(path, line_no, "truncated op line: expected process, type and f")
        records.append(record)
    return records


def _events(
    batch: list[tuple[int, re.Match[str]]], position: int, facts: Facts, path: str, budget: int
) -> Iterator[tuple[int, Event]]:
    # A value that could take more than the budget is left to the EDN reader, which
    # counts what it reads: "" is no value, never simple.
    texts = [m["rest"] if not could_exceed(m["rest"], budget) else "" for _, m in batch]
    for (line_no, record), value in zip(batch, read_simple(texts), strict=True):
        process_text, kind, f = record.group("process", "type", "f")
        process = _process(process_text, path, line_no)
        kind, f = kind.lstrip(":"), f.lstrip(":")
        event: Event = {"index": position, "time": position, "process": process}
        event.update(type=kind, f=f)
        if kind not in EVENT_TYPES or not f:  # the rest holds by _OP_RECORD's groups
            check_event(event, path, line_no)
        if value is NOT_SIMPLE:  # a rare record: the EDN reader (nearly all are JSON's)
            event.update(_value_and_error(record["rest"], event, path, line_no, budget))
        else:
            event["value"] = value
        position += 1
        yield line_no, facts.take_key(event)


def _quick_events(
    batch: list[tuple[int, str | bytes]], position: int, facts: Facts, budget: int
) -> list[tuple[int, Event]] | None:
    """Takes a batch of numbered lines (some undecoded), the position of its first record,
    the facts and the budget of a value. Returns (line, event) for each op record, read in
    one go, when every line is UTF-8 and holds no record or one common one (_QUICK_RECORD).
    Else None, having read nothing: the batch is read line by line, by _records and
    _events, to the same events or to the error of its line."""
    read_in_one_go = batch_text(batch, budget)
    if read_in_one_go is None:
        return None
    line_nos, text, texts = read_in_one_go
    named = list(map(contains, texts, repeat("jepsen.util")))
    records = _QUICK_RECORD.findall(text)
    # As many records as lines naming jepsen.util, and each names it once: one a line.
    if len(records) != named.count(True) or text.count("jepsen.util") != len(records):
        return None
    if not records:
        return []
    rows = _quick_values(list(map(itemgetter(4), records)))
    if rows is None:
        return None
    at = range(len(records))
    with_error = list(compress(at, map(itemgetter(5), records)))
    for i in with_error:
        if records[i][4][-1:] not in ("", " ", "\t"):
            return None  # `1:timed-out`, one atom in EDN
    for i in compress(at, map(ne, map(len, rows), repeat(1))):
        if rows[i] or not records[i][5] or records[i][2] in ("invoke", "ok"):
            return None  # two values, none, or a keyword as the value: _value_and_error's
    try:  # no process named, none with a leading zero: read in one go
        processes = orjson.loads("[" + ",".join(map(itemgetter(0), records)) + "]")
    except orjson.JSONDecodeError:
        processes = []
    if len(processes) != len(records):  # a name, or a lone name (`[]` reads as none)
        processes = [int(number) if number else name for number, name, *_ in records]
    events: list[Event] = [
        {
            "index": at,
            "time": at,
            "process": process,
            "type": kind,
            "f": f,
            # None: `:info :read :timed-out`, a lone keyword on a failed or crashed op
            "value": values[0] if values else None,
        }
        for at, process, (_, _, kind, f, _, _), values in zip(
            range(position, position + len(records)), processes, records, rows, strict=True
        )
    ]
    for i in with_error:
        events[i]["error"] = records[i][5]
    facts.take_keys(events)
    return list(zip(compress(line_nos, named), events, strict=True))


def _quick_values(texts: list[str]) -> list[list[Any]] | None:
    """Takes EDN texts. Returns each one's values (a list), read in one go as JSON, when
    every one is made only of vectors, nil, booleans and integers of up to 18 digits,
    separated as JSON separates them once each space is a comma (so that both read the same
    values); else None."""
    joined = "".join(texts)
    if (
        joined.translate(_QUICK_CHARS)  # another character
        or "null" in joined  # a symbol, in EDN
        or _LONG_OR_FLOAT.search(joined.translate(_DIGITS_AS_ZERO))
        or (
            joined.count("[") > MAX_NESTING
            and max(map(str.count, texts, repeat("["))) > MAX_NESTING
        )  # maybe too deep: read_forms says, as _is_simple has it
    ):
        return None
    if list(map(str.count, texts, repeat("["))) != list(map(str.count, texts, repeat("]"))):
        return None  # a text that opens a vector another closes ([ then ]): read_forms says
    spelled = ("[[" + "],[".join(texts) + "]]").replace(" ", ",").replace("nil", "null")
    try:  # JSON refuses what EDN reads otherwise: [1 [2]3], 007, 1  2, -, nils, truefalse
        rows: list[list[Any]] = orjson.loads(spelled)
    except orjson.JSONDecodeError:
        return None
    # Each text balanced, one that closes its row early (`],[`) makes rows of its own.
    return rows if len(rows) == len(texts) else None


def _process(text: str, path: str, line_no: int) -> int | str:
    """Takes a record's process as logged: digits, or a keyword (`:nemesis`). Returns it as
    an integer or a name; raises HistoryError for more digits than Python converts."""
    if text[0] == ":":
        return text[1:]
    try:
        return int(text)
    except ValueError:  # the only one _OP_RECORD's digits can raise: too many of them
        limit = sys.get_int_max_str_digits()
        raise HistoryError(path, line_no, f"process with more than {limit} digits") from None


def _value_and_error(rest: str, event: Event, path: str, line_no: int, budget: int) -> Event:
    # The EDN reader, for the few values read_simple does not read: a log of common values
    # (nearly every one) never imports it.
    from history.edn import EdnError, read_forms

    try:
        values = [form for _, form in read_forms(rest, line_no, budget)]
    except EdnError as e:
        if not isinstance(event["process"], int):
            # A nemesis prints whatever its faults return (#<Object ...> and the like);
            # no check reads it, so it is kept as text rather than refused.
            return {"value": rest.strip()}
        raise HistoryError(path, line_no, f"bad EDN in log line: {e.problem}") from None
    if not values:
        return {} if event["type"] == "ok" else {"value": None}
    # `:fail :read :timed-out` carries only an error: Jepsen prints the error
    # after the value, and a lone keyword on a failed or crashed op is that error.
    if len(values) == 1 and event["type"] in ("fail", "info") and values[0].__class__ is Keyword:
        return {"value": None, "error": name_of(values[0])}
    result: Event = {"value": values[0]}
    if len(values) > 1:
        errors = [name_of(e) for e in values[1:]]
        result["error"] = errors[0] if len(errors) == 1 else " ".join(map(str, errors))
    return result


# Text that is one value made only of vectors, nil, booleans and integers of up to 18
# digits, each atom between separators: its JSON spelling reads the same value (lists,
# None, bools, ints), and a C parser reads JSON far faster than the EDN reader.
_SIMPLE = re.compile(
    r"""(?:[\[\]\s,]
    |(?<![^\s,\[\]])(?:nil|true|false|-?(?:0|[1-9]\d{0,17}))(?![^\s,\[\]]))*""",
    re.VERBOSE,
)
_SEPARATORS = re.compile(r"[\s,]+")
NOT_SIMPLE: Final = object()


def read_simple(texts: list[str]) -> list[Any]:
    """Takes EDN texts. Returns for each its one value when it is made only of vectors, nil,
    booleans and small integers (as a Jepsen log's values mostly are), as read_forms would
    read it; else NOT_SIMPLE: read that one with read_forms. All are read in one go."""
    simple = [_is_simple(text) for text in texts]
    chosen = [text for text, ok in zip(texts, simple, strict=True) if ok]
    spelled = _SEPARATORS.sub(",", "[[" + "],[".join(chosen) + "]]").replace("nil", "null")
    try:
        rows = orjson.loads(spelled.replace("[,", "[").replace(",]", "]"))
    except orjson.JSONDecodeError:  # some text is two vectors unseparated ([1][2])
        rows = None
    if rows is None or len(rows) != len(chosen):  # or a text closes more than it opens
        if len(texts) == 1:  # `],[`, balanced: its two rows are no value of its own
            return [NOT_SIMPLE]
        return [read_simple([text])[0] for text in texts]  # one by one
    values = iter(rows)
    # A text holding no value or two ([] or [1, 2] here) is left to read_forms too.
    singles = (next(values) if ok else [] for ok in simple)
    return [value[0] if len(value) == 1 else NOT_SIMPLE for value in singles]


def _is_simple(text: str) -> bool:
    """Whether text is one of read_simple's values. One with more brackets than a value may
    nest is read_forms', which refuses one too deep with its line; the JSON parser would
    find the depth only as its own limit (orjson's 1024 levels, Python's stack)."""
    opened = text.count("[")
    return (
        opened <= MAX_NESTING and opened == text.count("]") and _SIMPLE.fullmatch(text) is not None
    )
