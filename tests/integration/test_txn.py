"""The queue workload in transactions (--txn) on a fresh cluster of each release: a short
fault-free run commits and aborts transactions, and no aborted value is ever read at
read_committed, by a poll or by a final drain; nothing is left running afterwards. A
drain reads committed records past a transaction still open below them. The same through
the Java client (--client java) on 4.4.0 KRaft, which speaks transactions v2: aborted and
crashed (SIGKILLed mid-transaction) transactions' values are never read, and no driver
process outlives the run. The protocol the coordinator logged for each client is TV1
through librdkafka and TV2 through the Java client."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import docker
import pytest
from confluent_kafka import Producer

from harness.cluster.admin import client_config
from harness.cluster.docker_cluster import DockerCluster
from kvstore import DEFAULT_TIMEOUTS
from tests.integration.test_run import _run
from workloads.java_client import JavaTxnClient
from workloads.queue_client import QueueClient, QueueSettings
from workloads.txn_rules import CRASHED, TransactionalIds

JAVA_RUN = ("--workload", "queue", "--txn", "--client", "java", "--nemesis", "none")
JAVA_RUN += ("--time-limit", "10", "--keys", "4", "--kafka-version", "4.4.0")
# Aborts at half the transactions, not the default tenth: at load 50 the 10 s run committed
# only 6, and none was aborted.
JAVA_RUN += ("--abort-p", "0.5")


def _txns(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e["f"] == "txn" and e["type"] != "invoke"]


def _read(history: list[dict[str, Any]]) -> list[int]:
    """Every value any poll (of any outcome) or drain returned."""
    values: list[int] = []
    for e in history:
        if e["type"] == "invoke":
            continue
        if e["f"] == "drain" and e["type"] == "ok":
            values += [v for _, v in e["value"]]
        if e["f"] == "txn":
            polls = [mop[1] for mop in e["value"] if mop[0] == "poll" and len(mop) > 1]
            values += [v for records in polls for rs in records.values() for _, v in rs]
    return values


@pytest.mark.parametrize(
    "release",
    [
        pytest.param((), id="3.9.1-zookeeper"),
        pytest.param(("--kafka-version", "4.4.0"), id="4.4.0-kraft"),
    ],
)
def test_a_transactional_run_commits_and_aborts_and_never_reads_an_aborted_value(
    engine: docker.DockerClient, tmp_path: Path, release: tuple[str, ...]
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        *("--workload", "queue", "--txn", "--nemesis", "none", "--time-limit", "10", "--keys", "4"),
        *release,
    )
    # Fault-free and rewound after every abort: no anomaly of any kind, the transactions'
    # checked too (a poll-skip here would mean a consumer read on past an abort).
    assert code == 0, out
    assert results["queue"]["transactions"]["committed"] > 20, out
    assert results["final"]["recount"]["acknowledged"] > 0, out
    # librdkafka has no KIP-890 transactions v2: the coordinator logged TV1 for every client.
    release = results["release"]
    assert (release["client"], release["transactions"]["protocol"]) == ("confluent-kafka", "TV1")
    assert len(release["transactions"]["clients"]) == 5, release
    lines = (tmp_path / "latest" / "history.jsonl").read_text().splitlines()
    history = [json.loads(line) for line in lines]
    txns = _txns(history)
    committed = [e for e in txns if e["type"] == "ok"]
    aborted = [e for e in txns if e["type"] == "fail"]
    # A few commits, not a rate: a loaded machine committed 19 in the 10 s run.
    assert len(committed) >= 5 and aborted, out
    acked = [mop[2] for e in committed for mop in e["value"] if mop[0] == "send"]
    assert acked and all(isinstance(o, int) and o >= 0 for o, _ in acked)
    sent_by_aborted = {mop[2] for e in aborted for mop in e["value"] if mop[0] == "send"}
    assert sent_by_aborted, "no aborted transaction sent anything"
    read = _read(history)
    assert not sent_by_aborted & set(read), "an aborted transaction's value was read"
    drains = [e for e in history if e["f"] == "drain" and e["type"] == "ok"]
    assert len(drains) == 4
    drained = {v for e in drains for _, v in e["value"]}
    assert {v for _, v in acked} <= drained, "a committed send is missing from the drains"


def test_a_drain_reads_past_a_transaction_left_open_below_committed_records(
    cluster: DockerCluster,
) -> None:
    # A read_committed client is told the last stable offset for the log's end, which the
    # open transaction holds at its first record: a drain that stopped there missed the
    # committed record after it (a false lost write under --crash-clients).
    topic = "drain-past-open-txn"
    cluster.admin().create_topic(topic, [[1, 2, 3]])
    bootstrap = cluster.bootstrap_servers

    def transactional(tid: str) -> Producer:
        producer = Producer(client_config(bootstrap) | {"transactional.id": tid, "acks": "all"})
        producer.init_transactions(30)
        producer.begin_transaction()
        return producer

    left_open = transactional(f"{topic}-open")
    left_open.produce(topic, value=b"1", partition=0)
    left_open.flush(30)
    committed = transactional(f"{topic}-committed")
    committed.produce(topic, value=b"2", partition=0)
    committed.commit_transaction(30)
    aborter = threading.Timer(3.0, left_open.abort_transaction, args=(30,))
    aborter.start()
    settings = QueueSettings(
        bootstrap=bootstrap,
        topic=topic,
        partitions=1,
        acks="all",
        idempotence=False,
        consumer_group=False,
        timeouts=DEFAULT_TIMEOUTS,
    )
    client = QueueClient(settings, "drainer")
    try:
        started = time.monotonic()
        drained = client.invoke({"f": "drain", "key": 0, "value": None})
        waited = time.monotonic() - started
    finally:
        aborter.join()
        client.close()
    assert drained["type"] == "ok", drained
    # Offsets 0 (open) and 1 (committed), and 2 once the commit's marker is written.
    assert drained["value"] == [[1, 2]] and drained["high-watermark"] >= 2, drained
    assert waited > 2.0, "the drain did not wait for the open transaction to end"


def _history(results: Path) -> list[dict[str, Any]]:
    lines = (results / "latest" / "history.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _sent(txns: list[dict[str, Any]]) -> set[int]:
    return {mop[2] for e in txns for mop in e["value"] if mop[0] == "send"}


def _drivers_left() -> list[str]:
    """The command lines of Java drivers still running for a run of seed 11 (_harness's)."""
    left = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:  # it ended while we looked
            continue
        if any(w.startswith(b"-Dkafka-harness.client=store-11-") for w in words):
            left.append(b" ".join(words).decode(errors="replace"))
    return left


def test_the_java_client_commits_and_aborts_and_never_reads_an_aborted_value(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    code, results, out = _run(engine, tmp_path, *JAVA_RUN)
    assert not _drivers_left(), "a Java driver outlived its run"
    assert code == 0, out
    history = _history(tmp_path)
    txns = _txns(history)
    committed = [e for e in txns if e["type"] == "ok"]
    aborted = [e for e in txns if e["type"] == "fail"]
    # A few commits, not a rate: a loaded machine committed 19 in the 10 s run.
    assert len(committed) >= 5 and aborted, out
    assert results["queue"]["transactions"]["committed"] == len(committed)
    acked = [mop[2] for e in committed for mop in e["value"] if mop[0] == "send"]
    assert acked and all(isinstance(o, int) and o >= 0 for o, _ in acked)
    assert _sent(aborted), "no aborted transaction sent anything"
    assert not _sent(aborted) & set(_read(history)), "an aborted transaction's value was read"
    drained = {v for e in history if e["f"] == "drain" and e["type"] == "ok" for _, v in e["value"]}
    assert {v for _, v in acked} <= drained, "a committed send is missing from the drains"
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    assert test["spec"]["client"] == "java" and test["versions"]["kafka_clients"] == "4.4.0"
    client_log = (tmp_path / "latest" / "client.log").read_text()  # the JVMs' stderr
    assert "transactions v2: true" in client_log, "the Java client did not use transactions v2"
    # What the coordinator logged agrees, for every client, over every transaction it ended
    # (one that sent nothing commits in the client alone: the coordinator never hears of it).
    spoken = results["release"]["transactions"]
    assert (spoken["protocol"], spoken["broker_level"]) == ("TV2", 2), spoken
    ended = sum(c["ended"] for c in spoken["clients"].values())
    sending = [e for e in committed if any(mop[0] == "send" for mop in e["value"])]
    assert ended >= len(sending) > 0, spoken


def test_crashed_java_clients_are_killed_mid_transaction_and_their_values_never_read(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    # 20 s, not JAVA_RUN's 10: a successor is a new JVM driver, and on a loaded machine (two
    # integration tests at once) it did not finish a transaction within 10 s of the crash.
    code, _, out = _run(engine, tmp_path, *JAVA_RUN, "--crash-clients", "3", "--time-limit", "20")
    assert not _drivers_left(), "a Java driver outlived its run"
    assert code == 0, out
    history = _history(tmp_path)
    txns = _txns(history)
    crashed = [e for e in txns if e["type"] == "fail" and e["error"] == CRASHED]
    assert crashed, out
    # Each crash is a SIGKILL after the body: the transaction is left open, with its sends
    # delivered, until the successor's initTransactions fences it or the coordinator
    # times it out; either must abort it.
    assert _sent(crashed), "no crashed transaction sent anything"
    assert not _sent(crashed) & set(_read(history)), "a crashed transaction's value was read"
    successors = {e["transactional-id"] for e in txns if not e["transactional-id"].endswith("#1")}
    assert successors, "no transactional id was taken over by a successor"
    run_log = (tmp_path / "latest" / "run.log").read_text()
    assert "did not exit within" not in run_log, "a driver had to be killed on close"


def test_the_java_client_keeps_the_positions_of_partitions_an_assign_keeps(
    cluster: DockerCluster,
) -> None:
    # Given no partitions, the Java consumer's seekToBeginning rewinds every one it holds:
    # an assign that added none did so once, and the next poll read from offset 0 again (a
    # nonmonotonic-poll the checker found under pause-leader).
    topic = "java-assign-keeps"
    cluster.admin().create_topic(topic, [[1, 2, 3], [2, 3, 1]])
    producer = Producer(client_config(cluster.bootstrap_servers) | {"acks": "all"})

    def send(partition: int, value: int) -> None:
        producer.produce(topic, value=str(value).encode(), partition=partition)
        assert producer.flush(30) == 0

    for value in (1, 2):
        send(0, value)
        send(1, value + 10)
    settings = QueueSettings(
        bootstrap=cluster.bootstrap_servers,
        topic=topic,
        partitions=2,
        acks="all",
        idempotence=True,
        consumer_group=False,
        timeouts=DEFAULT_TIMEOUTS,
        txn=True,
    )
    client = JavaTxnClient(settings, "p0", TransactionalIds(topic))
    try:
        assert client.invoke({"f": "assign", "value": [0, 1]})["type"] == "ok"
        first = _poll_until(client, 4)
        assert client.invoke({"f": "assign", "value": [1]})["type"] == "ok"
        send(1, 13)
        after = _poll_until(client, 1)
    finally:
        client.close()
    assert sorted(v for records in first.values() for _, v in records) == [1, 2, 11, 12]
    assert after == {"1": [[2, 13]]}, "the kept partition was read again from its start"


def _poll_until(client: JavaTxnClient, count: int) -> dict[str, list[list[int]]]:
    """Polls until count records came; returns them by partition."""
    read: dict[str, list[list[int]]] = {}
    deadline = time.monotonic() + 30
    while sum(map(len, read.values())) < count and time.monotonic() < deadline:
        polled = client.invoke({"f": "poll", "value": None})
        assert polled["type"] == "ok", polled
        for partition, records in polled["value"].items():
            read.setdefault(partition, []).extend(records)
    return read
