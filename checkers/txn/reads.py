"""The transaction anomalies a single read or a single transaction shows, without the
dependency graph: aborted reads (G1a), precommitted reads and int-send-skip.

Definitions, from Jepsen's Kafka checker (jepsen.tests.kafka):

- G1a, aborted read (`g1a-cases`: "a known-failed write is nonetheless visible to a
  committed read"): a poll of an op that ended ok received a message whose every send to
  that partition was in an op that failed (aborted, or a definite error).
- precommitted-read (`precommitted-read-cases`: "a transaction which observed its own
  writes ... in Kafka's model, sent values are supposed to be invisible to *all* pollers
  until their producing txn commits"): an op polled a message it sent itself, whatever
  its outcome; its commit comes after its last micro-op, so the read preceded it. This is
  the only precommitted read one history proves by itself: a poll completed after another
  transaction's invoke may have followed its commit, whose acknowledgement was slow; and
  a read that completed before its writer was even invoked is a wr edge against real
  time, which the G1c-realtime finder reports (checkers/txn/cycles.py).
- int-send-skip (`int-send-skip+nonmonotonic-cases`, :skip): within one op, two
  successive sends to one partition landed with another op's message observed between
  them. Kafka allows it (kafka.clj `allowed-error-types`: "transaction writes interleave
  constantly in the Kafka transaction model"); it is reported, for the policy to judge.
  Sends that go backwards are the queue checker's int-nonmonotonic-send.

Each finder returns plain cases (op indexes, partition, offsets, messages) with one line
of prose, `explanation`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from checkers.queue.reader import Message, QueueHistory, Send
from checkers.txn import words
from checkers.txn.reader import TxnOp
from checkers.txn.versions import Read, VersionOrder, Writers, landed_at

Case = dict[str, Any]
SKIPPED_SHOWN = 3


class Skipped(NamedTuple):
    """A message observed between two sends of one op: its offset, and its writer's
    index (None: no send wrote it)."""

    offset: int
    value: Message
    writer: int | None


def aborted_read_cases(
    history: QueueHistory, writer_of: Writers, ops: dict[int, TxnOp], records: list[Read]
) -> list[Case]:
    """Takes a QueueHistory, its Writers, every transaction by index and every record
    polled (versions.reads). Returns each record an ok poll received whose writer failed
    (G1a)."""
    cases = []
    for poll, p, offset, m in records:
        writer = writer_of.get((p, m))
        if poll.outcome != "ok" or writer is None or writer.outcome != "fail":
            continue
        reader = ops[poll.index]
        line = (
            f"{words.txn(reader)} polled {words.message(m)} at partition "
            f"{words.partition(p, history.names)} offset {offset}; {words.txn(ops[writer.index])}"
            " sent it, and failed (aborted)"
        )
        cases.append(
            _case(poll.index, poll.process, p, m, offset)
            | {"writer": writer.index, "writer_process": writer.process, "explanation": line}
        )
    return cases


def precommitted_read_cases(
    history: QueueHistory, ops: dict[int, TxnOp], records: list[Read]
) -> list[Case]:
    """Takes a QueueHistory, every transaction by index and every record polled
    (versions.reads). Returns, for each op that polled a message it sent itself, the first
    such record."""
    pollers = {poll.index for poll, _, _, _ in records}
    own: dict[int, set[tuple[int, Message]]] = {}
    for s in history.sends:
        if s.index in pollers:
            own.setdefault(s.index, set()).add((s.partition, s.value))
    cases = []
    reported: set[int] = set()
    for poll, p, offset, m in records:
        if poll.index in reported or (p, m) not in own.get(poll.index, ()):
            continue
        reported.add(poll.index)
        line = (
            f"{words.txn(ops[poll.index])} sent {words.message(m)} to partition "
            f"{words.partition(p, history.names)} and polled it, at offset {offset}, before "
            f"it could commit ({poll.outcome})"
        )
        case = _case(poll.index, poll.process, p, m, offset)
        cases.append(case | {"outcome": poll.outcome, "explanation": line})
    return cases


def int_send_skip_cases(
    history: QueueHistory,
    writer_of: Writers,
    orders: dict[int, VersionOrder],
    ops: dict[int, TxnOp],
) -> list[Case]:
    """Takes a QueueHistory, its Writers and version orders, and every transaction by
    index. Returns each pair of successive sends of one op to one partition with another
    op's message observed between their offsets."""
    cases = []
    for first, then, low, high in _successive_sends(history.sends, orders):
        p = first.partition
        skipped = [
            Skipped(o, m, _writer_index(writer_of, p, m)) for o, m in orders[p].between(low, high)
        ]
        others = [s for s in skipped if s.writer != first.index]
        if others:
            cases.append(_skip_case((first, low), (then, high), others, ops, history.names))
    return cases


def _successive_sends(
    sends: list[Send], orders: dict[int, VersionOrder]
) -> Iterator[tuple[Send, Send, int, int]]:
    # Sends come in invoke order, one op's together and in its order (queue_records.Send).
    last: dict[int, tuple[Send, int | None]] = {}
    index = None
    for s in sends:
        if s.index != index:
            index, last = s.index, {}
        at = landed_at(s, orders)
        before = last.get(s.partition)
        last[s.partition] = (s, at)
        if before is not None and before[1] is not None and at is not None and at > before[1]:
            yield before[0], s, before[1], at


def _writer_index(writer_of: Writers, p: int, m: Message) -> int | None:
    s = writer_of.get((p, m))
    return None if s is None else s.index


def _skip_case(
    first: tuple[Send, int],
    then: tuple[Send, int],
    skipped: list[Skipped],
    ops: dict[int, TxnOp],
    names: dict[int, str],
) -> Case:
    (s1, low), (s2, high) = first, then
    shown = skipped[:SKIPPED_SHOWN]
    between = ", ".join(
        f"{words.message(s.value)} at {s.offset}" + ("" if s.writer is None else f" (T{s.writer})")
        for s in shown
    )
    more = f" and {len(skipped) - len(shown)} more" if len(skipped) > len(shown) else ""
    line = (
        f"{words.txn(ops[s1.index])} sent {words.message(s1.value)} to partition "
        f"{words.partition(s1.partition, names)} at offset {low}, then "
        f"{words.message(s2.value)} at offset {high}; between them: {between}{more}"
    )
    return {
        "index": s1.index,
        "process": s1.process,
        "partition": s1.partition,
        "values": [s1.value, s2.value],
        "offsets": [low, high],
        "skipped": [{"offset": s.offset, "value": s.value, "writer": s.writer} for s in shown],
        "skipped_count": len(skipped),
        "explanation": line,
    }


def _case(index: int, process: int | str, p: int, m: Message, offset: int) -> Case:
    return {"index": index, "process": process, "partition": p, "offset": offset, "value": m}
