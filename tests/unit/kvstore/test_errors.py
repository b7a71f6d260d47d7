"""Errors are surfaced, never swallowed: fatal librdkafka errors and a dead consumer thread
fail the instance with the cause, close() ends waits at once as info, a closed client's
refusal is a DefiniteFailure, nothing but StoreErrors leave the store, and keys and values
are checked before anything is sent; watermark queries wait out a leader change; librdkafka
settings from the environment are parsed and applied."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from kvstore import (
    DEFAULT_TIMEOUTS,
    VARIANTS,
    DefiniteFailure,
    Indeterminate,
    InvalidArgument,
    Timeouts,
    kafka_log,
)
from kvstore.kafka_log import (
    KAFKA_LOG,
    KafkaConnection,
    client_error,
    close_within,
    delivered,
    feed,
    parse_overrides,
    produce,
    watermarks,
)
from kvstore.kafka_map import KafkaMap
from kvstore.memlog import MemoryLog
from kvstore.replica import Pending, Replica
from tests.unit.kvstore.test_map import Call, instances, wait_for
from workloads.kv import HANDLERS
from workloads.store_client import StoreClient

# Nothing listens here: the clients are built and closed without any broker.
NOWHERE = "127.0.0.1:9"


def test_a_fatal_client_error_fails_the_instance_with_the_cause() -> None:
    replica = Replica(1)
    waiting = replica.expect("a1", 0, lambda _s, o: o)
    client_error(replica.fail, KafkaError(KafkaError._FATAL, "producer fenced", fatal=True))
    assert replica.failure is not None and "producer fenced" in replica.failure
    assert waiting.wait(0)
    with pytest.raises(Indeterminate, match="producer fenced"):
        waiting.result()


def test_a_transient_client_error_is_logged_and_the_instance_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    replica = Replica(1)
    KAFKA_LOG.addHandler(caplog.handler)  # it does not propagate: a run attaches its own
    try:
        client_error(replica.fail, KafkaError(KafkaError._ALL_BROKERS_DOWN, "all down"))
    finally:
        KAFKA_LOG.removeHandler(caplog.handler)
    assert replica.failure is None
    assert "all down" in caplog.text


def test_a_fatal_delivery_error_fails_the_attempt_and_the_instance() -> None:
    replica = Replica(1)
    pending: Pending[Any] = replica.expect("a1", 0, lambda _s, o: o)
    other = replica.expect("a2", 0, lambda _s, o: o)
    error = KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "sequence desync", fatal=True)
    delivered(replica.fail, pending, error, None)  # type: ignore[arg-type]
    assert replica.failure is not None and "sequence desync" in replica.failure
    for waiting in (pending, other):
        with pytest.raises(Indeterminate):
            waiting.result()


def test_a_plain_delivery_error_fails_only_its_attempt() -> None:
    replica = Replica(1)
    pending: Pending[Any] = replica.expect("a1", 0, lambda _s, o: o)
    error = KafkaError(KafkaError._MSG_TIMED_OUT, "timed out")
    delivered(replica.fail, pending, error, None)  # type: ignore[arg-type]
    assert replica.failure is None
    with pytest.raises(Indeterminate, match="_MSG_TIMED_OUT"):
        pending.result()


def test_a_consumer_thread_that_dies_fails_the_instance_with_the_cause() -> None:
    consumer = Consumer({"bootstrap.servers": NOWHERE, "group.id": "g"})
    producer = Producer({"bootstrap.servers": NOWHERE})
    consumer.close()  # its next consume() raises, as a broken client would
    replica = Replica(1)
    waiting = replica.expect("a1", 0, lambda _s, o: o)
    thread = threading.Thread(
        target=feed, args=(consumer, producer, lambda _m: None, threading.Event(), replica.fail)
    )
    thread.start()
    thread.join(5)
    assert not thread.is_alive()
    assert replica.failure is not None and "consumer thread crashed" in replica.failure
    with pytest.raises(Indeterminate, match="consumer thread crashed"):
        waiting.result()


def test_a_closed_producer_refusing_a_message_is_a_definite_failure() -> None:
    producer = Producer({"bootstrap.servers": NOWHERE})
    producer.close()
    with pytest.raises(DefiniteFailure, match="before sending"):
        produce(producer, "t", 0, b"k", b"v")


def test_close_ends_every_wait_at_once_as_indeterminate() -> None:
    log = MemoryLog(hold=True)
    (m,) = instances(KafkaMap, log, 1)
    m._timeouts = Timeouts(operation=30.0)  # only close() can end the wait in time
    put = Call(lambda: m.put("k", 1))
    wait_for(lambda: log.length() == 1)
    started = time.monotonic()
    m.close()
    put.join(2)
    assert not put.is_alive() and time.monotonic() - started < 1
    assert isinstance(put.error, Indeterminate) and "instance closed" in str(put.error)
    with pytest.raises(DefiniteFailure, match="instance closed"):
        m.put("k", 2)
    assert log.length() == 1, "nothing is sent after close"
    assert m.failure == "instance closed"


def test_the_first_cause_of_failure_is_the_one_kept() -> None:
    (m,) = instances(KafkaMap, MemoryLog(), 1)
    m._replica.fail("log truncated")
    m.close()
    assert m.failure == "log truncated"


class _Broken(KafkaMap):
    def _local_entry(self, key: Any) -> Any:
        raise KeyError("a bug")


def test_an_unexpected_exception_leaves_the_store_as_indeterminate() -> None:
    (m,) = instances(_Broken, MemoryLog(), 1)
    with pytest.raises(Indeterminate, match="unexpected KeyError") as caught:
        m.put("k", 1)
    assert isinstance(caught.value.__cause__, KeyError)


# --- keys and values are checked before anything is sent --------------------------------

BAD = [None, True, False, 1.5, b"bytes", [1], {"a": 1}]


@pytest.mark.parametrize("cls", VARIANTS.values())
@pytest.mark.parametrize("bad", BAD)
def test_a_value_that_is_not_a_str_or_an_int_is_refused_before_sending(
    cls: type[KafkaMap], bad: Any
) -> None:
    log = MemoryLog()
    (m,) = instances(cls, log, 1)
    m.put("k", 1)
    sent = log.length()
    for call in (
        lambda: m.put("k", bad),
        lambda: m.put_if_absent("fresh", bad),
        lambda: m.replace("k", 1, bad),
        lambda: m.replace("k", bad, 2),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert isinstance(caught.value, InvalidArgument)
    assert log.length() == sent
    assert m.get("k") == 1 and m.get("fresh") is None


@pytest.mark.parametrize("cls", VARIANTS.values())
@pytest.mark.parametrize("bad", [None, True, 1.5, (1,)])
def test_a_key_that_is_not_a_str_or_an_int_is_refused_before_sending(
    cls: type[KafkaMap], bad: Any
) -> None:
    log = MemoryLog()
    (m,) = instances(cls, log, 1)
    for call in (
        lambda: m.get(bad),
        lambda: m.put(bad, 1),
        lambda: m.put_if_absent(bad, 1),
        lambda: m.replace(bad, 1, 2),
        lambda: m.remove(bad),
    ):
        with pytest.raises(InvalidArgument):
            call()
    assert log.length() == 0


def test_str_and_int_keys_and_values_are_served() -> None:
    (m,) = instances(KafkaMap, MemoryLog(), 1)
    m.put(1, "one")
    m.put("two", 2)
    assert (m.get(1), m.get("two"), m.get("1")) == ("one", 2, None)


def test_a_refused_value_is_a_fail_op_in_the_workload() -> None:
    (m,) = instances(KafkaMap, MemoryLog(), 1)
    completion = StoreClient(m, HANDLERS).invoke({"f": "put", "key": 0, "value": None})
    assert completion["type"] == "fail" and "must be a str or an int" in completion["error"]


def test_a_consumer_whose_close_blocks_is_left_behind_within_the_bound() -> None:
    release = threading.Event()

    class Stuck:
        """Closes only when released, as librdkafka does while the coordinator is away."""

        def close(self) -> None:
            release.wait(30)

    started = time.monotonic()
    close_within(Stuck(), 0.3)  # type: ignore[arg-type]
    assert time.monotonic() - started < 2
    release.set()


def test_close_survives_a_producer_whose_flush_raises_and_still_closes_the_consumer() -> None:
    """confluent-kafka's flush raises SystemError after a fatal idempotent-producer error
    (seen on the real cluster after an unclean election): close must still not raise."""
    closed: list[str] = []

    class BrokenProducer:
        def flush(self, timeout: float) -> int:
            raise SystemError("<class 'Indeterminate'> returned a result with an exception set")

    class Consumer:
        def close(self) -> None:
            closed.append("consumer")

    conn = KafkaConnection.__new__(KafkaConnection)  # the clients alone, no cluster
    conn._topic, conn._timeouts, conn._stop = "t", DEFAULT_TIMEOUTS, threading.Event()
    conn._producer, conn._consumer = BrokenProducer(), Consumer()  # type: ignore[assignment]
    conn.close()
    assert closed == ["consumer"]


class _Watermarks:
    """A consumer whose watermark queries raise the given errors first, then answer."""

    def __init__(self, *errors: int) -> None:
        self.errors = list(errors)
        self.asked = 0

    def get_watermark_offsets(self, _tp: Any, _timeout: float, cached: bool) -> tuple[int, int]:
        self.asked += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return 3, 17


def test_watermarks_ask_again_while_a_new_leader_does_not_know_its_high_watermark() -> None:
    consumer = _Watermarks(KafkaError.OFFSET_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION)
    tp = TopicPartition("t", 0)
    assert watermarks(consumer, tp, time.monotonic() + 5) == (3, 17)  # type: ignore[arg-type]
    assert consumer.asked == 3


def test_watermarks_raise_any_other_error_and_stop_asking_at_the_deadline() -> None:
    tp = TopicPartition("t", 0)
    other = _Watermarks(KafkaError.UNKNOWN_TOPIC_OR_PART)
    with pytest.raises(KafkaException, match="UNKNOWN_TOPIC_OR_PART"):
        watermarks(other, tp, time.monotonic() + 5)  # type: ignore[arg-type]
    assert other.asked == 1
    moving = _Watermarks(*[KafkaError.OFFSET_NOT_AVAILABLE] * 100)
    started = time.monotonic()
    with pytest.raises(KafkaException, match="OFFSET_NOT_AVAILABLE"):
        watermarks(moving, tp, started + 0.5)  # type: ignore[arg-type]
    assert time.monotonic() - started < 2
    assert 2 <= moving.asked < 10


def test_librdkafka_settings_from_the_environment_are_parsed_and_go_over_the_shared_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse_overrides("") == {}
    assert parse_overrides("a.b=1, c=x=y,junk") == {"a.b": "1", "c": "x=y"}
    monkeypatch.setattr(kafka_log, "LIBRDKAFKA_OVERRIDES", {"socket.timeout.ms": "777"})
    config = kafka_log.client_config("b:9092", "c", DEFAULT_TIMEOUTS)
    assert config["socket.timeout.ms"] == "777" and config["bootstrap.servers"] == "b:9092"
