"""The queue workload in transactions (--txn) on a fresh cluster of each release: a short
fault-free run commits and aborts transactions, and no aborted value is ever read at
read_committed, by a poll or by a final drain; nothing is left running afterwards. A
drain reads committed records past a transaction still open below them."""

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
from workloads.queue_client import QueueClient, QueueSettings


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
    lines = (tmp_path / "latest" / "history.jsonl").read_text().splitlines()
    history = [json.loads(line) for line in lines]
    txns = _txns(history)
    committed = [e for e in txns if e["type"] == "ok"]
    aborted = [e for e in txns if e["type"] == "fail"]
    assert len(committed) > 20 and aborted, out
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
