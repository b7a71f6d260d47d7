"""A transactional queue history read twice over: the queue checker's records (sends,
polls, drains) and, beside them, one TxnOp per send, poll or txn op with its times.

The transaction checkers (checkers/txn/reads.py, txn_graph.py, txn_cycles.py) need what
the queue records leave out: when each op was invoked and completed, for the real-time
order, and every op's outcome, including a poll-only op's invoke time (a Poll keeps only
its completion's). One op is one transaction of one or more micro-ops, as in Jepsen's
Kafka workload (jepsen.tests.kafka, the namespace docstring: ":txn indicates a
general-purpose transaction"); a one-message send or poll of our own workload is a
transaction of one micro-op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checkers.queue.reader import POLL, SEND, TXN, QueueHistory, QueueReader, Stream
from history import Event, pair_invocations

TXN_FS = frozenset({SEND, POLL, TXN})
"""The ops that are transactions: a drain, assign or crash is not one."""


@dataclass(slots=True)
class TxnOp:
    """One transaction: its invoke's index (its name), process and time, its outcome (ok,
    fail, or info: crashed, or still in flight at the end) and, for an ok one, its
    completion's time (an info one may take effect at any time after its invoke, so it
    has none that counts)."""

    index: int
    process: int | str
    invoked: int
    outcome: str
    completed: int | None


@dataclass(frozen=True, slots=True)
class TxnHistory:
    """A transactional queue history: the queue checker's records, and every transaction
    in invoke order."""

    queue: QueueHistory
    ops: list[TxnOp]


class TxnReader(QueueReader):
    """Reads a queue history as the queue checker does, noting each transaction's TxnOp as
    it goes (history's Reader protocol: invocations in any order of completion)."""

    def __init__(self, path: str, events: Sequence[Event] = ()) -> None:
        super().__init__(path, events)
        self.txns: list[TxnOp] = []

    def add(self, invoke: Event, invoke_line: int, completion: Event | None, line: int) -> None:
        """Takes one invocation as QueueReader.add does (which skips a consumer group's
        commit op), and notes it if a transaction."""
        super().add(invoke, invoke_line, completion, line)  # refuses a malformed op first
        if invoke["f"] in TXN_FS:
            self.txns.append(txn_op(invoke, completion))

    def finish_txns(self) -> TxnHistory:
        """Returns the TxnHistory of every invocation added."""
        self.txns.sort(key=lambda op: op.index)  # invoke order: completions come in any
        return TxnHistory(self.finish(), self.txns)


def txn_op(invoke: Event, completion: Event | None) -> TxnOp:
    """Takes a transaction's invoke and its completion (None: in flight at the end).
    Returns its TxnOp."""
    outcome = "info" if completion is None else str(completion["type"])
    completed = completion["time"] if completion is not None and outcome == "ok" else None
    return TxnOp(invoke["index"], invoke["process"], invoke["time"], outcome, completed)


def read_txn_history(events: Sequence[Event]) -> TxnHistory:
    """Takes a history's events. Returns its TxnHistory.

    Raises HistoryError for a malformed history or a value not of the queue format.
    """
    invocations, _ = pair_invocations(events)
    reader = TxnReader("<events>", events)
    for inv in invocations:
        reader.add(inv.invoke, 0, inv.completion, 0)
    return reader.finish_txns()


class TxnStream(Stream[TxnReader, TxnHistory]):
    """A Reader for history.load, as checkers.queue.checker.QueueStream is, reading a
    TxnHistory: `finish` returns it, or the HistoryError that stopped the reading."""

    def __init__(self, path: str) -> None:
        super().__init__(TxnReader(path), TxnReader.finish_txns)
