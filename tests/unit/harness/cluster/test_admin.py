"""Topic creation on a loaded cluster: a time-out is tried again, and on a retry the
topic already existing with our assignment (the timed-out attempt landed) is success;
anything else that already exists, or any other refusal, is an error at once."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from confluent_kafka import KafkaError, KafkaException

from harness.cluster import admin as admin_module
from harness.cluster.admin import Admin, AdminError
from nemesis.cluster import PartitionState

ASSIGNMENT = [[1, 2, 3], [2, 3, 1]]


class _Client:
    """Answers each create_topics call with the next outcome: None (created) or an error
    code."""

    def __init__(self, outcomes: list[int | None]) -> None:
        self.outcomes = outcomes
        self.calls = 0

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[None]]:
        outcome = self.outcomes[self.calls]
        self.calls += 1
        future: Future[None] = Future()
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(KafkaException(KafkaError(outcome)))
        return {topics[0].topic: future}


def _admin(
    outcomes: list[int | None], existing: list[list[int]] | None = None
) -> tuple[Admin, _Client]:
    admin = Admin("127.0.0.1:1", timeout=0.1)
    client = _Client(outcomes)
    admin._client = client  # type: ignore[assignment]
    states = [PartitionState(i, r[0], tuple(r), tuple(r)) for i, r in enumerate(existing or [])]
    admin.partitions = lambda topic: states  # type: ignore[method-assign]
    return admin, client


def test_a_time_out_is_tried_again() -> None:
    admin, client = _admin([KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT, None])
    admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 3


def test_a_timed_out_attempt_that_landed_is_success() -> None:
    admin, client = _admin([KafkaError._TIMED_OUT, KafkaError.TOPIC_ALREADY_EXISTS], ASSIGNMENT)
    admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 2


def test_a_landed_topic_not_yet_in_the_metadata_is_waited_for() -> None:
    admin, client = _admin([KafkaError._TIMED_OUT, KafkaError.TOPIC_ALREADY_EXISTS])
    answers = [
        [],
        [],
        [PartitionState(i, r[0], tuple(r), tuple(r)) for i, r in enumerate(ASSIGNMENT)],
    ]
    admin.partitions = lambda topic: answers.pop(0) if len(answers) > 1 else answers[0]  # type: ignore[method-assign]
    admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 2


def test_a_topic_that_existed_before_the_first_attempt_is_an_error() -> None:
    admin, client = _admin([KafkaError.TOPIC_ALREADY_EXISTS], ASSIGNMENT)
    with pytest.raises(AdminError, match="could not create topic 't'"):
        admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 1


def test_another_assignment_found_on_a_retry_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin_module, "METADATA_WAIT_S", 0.0)
    admin, client = _admin([KafkaError._TIMED_OUT, KafkaError.TOPIC_ALREADY_EXISTS], [[3, 2, 1]])
    with pytest.raises(AdminError):
        admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 2


def test_a_refusal_that_is_no_time_out_is_an_error_at_once() -> None:
    admin, client = _admin([KafkaError.INVALID_REPLICA_ASSIGNMENT])
    with pytest.raises(AdminError, match="could not create topic"):
        admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 1


def test_time_outs_stop_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin_module, "CREATE_TOPIC_S", 0.0)
    admin, client = _admin([KafkaError._TIMED_OUT, None])
    with pytest.raises(AdminError, match=r"_TIMED_OUT|Timed out"):
        admin.create_topic("t", ASSIGNMENT)
    assert client.calls == 1


class _Metadata:
    """librdkafka's cluster metadata as list_topics returns it: three brokers, and topic t
    with two whole partitions when the answering broker knows it."""

    def __init__(self, knows: bool) -> None:
        self.controller_id = 1
        self.brokers = {i: SimpleNamespace(id=i, host=f"10.0.0.{i}", port=9092) for i in (1, 2, 3)}
        partitions = {
            i: SimpleNamespace(id=i, leader=r[0], replicas=r, isrs=r)
            for i, r in enumerate(ASSIGNMENT)
        }
        self.topics = {"t": SimpleNamespace(partitions=partitions)} if knows else {}


class _Brokers:
    """Stands in for AdminClient: a client made with one broker's address asks that broker,
    which learns topic t after `lag` questions; the cluster-wide client knows it at once."""

    lag: ClassVar[int] = 2
    asked: ClassVar[dict[str, int]] = {}

    def __init__(self, config: dict[str, Any]) -> None:
        self.address = config["bootstrap.servers"]

    def list_topics(self, timeout: float) -> _Metadata:
        n = _Brokers.asked[self.address] = _Brokers.asked.get(self.address, 0) + 1
        return _Metadata(self.address != "10.0.0.3:9092" or n > _Brokers.lag)


def test_a_full_isr_is_waited_for_until_every_broker_knows_the_topic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(admin_module, "AdminClient", _Brokers)
    monkeypatch.setattr("harness.cluster.admin.time.sleep", lambda s: None)
    _Brokers.asked = {}
    parts = Admin("10.0.0.1:9092,10.0.0.2:9092,10.0.0.3:9092").wait_full_isr("t", 5)
    assert [list(p.replicas) for p in parts] == ASSIGNMENT
    # Broker 3 was asked until it knew the topic: twice without it, once with.
    assert _Brokers.asked["10.0.0.3:9092"] == _Brokers.lag + 1


def test_a_broker_that_never_learns_the_topic_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin_module, "AdminClient", _Brokers)
    monkeypatch.setattr(_Brokers, "lag", 10**9)
    _Brokers.asked = {}
    with pytest.raises(AdminError, match=r"broker 10\.0\.0\.3:9092 does not know it whole yet"):
        Admin("10.0.0.1:9092").wait_full_isr("t", 0.6)
