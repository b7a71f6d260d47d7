"""faultproxy's faults on a real cluster, before any run trusts them (issue 37, items 1,
2 and 5): every client goes through the proxies; a Produce held past its client's
timeout reaches the broker after the client gave up and is appended, visible in the log
at its offset with the broker's append time; a slow leader slows every round trip and
recovers; a client cut from its transaction coordinator still reaches the partition
leader; a paused client's commit arrives after the coordinator aborted its transaction;
the targets take several nodes, or the transaction coordinator, and bring them back.
Each fault leaves no rule behind.
"""

from __future__ import annotations

import gc
import random
import threading
import time
from collections.abc import Iterator

import docker
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from harness.cluster.admin import client_config
from harness.cluster.docker_cluster import DockerCluster
from nemesis.client import TXN_APIS, ClientPause, CoordinatorCut
from nemesis.core import Nemesis
from nemesis.late import HOLD_S, LateDelivery
from nemesis.process import ProcessFault
from nemesis.slow import DELAY_MS, SlowLink
from nemesis.targets import TXN_STATE_TOPIC
from tests.integration.conftest import _started


@pytest.fixture(scope="module")
def proxied(engine: docker.DockerClient) -> Iterator[DockerCluster]:
    """A 3-broker cluster whose brokers are behind faultproxy, for this module."""
    yield from _started(engine, faultproxy=True)


def _topic(cluster: DockerCluster, name: str, config: dict[str, str] | None = None) -> str:
    """Creates a one-partition topic led by n1 (its replicas n1, n2, n3)."""
    admin = cluster.admin()
    admin.create_topic(name, [[1, 2, 3]], config)
    admin.wait_full_isr(name, 30.0)
    return name


def _set_up(fault: Nemesis, cluster: DockerCluster) -> Nemesis:
    fault.setup(cluster)
    return fault


def _no_rule_left(cluster: DockerCluster) -> None:
    for broker in cluster.brokers:
        assert cluster.proxy_stats(broker)["active_rules"] is None


def _read(cluster: DockerCluster, topic: str, isolation: str = "read_uncommitted") -> list[Message]:
    """Reads topic's partition 0 from its start to its high watermark."""
    consumer = Consumer(
        client_config(cluster.bootstrap_servers)
        | {"group.id": f"reader-{time.monotonic_ns()}", "isolation.level": isolation}
    )
    try:
        tp = TopicPartition(topic, 0, 0)
        consumer.assign([tp])
        _, high = consumer.get_watermark_offsets(tp, timeout=10)
        found: list[Message] = []
        deadline = time.monotonic() + 20
        while consumer.position([tp])[0].offset < high and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                found.append(msg)
        return found
    finally:
        consumer.close()


def test_every_client_goes_through_and_a_held_produce_lands_after_its_client_gave_up(
    proxied: DockerCluster,
) -> None:
    topic = _topic(proxied, "late-produce", {"message.timestamp.type": "LogAppendTime"})
    failures: list[tuple[float, KafkaError | None]] = []
    producer = Producer(
        client_config(proxied.bootstrap_servers)
        | {
            "client.id": "late-probe-producer",
            "acks": "all",
            "enable.idempotence": False,
            "retries": 0,
            "linger.ms": 0,
            "request.timeout.ms": 2000,
            "message.timeout.ms": 3000,
            "socket.timeout.ms": 3000,
        }
    )
    producer.produce(topic, b"before")
    assert producer.flush(10) == 0
    fault = _set_up(LateDelivery("late-produce", topic, random.Random(1)), proxied)
    assert fault.invoke("start-late-produce")["brokers"] == ["n1"]
    producer.produce(topic, b"late", on_delivery=lambda err, _: failures.append((time.time(), err)))
    producer.flush(10)
    [(gave_up, error)] = failures
    assert error is not None, "the held Produce must time out at the client"
    began = time.monotonic()
    done = fault.invoke("stop-late-produce")
    assert time.monotonic() - began < HOLD_S + 5
    assert done["held"] == {"Produce": 1} and done["after_sender_gave_up"] == 1
    assert done["answers"] == {"Produce appended": 1}, done
    [landed] = done["landed"]
    assert landed["client"] == "late-probe-producer" and landed["after_sender_gave_up"]
    assert landed["held_s"] >= HOLD_S - 0.1
    # The log holds it at that offset, appended (the broker's clock) after the client gave up.
    by_offset = {m.offset(): m for m in _read(proxied, topic)}
    late = by_offset[landed["offset"]]
    assert late.value() == b"late"
    assert late.timestamp()[1] / 1000 > gave_up
    # The client went through the proxy: n1's proxy counted its requests by name.
    seen = proxied.proxy_stats("n1")["clients"]["late-probe-producer"]
    assert seen["requests"]["Produce"] >= 2 and seen["peer"] not in map(proxied.ip, proxied.nodes)
    del producer  # librdkafka destroys a handle, and closes its connections, at once
    gc.collect()
    through = fault.teardown()["late-produce"]["through_faultproxy"]
    assert through["clients"] >= 1 and through["requests"]["Produce"] >= 2
    _no_rule_left(proxied)


def _round_trips(producer: Producer, topic: str, n: int = 8) -> list[float]:
    """Returns the seconds each of n acknowledged produces took, one after another."""
    took = []
    for i in range(n):
        began = time.monotonic()
        producer.produce(topic, str(i).encode())
        assert producer.flush(10) == 0
        took.append(time.monotonic() - began)
    return took


def test_a_slow_leader_slows_every_round_trip_and_then_recovers(proxied: DockerCluster) -> None:
    topic = _topic(proxied, "slow-leader")
    producer = Producer(client_config(proxied.bootstrap_servers) | {"acks": "all", "linger.ms": 0})
    before = min(_round_trips(producer, topic))
    fault = _set_up(SlowLink("slow-leader", topic, random.Random(1)), proxied)
    assert fault.invoke("start-slow-leader")["leader"] == "n1"
    slowed = _round_trips(producer, topic)
    done = fault.invoke("stop-slow-leader")
    after = min(_round_trips(producer, topic))
    # A request and its answer each wait DELAY_MS at least.
    assert min(slowed) >= 2 * DELAY_MS / 1000, slowed
    assert after < 2 * DELAY_MS / 1000 and before < 2 * DELAY_MS / 1000
    assert done["slowed"]["Produce"] >= len(slowed) and done["mean_delay_ms"] >= DELAY_MS
    del producer  # librdkafka destroys a handle, and closes its connections, at once
    gc.collect()
    fault.teardown()
    _no_rule_left(proxied)


def _txn_producer(cluster: DockerCluster, name: str, timeout_ms: int) -> Producer:
    producer = Producer(
        client_config(cluster.bootstrap_servers)
        | {
            "client.id": f"{name}-producer",
            "transactional.id": name,
            "transaction.timeout.ms": timeout_ms,
            "linger.ms": 0,
            "request.timeout.ms": 3000,
            # librdkafka refuses message and socket timeouts past the transaction's.
            "message.timeout.ms": min(8000, timeout_ms),
            "socket.timeout.ms": min(5000, timeout_ms),
        }
    )
    producer.init_transactions(30)
    return producer


def test_a_client_cut_from_its_transaction_coordinator_still_reaches_the_leader(
    proxied: DockerCluster,
) -> None:
    topic = _topic(proxied, "cut-txn")
    producer = _txn_producer(proxied, "cut-probe", 10_000)
    producer.begin_transaction()
    producer.produce(topic, b"v1")
    assert producer.flush(10) == 0  # the partition is in the transaction now
    fault = _set_up(
        CoordinatorCut("partition-client-txn-coordinator", topic, random.Random(1)), proxied
    )
    started = fault.invoke("start-partition-client-txn-coordinator")
    assert started["client"] == "cut-probe-producer" and started["transactional_id"] == "cut-probe"
    for value in (b"v2", b"v3"):
        producer.produce(topic, value)
    assert producer.flush(10) == 0, "the leader must still take the client's records"
    with pytest.raises(KafkaException):
        producer.commit_transaction(5)
    done = fault.invoke("stop-partition-client-txn-coordinator")
    assert done["cut"].get("EndTxn", 0) >= 1, done
    assert done["reached"]["n1"]["Produce"] >= 1, done
    # Nothing of the client's reached a coordinator while it was cut.
    assert not {api for apis in done["reached"].values() for api in apis} & set(TXN_APIS), done
    values = [m.value() for m in _read(proxied, topic)]
    assert [v for v in values if v in (b"v1", b"v2", b"v3")] == [b"v1", b"v2", b"v3"]
    del producer  # librdkafka destroys a handle, and closes its connections, at once
    gc.collect()
    fault.teardown()
    _no_rule_left(proxied)


def test_a_paused_clients_commit_arrives_after_its_coordinator_aborted(
    proxied: DockerCluster,
) -> None:
    topic = _topic(proxied, "pause-txn")
    producer = _txn_producer(proxied, "pause-probe", 3000)
    producer.begin_transaction()
    producer.produce(topic, b"paused")
    assert producer.flush(10) == 0
    outcome: list[str] = []

    def commit() -> None:
        time.sleep(0.5)  # the fault is waiting for this EndTxn by then
        try:
            producer.commit_transaction(30)
            outcome.append("committed")
        except KafkaException as err:  # its name: a KafkaError compared to a str misbehaves
            outcome.append(err.args[0].name())

    committing = threading.Thread(target=commit)
    committing.start()
    fault = _set_up(ClientPause("pause-client", topic, random.Random(1)), proxied)
    started = fault.invoke("start-pause-client")
    assert started["client"] == "pause-probe-producer" and started["transaction_timeout_ms"] == 3000
    assert "connections held" in started["how"]
    done = fault.invoke("stop-pause-client")
    committing.join(60)
    assert done["paused_s"] >= 3.0 + 2.0
    assert done["aborted_by_coordinator_after_s"] is not None, done
    assert done["held"].get("EndTxn") == 1 and done["end_txn"]["commit"] is True
    assert done["end_txn"]["answer"] not in ("appended", "unanswered"), done
    assert outcome and outcome[0] != "committed", outcome
    assert b"paused" not in [m.value() for m in _read(proxied, topic, "read_committed")]
    fault.teardown()
    _no_rule_left(proxied)


def test_targets_take_a_majority_or_the_transaction_coordinator_and_bring_them_back(
    proxied: DockerCluster,
) -> None:
    topic = _topic(proxied, "targets")
    # A transactional producer's start makes the transaction log and its coordinator.
    _txn_producer(proxied, "targets-probe", 10_000)
    pause = _set_up(ProcessFault("pause-majority", topic, random.Random(2)), proxied)
    paused = pause.invoke("start-pause-majority")["paused"]
    assert len(paused) == 2 and {proxied.state(n) for n in paused} == {"paused"}
    assert sorted(pause.invoke("stop-pause-majority")["restored"]) == sorted(paused)
    assert {proxied.state(n) for n in proxied.nodes} == {"running"}
    kill = _set_up(ProcessFault("kill-txn-coordinator", topic, random.Random(2)), proxied)
    [state] = proxied.committed_partitions(TXN_STATE_TOPIC)
    started = kill.invoke("start-kill-txn-coordinator")
    assert started["killed"] == proxied.node_of_broker(state.leader)
    assert started["role"] == "the transaction coordinator"
    assert proxied.state(started["killed"]) == "exited"
    assert kill.invoke("stop-kill-txn-coordinator")["restored"] == [started["killed"]]
    assert proxied.state(started["killed"]) == "running"
    assert pause.teardown() == kill.teardown() == {}
