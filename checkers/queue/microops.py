"""Ops whose value is a list of micro-ops, Jepsen's shape, read into sends and polls.

jepsen.tests.kafka (kafka.clj, the namespace docstring: "Reads and writes (and mixes
thereof) are encoded as a vector of micro-operations") invokes `[:send key value]` and
`[:poll]` micro-ops in an op of f :send, :poll or :txn, and completes them in place as
`[:send key [offset value]]` (offset nil when unknown) and `[:poll {key [[offset value]
...]}]`. Names may be EDN keywords or strings, so a JSON-lines twin reads alike. An ok
completion holds every micro-op completed; an info or fail one may hold some completed
and the rest as invoked (its value is the client's op as far as it got), or none.

A micro-op poll's records are read as a one-message poll's; a send's key, message and
offset as a one-message send's (checkers/queue/values.py).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from checkers.queue.records import POLL, SEND, Message, Records, pairs
from checkers.queue.values import QueueValues
from history import Event, Keyword, short

MicroSend = tuple[int, int, Message, int | None]
"""A send micro-op: (its place in its op's value, partition, message, the offset Kafka
acknowledged it at, or None when not acknowledged or not known)."""


@dataclass(slots=True)
class MicroOps:
    """What one op's micro-ops did: its sends in order, the records of each poll that
    returned, in order, and whether it asked to poll at all."""

    sends: list[MicroSend] = field(default_factory=list)
    polls: list[dict[int, Records]] = field(default_factory=list)
    polled: bool = False


def read_micro_ops(values: QueueValues, invoke: Event, completion: Event | None) -> MicroOps:
    """Takes an op whose invoke value is a list of micro-ops, and its completion (None:
    still in flight). Returns what its micro-ops did; refuses a micro-op of another shape,
    or an ok completion whose micro-ops are not its invoke's, completed."""
    asked: list[Any] = invoke["value"]
    done = _completed(values, asked, completion)
    if done is not None and completion is not None and len(done) != len(asked):
        # Jepsen's analysis reads completions alone (kafka.clj op-reads, op-writes):
        # kafka_test.clj's int-nonmonotonic-poll-test invokes one poll and completes two.
        problem = f"value {short(done)} completes other micro-ops than the invoke's {short(asked)}"
        values.odd(completion, problem)
        asked = [
            ["send", m[1], _sent(m[2])] if _name(values, completion, m) == SEND else m for m in done
        ]
    ops = MicroOps()
    for place, mop in enumerate(asked):
        name = _name(values, invoke, mop)
        result = None
        if done is not None and completion is not None:
            result = done[place]
            if _name(values, completion, result) != name:
                problem = f"micro-op {short(result)} does not complete {short(mop)}"
                values.malformed(completion, problem)
        if name == SEND:
            ops.sends.append(_send(values, invoke, mop, completion, result, place))
            continue
        ops.polled = True
        if completion is not None and result is not None and len(result) > 1:
            ops.polls.append(_poll(values, completion, result))
    return ops


def merged(polls: list[dict[int, Records]]) -> dict[int, Records]:
    """Takes the records of several polls of one consumer, in order. Returns them as one
    poll's: per partition, every record in the order received."""
    if len(polls) == 1:
        return polls[0]
    joined: dict[int, Records] = {}
    for records in polls:
        for partition, rs in records.items():
            before = joined.get(partition)
            joined[partition] = rs if before is None else _concatenated(before, rs)
    return joined


def _concatenated(first: Records, then: Records) -> Records:
    if isinstance(first, array) and isinstance(then, array):
        return first + then
    return [*pairs(first), *pairs(then)]


def _completed(values: QueueValues, asked: list[Any], completion: Event | None) -> list[Any] | None:
    # The completion's micro-ops, or None when it holds none (still in flight, no value:
    # an EDN ok without :value is its invoke's, or an info or fail that returned nothing).
    # Other micro-ops than the invoke's (another number of them) are returned too, for
    # read_micro_ops to read as Jepsen's analysis does, with a warning.
    if completion is None or "value" not in completion:
        return None
    done = completion["value"]
    if done.__class__ is list and len(done) == len(asked):
        return list(done)
    if done.__class__ is list and done and all(_is_micro_op(m) for m in done):
        return list(done)
    if completion["type"] == "ok":
        values.malformed(
            completion,
            f"ok value {short(done)} is not the invoke's {len(asked)} micro-ops, completed",
        )
    return None


def _is_micro_op(mop: Any) -> bool:
    head = mop[0] if isinstance(mop, list | tuple) and mop else None
    return (head.name if head.__class__ is Keyword else head) in (SEND, POLL)


def _sent(value: Any) -> Any:
    # A completed send's message: [offset, message], or the message alone (kafka.clj
    # op-writes-helper: "Values can be either a literal value or a [offset value] pair").
    return value[1] if isinstance(value, list | tuple) and len(value) == 2 else value


def _name(values: QueueValues, event: Event, mop: Any) -> str:
    head = mop[0] if isinstance(mop, list | tuple) and mop else None
    name = head.name if head.__class__ is Keyword else head
    if name not in (SEND, POLL) or (name == SEND and len(mop) != 3):
        values.malformed(event, f"micro-op {short(mop)} is not [send, key, value] or [poll]")
    return str(name)


def _send(
    values: QueueValues,
    invoke: Event,
    mop: list[Any],
    completion: Event | None,
    result: list[Any] | None,
    place: int,
) -> MicroSend:
    partition = values.partition(invoke, mop[1])
    message = values.message(invoke, mop[2], "send")
    if result is None or completion is None:
        return (place, partition, message, None)
    if values.partition(completion, result[1]) != partition:
        problem = f"send {short(result)} names another partition than {short(mop)}"
        values.malformed(completion, problem)
    acknowledged, offset = result[2], None
    if isinstance(acknowledged, list | tuple) and len(acknowledged) == 2:
        at, acknowledged = acknowledged
        offset = None if at is None else values.offset(completion, at)
    if acknowledged != message or acknowledged.__class__ is not message.__class__:
        acknowledged = values.message(completion, acknowledged, "send acknowledges")
        problem = f"send acknowledges {short(acknowledged)}, not the sent {short(message)}"
        values.odd(completion, problem)
    # The completion's message, as Jepsen's analysis reads a completion (kafka.clj
    # op-writes reads completions only).
    return (place, partition, acknowledged, offset)


def _poll(values: QueueValues, completion: Event, result: list[Any]) -> dict[int, Records]:
    received = result[1]
    if len(result) != 2 or not isinstance(received, dict):
        problem = f"poll {short(result)} is not [poll, {{partition: records}}]"
        values.malformed(completion, problem)
    records = {
        values.partition(completion, p): values.records(completion, rs)
        for p, rs in received.items()
    }
    if len(records) != len(received):
        values.malformed(completion, f"poll {short(result)} names a partition twice")
    return records
