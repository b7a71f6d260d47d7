"""A final drain that a transaction left open holds below the high watermark gives up
saying where it stopped, on a real cluster: the evidence checkers/queue/stuck.py reads.

A transaction open past the drain's catch-up time is what a lost marker leaves
(KAFKA-20716); here a producer simply keeps one open, then aborts it.
"""

from __future__ import annotations

import dataclasses
import time

from confluent_kafka import Producer

from checkers.queue import checker as queue
from harness.cluster.admin import client_config
from harness.cluster.docker_cluster import DockerCluster
from kvstore import DEFAULT_TIMEOUTS
from workloads.queue_client import QueueClient, QueueSettings

CATCH_UP_S = 6.0


def test_a_drain_held_by_an_open_transaction_says_where_it_stopped(
    cluster: DockerCluster,
) -> None:
    topic = "stuck-drain"
    cluster.admin().create_topic(topic, [[1, 2, 3]])
    bootstrap = cluster.bootstrap_servers
    committed = Producer(client_config(bootstrap) | {"acks": "all"})
    committed.produce(topic, value=b"1", partition=0)  # offset 0, read by the drain
    committed.flush(30)
    left_open = Producer(client_config(bootstrap) | {"transactional.id": f"{topic}-open"})
    left_open.init_transactions(30)
    left_open.begin_transaction()
    left_open.produce(topic, value=b"2", partition=0)  # offset 1: the last stable offset
    left_open.flush(30)
    committed.produce(topic, value=b"3", partition=0)  # offset 2, above it
    committed.flush(30)
    settings = QueueSettings(
        bootstrap=bootstrap,
        topic=topic,
        partitions=1,
        acks="all",
        idempotence=False,
        consumer_group=False,
        timeouts=dataclasses.replace(DEFAULT_TIMEOUTS, catch_up=CATCH_UP_S),
    )
    client = QueueClient(settings, "drainer")
    try:
        started = time.monotonic()
        gave_up = client.invoke({"f": "drain", "key": 0, "value": None})
        waited = time.monotonic() - started
    finally:
        client.close()
        left_open.abort_transaction(30)
    assert gave_up["type"] == "fail", gave_up
    assert (gave_up["position"], gave_up["high-watermark"]) == (1, 3), gave_up
    assert gave_up["last-read"] == [0, 1], gave_up
    assert waited >= CATCH_UP_S

    # As a history's final read, it is one stuck-consumer case, reported, never counted.
    events = [
        {"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send", "key": 0, "value": 3},
        {"index": 1, "time": 1, "process": 0, "type": "ok", "f": "send", "key": 0, "value": [2, 3]},
        {
            "index": 2,
            "time": 2,
            "process": 1,
            "type": "invoke",
            "f": "drain",
            "key": 0,
            "value": None,
        },
        gave_up | {"index": 3, "time": 2 + int(waited * 1e9), "process": 1, "f": "drain", "key": 0},
    ]
    found = queue.check(events)["kinds"]["stuck-consumer"]
    (case,) = found["cases"]
    assert (case["position"], case["high_watermark"], case["acked_behind"]) == (1, 3, 1)
    assert found["invalidating"] is False
