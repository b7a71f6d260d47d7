"""The queue checker's finders of what observers saw at offsets: unexpected messages,
duplicates, inconsistent offsets and producers' sends going backwards. Each returns small
dicts a person can verify against the history: op indexes, partitions, offsets, values.

A message is identified by its partition and its value, as Jepsen's Kafka checker keys
everything (jepsen.tests.kafka, `version-orders`, `writer-of`): one value sent to two
partitions is two messages. The consumers' finders are in checkers/queue/consumers.py,
the lost and unseen ones in checkers/queue/losses.py; checkers/queue/checker.py decides what
the cases mean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from checkers.queue.reader import DRAIN, Batch, Message, Observation, Records, Send, pairs

Case = dict[str, Any]
CASE_ITEMS = 20
"""A case lists at most this many observers (of one message's offsets, or one offset's
messages), then says how many more there were: one case never holds a million."""


class Cases(Sequence[Case]):
    """Cases kept as what they are made from (an Observation, a Step, a key the index
    already holds) and made into dicts only when read: a history of a million anomalies
    keeps a million references to what it holds, not a million dicts (the checker reads
    the first few and the count)."""

    __slots__ = ("make", "sources")

    def __init__(self, sources: list[Any], make: Callable[[Any], Case]) -> None:
        self.sources, self.make = sources, make

    def __len__(self) -> int:
        return len(self.sources)

    @overload
    def __getitem__(self, at: int) -> Case: ...

    @overload
    def __getitem__(self, at: slice) -> list[Case]: ...

    def __getitem__(self, at: int | slice) -> Case | list[Case]:
        if isinstance(at, slice):
            return [self.make(source) for source in self.sources[at]]
        return self.make(self.sources[at])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Cases({list(self)!r})"


@dataclass(frozen=True, slots=True)
class ObservationIndex:
    """Every value seen at an offset, indexed both ways. Per partition: per offset the
    first observation there (`at`), per message its first observation (`of`) and the
    first at each other offset it was seen at (`elsewhere`); per partition and offset the
    first observation of each other message seen there (`others`). Read `elsewhere` and
    `others` with firsts."""

    at: dict[int, dict[int, Observation]]
    of: dict[int, dict[Message, Observation]]
    others: dict[int, dict[int, Observation | dict[Message, Observation]]]
    elsewhere: dict[int, dict[Message, Observation | dict[int, Observation]]]
    # One other is kept as itself, several in a dict (firsts): a history of a million
    # inconsistent offsets holds a million observations, not a million dicts.


def index_observations(batches: Iterable[Batch]) -> ObservationIndex:
    """Takes observed batches, in history order. Returns their ObservationIndex."""
    index = ObservationIndex({}, {}, {}, {})
    settled: dict[int, dict[int, Message]] = {}
    for partition, by, op_index, records in batches:
        observe_records(index, settled, partition, by, op_index, records)
    return index


def observe_records(
    index: ObservationIndex,
    settled: dict[int, dict[int, Message]],
    partition: int,
    by: str,
    op_index: int,
    records: Records,
) -> None:
    """Takes an ObservationIndex being built, its settled records (per partition, offset ->
    message of each record first seen where its message was first seen, by one
    observation: seeing it again adds nothing) and one observer's records of a partition.
    Adds them."""
    at = index.at.setdefault(partition, {})
    of = index.of.setdefault(partition, {})
    known = settled.setdefault(partition, {})
    for offset, message in pairs(records):
        if known.get(offset, known) == message:  # the common case, decided quickly
            continue
        observe(index, at, of, (partition, offset, message, by, op_index))
        if at[offset] is of[message]:
            known[offset] = message


def observe(
    index: ObservationIndex,
    at: dict[int, Observation],
    of: dict[Message, Observation],
    o: Observation,
) -> None:
    """Takes an ObservationIndex being built, its `at` and `of` of the observation's
    partition, and an observation not settled yet. Adds it."""
    partition, offset, message = o[0], o[1], o[2]
    here = at.setdefault(offset, o)
    if here[2] != message:
        _add_first(index.others.setdefault(partition, {}), offset, o, 2)
    first = of.setdefault(message, o)
    if first[1] != offset:
        _add_first(index.elsewhere.setdefault(partition, {}), message, o, 1)


def _add_first(firsts_of: dict[Any, Any], key: Any, o: Observation, by: int) -> None:
    """Adds o under `key` as the first observation of its field `by` (the message, 2, or
    the offset, 1), unless one is there already: one alone as itself, several in a dict
    by that field."""
    held = firsts_of.get(key)
    if held is None:
        firsts_of[key] = o
    elif held.__class__ is dict:
        held.setdefault(o[by], o)
    elif held[by] != o[by]:
        firsts_of[key] = {held[by]: held, o[by]: o}


def firsts(held: Observation | dict[Any, Observation] | None) -> list[Observation]:
    """Takes what `others` or `elsewhere` holds under one key. Returns its observations."""
    if held is None:
        return []
    return list(held.values()) if isinstance(held, dict) else [held]


def positions(index: ObservationIndex, partition: int, message: Message) -> Iterator[Observation]:
    """Takes an ObservationIndex, a partition and a message. Yields the first observation
    of the message at each offset of the partition it was seen at, the first one first."""
    first = index.of.get(partition, {}).get(message)
    if first is None:
        return
    yield first
    yield from firsts(index.elsewhere.get(partition, {}).get(message))


def offset_range(
    index: ObservationIndex, partition: int, message: Message, *, drains: bool
) -> tuple[int, int] | None:
    """Takes an ObservationIndex, a message of a partition, and whether drains count.
    Returns the lowest and highest offsets it was seen at, or None if never seen."""
    first = index.of.get(partition, {}).get(message)
    if first is not None and message not in index.elsewhere.get(partition, {}):
        # Seen at one offset only, the common case, decided without a list.
        return None if first[3] == DRAIN and not drains else (first[1], first[1])
    offsets = [o[1] for o in positions(index, partition, message) if drains or o[3] != DRAIN]
    return (min(offsets), max(offsets)) if offsets else None


def unexpected_cases(sends: Iterable[Send], index: ObservationIndex) -> Cases:
    """Takes the sends and the ObservationIndex. Returns each message read in a partition no
    send to it attempted, or whose sends there all failed (kafka.clj g1a-cases, writer-of)."""
    attempted: dict[int, dict[Message, bool]] = {}  # message -> whether some send did not fail
    for s in sends:
        mine = attempted.setdefault(s.partition, {})
        mine[s.value] = mine.get(s.value, False) or s.outcome != "fail"
    found = [
        o
        for partition, of in index.of.items()
        for message, o in of.items()
        if not attempted.get(partition, {}).get(message, False)
    ]
    sent_to: dict[Message, int] = {}
    if found:
        for partition, mine in attempted.items():
            for message in mine:
                sent_to.setdefault(message, partition)

    def case(o: Observation) -> Case:
        return _observer(o) | {"write": _write(o, attempted, sent_to)}

    return Cases(found, case)


def _write(
    o: Observation, attempted: dict[int, dict[Message, bool]], sent_to: dict[Message, int]
) -> str:
    if o[2] in attempted.get(o[0], {}):
        return "failed"
    elsewhere = sent_to.get(o[2])
    return "never sent" if elsewhere is None else f"sent to partition {elsewhere}"


def duplicate_cases(index: ObservationIndex) -> Cases:
    """Takes an ObservationIndex. Returns each message seen at two or more offsets of its
    partition, with the first observer of each, CASE_ITEMS of them at most (kafka.clj
    duplicate-cases)."""
    found = [(p, value) for p, messages in index.elsewhere.items() for value in messages]

    def case(key: tuple[int, Message]) -> Case:
        partition, value = key
        others = firsts(index.elsewhere[partition][value])
        where = [index.of[partition][value], *others[: CASE_ITEMS - 1]]
        return _listed(
            {
                "partition": partition,
                "value": value,
                "positions": [[o[0], o[1]] for o in where],
                "observed": [_observer(o) for o in where],
            },
            1 + len(others),
        )

    return Cases(found, case)


def inconsistent_offset_cases(index: ObservationIndex) -> Cases:
    """Takes an ObservationIndex. Returns each (partition, offset) seen holding two or more
    messages, with the first observer of each, CASE_ITEMS of them at most (kafka.clj
    version-orders: its :errors)."""

    def case(key: tuple[int, int]) -> Case:
        partition, offset = key
        others = firsts(index.others[partition][offset])
        which = [index.at[partition][offset], *others[: CASE_ITEMS - 1]]
        return _listed(
            {
                "partition": partition,
                "offset": offset,
                "values": [o[2] for o in which],
                "observed": [_observer(o) for o in which],
            },
            1 + len(others),
        )

    found = [(p, offset) for p in sorted(index.others) for offset in sorted(index.others[p])]
    return Cases(found, case)


def _listed(case: Case, seen: int) -> Case:
    # A case lists CASE_ITEMS observers at most and says how many it left out.
    return case if seen <= CASE_ITEMS else case | {"more": seen - CASE_ITEMS}


def observed_offsets(index: ObservationIndex) -> dict[int, list[int]]:
    """Takes an ObservationIndex. Returns, per partition, the sorted offsets anyone saw a
    value at."""
    return {partition: sorted(at) for partition, at in index.at.items()}


def _observer(o: Observation) -> Case:
    partition, offset, value, by, index = o
    return {"partition": partition, "offset": offset, "value": value, "by": by, "index": index}


def send_offset(s: Send, index: ObservationIndex) -> int | None:
    """Takes a send and the ObservationIndex. Returns the offset it landed at: the
    acknowledged one, else the lowest its message was read at in its partition, else None."""
    if s.offset is not None:
        return s.offset
    if s.outcome == "fail":
        return None
    seen = offset_range(index, s.partition, s.value, drains=True)
    return None if seen is None else seen[0]


def nonmonotonic_send_cases(sends: Iterable[Send], index: ObservationIndex) -> list[Case]:
    """Takes the sends and the ObservationIndex. Returns each send (ok, or info once read)
    at or below its process's previous one in the partition (kafka.clj nonmonotonic-send)."""
    last: dict[tuple[int | str, int], tuple[Send, int]] = {}
    cases = []
    for s in sends:
        offset = s.offset if s.offset is not None else send_offset(s, index)
        if offset is None:
            continue
        prior = last.get((s.process, s.partition))
        if prior is not None and offset <= prior[1]:
            cases.append(
                {
                    "process": s.process,
                    "partition": s.partition,
                    "prior_offset": prior[1],
                    "prior_index": prior[0].index,
                    "prior_value": prior[0].value,
                    "offset": offset,
                    "index": s.index,
                    "value": s.value,
                    "outcome": s.outcome,
                }
            )
        last[s.process, s.partition] = (s, offset)
    return cases


def within_one_op(cases: Iterable[Case]) -> tuple[list[Case], list[Case]]:
    """Takes cases of two steps (`prior_index`, `index`). Returns those whose steps are in
    two ops, and those whose steps are both in one op (Jepsen's int- kinds)."""
    across: list[Case] = []
    within: list[Case] = []
    for c in cases:
        (within if c["prior_index"] == c["index"] else across).append(c)
    return across, within
