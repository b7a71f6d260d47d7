"""What Jepsen's two formats, history.edn and text logs, share: the facts only a whole
history decides.

Three facts are properties of the whole history:

- keyed: jepsen.independent writes a keyed op's value as [k v]. A plain two-element vector
  is read so only when every client event (an integer process, no :key) has one, none is
  a tagged literal, and the values cannot be unkeyed cas pairs ([old new]: when every
  client op is a cas, each value's second element must be a pair too). A tagged
  `#jepsen.independent/tuple [k v]` is always a key and a value.
- timed (EDN): events are ordered by their :time only when every event has one; else
  every event is ordered by its position, never some by one and some by the other.
- indexed (EDN): events are numbered by their :index only when every event has one and
  each follows the one before; else every event is numbered by its position, as
  jepsen.history numbers ops without indexes. Jepsen's own histories are numbered
  densely; a test's hand-written one may repeat an index (kafka_test.clj's "txn abort"
  writes `(o 1 1 ...)` after `(o 1 0 ...)`), which Jepsen's analysis reads all the same:
  then a warning names the line where the numbering broke.

A reader streams: it guesses each fact from the first event that can tell, and checks
the guess on every event after. A guess proved wrong raises Reread with the facts as far
as they are known, and the history is read again from its first line with them
(history.core.load). Jepsen's own histories are read once: their first client op is keyed
exactly when all are, every event has a :time or none has, and their indexes increase.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from history.edn_values import Tagged
from history.events import Event

INDEPENDENT_TUPLE = "jepsen.independent/tuple"


@dataclass(frozen=True, slots=True)
class Reading:
    """The facts a Jepsen history is read with; None: not known, guessed while reading."""

    keyed: bool | None = None
    timed: bool | None = None
    indexed: bool | None = None
    renumbered: int = 0
    """The line whose :index did not follow the one before (or was missing), when events
    are numbered by position for it; 0 when none had to be."""

    def warnings(self) -> list[str]:
        """Returns what was read otherwise than the history says, a sentence each."""
        if not self.renumbered:
            return []
        return [
            f"line {self.renumbered}: its :index is missing or does not follow the one "
            "before: every event is numbered by its position instead, as Jepsen numbers "
            "the ops of a history without indexes"
        ]


class Reread(Exception):
    """A guess proved wrong: read the history again, from its first line, with `reading`."""

    def __init__(self, reading: Reading) -> None:
        super().__init__(f"read again with {reading}")
        self.reading = reading


def is_pair(value: Any) -> bool:
    """Whether a value is a plain two-element vector."""
    return isinstance(value, list) and len(value) == 2


class Facts:
    """The facts of one reading of a history, guessed and checked as its events come."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.clients = 0
        self.pairs = True  # every client value so far is a plain pair
        self.tagged = False  # some client value is a tagged literal
        self.cas_only = True  # every client op so far is a cas
        self.cas_pairs = True  # every cas value's second element is a pair
        self.last_index: Any = None

    def timed(self, has_time: bool) -> bool:
        """Takes whether an event has a :time. Returns whether times order the history."""
        timed = self.reading.timed
        if timed is None:
            self.reading = replace(self.reading, timed=has_time)
            return has_time
        if timed and not has_time:
            raise Reread(replace(self.reading, timed=False))
        return timed

    def number(self, index: Any, position: int, line: int) -> Any:
        """Takes an event's :index (None when it has none), its position and its line.
        Returns the number the event is read with: its :index while every event so far
        has one, each above the one before; else its position."""
        indexed = self.reading.indexed
        if indexed is False:
            return position
        if index is None:
            if indexed is None and position == 0:  # no :index from the first: by position
                self.reading = replace(self.reading, indexed=False)
                return position
            raise Reread(replace(self.reading, indexed=False, renumbered=line))
        if indexed is None:
            self.reading = replace(self.reading, indexed=True)
        elif (
            index.__class__ is int and self.last_index.__class__ is int and index <= self.last_index
        ):
            raise Reread(replace(self.reading, indexed=False, renumbered=line))
        self.last_index = index
        return index

    def numbered(self, indexes: list[int]) -> None:
        """Takes the :index of each event of a batch, each an integer above the one before
        and the last numbered. Records them as number would, one after another."""
        if self.reading.indexed is None:
            self.reading = replace(self.reading, indexed=True)
        self.last_index = indexes[-1]

    def take_key(self, event: Event) -> Event:
        """Takes an event. Returns it with its key moved out of its value: a tagged tuple's
        always, a plain pair's when the history is keyed."""
        value: Any = event.get("value")
        if event["process"].__class__ is int and "key" not in event:
            self._count(event["f"], value)
            if self.reading.keyed and is_pair(value):
                event["key"], event["value"] = value
                return event
        if value.__class__ is Tagged and value.tag == INDEPENDENT_TUPLE and is_pair(value.value):
            event["key"], event["value"] = value.value
        return event

    def take_keys(self, events: list[Event]) -> None:
        """Takes events in history order whose values were read from JSON (never a tagged
        literal), none with a :key. Moves each key out of its value as take_key would, one
        event after another: the facts come out the same, and a guess proved wrong raises
        the same Reread, only once the batch is counted rather than at its event."""
        clients = [event for event in events if event["process"].__class__ is int]
        if clients and self.reading.keyed is None:  # the first client event makes the guess
            self.take_key(clients[0])
            clients = clients[1:]
        if not clients:
            return
        self.clients += len(clients)
        # Each fact only ever turns false, and cas_pairs tells only while pairs and
        # cas_only hold (_keyed): none is looked at again once it cannot change the guess.
        if self.pairs:
            self.pairs = all(is_pair(event["value"]) for event in clients)
        if self.cas_only:
            self.cas_only = [event["f"] for event in clients].count("cas") == len(clients)
        if self.pairs and self.cas_only and self.cas_pairs:
            self.cas_pairs = all(is_pair(event["value"][1]) for event in clients)
        if self.reading.keyed:
            if not self.pairs:
                raise Reread(replace(self.reading, keyed=False))
            for event in clients:
                event["key"], event["value"] = event["value"]

    def finish(self) -> None:
        """Checks the guesses once every event is read: raises Reread if one was wrong."""
        keyed = self.clients > 0 and self._keyed()
        if keyed != (self.reading.keyed is True):
            raise Reread(replace(self.reading, keyed=keyed))

    def _count(self, f: str, value: Any) -> None:
        self.clients += 1
        pair = is_pair(value)
        self.pairs = self.pairs and pair
        self.tagged = self.tagged or value.__class__ is Tagged
        if f != "cas":
            self.cas_only = False
        elif pair:
            self.cas_pairs = self.cas_pairs and is_pair(value[1])
        if self.reading.keyed is None:
            self.reading = replace(self.reading, keyed=self._keyed())
        elif self.reading.keyed and not (self.pairs and not self.tagged):
            raise Reread(replace(self.reading, keyed=False))

    def _keyed(self) -> bool:
        return self.pairs and not self.tagged and (self.cas_pairs or not self.cas_only)
