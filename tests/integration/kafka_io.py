"""Small producer and reader helpers for the cluster tests (acks=all, bounded waits)."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from harness.cluster.admin import client_config
from harness.cluster.docker_cluster import DockerCluster
from kvstore.kafka_log import watermarks


def produce_all(bootstrap: str, topic: str, values: list[str], timeout: float = 30.0) -> list[str]:
    """Sends values with acks=all; returns the ones the cluster acknowledged."""
    acked: list[str] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        if err is None:
            acked.append(msg.value().decode())

    producer = Producer(
        client_config(bootstrap)
        | {"acks": "all", "linger.ms": 0, "message.timeout.ms": 10000, "request.timeout.ms": 4000}
    )
    for v in values:
        producer.produce(topic, value=v.encode(), on_delivery=on_delivery)
        producer.poll(0)
    producer.flush(timeout)
    return acked


def read_all(bootstrap: str, topic: str, partition: int = 0, timeout: float = 30.0) -> list[str]:
    """Reads a partition from its start to its high watermark; returns the values."""
    consumer = Consumer(
        client_config(bootstrap)
        | {
            "group.id": f"reader-{time.monotonic_ns()}",
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
        }
    )
    try:
        tp = TopicPartition(topic, partition, -2)  # OFFSET_BEGINNING
        consumer.assign([tp])
        deadline = time.monotonic() + timeout
        # Right after an election the new leader answers OFFSET_NOT_AVAILABLE for a moment.
        low, high = watermarks(consumer, tp, deadline)
        if high <= low:
            return []
        values: list[str] = []
        while time.monotonic() < deadline:
            position = consumer.position([tp])[0].offset
            if position >= high:
                return values
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                values.append(msg.value().decode())
        raise TimeoutError(f"did not reach offset {high} of {topic}[{partition}] in {timeout} s")
    finally:
        consumer.close()


def check_prefer_leader(cluster: DockerCluster, topic: str) -> None:
    """Creates a one-partition topic led by another broker than the one the metadata names
    as controller (on KRaft any broker), makes that one its preferred leader and elects
    it: it leads, the replicas are the same three reordered, and every acknowledged record
    is still there."""
    controller = cluster.controller()
    others = sorted(
        cluster.broker_id(b) for b in cluster.brokers if cluster.broker_id(b) != controller
    )
    admin = cluster.admin()
    admin.create_topic(topic, [[others[0], others[1], controller]])
    admin.wait_full_isr(topic, timeout=30)
    values = [f"v{i}" for i in range(50)]
    assert produce_all(cluster.bootstrap_servers, topic, values) == values
    assert cluster.prefer_leader(topic, 0, controller) == ""
    deadline = time.monotonic() + 30
    # Elected again while it does not lead, as the isr-shrink nemesis does: once, on a
    # cluster just up, one election answered done and the leader had not moved 30 s on.
    while cluster.partitions(topic)[0].leader != controller and time.monotonic() < deadline:
        assert cluster.elect_preferred_leaders(topic) == {0: ""}
        time.sleep(0.5)
    (state,) = cluster.partitions(topic)
    wanted = (controller, (controller, others[0], others[1]))
    assert (state.leader, state.replicas) == wanted, (
        f"{state} (controller now {cluster.controller()})"
    )
    assert read_all(cluster.bootstrap_servers, topic) == values
    assert cluster.prefer_leader(topic, 0, 99) == f"broker 99 holds no replica of {topic}-0"
