"""What each consumer holds, so that a consumer op is a boundary only for the partitions
whose position it may have changed.

A boundary (a Reposition's partitions, a Poll's `moved`) says: from here on, this
consumer's position in these partitions is not known from what it read before. Kafka
keeps a consumer's position in a partition for as long as the partition stays assigned
to it, so the reader tracks, per process, the partitions its consumer holds (None: not
known) and how it came by them (assign or subscribe):

- assign replaces the assignment: the partitions added or dropped are boundaries; one it
  keeps reads on (kafka.clj's poll-skip+nonmonotonic-cases keeps the last reads of the
  keys still assigned, `select-keys last-reads (:value op)`, whatever came before, and
  kafka_test.clj's poll-skip-test and nonmonotonic-poll-test assert it across an assign
  of [:x :y]). A partition the consumer polled or sought without an assign recording it
  is held all the same, so an assign that drops it is a boundary too. An assign with
  Jepsen's `seek-to-beginning?` is a boundary for every partition it names: the
  positions restart.
- subscribe naming partitions (Jepsen's keys) keeps the held ones it names and drops the
  others, as kafka.clj does, after an assign or a subscribe alike (those tests assert it
  across a subscribe to [:x :y]). Subscribing to the topic the consumer already
  subscribes to changes nothing by itself: the group keeps the assignment until a
  rebalance, and a rebalance is recorded on the poll it happened in (our `rebalanced`,
  Jepsen's :rebalance-log). Subscribing to a whole topic after an assign, or after polls
  with no subscribe before (the queue workload's first poll assigns every partition), is
  a boundary for every held partition: Kafka's assign and subscribe exclude each other,
  and the group hands the topic's partitions out afresh.
- a rebalance moves the partitions it names: assigned ones are then held, revoked or
  lost ones are not, and ones of no stated kind are held for all we know.
- a crash (Jepsen's :crash op: the client is torn down and a fresh one opened, kafka.clj
  crash-client-gen and final-polls) leaves a consumer that holds nothing, at no position.
  It ends info, so Jepsen goes on under a new process, which starts holding nothing too.
- a consumer op that did not complete ok may have moved or reassigned anything: what the
  consumer holds is then not known, and every later change is a boundary everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checkers.queue.records import ASSIGN, SUBSCRIBE
from checkers.queue.values import QueueValues
from history import Event, Keyword, short

NOTHING: frozenset[int] = frozenset()
LOST = frozenset({"revoked", "lost"})
"""The kinds of rebalance event after which the consumer no longer holds the partitions."""


class Holdings:
    """Per process, the partitions its consumer holds (None: not known) and whether it
    last chose them by assign or subscribe; and which of the two any consumer used."""

    def __init__(self, values: QueueValues) -> None:
        self.values = values
        self.held: dict[Any, set[int] | None] = {}  # a process never seen holds nothing
        self.via: dict[Any, str] = {}
        self.sub_via: set[str] = set()

    def polled(self, process: Any, partitions: Iterable[int]) -> None:
        """Takes a process and partitions its consumer polled or sought: it holds them."""
        held = self.held.get(process)
        if held is not None:
            held.update(partitions)
        elif process not in self.held:
            self.held[process] = set(partitions)

    def poll(self, process: Any, done: Event, partitions: Iterable[int]) -> frozenset[int]:
        """Takes a poll's process, its completion and the partitions it returned records
        of. Returns the partitions the group moved during it (see rebalanced); it holds
        those it polled."""
        # The common case, no rebalance, decided quickly: a history holds millions of polls.
        moved = NOTHING
        if "rebalanced" in done or "rebalance-log" in done:
            moved = self.rebalanced(process, done)
        self.polled(process, partitions)
        return moved

    def rebalanced(self, process: Any, done: Event) -> frozenset[int]:
        """Takes a consumer op's completion. Returns the partitions the group moved during
        it, as `rebalanced` or Jepsen's :rebalance-log says, and holds them accordingly."""
        ours, jepsens = done.get("rebalanced"), done.get("rebalance-log")
        if ours is None and jepsens is None:
            return NOTHING
        gained, lost = self._ours(done, ours) if ours is not None else (set(), set())
        if jepsens is not None:
            more_gained, more_lost = self._jepsens(done, jepsens)
            gained |= more_gained
            lost |= more_lost
        self.move(process, gained, lost)
        return frozenset(gained | lost)

    def move(self, process: Any, gained: set[int], lost: set[int]) -> None:
        """Takes a process and the partitions a rebalance gave and took from its consumer."""
        held = self.held.get(process, set())
        if held is not None:
            self.held[process] = (held - lost) | gained

    def assigned(self, process: Any, wanted: set[int], restart: bool) -> frozenset[int] | None:
        """Takes a process, the partitions an ok assign gave it, and whether it sought to
        their beginning. Returns the partitions that are boundaries (None: all)."""
        held = self.held.get(process, NOTHING)
        self.held[process], self.via[process] = set(wanted), ASSIGN
        self.sub_via.add(ASSIGN)
        if held is None:
            return None
        return frozenset(held | wanted if restart else held ^ wanted)

    def subscribed(self, process: Any, named: set[int] | None) -> frozenset[int] | None:
        """Takes a process and the partitions an ok subscribe named (None: whole topics).
        Returns the partitions that are boundaries (None: all)."""
        held = self.held.get(process, set())
        subscribed = self.via.get(process) == SUBSCRIBE
        self.via[process] = SUBSCRIBE
        self.sub_via.add(SUBSCRIBE)
        if held is None:
            return None
        # Named keys keep what they name; a whole topic keeps all after a subscribe and
        # nothing after an assign (module docstring).
        gone = held - named if named is not None else set() if subscribed else set(held)
        self.held[process] = held - gone
        return frozenset(gone)

    def crashed(self, process: Any) -> None:
        """Takes a process whose client crashed: its fresh consumer holds nothing."""
        self.held[process] = set()
        self.via.pop(process, None)

    def unknown(self, process: Any) -> None:
        """Takes a process whose consumer op did not complete ok: it may hold anything."""
        self.held[process] = None

    def _ours(self, done: Event, moves: Any) -> tuple[set[int], set[int]]:
        # {"assigned": [...], "revoked": [...]}, as the queue workload records a rebalance.
        if not isinstance(moves, dict) or not moves.keys() <= {"assigned", "revoked"}:
            problem = f"rebalanced {short(moves)} is not a map of assigned and revoked"
            self.values.malformed(done, problem)
        gained = self.values.partition_list(done, moves.get("assigned", []), "rebalanced assigned")
        lost = self.values.partition_list(done, moves.get("revoked", []), "rebalanced revoked")
        return gained, lost

    def _jepsens(self, done: Event, log: Any) -> tuple[set[int], set[int]]:
        # kafka.clj's namespace docstring: "a vector of rebalancing events ... like
        # {:keys [k1 k2 ...]}", with a :type (:assigned, :revoked, :lost) in its suites'
        # clients; some suites split it as {:before [...] :during [...]}.
        if isinstance(log, dict):
            before, during = _field(log, "before", []), _field(log, "during", [])
            log = before + during if isinstance(before, list) and isinstance(during, list) else None
        if not isinstance(log, list) or not all(isinstance(e, dict) for e in log):
            self.values.malformed(done, f"rebalance-log {short(log)} is not a list of maps")
        gained: set[int] = set()
        lost: set[int] = set()
        for entry in log:
            keys = self.values.partition_list(done, _field(entry, "keys", []), "rebalance keys")
            kind = _field(entry, "type", None)
            kind = kind.name if kind.__class__ is Keyword else kind
            (lost if kind in LOST else gained).update(keys)  # of no stated kind: held
        return gained, lost


def _field(entry: dict[Any, Any], name: str, default: Any) -> Any:
    # A map read from JSON has string keys, one read from EDN keywords.
    return entry.get(name, entry.get(Keyword(name), default))
