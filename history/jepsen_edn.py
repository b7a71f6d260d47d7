"""The reader of Jepsen's history.edn: a map per event, one per line or all in one vector,
read event by event (history.edn.history_forms).

A line that is one flat map of an op's usual fields, each a keyword or a value made of
vectors, nil, booleans and small integers (as a register's or a queue's history mostly
is), is read through JSON, as the text log's values are (history.jepsen_log.read_simple):
a batch of 1,024 such lines is decoded, matched by one regular expression and read in one
go, as the text log's batches are; from the first batch with any other line (or a blank
one), lines are taken one at a time, quick ones still through JSON a batch of 1,024 at a
time, and from the first other line on every form is the EDN reader's. All give the same
event, and the same error at the same line: the batches are the same either way.

It reads what Jepsen's analysis reads: events numbered by their :index, or all by their
position when the indexes do not increase (history.jepsen), and a process that goes on
after an info (history.pairing), each with a warning.

Values keep EDN's kinds (history.edn_values); an event's type, f, process and error are
names, however spelled (`:ok` and `"ok"` alike). An op printed as a record
(`#jepsen.history.Op{...}`) is read as its map. Events are ordered by their :time when
every event has one, else all by their position (history.jepsen); keys come out of
jepsen.independent's [k v] values as described there. An ok completion without a
:value takes its invoke's (history.core); one whose value is nil read nil. Other keyword
fields are kept under their names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from operator import ge
from typing import Any, Final

import orjson

from history.edn import EdnError, history_forms, top_level_forms
from history.edn_values import Keyword, Tagged, name_of
from history.events import (
    EVENT_TYPES,
    TOKEN_BYTES,
    Event,
    HistoryError,
    check_event,
    require,
)
from history.jepsen import Facts, Reading
from history.jepsen_edn_layout import ABSENT, Columns, layout_columns
from history.lines import batch_text, decoded

_REQUIRED: Final = ("type", "process", "f")
_REQUIRED_SET: Final = frozenset(_REQUIRED)
_TYPES: Final = frozenset(EVENT_TYPES)
_PROCESS_CLASSES: Final = frozenset((int, str))
# Fields read above with a meaning of their own; any other keyword field (Jepsen's Kafka
# ops carry :rebalance-log and :seek-to-beginning?) is kept under its name, as JSON's are.
_READ: Final = frozenset(("index", "time", "process", "type", "f", "value", "key", "error"))

# A line read quickly: `{:type :ok, :f :cas, :value [1 4], :process 3, :time 7, :index 9}`,
# a map of these fields, each once: type, f and error a keyword; process a keyword or an
# integer; value, time and index nil, a boolean, an integer of up to 18 digits, or a vector
# of those nesting at most one more; separators between any two. Text holding a string, a
# comment, a tag, a character, a map inside or another field is never such a line.
_KEYWORD = r":[A-Za-z][\w-]*"
_INTEGER = r"-?(?:0|[1-9]\d{0,17})"
_ATOM = rf"(?:nil|true|false|{_INTEGER})"
_INNER = rf"\[[\s,]*(?:{_ATOM}(?:[\s,]+{_ATOM})*)?[\s,]*\]"
_SIMPLE = rf"(?:{_ATOM}|\[[\s,]*(?:(?:{_ATOM}|{_INNER})(?:[\s,]+(?:{_ATOM}|{_INNER}))*)?[\s,]*\])"
_FIELD = (
    rf"(?::(?:type|f|error)[\s,]+{_KEYWORD}|:process[\s,]+(?:{_KEYWORD}|{_INTEGER})"
    rf"|:(?:value|time|index)[\s,]+{_SIMPLE})"
)
_LINE = rf"\{{[\s,]*{_FIELD}(?:[\s,]+{_FIELD})*[\s,]*\}}[\s,]*"
_QUICK_LINE: Final = re.compile(_LINE)
# Quick lines joined by NUL, which no line of the batch holds and \s does not match: each
# line of a match is matched by _QUICK_LINE, as it would be on its own. It is matched
# _MATCHED lines at a time: re's backtracking stack grows with the lines of one match
# (3.5 MB for 1,024), and one call a line costs about a fifth more.
_QUICK_LINES: Final = re.compile(rf"{_LINE}(?:\x00{_LINE})*")
_MATCHED: Final = 64
# Such lines spelled as JSON arrays of names and values: keywords as their names, nil as
# null, maps and vectors as arrays, separators as commas.
_KEYWORD_NAME: Final = re.compile(r":([A-Za-z][\w-]*)")
_SEPARATORS: Final = re.compile(r"[\s,]+")
_OTHER_BLANKS: Final = "".join(  # what \s matches besides the space (none above U+3000):
    c
    for c in map(chr, range(0x3001))
    if c != " " and c.isspace()  # str.isspace's, as re's
)
_BRACES: Final = str.maketrans("{}", "[]")
# Quick lines whose values are read in one go (more would cost memory); a batch of lines
# read in one go is as long, so that a batch read line by line after it starts where it
# would have, and finds the same error first (a line not UTF-8 before a bad quick one).
_BATCH: Final = 1024


def read_edn_events(
    lines: Iterable[tuple[int, str | bytes]], path: str, reading: Reading, budget: int
) -> Iterator[tuple[int, Event]]:
    """Takes a history.edn's numbered lines (some may be undecoded: history.lines), the
    facts to read it with and a budget in bytes for each event. Yields (line, event) for
    each event. Raises HistoryError for one that is malformed or a line not UTF-8, and
    Reread when a fact guessed proves wrong."""
    facts = Facts(reading)
    position = 0
    lines = iter(lines)
    while batch := list(islice(lines, _BATCH)):
        located = _batch_events(batch, position, facts, budget)
        if located is None:  # some line is not a quick one: from here, line by line
            rest = decoded(chain(batch, lines), path)
            yield from _events_one_by_one(rest, path, facts, position, budget)
            return
        yield from located
        position += len(located)
    facts.finish()


def _events_one_by_one(
    lines: Iterator[tuple[int, str]], path: str, facts: Facts, position: int, budget: int
) -> Iterator[tuple[int, Event]]:
    """Takes a history.edn's numbered lines from some line on, the facts, the position of
    the first event among them and the budget of an event. Yields (line, event) for each,
    quick lines through JSON up to the first other line, from which on the EDN reader reads
    every form; then checks the facts' guesses."""
    quick: list[tuple[int, str]] = []  # lines to read quickly, a batch at a time
    unread: list[tuple[int, str]] = []  # read quickly, but for the EDN reader after all
    rest: Iterable[tuple[int, str]] = lines  # from the first line not read quickly
    longest = budget // (TOKEN_BYTES + 1)  # could_exceed of a longer line, inline
    quick_line = _QUICK_LINE.fullmatch
    for line_no, text in lines:
        if len(text) > longest or quick_line(text) is None:
            if text.strip(" \t,"):
                rest = chain([(line_no, text)], lines)
                break
            continue  # a blank line
        quick.append((line_no, text))
        if len(quick) >= _BATCH:
            for event in _quick_events(quick, position, facts, path, unread):
                yield event
                position += 1
            quick = []
            if unread:
                break
    for event in _quick_events(quick, position, facts, path, unread):
        yield event
        position += 1
    rest = chain(unread, rest)
    forms = top_level_forms(rest, budget) if position else history_forms(rest, budget)
    while True:
        try:
            line_no, form = next(forms)
        except StopIteration:
            break
        except EdnError as e:
            raise HistoryError(path, e.line, f"bad EDN: {e.problem}") from None
        if form.__class__ is Tagged:  # an op printed as a record, #jepsen.history.Op{...}
            form = form.value
        if not isinstance(form, dict):
            raise HistoryError(path, line_no, "bad event: expected an EDN map")
        # The map's keywords' names, looked up quickly as strings (:time as "time").
        fields = {k.name: v for k, v in form.items() if k.__class__ is Keyword}
        yield line_no, facts.take_key(_event(fields, position, facts, path, line_no))
        position += 1
    facts.finish()


def _quick_events(
    quick: list[tuple[int, str]],
    position: int,
    facts: Facts,
    path: str,
    unread: list[tuple[int, str]],
) -> Iterator[tuple[int, Event]]:
    """Takes lines read quickly (_QUICK_LINE), the position of the first, the facts and a
    list. Yields their events, up to the first naming a field twice (which the EDN reader
    refuses); that line and those after it go into `unread`, for the EDN reader."""
    if not quick or unread:
        return
    read, twice = _fields([line for _, line in quick])
    if twice:  # the line after those read names a field twice: it and those after it
        unread += quick[len(read) :]
    line_nos = [line_no for line_no, _ in quick[: len(read)]]
    events = _common_events(_columns(read), position, facts)
    if events is not None:
        yield from zip(line_nos, events, strict=True)
        return
    for i, (fields, line_no) in enumerate(zip(read, line_nos, strict=True)):
        event = _event(fields, position + i, facts, path, line_no, known=True)
        yield line_no, facts.take_key(event)


def _fields(lines: list[str]) -> tuple[list[dict[str, Any]], bool]:
    """Takes quick lines (_QUICK_LINE). Returns each one's fields by name, read in one go
    through JSON, up to the first naming a field twice, and whether one does."""
    # Split at each keyword's name and joined by quotes, each name comes out quoted; no
    # other colon is left (a quick line holds one only as a keyword's first character).
    quoted = '"'.join(_KEYWORD_NAME.split("[" + ",".join(lines) + "]"))
    # As Jepsen prints a map, `:f :read, :value [1 2]`: a name then a space is a field's,
    # any other space is in a vector. Spelled so, a batch is JSON objects; spelled
    # otherwise, it is refused (a field's name must be followed by a colon, once), never
    # read otherwise: its values are the same, each field's name counted by its colon.
    spelled = quoted.replace(", ", ",").replace('" ', '":').replace(" ", ",")
    spelled = spelled.replace(",nil", ",null").replace("[nil", "[null").replace(":nil", ":null")
    try:
        objects: list[dict[str, Any]] = orjson.loads(spelled)
    except orjson.JSONDecodeError:
        objects = []
    if objects and sum(map(len, objects)) == spelled.count('":'):  # no name twice
        return objects, False
    # Else as arrays of names and values, so that a name given twice shows.
    text = quoted.translate(_BRACES)
    spelled = text.replace(", ", ",").replace(" ", ",")  # as most lines are separated
    if ",," in spelled or any(blank in spelled for blank in _OTHER_BLANKS):
        spelled = _SEPARATORS.sub(",", text)
    # Every nil is an atom after a comma or a bracket (a keyword named nil is quoted).
    spelled = spelled.replace("[,", "[").replace(",]", "]")
    spelled = spelled.replace(",nil", ",null").replace("[nil", "[null")
    read: list[dict[str, Any]] = []
    for pairs in orjson.loads(spelled):
        names = iter(pairs)
        fields = dict(zip(names, names, strict=True))
        if 2 * len(fields) != len(pairs):
            return read, True
        read.append(fields)
    return read, False


def _batch_events(
    batch: list[tuple[int, str | bytes]], position: int, facts: Facts, budget: int
) -> list[tuple[int, Event]] | None:
    """Takes a batch of numbered lines (some undecoded), the position of its first event,
    the facts and the budget of an event. Returns (line, event) for each, read in one go,
    when every line is UTF-8, quick (_QUICK_LINE), names no field twice, and
    _common_events makes the events; else None, having changed nothing: the batch is read
    line by line, to the same events or to the error of its line."""
    read_in_one_go = batch_text(batch, budget)
    if read_in_one_go is None:
        return None
    line_nos, text, texts = read_in_one_go
    columns = layout_columns(text, texts)
    if columns is not None:  # as Jepsen prints each: the fields the lines below would give
        events = _common_events(columns, position, facts)
        return None if events is None else list(zip(line_nos, events, strict=True))
    if "\x00" in text:
        return None
    at = range(0, len(texts), _MATCHED)
    if not all(map(_QUICK_LINES.fullmatch, ["\x00".join(texts[i : i + _MATCHED]) for i in at])):
        return None
    read, twice = _fields(texts)
    if twice:
        return None
    events = _common_events(_columns(read), position, facts)
    if events is None:
        return None
    return list(zip(line_nos, events, strict=True))


def _columns(read: list[dict[str, Any]]) -> Columns | None:
    """Takes quick lines' fields. Returns them as columns, when every line has the fields
    each must have; else None."""
    if not read or not all(map(_REQUIRED_SET.issubset, read)):
        return None
    return Columns(
        types=[fields["type"] for fields in read],
        fs=[fields["f"] for fields in read],
        processes=[fields["process"] for fields in read],
        values=[fields.get("value", ABSENT) for fields in read],
        times=[fields.get("time", ABSENT) for fields in read],
        indexes=[fields.get("index") for fields in read],
        errors=[fields.get("error") for fields in read],
    )


def _common_events(columns: Columns | None, position: int, facts: Facts) -> list[Event] | None:
    """Takes quick lines' fields as columns (None: some line lacks a field it must have),
    the position of the first and the facts. Returns their events, made in one go, when
    every line's fields are of the types an event's must be, its :time as the lines before
    had one or not, and its :index an integer above the one before (or none is read:
    history.jepsen); else None, having changed nothing: each is read by _event, to the
    same event or to its error."""
    if columns is None:
        return None
    types, fs, processes, values, times, indexes, errors, known = columns
    reading = facts.reading
    timed = reading.timed
    first_has_time = times[0] is not ABSENT
    if timed is None:
        timed = first_has_time
    if timed and (not first_has_time if known else {*map(type, times)} != {int}):
        return None  # not each has a :time, an integer
    if reading.indexed is False:
        indexes = range(position, position + len(types))
    else:
        if indexes[0] is None if known else {*map(type, indexes)} != {int}:
            return None
        ordered = [facts.last_index, *indexes] if facts.last_index.__class__ is int else indexes
        if any(map(ge, ordered, ordered[1:])):
            return None
    if not known and (
        not _TYPES.issuperset(types)
        or not _PROCESS_CLASSES.issuperset(map(type, processes))
        or {*map(type, fs)} != {str}
        or not all(fs)
    ):
        return None
    events: list[Event] = [
        {"index": index, "time": time, "process": process, "type": kind, "f": f, "value": value}
        for index, time, process, kind, f, value in zip(
            indexes,
            times if timed else range(position, position + len(types)),
            processes,
            types,
            fs,
            values,
            strict=True,
        )
    ]
    if values[0] is ABSENT if known else ABSENT in values:
        for event in events:
            if event["value"] is ABSENT:  # an ok's absent value is its invoke's
                if event["type"] == "ok":
                    del event["value"]
                else:
                    event["value"] = None
    if errors.count(None) != len(errors):
        for event, error in zip(events, errors, strict=True):
            if error is not None:
                event["error"] = error
    facts.timed(first_has_time)  # as the first event would have it (the others agree)
    if reading.indexed is not False:
        facts.numbered(list(indexes))
    facts.take_keys(events)
    return events


def _event(
    fields: dict[str, Any],
    position: int,
    facts: Facts,
    path: str,
    line_no: int,
    known: bool = False,
) -> Event:
    # Fields by their keywords' names; `known`: every one is among _READ.
    require(fields, _REQUIRED, path, line_no)
    event: Event = {
        "index": facts.number(fields.get("index"), position, line_no),
        "time": fields["time"] if facts.timed("time" in fields) else position,
        "process": name_of(fields["process"]),
        "type": name_of(fields["type"]),
        "f": name_of(fields["f"]),
    }
    check_event(event, path, line_no)
    if "value" in fields or event["type"] != "ok":  # an ok's absent value is its invoke's
        event["value"] = fields.get("value")
    if "key" in fields:
        event["key"] = fields["key"]
    if fields.get("error") is not None:
        event["error"] = name_of(fields["error"])
    if not known:
        for name in fields.keys() - _READ:
            event[name] = fields[name]
    return event
