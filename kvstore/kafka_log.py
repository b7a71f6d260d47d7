"""The Kafka side of one map instance: a producer, and a consumer thread feeding its replica.

Every librdkafka wait is bounded by the instance's Timeouts.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
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

from kvstore.api import DEFAULT_TIMEOUTS, Timeouts
from kvstore.errors import DefiniteFailure, Indeterminate
from kvstore.records import MalformedRecord, Record, decode, encode
from kvstore.replica import Pending, Replica

# With auto.offset.reset=error these mean the log we applied is not the log the
# brokers now hold (truncation after an unclean election): the replica is void.
_FATAL_CONSUMER_ERRORS = frozenset(
    {KafkaError._AUTO_OFFSET_RESET, KafkaError._LOG_TRUNCATION, KafkaError.OFFSET_OUT_OF_RANGE}
)
_POLL_S = 0.05

# librdkafka logs every refused connection; during faults that is expected noise,
# so it goes to this logger, silent unless a run attaches a handler.
KAFKA_LOG = logging.getLogger("kvstore.kafka")
KAFKA_LOG.addHandler(logging.NullHandler())
KAFKA_LOG.propagate = False


def _client_config(bootstrap: str, client_id: str, t: Timeouts) -> dict[str, Any]:
    """Returns what the producer and the consumer share: where, who, and bounded sockets."""
    return {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "logger": KAFKA_LOG,
        # Nagle's algorithm would hold small requests back for tens of milliseconds.
        "socket.nagle.disable": True,
        "socket.timeout.ms": t.socket_ms,
        "socket.connection.setup.timeout.ms": t.connect_ms,
        "reconnect.backoff.max.ms": t.reconnect_backoff_max_ms,
    }


def producer_config(bootstrap: str, client_id: str, t: Timeouts) -> dict[str, Any]:
    """Returns the producer settings: acks=all and bounded timeouts (KAFKA-NOTES.md)."""
    return _client_config(bootstrap, f"{client_id}-producer", t) | {
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
    return _client_config(bootstrap, f"{client_id}-consumer", t) | {
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

    Opening it reads the topic from the beginning up to the high watermarks
    taken at open, so the instance serves only once it has caught up.
    """

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        client_id: str,
        timeouts: Timeouts = DEFAULT_TIMEOUTS,
        *,
        compacted: bool = False,
    ) -> None:
        self._topic = topic
        self._timeouts = timeouts
        self._compacted = compacted
        self._stop = threading.Event()
        self._consumer = Consumer(consumer_config(bootstrap, client_id, timeouts))
        self._producer = Producer(producer_config(bootstrap, client_id, timeouts))
        try:
            deadline = time.monotonic() + timeouts.catch_up
            partitions = self._partition_count(deadline)
            self._replica = Replica(partitions)
            ends = self._high_watermarks(partitions, deadline)
            self._consumer.assign(
                [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
            )
            self._thread = threading.Thread(
                target=self._run, name=f"kvstore-{client_id}", daemon=True
            )
            self._thread.start()
            self._catch_up(ends, deadline)
        except BaseException:
            self.close()
            raise

    @property
    def replica(self) -> Replica:
        """The instance's copy of the map."""
        return self._replica

    def send(self, partition: int, record: Record, pending: Pending[Any]) -> None:
        """Produces record; a delivery error later fails `pending` as Indeterminate."""
        key, value = encode(record)
        try:
            self._producer.produce(
                self._topic, value, key, partition, on_delivery=partial(_delivered, pending)
            )
        except (BufferError, KafkaException) as e:
            raise DefiniteFailure(f"produce rejected before sending: {e}") from e

    def discard(self, partition: int, attempt: str) -> None:
        """Produces a tombstone for attempt when the topic is compacted; errors do not matter."""
        if not self._compacted:
            return
        # A missing tombstone only costs space.
        with contextlib.suppress(BufferError, KafkaException):
            self._producer.produce(self._topic, None, attempt.encode(), partition)

    def close(self) -> None:
        """Stops the consumer thread and releases both clients within Timeouts.close."""
        if self._stop.is_set():
            return
        deadline = time.monotonic() + self._timeouts.close
        self._stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._producer.flush(max(0.0, deadline - time.monotonic()))
        # Purging leaves nothing for close() to flush, so it cannot block on dead brokers.
        self._producer.purge()
        self._producer.poll(0)
        self._producer.close()
        if thread is None or not thread.is_alive():
            self._consumer.close()

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
            tp = TopicPartition(self._topic, p)
            try:
                _, high = self._consumer.get_watermark_offsets(
                    tp, max(0.1, deadline - time.monotonic()), cached=False
                )
            except KafkaException as e:
                raise DefiniteFailure(f"no high watermark for {self._topic}/{p}: {e}") from e
            ends.append(high)
        return ends

    def _run(self) -> None:
        """The consumer thread: applies records in order and serves delivery reports."""
        while not self._stop.is_set():
            message = self._consumer.poll(_POLL_S)
            self._producer.poll(0)
            if message is None:
                continue
            try:
                self._handle(message)
            except Exception as e:  # the thread must not die silently with ops waiting on it
                self._replica.fail(f"consumer thread crashed: {e!r}")
                return

    def _handle(self, message: Message) -> None:
        error = message.error()
        partition, offset = message.partition(), message.offset()
        if error is None and partition is not None and offset is not None:
            try:
                record = decode(message.value())
            except MalformedRecord:
                record = None  # not ours: it has no effect on the map
            self._replica.apply(partition, offset, record)
        elif error is None:
            return
        elif error.code() == KafkaError._PARTITION_EOF:
            if partition is not None and offset is not None:
                self._replica.reached(partition, offset)
        elif error.fatal() or error.code() in _FATAL_CONSUMER_ERRORS:
            self._replica.fail(f"consumer error on {self._topic}/{partition}: {error.name()}")
        # Other consumer errors are transient (brokers down, transport): librdkafka retries.


def _delivered(pending: Pending[Any], error: KafkaError | None, _message: Message) -> None:
    """Delivery report. With retries an earlier try may have landed: any error is Indeterminate."""
    if error is not None:
        pending.fail(Indeterminate(f"delivery failed: {error.name()}: {error.str()}"))
