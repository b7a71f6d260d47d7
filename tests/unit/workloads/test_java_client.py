"""The Java client of --txn with no cluster and no JVM: the driver's settings, the facts of
its replies read back, and a client driven through a scripted driver, whose completions
follow librdkafka's client's rules (ok, fail, info, rewind, fencing, crashes); and the
`--client` option."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import build_parser, main
from harness.commands.run import spec_from_args
from harness.spec import TestSpec
from kvstore import DEFAULT_TIMEOUTS
from workloads import java_client, queue
from workloads.core import Context, OpDict
from workloads.java_client import JavaTxnClient, driver_config, notes_in, seen_in
from workloads.java_driver import COMPILE_JARS, DriverError, jars
from workloads.options import QueueOptions
from workloads.queue_client import QueueSettings
from workloads.txn_rules import ABORTED_ON_PURPOSE, CRASHED, TransactionalIds, TxnError

SETTINGS = QueueSettings(
    bootstrap="b:9092",
    topic="t",
    partitions=4,
    acks="all",
    idempotence=True,
    consumer_group=False,
    timeouts=DEFAULT_TIMEOUTS,
    txn=True,
)


# ---- the driver's settings -------------------------------------------------------------


def test_the_producer_is_transactional_idempotent_and_every_wait_is_bounded() -> None:
    config = driver_config(SETTINGS, "p3", "t-txn-2")
    producer = config["producer"]
    assert producer["transactional.id"] == "t-txn-2" and producer["enable.idempotence"]
    assert producer["acks"] == "all" and producer["client.id"] == "p3-producer"
    assert producer["max.block.ms"] == DEFAULT_TIMEOUTS.operation * 1000
    # The Java client refuses a delivery timeout below linger.ms + request.timeout.ms.
    assert producer["delivery.timeout.ms"] >= producer["linger.ms"] + producer["request.timeout.ms"]
    assert producer["transaction.timeout.ms"] >= producer["delivery.timeout.ms"]
    assert (config["topic"], config["partitions"], config["group"]) == ("t", 4, False)
    json.dumps(config)  # it travels as one JSON line


def test_an_assigned_consumer_never_resets_and_a_group_commits_only_in_transactions() -> None:
    alone = driver_config(SETTINGS, "p0", "x")["consumer"]
    assert alone["auto.offset.reset"] == "none" and alone["group.id"] == "t-p0"
    assert alone["isolation.level"] == "read_committed" and not alone["enable.auto.commit"]
    grouped = driver_config(
        dataclasses.replace(SETTINGS, consumer_group=True, isolation_level="read_uncommitted"),
        "p0",
        "x",
    )
    consumer = grouped["consumer"]
    assert consumer["group.id"] == "t-group" and consumer["auto.offset.reset"] == "earliest"
    assert consumer["isolation.level"] == "read_uncommitted" and not consumer["enable.auto.commit"]
    assert grouped["group"] is True


def test_jars_are_found_by_prefix_and_version_and_a_missing_one_is_named(tmp_path: Path) -> None:
    for name in (
        "kafka-clients-4.4.0.jar",
        "jackson-databind-2.21.7.jar",
        "jackson-core-2.21.7.jar",
        "jackson-core-asl-1.9.13.jar",
        "jackson-annotations-2.21.jar",
    ):
        (tmp_path / name).touch()
    found = [p.name for p in jars(tmp_path, COMPILE_JARS)]
    assert found == [
        "kafka-clients-4.4.0.jar",
        "jackson-databind-2.21.7.jar",
        "jackson-core-2.21.7.jar",
        "jackson-annotations-2.21.jar",
    ]
    with pytest.raises(DriverError, match="zstd-jni-"):
        jars(tmp_path, ("zstd-jni-",))


# ---- the driver's replies --------------------------------------------------------------


def test_a_reply_gives_back_the_facts_the_rules_need() -> None:
    assert seen_in({"committed": True}, False).committed
    crashed = seen_in({"crashed": True}, True)
    assert crashed.crashed and crashed.chose_abort and crashed.error is None
    error = {"stage": "commit", "text": "TimeoutException: t", "retriable": True}
    seen = seen_in({"error": error}, False)
    assert seen.error == TxnError("commit", "TimeoutException: t", retriable=True)
    with pytest.raises(ValueError, match="no stage"):
        seen_in({"error": {"stage": "later", "text": "x"}}, False)
    with pytest.raises(ValueError, match="no end"):
        seen_in({"done": []}, False)
    assert notes_in({"errors": [], "rebalanced": {"assigned": [1]}, "x": 1}) == {
        "rebalanced": {"assigned": [1]}
    }


# ---- a client through a scripted driver --------------------------------------------------


class FakeDriver:
    """Answers each request with the next scripted reply (a DriverError is raised)."""

    def __init__(self, replies: list[OpDict | DriverError]) -> None:
        self.replies = list(replies)
        self.asked: list[OpDict] = []
        self.killed = False
        self.closed = False

    def ask(self, request: OpDict, timeout: float) -> OpDict:
        assert timeout > 0
        self.asked.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, DriverError):
            raise reply
        return reply

    def kill(self) -> None:
        self.killed = True

    def close(self, timeout: float) -> None:
        self.closed = True


def _client(
    replies: list[OpDict | DriverError], ids: TransactionalIds | None = None, **kw: Any
) -> tuple[JavaTxnClient, FakeDriver]:
    driver = FakeDriver(replies)

    def start(config: OpDict, label: str, timeout: float) -> FakeDriver:
        assert label.startswith(config["producer"]["transactional.id"] + "#")
        return driver

    client = JavaTxnClient(SETTINGS, "p0", ids or TransactionalIds("t"), start=start, **kw)
    return client, driver


TXN = {"f": "txn", "value": [["poll"], ["send", 2, 7]], "abort": False}
READ = ["poll", {"1": [[5, 3], [6, 4]]}]


def test_a_commit_is_ok_with_offsets_and_the_transactional_id() -> None:
    done = [READ, ["send", 2, [11, 7]]]
    client, driver = _client([{"done": done, "committed": True}])
    completion = client.invoke(TXN)
    assert completion == {"type": "ok", "value": done, "transactional-id": "t-txn-1#1"}
    assert driver.asked == [{"f": "txn", "value": TXN["value"], "abort": False, "crash": False}]
    assert client.failure is None


def test_a_chosen_abort_fails_and_rewinds_the_consumer() -> None:
    done = [READ, ["send", 2, [11, 7]]]
    rewound = {"value": {"1": 5}}
    client, driver = _client([{"done": done, "aborted": True}, rewound])
    completion = client.invoke(TXN | {"abort": True})
    assert completion["type"] == "fail" and completion["error"] == ABORTED_ON_PURPOSE
    assert completion["value"] == [READ, ["send", 2, 7]]  # sends as invoked
    assert completion["rewound"] == {"1": 5}
    assert driver.asked[1] == {"f": "seek", "value": {"1": 5}}
    assert client.failure is None


def test_an_undelivered_send_is_aborted_and_fails() -> None:
    error = {"stage": "body", "text": "delivery failed: X", "requires_abort": True}
    client, driver = _client([{"done": TXN["value"], "error": error}, {"aborted": True}])
    completion = client.invoke(TXN)
    assert completion["type"] == "fail"
    assert completion["error"] == "body: delivery failed: X; then aborted"
    assert driver.asked[1] == {"f": "abort"} and len(driver.asked) == 2  # nothing read: no seek


def test_a_timed_out_commit_is_info_never_aborted_and_the_client_is_replaced() -> None:
    error = {"stage": "commit", "text": "TimeoutException: t", "retriable": True}
    client, driver = _client([{"done": TXN["value"], "error": error}])
    completion = client.invoke(TXN)
    assert completion["type"] == "info" and completion["error"].startswith("indeterminate: ")
    assert len(driver.asked) == 1 and client.failure is not None


def test_a_failed_abort_is_info() -> None:
    error = {"stage": "body", "text": "delivery failed: X", "requires_abort": True}
    client, _ = _client([{"done": TXN["value"], "error": error}, {"abort_error": "Fenced: f"}])
    completion = client.invoke(TXN)
    assert completion["type"] == "info" and "the abort failed: Fenced: f" in completion["error"]
    assert client.failure is not None


def test_a_crash_kills_the_driver_after_the_body_and_fails_the_transaction() -> None:
    done = [READ, ["send", 2, [11, 7]]]
    client, driver = _client([{"done": done, "crashed": True}], crash_every_s=1e-9)
    completion = client.invoke(TXN)
    assert driver.asked[0]["crash"] is True and len(driver.asked) == 1
    assert driver.killed
    assert completion == {
        "type": "fail",
        "value": [READ, ["send", 2, 7]],
        "error": CRASHED,
        "transactional-id": "t-txn-1#1",
    }
    assert client.failure is not None


def test_no_answer_in_time_is_info_and_the_driver_is_killed() -> None:
    client, driver = _client([DriverError("no answer from the Java driver within 55 s")])
    completion = client.invoke(TXN)
    assert completion["type"] == "info" and "within 55 s" in completion["error"]
    assert completion["value"] == TXN["value"]
    assert completion["transactional-id"] == "t-txn-1#1"
    assert driver.killed and client.failure is not None


def test_consumer_ops_pass_through_and_a_refused_one_fails() -> None:
    moved = {"assigned": [0, 1, 2, 3], "revoked": []}
    client, _ = _client(
        [
            {"value": [0, 2]},
            {"value": {"0": [[0, 1]]}, "rebalanced": moved},
            {"exception": "IllegalStateException: x"},
        ]
    )
    assert client.invoke({"f": "assign", "value": [2, 0]}) == {"type": "ok", "value": [0, 2]}
    polled = client.invoke({"f": "poll", "value": None})
    assert polled == {"type": "ok", "value": {"0": [[0, 1]]}, "rebalanced": moved}
    refused = client.invoke({"f": "subscribe", "value": None})
    assert refused["type"] == "fail" and refused["error"] == "IllegalStateException: x"


def test_a_truncated_log_fails_the_client() -> None:
    client, _ = _client([{"value": {}, "errors": ["LogTruncation"], "failure": "truncated"}])
    polled = client.invoke({"f": "poll", "value": None})
    assert polled["errors"] == ["LogTruncation"] and client.failure == "truncated"


def test_drains_run_in_librdkafkas_queue_client(monkeypatch: pytest.MonkeyPatch) -> None:
    drained: list[OpDict] = []

    class FakeQueueClient:
        def __init__(self, settings: QueueSettings, client_id: str) -> None:
            assert settings is SETTINGS and client_id == "p0"

        def invoke(self, op: OpDict) -> OpDict:
            drained.append(op)
            return {"type": "ok", "value": []}

        def close(self) -> None:
            drained.append({"closed": True})

    monkeypatch.setattr(java_client, "QueueClient", FakeQueueClient)
    client, driver = _client([])
    assert client.invoke({"f": "drain", "key": 2, "value": None})["type"] == "ok"
    client.close()
    assert drained[-1] == {"closed": True} and driver.closed and not driver.asked


def test_a_closed_clients_successor_takes_its_id_and_fences_it() -> None:
    ids = TransactionalIds("t")
    first, _ = _client([], ids)
    first.close()
    successor, _ = _client([{"done": [["send", 0, [0, 1]]], "committed": True}], ids)
    completion = successor.invoke({"f": "txn", "value": [["send", 0, 1]]})
    assert completion["transactional-id"] == "t-txn-1#2"


def test_a_driver_that_does_not_start_gives_its_id_back() -> None:
    ids = TransactionalIds("t")

    def broken(config: OpDict, label: str, timeout: float) -> FakeDriver:
        raise DriverError("javac not found")

    with pytest.raises(DriverError):
        JavaTxnClient(SETTINGS, "p0", ids, start=broken)
    assert ids.take() == ("t-txn-1", 2)


def test_the_workload_opens_the_java_client_under_txn_and_client_java(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(queue, "JavaTxnClient", lambda *a, **kw: opened.append("java"))
    monkeypatch.setattr(queue, "TxnClient", lambda *a, **kw: opened.append("librdkafka"))
    ctx = Context(
        bootstrap="",
        topic="t-open",
        kafka_config="safe",
        store="linearizable",
        keys=4,
        partitions=1,
        replication_factor=3,
        timeouts=DEFAULT_TIMEOUTS,
        queue=QueueOptions(txn=True),
    )
    queue.open_client(ctx, "p0")
    java = QueueOptions(txn=True, client="java")
    queue.open_client(dataclasses.replace(ctx, queue=java), "p1")
    assert opened == ["librdkafka", "java"]


# ---- the option ------------------------------------------------------------------------


def _spec(*argv: str) -> TestSpec:
    return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)


def test_client_java_reaches_the_spec_and_its_name() -> None:
    java = _spec("--workload", "queue", "--txn", "--client", "java", "--nemesis", "none")
    assert java.queue.client == "java" and java.name == "queue-txn-java-none"
    assert java.to_json()["client"] == "java"
    plain = _spec("--workload", "queue", "--txn", "--nemesis", "none")
    assert plain.queue.client == "librdkafka" and plain.name == "queue-txn-none"


def test_client_java_without_txn_exits_254_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--workload", "queue", "--client", "java"]) == 254
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["harness run: error: --client java runs transactions: it needs --txn"]
