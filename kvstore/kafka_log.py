"""The Kafka side of one map instance: a producer, and a consumer thread feeding its replica.

Every librdkafka wait is bounded by the instance's Timeouts. Nothing is swallowed: a fatal
client error, a truncated log or a dead consumer thread fails the replica with its cause.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    ShareConsumer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource  # type: ignore[attr-defined]

from kvstore.api import DEFAULT_TIMEOUTS, Timeouts
from kvstore.errors import DefiniteFailure, Indeterminate, StoreError
from kvstore.records import MalformedRecord, Record, decode, encode
from kvstore.replica import Pending, Replica

# With auto.offset.reset=error these mean the log we applied is not the log the
# brokers now hold (truncation after an unclean election): the replica is void.
_TRUNCATION_ERRORS = frozenset(
    {KafkaError._AUTO_OFFSET_RESET, KafkaError._LOG_TRUNCATION, KafkaError.OFFSET_OUT_OF_RANGE}
)
Fail = Callable[[str], None]
"""Fails an instance's replica with the reason given."""
_POLL_S = 0.05
_BATCH = 1000
_WATERMARK_RETRY_S = 0.2
# What a partition's leader answers for a moment while leadership moves.
_LEADER_MOVING = frozenset(
    {
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
    }
)

LIBRDKAFKA_DEBUG = os.environ.get("HARNESS_LIBRDKAFKA_DEBUG", "")
"""librdkafka's debug contexts for every client (e.g. `metadata,broker,topic`), from the
environment: for looking into a run, its lines go to client.log at DEBUG; empty for none."""


def parse_overrides(text: str) -> dict[str, str]:
    """Takes `key=value,...`. Returns the settings; an item without `=` is no setting."""
    return dict(item.strip().split("=", 1) for item in text.split(",") if "=" in item)


LIBRDKAFKA_OVERRIDES = parse_overrides(os.environ.get("HARNESS_LIBRDKAFKA_CONFIG", ""))
"""librdkafka settings for every client (`key=value,...`), from the environment: for
measuring a setting's effect (test.json records them). They go over the settings all
clients share; a key the harness sets for producers or consumers alone stays its own."""

# librdkafka logs every refused connection; during faults that is expected noise,
# so it goes to this logger, silent unless a run attaches a handler.
KAFKA_LOG = logging.getLogger("kvstore.kafka")
KAFKA_LOG.addHandler(logging.NullHandler())
KAFKA_LOG.propagate = False


def client_config(bootstrap: str, client_id: str, t: Timeouts) -> dict[str, Any]:
    """Returns what the producer and the consumer share: where, who, and bounded sockets."""
    return (
        {
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            "logger": KAFKA_LOG,
            # Nagle's algorithm would hold small requests back for tens of milliseconds.
            "socket.nagle.disable": True,
            "socket.timeout.ms": t.socket_ms,
            "socket.connection.setup.timeout.ms": t.connect_ms,
            "reconnect.backoff.max.ms": t.reconnect_backoff_max_ms,
        }
        | ({"debug": LIBRDKAFKA_DEBUG} if LIBRDKAFKA_DEBUG else {})
        | LIBRDKAFKA_OVERRIDES
    )


def producer_config(bootstrap: str, client_id: str, t: Timeouts) -> dict[str, Any]:
    """Returns the producer settings: acks=all and bounded timeouts (docs/KAFKA.md)."""
    return client_config(bootstrap, f"{client_id}-producer", t) | {
        "acks": "all",
        # Without idempotence a retried record could land twice, and a duplicated
        # Command (ReplicaStyleMap) would be applied twice.
        "enable.idempotence": True,
        "linger.ms": 0,
        "message.timeout.ms": t.message_ms,
        "request.timeout.ms": t.request_ms,
    }


def consumer_config(bootstrap: str, client_id: str, t: Timeouts) -> dict[str, Any]:
    """Returns the consumer settings: manual assignment, no commits, truncation reported."""
    return client_config(bootstrap, f"{client_id}-consumer", t) | {
        # Required by the client but unused: partitions are assigned, never subscribed.
        "group.id": f"kvstore-{client_id}",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "error",
        "enable.partition.eof": True,
        # A fetch parked at the broker returns as soon as data arrives; this caps the rest.
        "fetch.wait.max.ms": 100,
    }


class KafkaConnection:
    """One instance's producer and consumer on a store topic.

    Opening it reads the topic's settings (compaction, unclean election) and
    the topic from the beginning up to the high watermarks taken at open, so
    the instance serves only once it has caught up.
    """

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        client_id: str,
        timeouts: Timeouts = DEFAULT_TIMEOUTS,
    ) -> None:
        self._topic = topic
        self._timeouts = timeouts
        self._stop = threading.Event()
        self._early_failure: str | None = None
        deadline = time.monotonic() + timeouts.catch_up
        on_error = partial(client_error, self._fail)
        try:
            self._consumer = Consumer(
                consumer_config(bootstrap, client_id, timeouts) | {"error_cb": on_error}
            )
            self._producer = Producer(
                producer_config(bootstrap, client_id, timeouts) | {"error_cb": on_error}
            )
            settings = _topic_settings(bootstrap, client_id, topic, timeouts, deadline)
            self.compacted = "compact" in settings.get("cleanup.policy", "")
            self.unclean_election = settings.get("unclean.leader.election.enable") == "true"
            partitions = self._partition_count(deadline)
            self._replica = Replica(partitions)
            if self._early_failure is not None:
                self._replica.fail(self._early_failure)
            ends = self._high_watermarks(partitions, deadline)
            self._consumer.assign(
                [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
            )
            self._thread = threading.Thread(
                target=self._run, name=f"kvstore-{client_id}", daemon=True
            )
            self._thread.start()
            self._catch_up(ends, deadline)
        except StoreError:
            self.close()
            raise
        except Exception as e:  # opening sends nothing, so whatever went wrong, nothing happened
            self.close()
            raise DefiniteFailure(f"could not open on {topic}: {e!r}") from e
        except BaseException:
            self.close()
            raise

    @property
    def replica(self) -> Replica:
        """The instance's copy of the map."""
        return self._replica

    def send(self, partition: int, record: Record, pending: Pending[Any]) -> None:
        """Produces record; a delivery error later fails `pending` as Indeterminate."""
        if self._stop.is_set():
            raise DefiniteFailure("instance closed: nothing sent")
        key, value = encode(record)
        produce(
            self._producer,
            self._topic,
            partition,
            key,
            value,
            partial(delivered, self._fail, pending),
        )

    def discard(self, partition: int, attempt: str) -> None:
        """Produces a tombstone for attempt when the topic is compacted; errors do not matter."""
        if not self.compacted or self._stop.is_set():
            return
        # A missing tombstone only costs space, and must not turn a won write into an error.
        with contextlib.suppress(DefiniteFailure):
            produce(self._producer, self._topic, partition, attempt.encode(), None)

    def close(self) -> None:
        """Stops the consumer thread and releases both clients within Timeouts.close.

        Never raises: a client that fails to close is logged (KAFKA_LOG) and left to the
        garbage collector, since the instance is gone either way.
        """
        if self._stop.is_set():
            return
        deadline = time.monotonic() + self._timeouts.close
        self._stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(max(0.0, deadline - time.monotonic()))
        producer = getattr(self, "_producer", None)
        if producer is not None:
            self._release(lambda: _close_producer(producer, deadline))
        consumer = getattr(self, "_consumer", None)
        if consumer is not None and (thread is None or not thread.is_alive()):
            self._release(lambda: close_within(consumer, max(1.0, deadline - time.monotonic())))

    def _release(self, close: Callable[[], None]) -> None:
        # Any exception: after a fatal idempotent-producer error confluent-kafka's flush
        # raises SystemError ("returned a result with an exception set"), and a client
        # that fails to close must not keep the other from closing.
        try:
            close()
        except Exception as e:
            KAFKA_LOG.warning("closing a client of %s: %r", self._topic, e)

    def fail(self, reason: str) -> None:
        """Fails the instance for good with reason (the store found its client broken)."""
        self._fail(reason)

    def _fail(self, reason: str) -> None:
        """Fails the replica, or the opening when there is no replica yet."""
        replica: Replica | None = getattr(self, "_replica", None)
        if replica is None:
            self._early_failure = self._early_failure or reason
        else:
            replica.fail(reason)

    def _catch_up(self, ends: list[int], deadline: float) -> None:
        """Waits until the consumer thread has applied every partition up to ends."""
        if not self._replica.wait_caught_up(ends, deadline - time.monotonic()):
            raise DefiniteFailure(
                f"not caught up with {self._topic} within {self._timeouts.catch_up}s"
                f" ({self._replica.failure or 'timeout'})"
            )

    def _partition_count(self, deadline: float) -> int:
        """Returns the topic's partition count, asking again until the deadline.

        A broker learns of a new topic from the controller a little after it
        was created, so "unknown topic" is final only once the wait is over.
        """
        while True:
            try:
                remaining = max(0.1, deadline - time.monotonic())
                topic = self._consumer.list_topics(self._topic, remaining).topics.get(self._topic)
            except KafkaException as e:
                raise DefiniteFailure(f"no metadata for {self._topic}: {e}") from e
            if topic is not None and topic.error is None and topic.partitions:
                return len(topic.partitions)
            if time.monotonic() >= deadline:
                raise DefiniteFailure(f"unknown topic {self._topic}: {topic and topic.error}")
            time.sleep(_POLL_S)

    def _high_watermarks(self, partitions: int, deadline: float) -> list[int]:
        ends = []
        for p in range(partitions):
            try:
                _, high = watermarks(self._consumer, TopicPartition(self._topic, p), deadline)
            except KafkaException as e:
                raise DefiniteFailure(f"no high watermark for {self._topic}/{p}: {e}") from e
            ends.append(high)
        return ends

    def _run(self) -> None:
        feed(self._consumer, self._producer, self._handle, self._stop, self._fail)

    def _handle(self, messages: list[Message]) -> None:
        """Applies a batch of messages in order; reports ends and errors where they fall."""
        read: list[tuple[int, int, Record | None]] = []
        for message in messages:
            error = message.error()
            partition, offset = message.partition(), message.offset()
            if error is None:
                if partition is not None and offset is not None:
                    read.append((partition, offset, _record(message.value())))
                continue
            self._replica.apply_all(read)
            read = []
            if error.code() == KafkaError._PARTITION_EOF:
                if partition is not None and offset is not None:
                    self._replica.reached(partition, offset)
            elif error.code() in _TRUNCATION_ERRORS:
                self._fail(
                    f"log of {self._topic}/{partition} truncated below what this instance"
                    f" applied ({error.name()}: {error.str()})"
                )
            elif error.fatal():
                self._fail(f"fatal consumer error on {self._topic}/{partition}: {error.name()}")
            # Other consumer errors are transient (brokers down, transport): librdkafka retries.
        self._replica.apply_all(read)


def _record(value: bytes | None) -> Record | None:
    try:
        return decode(value)
    except MalformedRecord:
        return None  # not ours: it has no effect on the map


def _topic_settings(
    bootstrap: str, client_id: str, topic: str, t: Timeouts, deadline: float
) -> dict[str, str]:
    """Returns the topic's effective settings (broker defaults included), as the brokers say."""
    admin = AdminClient(client_config(bootstrap, f"{client_id}-admin", t))
    resource = ConfigResource("topic", topic)
    remaining = max(0.1, deadline - time.monotonic())
    try:
        entries = admin.describe_configs([resource], request_timeout=remaining)[resource].result(
            timeout=remaining
        )
    except (KafkaException, TimeoutError) as e:
        raise DefiniteFailure(f"no settings for {topic}: {e!r}") from e
    return {name: entry.value for name, entry in entries.items() if entry.value is not None}


def produce(
    producer: Producer,
    topic: str,
    partition: int,
    key: bytes,
    value: bytes | None,
    on_delivery: Callable[[KafkaError | None, Message], None] | None = None,
) -> None:
    """Queues one message for sending. Raises DefiniteFailure when the client refuses it
    (queue full, fatal error state, producer closed): then nothing was sent."""
    try:
        producer.produce(topic, value, key, partition, on_delivery=on_delivery)
    except (BufferError, KafkaException, RuntimeError) as e:
        raise DefiniteFailure(f"produce rejected before sending: {e!r}") from e


def _close_producer(producer: Producer, deadline: float) -> None:
    """Flushes what is queued until deadline, then closes the producer."""
    producer.flush(max(0.0, deadline - time.monotonic()))
    # Purging leaves nothing for close() to flush: it cannot block on dead brokers.
    producer.purge()
    producer.poll(0)
    producer.close()


def watermarks(consumer: Consumer, tp: TopicPartition, deadline: float) -> tuple[int, int]:
    """Returns a partition's low and high watermarks, asking again until the deadline while
    the answer is one a leader change gives for a moment: a new leader does not know its
    high watermark until its followers have fetched from it."""
    while True:
        try:
            low, high = consumer.get_watermark_offsets(
                tp, max(0.1, deadline - time.monotonic()), cached=False
            )
            return low, high
        except KafkaException as e:
            if e.args[0].code() not in _LEADER_MOVING or time.monotonic() >= deadline:
                raise
        time.sleep(min(_WATERMARK_RETRY_S, max(0.0, deadline - time.monotonic())))


def close_within(consumer: Consumer | ShareConsumer, seconds: float) -> None:
    """Closes a consumer, waiting at most seconds: librdkafka's close blocks for as long
    as the group coordinator is unreachable (its broker killed, offsets topic leaderless),
    and a run must not hang on a client it has finished with. One that does not close in
    time is left to its daemon thread. A share consumer's close blocks the same way (seen
    with its partition's leader killed), though its docstring promises about
    socket.timeout.ms."""
    closer = threading.Thread(target=consumer.close, name="consumer-close", daemon=True)
    closer.start()
    closer.join(seconds)
    if closer.is_alive():
        KAFKA_LOG.warning("a consumer did not close within %g s: left behind", seconds)


def client_error(fail: Fail, error: KafkaError) -> None:
    """librdkafka's error callback: a fatal error fails the instance with the cause; any
    other is logged (librdkafka retries those itself: brokers down, transport)."""
    if error.fatal():
        fail(f"fatal Kafka client error: {error.name()}: {error.str()}")
    else:
        KAFKA_LOG.warning("Kafka client error: %s: %s", error.name(), error.str())


def delivered(fail: Fail, pending: Pending[Any], error: KafkaError | None, _: Message) -> None:
    """Delivery report. With retries an earlier try may have landed, so any error is
    Indeterminate for the attempt; a fatal one also fails the instance."""
    if error is None:
        return
    if error.fatal():
        fail(f"fatal producer error: {error.name()}: {error.str()}")
    pending.fail(Indeterminate(f"delivery failed: {error.name()}: {error.str()}"))


def feed(
    consumer: Consumer,
    producer: Producer,
    handle: Callable[[list[Message]], None],
    stop: threading.Event,
    fail: Fail,
) -> None:
    """The consumer thread's loop: hands the messages to handle, in order and in batches,
    and serves the producer's delivery reports, until stop. Whatever ends it early fails
    the instance with the cause, so that no operation waits on a dead thread."""
    try:
        while not stop.is_set():
            # consume() waits out its whole timeout unless the batch fills, which put
            # 50 ms into every operation: wait for one message, then take what is there.
            first = consumer.poll(_POLL_S)
            producer.poll(0)
            if first is not None:
                handle([first, *consumer.consume(_BATCH - 1, 0)])
    except Exception as e:
        fail(f"consumer thread crashed: {e!r}")
