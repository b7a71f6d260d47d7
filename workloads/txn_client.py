"""One process of the queue workload under --txn: each op one Kafka transaction of send and
poll micro-ops, through a transactional producer beside the queue client's consumer (the
rules that make completions, shared with the Java client: workloads/txn_rules.py).

An op's value is Jepsen's micro-ops (checkers/queue/microops.py): `["send", p, value]` and
`["poll"]`. A commit that returned is `ok`, with each send's offset from its delivery
report; an abort that returned (chosen, or after an error), or an error before anything
was begun, is `fail`; anything else (a commit or abort that timed out, a fatal error) is
`info`, and the client is replaced. Its transactional id goes back to a pool when it is
closed, and the next client takes it: that client's init_transactions fences this one and
ends whatever transaction it left open (else read_committed reads would stall behind it
until transaction.timeout.ms).

With --crash-clients a client crashes now and then, as Jepsen's crash-client generator
has it (jepsen.tests.kafka `crash-client-gen`), but in the middle of a transaction: its
sends delivered, it walks away without a commit or an abort, and is replaced. Such a
transaction is `fail`, for it can never commit (only the client's EndTxn could commit
it); its values must stay unread at read_committed, whoever ends it (the successor's
fencing, the coordinator's timeout, or librdkafka as the producer is destroyed).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer, TopicPartition

from workloads.core import OpDict
from workloads.queue_client import (
    QueueClient,
    QueueSettings,
    acknowledged_offset,
    producer_config,
)
from workloads.txn_rules import (
    ABORTED_ON_PURPOSE,
    CRASHED,
    TXN_TIMEOUT_MS,
    CrashClock,
    Stage,
    TransactionalIds,
    TxnError,
    TxnSeen,
    after_error,
    completed,
    conclude,
    first_offsets,
    needs_replacing,
    should_abort,
    txn_outcome,
)

# The rules moved to workloads/txn_rules.py (the Java client shares them); their names stay
# importable from here.
__all__ = [
    "ABORTED_ON_PURPOSE",
    "CRASHED",
    "BodyError",
    "CrashClock",
    "TransactionalIds",
    "TxnClient",
    "TxnError",
    "TxnSeen",
    "completed",
    "first_offsets",
    "needs_replacing",
    "should_abort",
    "txn_error",
    "txn_outcome",
]


def txn_error(stage: Stage, error: KafkaError) -> TxnError:
    """Returns the error librdkafka raised at stage, with its classification."""
    return TxnError(
        stage,
        f"{error.name()}: {error.str()}",
        fatal=error.fatal(),
        retriable=error.retriable(),
        requires_abort=error.txn_requires_abort(),
    )


class BodyError(Exception):
    """A transaction's send that was not delivered: it cannot commit, and is aborted."""


class TxnClient(QueueClient):
    """A queue client whose ops are transactions: txn, plus assign, subscribe and drain."""

    def __init__(
        self,
        settings: QueueSettings,
        client_id: str,
        ids: TransactionalIds,
        crash_every_s: float | None = None,
    ) -> None:
        self._ids = ids
        self._tid, self._incarnation = ids.take()
        self._ready = False  # init_transactions has returned
        # Seeded by who the client is, so a run's seed gives the same draws.
        rng = random.Random(f"{client_id}/{self._tid}#{self._incarnation}")
        self._crash = CrashClock(crash_every_s, rng)
        super().__init__(settings, client_id)

    def _open_producer(self, on_error: Callable[[KafkaError], None]) -> Producer:
        config = producer_config(self._s, self._client_id) | {
            "transactional.id": self._tid,
            "transaction.timeout.ms": TXN_TIMEOUT_MS,
            "enable.idempotence": True,
            "error_cb": on_error,
        }
        config.pop("retries", None)  # a transactional producer must be free to retry
        return Producer(config)

    def _handlers(self) -> dict[str, Callable[[OpDict], OpDict]]:
        handlers = super()._handlers() | {"txn": self._txn}
        del handlers["send"]  # a send outside a transaction: this producer cannot
        return handlers

    def close(self) -> None:
        """Closes the clients; then the transactional id is free for the next client."""
        try:
            super().close()
        finally:
            self._ids.release(self._tid, self._incarnation)

    # ---- one transaction -----------------------------------------------------------

    def _txn(self, op: OpDict) -> OpDict:
        asked: list[list[Any]] = [list(mop) for mop in op["value"]]
        done: list[list[Any]] = [list(mop) for mop in asked]
        notes: OpDict = {}
        seen = self._transact(
            asked, done, notes, chose_abort=bool(op.get("abort")), crash=self._crash.due()
        )
        label = f"{self._tid}#{self._incarnation}"
        completion, replace = conclude(seen, asked, done, notes, label, self._rewind)
        if replace is not None:
            self._fail(replace)
        return completion

    def _transact(
        self,
        asked: list[list[Any]],
        done: list[list[Any]],
        notes: OpDict,
        *,
        chose_abort: bool,
        crash: bool,
    ) -> TxnSeen:
        """Runs one transaction, up to its body only when the client is to crash;
        completes done in place (polls' records, sends' offsets) and notes (rebalances,
        poll errors). Returns what it saw."""
        stage: Stage = "init"
        timeout = self._s.timeouts.operation
        try:
            if not self._ready:
                self._producer.init_transactions(timeout)
                self._ready = True
            stage = "begin"
            self._producer.begin_transaction()
            stage = "body"
            self._run_micro_ops(asked, done, notes)
            if crash:  # the transaction stays open: whoever ends it must abort it
                return TxnSeen(chose_abort=chose_abort, crashed=True)
            if chose_abort:
                stage = "abort"
                self._producer.abort_transaction(timeout)
                return TxnSeen(chose_abort=True, aborted=True)
            stage = "commit"
            self._producer.commit_transaction(timeout)
            return TxnSeen(committed=True)
        except KafkaException as err:
            error = txn_error(stage, err.args[0])
        except BodyError as err:
            error = TxnError("body", str(err), requires_abort=True)
        except Exception as err:  # not librdkafka's: abort if that may end it, else unknown
            error = TxnError(stage, f"{type(err).__name__}: {err}")
        # Aborted when that may end it for certain (txn_rules.should_abort).
        return after_error(TxnSeen(chose_abort=chose_abort, error=error), self._abort)

    def _abort(self) -> str | None:
        """Aborts the open transaction; returns None when that returned, else why not."""
        try:
            self._producer.abort_transaction(self._s.timeouts.operation)
        except KafkaException as err:
            error = err.args[0]
            return f"{error.name()}: {error.str()}"
        return None

    def _rewind(self, first: dict[int, int]) -> dict[str, int]:
        """Takes the first offset this consumer read in each partition during a transaction
        that did not commit. Seeks back to it, so that the next transaction reads those
        records again: an abort rewinds no consumer (KAFKA-17582), and one that read on
        would skip them. Returns the partitions rewound (as JSON names them) and where."""
        rewound: dict[str, int] = {}
        for partition, offset in sorted(first.items()):
            try:
                self._consumer.seek(TopicPartition(self._s.topic, partition, offset))
            except KafkaException:  # no longer held (a rebalance): its next reader decides
                continue
            rewound[str(partition)] = offset
        return rewound

    def _run_micro_ops(self, asked: list[list[Any]], done: list[list[Any]], notes: OpDict) -> None:
        """Produces the sends and serves the polls in order, sends the group's positions
        with the transaction (consume-transform-produce), and waits for every delivery
        report, filling each send's [offset, value] into done. Raises KafkaException or
        BodyError when the transaction cannot commit."""
        reports: dict[int, tuple[KafkaError | None, int | None]] = {}
        for place, mop in enumerate(asked):
            if mop[0] == "send":
                self._produce(place, mop, reports)
            else:
                done[place] = ["poll", self._poll_into(notes)]
        self._send_offsets()
        self._await_reports(asked, done, reports)

    def _produce(
        self, place: int, mop: list[Any], reports: dict[int, tuple[KafkaError | None, int | None]]
    ) -> None:
        def delivered(error: KafkaError | None, msg: Message) -> None:
            reports[place] = (error, acknowledged_offset(msg))

        _, partition, value = mop
        try:
            self._producer.produce(
                self._s.topic, value=str(value).encode(), partition=partition, on_delivery=delivered
            )
        except BufferError as err:
            raise BodyError(f"BufferError: {err}") from err

    def _poll_into(self, notes: OpDict) -> dict[str, Any]:
        """Polls once; returns the records by partition, adding the op's rebalances and
        errors to notes as a poll op records them."""
        polled = self._poll({"f": "poll", "value": None})
        for way, parts in polled.get("rebalanced", {}).items():
            moved = notes.setdefault("rebalanced", {"assigned": [], "revoked": []})
            moved[way] += parts
        if polled.get("errors"):
            notes.setdefault("errors", []).extend(polled["errors"])
        records: dict[str, Any] = polled["value"]
        return records

    def _send_offsets(self) -> None:
        """In a consumer group, commits the consumer's positions with the transaction,
        so that the group reads on from there only if the transaction commits."""
        if not self._s.consumer_group or self._assigned is None:
            return
        positions = [
            tp for tp in self._consumer.position(self._consumer.assignment()) if tp.offset >= 0
        ]
        if positions:
            self._producer.send_offsets_to_transaction(
                positions, self._consumer.consumer_group_metadata(), self._s.timeouts.operation
            )

    def _await_reports(
        self,
        asked: list[list[Any]],
        done: list[list[Any]],
        reports: dict[int, tuple[KafkaError | None, int | None]],
    ) -> None:
        waiting = self._producer.flush(self._s.timeouts.operation)
        for place, mop in enumerate(asked):
            if mop[0] != "send":
                continue
            if place not in reports:
                raise BodyError(
                    f"{waiting} sends undelivered after {self._s.timeouts.operation:g} s"
                )
            error, offset = reports[place]
            if error is not None:
                raise BodyError(f"delivery failed: {error.name()}: {error.str()}")
            done[place] = ["send", mop[1], [offset, mop[2]]]
