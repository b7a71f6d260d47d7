"""One process of the queue workload under --txn: each op one Kafka transaction of send and
poll micro-ops, through a transactional producer beside the queue client's consumer.

An op's value is Jepsen's micro-ops (checkers/queue_microops.py): `["send", p, value]` and
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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from confluent_kafka import KafkaError, KafkaException, Message, Producer, TopicPartition

from workloads.core import OpDict, fail, info, ok
from workloads.queue_client import QueueClient, QueueSettings, producer_config

# The coordinator aborts a transaction left open this long (a client replaced at the end
# of a run has no successor to fence it), well within the final drains' catch-up time;
# librdkafka wants it above message.timeout.ms.
TXN_TIMEOUT_MS = 10_000

Stage = Literal["init", "begin", "body", "commit", "abort"]
NOT_BEGUN: frozenset[Stage] = frozenset({"init", "begin"})
"""Stages whose error leaves nothing of the transaction anywhere: begin_transaction is
local to the client, and nothing is sent before it."""
Outcome = Literal["ok", "fail", "info"]
ABORTED_ON_PURPOSE = "aborted by the workload (--abort-p)"
CRASHED = "crashed before its commit (--crash-clients): the client walked away from it"


class BodyError(Exception):
    """A transaction's send that was not delivered: it cannot commit, and is aborted."""


@dataclass(frozen=True, slots=True)
class TxnError:
    """One error the client met, with librdkafka's classification of it."""

    stage: Stage
    text: str
    fatal: bool = False
    retriable: bool = False
    requires_abort: bool = False

    @classmethod
    def of(cls, stage: Stage, error: KafkaError) -> TxnError:
        """Returns the error librdkafka raised at stage."""
        return cls(
            stage,
            f"{error.name()}: {error.str()}",
            fatal=error.fatal(),
            retriable=error.retriable(),
            requires_abort=error.txn_requires_abort(),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TxnSeen:
    """What the client saw of one transaction: what it meant to do, the first error, and
    which of commit_transaction and abort_transaction returned."""

    chose_abort: bool = False
    crashed: bool = False
    """The client crashed on purpose after the body, without a commit or an abort."""
    error: TxnError | None = None
    committed: bool = False
    aborted: bool = False
    abort_error: str | None = None
    """Why the abort tried after an error did not return."""


def should_abort(error: TxnError) -> bool:
    """Takes the error that stopped a transaction. Returns whether aborting it may end it
    for certain: not after a fatal error (the producer serves nothing more), nor a
    timed-out commit or abort (its outcome is unknown: librdkafka would only retry it),
    nor before anything was begun."""
    if error.fatal or error.stage in NOT_BEGUN or error.stage == "abort":
        return False
    return error.stage == "body" or error.requires_abort


def txn_outcome(seen: TxnSeen) -> Outcome:
    """Takes what the client saw of a transaction. Returns its completion's type: ok when
    the commit returned, fail when an abort returned, nothing was begun or the client
    crashed before asking to commit, else info."""
    if seen.committed:
        return "ok"
    if seen.aborted or seen.crashed:
        return "fail"
    if seen.error is not None and seen.error.stage in NOT_BEGUN:
        return "fail"
    return "info"


def needs_replacing(seen: TxnSeen) -> bool:
    """Takes what the client saw of a transaction. Returns whether its producer must be
    replaced (and so fenced): after a crash, an info outcome, a fatal error, an init that
    cannot be tried again, or a begin that failed (a sound producer begins whenever asked)."""
    error = seen.error
    if seen.crashed or txn_outcome(seen) == "info" or (error is not None and error.fatal):
        return True
    if error is None:
        return False
    return error.stage == "begin" or (error.stage == "init" and not error.retriable)


def error_text(seen: TxnSeen) -> str | None:
    """Takes what the client saw of a transaction. Returns its completion's error, or None."""
    if seen.crashed:
        return CRASHED
    if seen.error is None:
        return ABORTED_ON_PURPOSE if seen.chose_abort else None
    text = f"{seen.error.stage}: {seen.error.text}"
    if seen.aborted:
        return f"{text}; then aborted"
    if seen.abort_error is not None:
        return f"{text}; the abort failed: {seen.abort_error}"
    return text


def first_offsets(done: list[list[Any]]) -> dict[int, int]:
    """Takes a transaction's micro-ops as completed. Returns, per partition its polls read,
    the lowest offset they read there."""
    first: dict[int, int] = {}
    for mop in done:
        if mop[0] != "poll" or len(mop) < 2 or not isinstance(mop[1], dict):
            continue
        for partition, records in mop[1].items():
            for offset, _ in records:
                key = int(partition)
                first[key] = min(first.get(key, offset), offset)
    return first


def completed(seen: TxnSeen, asked: list[list[Any]], done: list[list[Any]]) -> OpDict:
    """Takes what the client saw, the invoked micro-ops and the same completed as far as
    the client got. Returns the completion: ok carries every micro-op completed (sends
    with [offset, value]); fail and info the sends as invoked and the polls that returned."""
    outcome = txn_outcome(seen)
    if outcome == "ok":
        return ok(done)
    value = [
        asked_mop if asked_mop[0] == "send" else mop
        for asked_mop, mop in zip(asked, done, strict=True)
    ]
    text = error_text(seen) or "no error"
    return fail(text, value) if outcome == "fail" else info(text, value)


class TransactionalIds:
    """Hands out the transactional ids of one run: one its last client released, if any
    (so that taking it fences that client), else a new one; each with its incarnation."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._lock = threading.Lock()
        self._free: list[tuple[str, int]] = []
        self._made = 0

    def take(self) -> tuple[str, int]:
        """Returns a transactional id and its incarnation (1 for a new id)."""
        with self._lock:
            if self._free:
                tid, last = self._free.pop()
                return tid, last + 1
            self._made += 1
            return f"{self._prefix}-txn-{self._made}", 1

    def release(self, tid: str, incarnation: int) -> None:
        """Gives back an id whose client is closed."""
        with self._lock:
            self._free.append((tid, incarnation))


class CrashClock:
    """When a client crashes on purpose: at a time drawn uniformly from [0, 2 * mean_s]
    after it opened (the gaps of Jepsen's `gen/stagger`), or never when mean_s is None."""

    def __init__(self, mean_s: float | None, rng: random.Random) -> None:
        self._at = time.monotonic() + rng.uniform(0, 2 * mean_s) if mean_s else float("inf")

    def due(self) -> bool:
        """Returns whether the client's crash is due."""
        return time.monotonic() >= self._at


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
        if needs_replacing(seen):
            self._fail(f"transaction ended {txn_outcome(seen)}: {error_text(seen)}")
        elif not seen.committed and (rewound := self._rewind(first_offsets(done))):
            notes["rewound"] = rewound
        completion = completed(seen, asked, done) | notes
        completion["transactional-id"] = f"{self._tid}#{self._incarnation}"
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
            error = TxnError.of(stage, err.args[0])
        except BodyError as err:
            error = TxnError("body", str(err), requires_abort=True)
        except Exception as err:  # not librdkafka's: abort if that may end it, else unknown
            error = TxnError(stage, f"{type(err).__name__}: {err}")
        return self._after(TxnSeen(chose_abort=chose_abort, error=error))

    def _after(self, seen: TxnSeen) -> TxnSeen:
        """Takes a transaction stopped by an error. Aborts it when that may end it for
        certain; returns what was seen, with the abort's result."""
        assert seen.error is not None
        if not should_abort(seen.error):
            return seen
        try:
            self._producer.abort_transaction(self._s.timeouts.operation)
        except KafkaException as err:
            error = err.args[0]
            return TxnSeen(
                chose_abort=seen.chose_abort,
                error=seen.error,
                abort_error=f"{error.name()}: {error.str()}",
            )
        return TxnSeen(chose_abort=seen.chose_abort, error=seen.error, aborted=True)

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
        reports: dict[int, tuple[KafkaError | None, int]] = {}
        for place, mop in enumerate(asked):
            if mop[0] == "send":
                self._produce(place, mop, reports)
            else:
                done[place] = ["poll", self._poll_into(notes)]
        self._send_offsets()
        self._await_reports(asked, done, reports)

    def _produce(
        self, place: int, mop: list[Any], reports: dict[int, tuple[KafkaError | None, int]]
    ) -> None:
        def delivered(error: KafkaError | None, msg: Message) -> None:
            offset = msg.offset()
            reports[place] = (error, -1 if offset is None else offset)

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
        reports: dict[int, tuple[KafkaError | None, int]],
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
