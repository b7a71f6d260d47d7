"""One process of the queue workload: a producer and a consumer of a plain Kafka topic
(confluent-kafka, no store in between), turning librdkafka's outcomes into completions.

A send is `ok` with the offset Kafka acknowledged, `fail` only when the error proves the
message was not written, `info` otherwise (docs/KAFKA.md). Even with retries=0
librdkafka sends a message again, uncounted, after NOT_LEADER_OR_FOLLOWER (it takes that
error for "not persisted"), yet a leader that loses leadership while waiting for acks
answers so for a message it had appended and a follower had copied: the second
attempt's NOT_ENOUGH_REPLICAS then hides a first that landed (seen on 4.4.0 KRaft under
partition-brokers-from-controllers). So a broker's refusal is `info`; only errors every
attempt would have met (message too large, bad acks, no authorization) are `fail`.

Polls record every `[offset, message]` per partition and every assignment change; a
drain reads one partition from the beginning to its high watermark (the final reads).
In a consumer group a commit op commits the consumer's positions (unless auto-commit
does), and the consumer ops' completions name their member and carry the group's
callbacks (workloads/group_log.py). With crashes on (`--crash-clients`) a client walks
away now and then instead of its next op, which is then `fail`, and is replaced.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from kvstore import Timeouts
from kvstore.kafka_log import KAFKA_LOG, client_config, client_error, close_within, watermarks
from workloads.core import OpDict, consumer_group_name, fail, info, ok
from workloads.group_log import GroupLog, commit_positions
from workloads.txn_rules import CrashClock

POLL_BATCH = 500
POLL_S = 0.05
# Errors that every attempt of a message would meet, so that none can have landed; proof
# only without idempotence (which retries on purpose). A broker's refusal, or metadata
# that changed between attempts (NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER, an unknown
# topic or partition), is not among them: see the module's docstring.
_NOT_WRITTEN = frozenset(
    {
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.INVALID_REQUIRED_ACKS,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
    }
)
# With auto.offset.reset=error: the log this consumer read is not the log the brokers
# hold now (truncation after an unclean election); its position means nothing.
_TRUNCATION = frozenset(
    {KafkaError._AUTO_OFFSET_RESET, KafkaError._LOG_TRUNCATION, KafkaError.OFFSET_OUT_OF_RANGE}
)
GROUP_OPS = frozenset({"poll", "commit", "subscribe"})
"""The ops whose completions name their member in a group: what the group checkers read."""
CRASHED_BEFORE = "crashed before it began"


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueSettings:
    """How the workload's clients talk to Kafka."""

    bootstrap: str
    topic: str
    partitions: int
    acks: str
    """all or 1"""
    idempotence: bool
    consumer_group: bool
    """Subscribe in one consumer group instead of assigning partitions."""
    timeouts: Timeouts
    isolation_level: str = "read_committed"
    """What the consumers read of transactions: read_committed or read_uncommitted."""
    txn: bool = False
    """Sends and polls in transactions (workloads/txn_client.py): the group's offsets are
    committed by the transactions, never automatically."""
    group_protocol: str = "classic"
    """In a group: classic, or consumer (KIP-848, brokers 4.0 and later)."""
    auto_commit: bool = False
    """In a group, outside transactions: librdkafka commits the positions every 5 s (and
    reports each commit); else commit ops do."""
    auto_offset_reset: str = "earliest"
    """In a group: where it starts in a partition without a committed offset."""
    client_clocks: str | None = None
    """With a client clock fault: the folder where each Java driver's clock file is made
    (workloads/java_driver.py), named after the driver's label."""
    watch_partitions: bool = False
    """The topic grows while the run goes on (add-partitions): the clients ask for its
    metadata every WATCH_MS, so that a classic group's leader finds new partitions and
    rebalances within a second (librdkafka's default is every 5 minutes)."""


WATCH_MS = 1000
"""topic.metadata.refresh.interval.ms of a run whose topic grows."""


def watch_config(s: QueueSettings) -> dict[str, Any]:
    """Returns the metadata refresh a client of a growing topic needs, else nothing."""
    return {"topic.metadata.refresh.interval.ms": WATCH_MS} if s.watch_partitions else {}


def producer_config(s: QueueSettings, client_id: str) -> dict[str, Any]:
    """Returns the producer's settings: acks as asked, one attempt without idempotence."""
    config = (
        client_config(s.bootstrap, f"{client_id}-producer", s.timeouts)
        | watch_config(s)
        | {
            "acks": s.acks,
            "enable.idempotence": s.idempotence,
            "linger.ms": 0,
            "message.timeout.ms": s.timeouts.message_ms,
            "request.timeout.ms": s.timeouts.request_ms,
        }
    )
    if not s.idempotence:
        config["retries"] = 0
    return config


def consumer_config(s: QueueSettings, client_id: str) -> dict[str, Any]:
    """Returns the consumer's settings: a group of its own (assign mode) or the shared one."""
    config = (
        client_config(s.bootstrap, f"{client_id}-consumer", s.timeouts)
        | watch_config(s)
        | {
            "fetch.wait.max.ms": 100,
            "enable.partition.eof": False,
            "isolation.level": s.isolation_level,
        }
    )
    if s.consumer_group:
        return config | group_config(s)
    return config | {
        "group.id": f"{s.topic}-{client_id}",
        "enable.auto.commit": False,
        "auto.offset.reset": "error",
    }


def group_config(s: QueueSettings) -> dict[str, Any]:
    """Returns a group member's own settings: the group, its protocol, who commits."""
    config: dict[str, Any] = {
        "group.id": consumer_group_name(s.topic),
        "auto.offset.reset": s.auto_offset_reset,
        # In consume-transform-produce the transaction commits the group's offsets.
        "enable.auto.commit": s.auto_commit and not s.txn,
    }
    if s.group_protocol == "consumer":
        # KIP-848: the coordinator owns the session and the assignor; librdkafka refuses
        # session.timeout.ms, heartbeat.interval.ms and partition.assignment.strategy.
        return config | {"group.protocol": "consumer"}
    return config | {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}


def send_outcome(
    error: KafkaError | None, offset: int | None, message: int, single_try: bool
) -> OpDict:
    """Takes a delivery report (its offset None when librdkafka did not say it). Returns
    the send's completion."""
    if error is None:
        return ok([offset, message])
    what = f"{error.name()}: {error.str()}"
    if single_try and error.code() in _NOT_WRITTEN:
        return fail(what, message)
    return info(what, message)


def produce_to(
    producer: Producer,
    s: QueueSettings,
    partition: int,
    value: bytes,
    delivered: Callable[[KafkaError | None, Message], None],
) -> None:
    """Queues value for one partition. A partition the producer does not know yet (the
    topic grew: add-partitions) is looked up once and the message queued again, so that
    a send goes to a new partition as soon as the generator names it; raises what the
    second attempt raises (KafkaException: nothing was sent)."""
    try:
        producer.produce(s.topic, value=value, partition=partition, on_delivery=delivered)
    except KafkaException as err:
        if not s.watch_partitions or err.args[0].code() != KafkaError._UNKNOWN_PARTITION:
            raise
        producer.list_topics(s.topic, timeout=s.timeouts.operation)
        producer.produce(s.topic, value=value, partition=partition, on_delivery=delivered)


def send_message(producer: Producer, s: QueueSettings, op: OpDict) -> OpDict:
    """Takes a producer and a send invoke (partition `key`, message `value`). Sends the
    message and waits for its delivery report. Returns the send's completion."""
    message: int = op["value"]
    report: dict[str, Any] = {}

    def delivered(error: KafkaError | None, msg: Message) -> None:
        report["outcome"] = send_outcome(
            error, acknowledged_offset(msg), message, single_try=not s.idempotence
        )

    try:
        produce_to(producer, s, op["key"], str(message).encode(), delivered)
    except BufferError as err:  # the local queue is full: nothing was sent
        return fail(f"BufferError: {err}", message)
    deadline = time.monotonic() + s.timeouts.operation
    while "outcome" not in report and time.monotonic() < deadline:
        producer.poll(0.05)
    if "outcome" not in report:
        return info(f"no delivery report within {s.timeouts.operation:g} s", message)
    completion: OpDict = report["outcome"]
    return completion


class QueueClient:
    """A Client doing send, poll, assign, subscribe, commit and drain ops on one topic."""

    def __init__(
        self, settings: QueueSettings, client_id: str, crash_every_s: float | None = None
    ) -> None:
        self._s = settings
        self._client_id = client_id
        self._failure: str | None = None
        # Seeded by who the client is, so a run's seed gives the same draws. (TxnClient
        # crashes inside its transactions instead, by a clock of its own.)
        self._crash_between_ops = CrashClock(crash_every_s, random.Random(client_id))
        on_error = partial(client_error, self._fail)
        self._producer = self._open_producer(on_error)
        self._group = GroupLog()
        config = consumer_config(settings, client_id) | {"error_cb": on_error}
        if settings.consumer_group and settings.auto_commit and not settings.txn:
            config["on_commit"] = self._group.on_commit
        self._consumer = Consumer(config)
        self._assigned: set[int] | None = None

    @property
    def failure(self) -> str | None:
        """Returns why this client serves no more ops (a fatal error, a truncated log)."""
        return self._failure

    def _fail(self, why: str) -> None:
        if self._failure is None:
            self._failure = why

    def _open_producer(self, on_error: Callable[[KafkaError], None]) -> Producer:
        """Returns the producer of this client's sends (a subclass may make another kind)."""
        return Producer(producer_config(self._s, self._client_id) | {"error_cb": on_error})

    def _handlers(self) -> dict[str, Callable[[OpDict], OpDict]]:
        """Returns the op of each f this client serves."""
        return {
            "send": self._send,
            "poll": self._poll,
            "assign": self._assign,
            "subscribe": self._subscribe,
            "commit": self._commit,
            "drain": self._drain,
        }

    def invoke(self, op: OpDict) -> OpDict:
        """Takes an invoke. Returns its completion; never raises. A crash that is due
        comes instead of the op (never a final drain): the op is `fail` and the client is
        to be replaced."""
        if op["f"] != "drain" and self._crash_between_ops.due():
            self._fail("crashed on purpose (--crash-clients)")
            return fail(CRASHED_BEFORE, op.get("value"))
        completion = self._outcome(op)
        if self._s.consumer_group and op["f"] in GROUP_OPS:
            completion["member"] = self._client_id
        return completion

    def _outcome(self, op: OpDict) -> OpDict:
        try:
            return self._handlers()[op["f"]](op)
        except KafkaException as err:  # raised before anything was sent or received
            return fail(f"KafkaException: {err}", op.get("value"))
        except Exception as err:  # an unknown outcome: never guess ok or fail
            return info(f"{type(err).__name__}: {err}", op.get("value"))

    def close(self) -> None:
        """Closes the producer and consumer within a bounded time; never raises."""
        try:
            self._producer.flush(self._s.timeouts.close)
        except KafkaException as err:  # a producer failed for good: the run goes on without it
            KAFKA_LOG.warning("a producer did not flush on close: %s", err)
        close_within(self._consumer, self._s.timeouts.close)

    # ---- send --------------------------------------------------------------------------

    def _send(self, op: OpDict) -> OpDict:
        return send_message(self._producer, self._s, op)

    # ---- consume -----------------------------------------------------------------------

    def _poll(self, _op: OpDict) -> OpDict:
        if self._assigned is None:  # first poll: read every partition (or join the group)
            self._start_reading()
        # consume() would wait out its timeout unless the batch fills: wait for one
        # message, then take whatever else has arrived.
        first = self._consumer.poll(POLL_S)
        handed = time.monotonic_ns()  # callbacks served before this preceded every record
        messages = [] if first is None else [first]
        errors: list[str] = []
        if first is not None:
            try:
                messages += self._consumer.consume(POLL_BATCH - 1, 0)
            except KafkaException as err:  # the first was handed over (and its offset stored)
                errors.append(f"KafkaException: {err}")
        records: dict[str, list[list[int | str]]] = {}
        for msg in messages:
            error = msg.error()
            if error is not None:
                errors.append(f"{error.name()}: {error.str()}")
                if error.code() in _TRUNCATION:
                    self._fail(f"the log was truncated under the consumer: {error.str()}")
                continue
            records.setdefault(str(msg.partition()), []).append(_record(msg))
        completion = ok(records) | self._group.take()
        if first is not None and "group-log" in completion:
            completion["first-record-ns"] = handed
        if errors:
            completion["errors"] = errors
        return completion

    def _start_reading(self) -> None:
        if self._s.consumer_group:
            self._join_group()
            return
        everything = set(range(self._s.partitions))
        self._consumer.assign(
            [TopicPartition(self._s.topic, p, OFFSET_BEGINNING) for p in everything]
        )
        self._assigned = everything
        self._group.assigned_by_hand(sorted(everything))

    def _assign(self, op: OpDict) -> OpDict:
        """Reads exactly the partitions given: new ones from the beginning, kept ones on."""
        wanted = {int(p) for p in op["value"]}
        held = self._assigned or set()
        gone = held - wanted
        if gone:
            self._consumer.incremental_unassign([TopicPartition(self._s.topic, p) for p in gone])
        new = wanted - held
        if new:
            self._consumer.incremental_assign(
                [TopicPartition(self._s.topic, p, OFFSET_BEGINNING) for p in new]
            )
        self._assigned = wanted
        return ok(sorted(wanted))

    def _subscribe(self, op: OpDict) -> OpDict:
        self._join_group()
        return ok([self._s.topic])

    def _join_group(self) -> None:
        log = self._group
        self._consumer.subscribe(
            [self._s.topic], on_assign=log.on_assign, on_revoke=log.on_revoke, on_lost=log.on_lost
        )
        self._assigned = set()

    def _commit(self, _op: OpDict) -> OpDict:
        """Commits the consumer's positions in the partitions it holds (group_log's
        commit_positions)."""
        within = self._s.timeouts.operation
        committed = commit_positions(self._consumer, within)
        if committed is None:
            self._fail(f"a commit did not return within {within:g} s")
            return info(f"the commit did not return within {within:g} s") | self._group.take()
        return committed | self._group.take()

    def _drain(self, op: OpDict) -> OpDict:
        """Reads partition op["key"] from the beginning to its high watermark with a
        consumer of its own; fail (nothing changed) when it cannot get there in time. The
        completion says the high watermark it read to (`high-watermark`); one that gave
        up says too the position it had reached (`position`) and the last record it read
        (`last-read`, or None)."""
        tp = TopicPartition(self._s.topic, op["key"], OFFSET_BEGINNING)
        # Assigned, never in the run's group: a drain must not move the group's offsets.
        # At read_committed whatever --isolation-level says: the final read is what Kafka
        # kept, and an aborted transaction's records are not kept (they stay in the log,
        # skipped by such a consumer; the position still moves past them and the markers).
        alone = dataclasses.replace(self._s, consumer_group=False, isolation_level="read_committed")
        timeout = self._s.timeouts.catch_up
        low, high = log_ends(alone, f"{self._client_id}-drain", tp, time.monotonic() + timeout)
        if high <= low:
            return ok([]) | {"high-watermark": high}
        drainer = Consumer(consumer_config(alone, f"{self._client_id}-drain"))
        try:
            drainer.assign([tp])
            records: list[list[int | str]] = []
            deadline = time.monotonic() + timeout
            while (position := drainer.position([tp])[0].offset) < high:
                if time.monotonic() > deadline:
                    # Where it stopped is the evidence of a consumer stuck below the high
                    # watermark (at a last stable offset no marker moves: KAFKA-20716).
                    why = f"did not reach the high watermark {high} within {timeout:g} s"
                    return fail(why) | {
                        "high-watermark": high,
                        # librdkafka says OFFSET_INVALID (< 0) until the first record.
                        "position": position if position >= 0 else low,
                        "last-read": records[-1] if records else None,
                    }
                msg = drainer.poll(POLL_S)
                if msg is None:
                    continue
                if (error := msg.error()) is not None:
                    return fail(f"{error.name()}: {error.str()}")
                records.append(_record(msg))
            return ok(records) | {"high-watermark": high}
        finally:
            close_within(drainer, self._s.timeouts.close)


def log_ends(
    s: QueueSettings, client_id: str, tp: TopicPartition, deadline: float
) -> tuple[int, int]:
    """Returns a partition's low watermark and its high watermark, as a read_uncommitted
    client is told them. A read_committed client is told the last stable offset instead,
    which a transaction still open (a crashed client's, until its timeout) holds below
    records committed after it: a drain that stopped there would miss them."""
    uncommitted = dataclasses.replace(s, isolation_level="read_uncommitted")
    probe = Consumer(consumer_config(uncommitted, f"{client_id}-ends"))
    try:
        return watermarks(probe, tp, deadline)
    finally:
        close_within(probe, s.timeouts.close)


def acknowledged_offset(msg: Message) -> int | None:
    """Returns the offset a delivery report gives its message, or None where librdkafka
    gives none (no offset, or a negative one such as -1001, RD_KAFKA_OFFSET_INVALID: one
    send of a committed transaction on 3.9.1 under isr-shrink was reported so): the send
    is acknowledged, its offset unknown, never a made-up -1 the checkers refuse."""
    offset = msg.offset()
    return offset if offset is not None and offset >= 0 else None


def _offset(msg: Message) -> int:
    offset = msg.offset()
    return -1 if offset is None else offset


def _record(msg: Message) -> list[int | str]:
    """Returns a received message as [offset, value]."""
    raw = msg.value() or b""
    try:
        value: int | str = int(raw)
    except ValueError:  # not one of ours: recorded as it is, the checker says so
        value = raw.decode(errors="replace")
    return [_offset(msg), value]
