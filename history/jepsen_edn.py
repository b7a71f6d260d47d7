"""The reader of Jepsen's history.edn: a map per event, one per line or all in one vector,
read event by event (history.edn.history_forms).

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

from collections.abc import Iterable, Iterator
from typing import Any, Final

from history.edn import EdnError, history_forms
from history.edn_values import Keyword, Tagged, name_of
from history.events import Event, HistoryError, check_event, require
from history.jepsen import Facts, Reading

_REQUIRED: Final = ("type", "process", "f")
# Fields read above with a meaning of their own; any other keyword field (Jepsen's Kafka
# ops carry :rebalance-log and :seek-to-beginning?) is kept under its name, as JSON's are.
_READ: Final = frozenset(("index", "time", "process", "type", "f", "value", "key", "error"))


def read_edn_events(
    lines: Iterable[tuple[int, str]], path: str, reading: Reading, budget: int
) -> Iterator[tuple[int, Event]]:
    """Takes a history.edn's numbered lines, the facts to read it with and a budget in
    bytes for each event. Yields (line, event) for each event. Raises HistoryError for
    one that is malformed, and Reread when a fact guessed proves wrong."""
    facts = Facts(reading)
    forms = history_forms(lines, budget)
    position = 0
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
        yield line_no, facts.take_key(_event(form, position, facts, path, line_no))
        position += 1
    facts.finish()


def _event(form: dict[Any, Any], position: int, facts: Facts, path: str, line_no: int) -> Event:
    # The map's keywords' names, looked up quickly as strings (the keyword :time as "time").
    fields = {k.name: v for k, v in form.items() if k.__class__ is Keyword}
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
    for name in fields.keys() - _READ:
        event[name] = fields[name]
    return event
