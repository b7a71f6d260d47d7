"""The queue workload's --txn half with no cluster: the generator's transactions, the
outcome of a transaction from what the client saw, the transactional ids handed on to
fence, and a client driven through a fake producer."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from checkers.queue.reader import read_queue_history
from history import Event
from kvstore import DEFAULT_TIMEOUTS
from workloads import queue_client, txn_client
from workloads.core import Context
from workloads.options import QueueOptions
from workloads.queue import MAX_MICRO_OPS, ops, settings, txn_ops
from workloads.queue_client import consumer_config
from workloads.txn_client import (
    ABORTED_ON_PURPOSE,
    CRASHED,
    CrashClock,
    TransactionalIds,
    TxnClient,
    TxnError,
    TxnSeen,
    completed,
    needs_replacing,
    should_abort,
    txn_outcome,
)


def _ctx(**changes: Any) -> Context:
    fields: dict[str, Any] = {
        "bootstrap": "",
        "topic": "t",
        "kafka_config": "safe",
        "store": "linearizable",
        "keys": 4,
        "partitions": 1,
        "replication_factor": 3,
        "timeouts": DEFAULT_TIMEOUTS,
    }
    return Context(**fields, queue=QueueOptions(**({"txn": True} | changes)))


# ---- the generator ---------------------------------------------------------------------


def test_transactions_mix_1_to_4_sends_and_polls_of_unique_values() -> None:
    taken = list(itertools.islice(txn_ops(random.Random(7), 4, False, 0.1), 4000))
    txns = [op for op in taken if op["f"] == "txn"]
    sent = [mop[2] for op in txns for mop in op["value"] if mop[0] == "send"]
    assert len(sent) == len(set(sent)) and sent == sorted(sent) and sent[0] == 1
    for op in txns:
        assert 1 <= len(op["value"]) <= MAX_MICRO_OPS
        for mop in op["value"]:
            assert mop == ["poll"] or (mop[0] == "send" and 0 <= mop[1] < 4 and len(mop) == 3)
    sizes = {len(op["value"]) for op in txns}
    mixed = [op for op in txns if {m[0] for m in op["value"]} == {"send", "poll"}]
    assert sizes == {1, 2, 3, 4} and len(mixed) > 1000
    aborts = sum(op["abort"] for op in txns) / len(txns)
    assert 0.08 < aborts < 0.12
    assigns = [op for op in taken if op["f"] == "assign"]
    assert 50 < len(assigns) < 200 and len(assigns) + len(txns) == len(taken)
    assert all(a["value"] == sorted(set(a["value"])) for a in assigns)


def test_a_group_subscribes_now_and_then_and_abort_p_bounds_the_aborts() -> None:
    grouped = list(itertools.islice(txn_ops(random.Random(1), 3, True, 0.0), 2000))
    assert {op["f"] for op in grouped} == {"txn", "subscribe"}
    assert not any(op.get("abort") for op in grouped)
    always = itertools.islice(txn_ops(random.Random(1), 3, True, 1.0), 500)
    assert all(op["abort"] for op in always if op["f"] == "txn")


def test_the_workload_yields_transactions_only_with_txn() -> None:
    first = next(ops(random.Random(2), _ctx()))
    plain = list(itertools.islice(ops(random.Random(2), _ctx(txn=False)), 50))
    assert first["f"] in ("txn", "assign")
    assert {op["f"] for op in plain} <= {"send", "poll", "assign"}


def test_the_checker_reads_the_clients_completions_as_jepsens_micro_ops() -> None:
    events: list[Event] = []
    asked = [["send", 0, 1], ["poll"], ["send", 1, 2]]
    shapes: list[tuple[str, Any, dict[str, Any]]] = [
        ("ok", [["send", 0, [0, 1]], ["poll", {"0": [[0, 1]]}], ["send", 1, [0, 2]]], {}),
        ("fail", [["send", 0, 1], ["poll", {}], ["send", 1, 2]], {"error": ABORTED_ON_PURPOSE}),
        ("info", [["send", 0, 1], ["poll"], ["send", 1, 2]], {"error": "indeterminate: x"}),
    ]
    for process, (kind, value, extra) in enumerate(shapes):
        events.append({"type": "invoke", "process": process, "f": "txn", "value": asked})
        done = {"type": kind, "process": process, "f": "txn", "value": value}
        events.append(done | extra | {"transactional-id": "t-txn-1#1"})
    for index, event in enumerate(events):
        event |= {"index": index, "time": index * 1000}
    read = read_queue_history(json.loads(json.dumps(events)))
    assert [(s.value, s.outcome, s.offset) for s in read.sends[:2]] == [
        (1, "ok", 0),
        (2, "ok", 0),
    ]
    assert {s.outcome for s in read.sends[2:]} == {"fail", "info"}


# ---- the outcome -----------------------------------------------------------------------

TIMED_OUT = TxnError("commit", "_TIMED_OUT: commit", retriable=True)
ABORTABLE = TxnError("commit", "INVALID_TXN_STATE", requires_abort=True)
FATAL = TxnError("body", "_FENCED: fenced", fatal=True)
UNDELIVERED = TxnError("body", "delivery failed", requires_abort=True)


@pytest.mark.parametrize(
    ("seen", "outcome", "replace"),
    [
        (TxnSeen(committed=True), "ok", False),
        (TxnSeen(chose_abort=True, aborted=True), "fail", False),
        (TxnSeen(chose_abort=True, error=TxnError("abort", "_TIMED_OUT")), "info", True),
        (TxnSeen(error=ABORTABLE, aborted=True), "fail", False),
        (TxnSeen(error=ABORTABLE, abort_error="_TIMED_OUT"), "info", True),
        (TxnSeen(error=UNDELIVERED, aborted=True), "fail", False),
        (TxnSeen(error=TIMED_OUT), "info", True),
        (TxnSeen(error=FATAL), "info", True),
        (TxnSeen(error=TxnError("init", "_TIMED_OUT", retriable=True)), "fail", False),
        (TxnSeen(error=TxnError("init", "_FENCED", fatal=True)), "fail", True),
        (TxnSeen(error=TxnError("init", "UNSUPPORTED")), "fail", True),
        (TxnSeen(error=TxnError("begin", "_STATE")), "fail", True),
    ],
)
def test_the_outcome_is_what_the_client_saw(seen: TxnSeen, outcome: str, replace: bool) -> None:
    assert txn_outcome(seen) == outcome
    assert needs_replacing(seen) is replace


@pytest.mark.parametrize(
    ("error", "abort"),
    [
        (UNDELIVERED, True),
        (TxnError("body", "_STATE"), True),
        (ABORTABLE, True),
        (TIMED_OUT, False),
        (FATAL, False),
        (TxnError("commit", "fatal and abortable", fatal=True, requires_abort=True), False),
        (TxnError("abort", "_TIMED_OUT", requires_abort=True), False),
        (TxnError("init", "_TIMED_OUT", retriable=True), False),
    ],
)
def test_an_error_is_aborted_only_when_the_abort_may_end_the_transaction(
    error: TxnError, abort: bool
) -> None:
    assert should_abort(error) is abort


def test_a_completion_keeps_ok_micro_ops_and_otherwise_the_sends_as_invoked() -> None:
    asked: list[list[Any]] = [["send", 0, 5], ["poll"], ["poll"]]
    done: list[list[Any]] = [["send", 0, [3, 5]], ["poll", {"1": [[0, 9]]}], ["poll"]]
    assert completed(TxnSeen(committed=True), asked, done) == {"type": "ok", "value": done}
    aborted = completed(TxnSeen(chose_abort=True, aborted=True), asked, done)
    assert aborted == {
        "type": "fail",
        "value": [["send", 0, 5], ["poll", {"1": [[0, 9]]}], ["poll"]],
        "error": ABORTED_ON_PURPOSE,
    }
    unknown = completed(TxnSeen(error=TIMED_OUT), asked, done)
    assert unknown["type"] == "info" and unknown["value"] == aborted["value"]
    assert unknown["error"] == "indeterminate: commit: _TIMED_OUT: commit"
    then = completed(TxnSeen(error=UNDELIVERED, aborted=True), asked, done)
    assert then["error"] == "body: delivery failed; then aborted"


def test_a_released_transactional_id_is_taken_again_by_the_next_client() -> None:
    ids = TransactionalIds("store-3")
    assert ids.take() == ("store-3-txn-1", 1)
    assert ids.take() == ("store-3-txn-2", 1)
    ids.release("store-3-txn-1", 1)
    assert ids.take() == ("store-3-txn-1", 2)
    assert ids.take() == ("store-3-txn-3", 1)


def test_consumers_read_at_the_isolation_level_asked_and_a_txn_group_never_autocommits() -> None:
    s = settings(_ctx(isolation_level="read_uncommitted", consumer_group=True))
    config = consumer_config(s, "p0")
    assert config["isolation.level"] == "read_uncommitted"
    assert config["enable.auto.commit"] is False
    plain = consumer_config(dataclasses.replace(s, txn=False, auto_commit=True), "p0")
    assert plain["enable.auto.commit"] is True


# ---- the client, on a fake producer -------------------------------------------------


class FakeProducer:
    """librdkafka's transactional producer as far as the client uses it; each method
    raises what `fails` maps its name to."""

    def __init__(self, config: dict[str, Any], fails: dict[str, KafkaError]) -> None:
        self.config = config
        self.fails = fails
        self.calls: list[str] = []
        self.pending: list[Callable[[], None]] = []
        self.offset = 10

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fails:
            raise KafkaException(self.fails[name])

    def init_transactions(self, _timeout: float) -> None:
        self._call("init")

    def begin_transaction(self) -> None:
        self._call("begin")

    def produce(self, _topic: str, value: bytes, partition: int, on_delivery: Any) -> None:
        self._call("produce")
        if not isinstance(partition, int):  # as confluent-kafka refuses it
            raise TypeError("an integer is required")
        offset, self.offset = self.offset, self.offset + 1
        msg = FakeMessage(offset)
        self.pending.append(lambda: on_delivery(self.fails.get("deliver"), msg))

    def flush(self, _timeout: float) -> int:
        if "flush" in self.fails:
            raise KafkaException(self.fails["flush"])
        for report in self.pending:
            report()
        self.pending.clear()
        return 0

    def commit_transaction(self, _timeout: float) -> None:
        self._call("commit")

    def abort_transaction(self, _timeout: float) -> None:
        self._call("abort")


class FakeMessage:
    def __init__(self, offset: int) -> None:
        self._offset = offset

    def offset(self) -> int:
        return self._offset


class FakeConsumer:
    def __init__(self, _config: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


def _client(
    monkeypatch: pytest.MonkeyPatch,
    ids: TransactionalIds,
    crash_every_s: float | None = None,
    **fails: KafkaError,
) -> tuple[TxnClient, list[FakeProducer]]:
    made: list[FakeProducer] = []

    def producer(config: dict[str, Any]) -> FakeProducer:
        made.append(FakeProducer(config, fails))
        return made[-1]

    monkeypatch.setattr(txn_client, "Producer", producer)
    monkeypatch.setattr(queue_client, "Consumer", FakeConsumer)
    return TxnClient(settings(_ctx()), "p0", ids, crash_every_s), made


SENDS = {"f": "txn", "value": [["send", 1, 7], ["send", 2, 8]]}


def test_a_commit_that_returns_is_ok_with_each_sends_offset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, [producer] = _client(monkeypatch, TransactionalIds("t"))
    done = client.invoke(SENDS | {"abort": False})
    again = client.invoke(SENDS | {"abort": True})
    assert done["type"] == "ok" and done["value"] == [["send", 1, [10, 7]], ["send", 2, [11, 8]]]
    assert done["transactional-id"] == "t-txn-1#1"
    assert again == {
        "type": "fail",
        "value": SENDS["value"],
        "error": ABORTED_ON_PURPOSE,
        "transactional-id": "t-txn-1#1",
    }
    assert producer.calls.count("init") == 1 and producer.calls[-1] == "abort"
    assert producer.config["transactional.id"] == "t-txn-1" and "retries" not in producer.config
    assert client.failure is None


def test_a_commit_that_times_out_is_info_and_the_next_client_takes_the_id_to_fence_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = TransactionalIds("t")
    timed_out = KafkaError(KafkaError._TIMED_OUT, "commit", retriable=True)
    client, [producer] = _client(monkeypatch, ids, commit=timed_out)
    done = client.invoke(SENDS)
    assert done["type"] == "info" and "commit: _TIMED_OUT" in done["error"]
    assert "abort" not in producer.calls and client.failure is not None
    client.close()
    successor, _ = _client(monkeypatch, ids)
    assert successor.invoke(SENDS)["transactional-id"] == "t-txn-1#2"


def test_an_abortable_error_is_aborted_and_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    abortable = KafkaError(KafkaError.INVALID_TXN_STATE, "no", txn_requires_abort=True)
    client, [producer] = _client(monkeypatch, TransactionalIds("t"), commit=abortable)
    done = client.invoke(SENDS)
    assert done["type"] == "fail" and done["error"].endswith("then aborted")
    assert producer.calls[-2:] == ["commit", "abort"] and client.failure is None


def test_a_failed_delivery_aborts_and_fails_and_a_failed_abort_is_info(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lost = KafkaError(KafkaError._MSG_TIMED_OUT, "gone")
    client, _ = _client(monkeypatch, TransactionalIds("t"), deliver=lost)
    assert client.invoke(SENDS)["type"] == "fail"
    stuck = KafkaError(KafkaError._TIMED_OUT, "abort", retriable=True)
    client, _ = _client(monkeypatch, TransactionalIds("u"), deliver=lost, abort=stuck)
    done = client.invoke(SENDS)
    assert done["type"] == "info" and "the abort failed" in done["error"]
    assert client.failure is not None


def test_a_producer_failed_for_good_still_closes_and_frees_its_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fatal = KafkaError(KafkaError.INVALID_TXN_STATE, "fenced", fatal=True)
    ids = TransactionalIds("t")
    client, [producer] = _client(monkeypatch, ids, flush=fatal)
    done = client.invoke(SENDS)
    assert done["type"] == "info" and client.failure is not None
    assert "abort" not in producer.calls
    client.close()  # flush raises the fatal error again: close must not
    assert ids.take() == ("t-txn-1", 2)


def test_an_unexpected_error_in_the_body_is_aborted_and_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, [producer] = _client(monkeypatch, TransactionalIds("t"))
    done = client.invoke({"f": "txn", "value": [["send", "one", 7]]})
    assert done["type"] == "fail" and producer.calls[-1] == "abort", done


def test_a_transaction_that_did_not_commit_is_rewound_to_the_first_record_it_read() -> None:
    from workloads.txn_client import first_offsets

    done = [
        ["send", 0, [4, 9]],
        ["poll", {"1": [[7, 3], [8, 5]], "2": [[0, 6]]}],
        ["poll", {"1": [[9, 8]], "0": []}],
        ["poll"],  # asked, never served: the transaction broke before it
    ]
    assert first_offsets(done) == {1: 7, 2: 0}


def test_a_client_that_crashes_leaves_its_transaction_open_fails_it_and_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = TransactionalIds("t")
    client, [producer] = _client(monkeypatch, ids, crash_every_s=1e-9)
    done = client.invoke(SENDS)
    assert done["type"] == "fail" and done["error"] == CRASHED
    assert done["value"] == SENDS["value"]
    assert "commit" not in producer.calls and "abort" not in producer.calls
    assert producer.calls.count("produce") == 2 and client.failure is not None
    client.close()
    successor, [fencer] = _client(monkeypatch, ids)
    assert successor.invoke(SENDS)["type"] == "ok" and fencer.calls[0] == "init"


def test_a_crash_comes_within_twice_the_mean_and_never_without_one() -> None:
    assert not CrashClock(None, random.Random(1)).due()
    assert not CrashClock(3600.0, random.Random(1)).due()
    assert CrashClock(1e-9, random.Random(1)).due()
