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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from checkers.queue.reader import DRAIN, Batch, Message, Observation, Records, Send, pairs

Case = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ObservationIndex:
    """Every value seen at an offset, indexed both ways. Per partition: per offset the
    first observation there (`at`), per message its first observation (`of`) and the
    first at each other offset it was seen at (`elsewhere`); per (partition, offset) the
    first observation of each other message seen there (`others`)."""

    at: dict[int, dict[int, Observation]]
    of: dict[int, dict[Message, Observation]]
    others: dict[tuple[int, int], dict[Message, Observation]]
    elsewhere: dict[int, dict[Message, dict[int, Observation]]]


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
        index.others.setdefault((partition, offset), {}).setdefault(message, o)
    first = of.setdefault(message, o)
    if first[1] != offset:
        index.elsewhere.setdefault(partition, {}).setdefault(message, {}).setdefault(offset, o)


def positions(index: ObservationIndex, partition: int, message: Message) -> Iterator[Observation]:
    """Takes an ObservationIndex, a partition and a message. Yields the first observation
    of the message at each offset of the partition it was seen at, the first one first."""
    first = index.of.get(partition, {}).get(message)
    if first is None:
        return
    yield first
    yield from index.elsewhere.get(partition, {}).get(message, {}).values()


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


def unexpected_cases(sends: Iterable[Send], index: ObservationIndex) -> list[Case]:
    """Takes the sends and the ObservationIndex. Returns each message read in a partition no
    send to it attempted, or whose sends there all failed (kafka.clj g1a-cases, writer-of)."""
    attempted: dict[int, dict[Message, bool]] = {}  # message -> whether some send did not fail
    for s in sends:
        mine = attempted.setdefault(s.partition, {})
        mine[s.value] = mine.get(s.value, False) or s.outcome != "fail"
    cases = [
        _observer(o)
        for partition, of in index.of.items()
        for message, o in of.items()
        if not attempted.get(partition, {}).get(message, False)
    ]
    if not cases:
        return cases
    sent_to: dict[Message, int] = {}
    for partition, mine in attempted.items():
        for message in mine:
            sent_to.setdefault(message, partition)
    for c in cases:
        c["write"] = _write(c, attempted, sent_to)
    return cases


def _write(c: Case, attempted: dict[int, dict[Message, bool]], sent_to: dict[Message, int]) -> str:
    if c["value"] in attempted.get(c["partition"], {}):
        return "failed"
    elsewhere = sent_to.get(c["value"])
    return "never sent" if elsewhere is None else f"sent to partition {elsewhere}"


def duplicate_cases(index: ObservationIndex) -> list[Case]:
    """Takes an ObservationIndex. Returns each message seen at two or more offsets of its
    partition, with the first observer of each (kafka.clj duplicate-cases)."""
    cases = []
    for partition, messages in index.elsewhere.items():
        for value, others in messages.items():
            where = [index.of[partition][value], *others.values()]
            cases.append(
                {
                    "partition": partition,
                    "value": value,
                    "positions": [[o[0], o[1]] for o in where],
                    "observed": [_observer(o) for o in where],
                }
            )
    return cases


def inconsistent_offset_cases(index: ObservationIndex) -> list[Case]:
    """Takes an ObservationIndex. Returns each (partition, offset) seen holding two or more
    messages, with the first observer of each (kafka.clj version-orders: its :errors)."""
    cases = []
    for (partition, offset), others in sorted(index.others.items()):
        which = [index.at[partition][offset], *others.values()]
        cases.append(
            {
                "partition": partition,
                "offset": offset,
                "values": [o[2] for o in which],
                "observed": [_observer(o) for o in which],
            }
        )
    return cases


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
