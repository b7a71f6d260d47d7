"""The share workload with no cluster: its ops, its acknowledgement dice, the group's and
the brokers' settings, `harness run`'s options, and a client's rounds over a fake share
consumer (what a poll records, when its op is ok or info, a crash holding its records, a
close that hangs)."""

from __future__ import annotations

import itertools
import random
import threading
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from harness.cli import build_parser
from harness.cluster import config
from harness.cluster.releases import RELEASES
from harness.commands.run import spec_from_args
from kvstore import DEFAULT_TIMEOUTS
from workloads.core import Context
from workloads.options import ShareOptions
from workloads.queue_client import QueueSettings
from workloads.share import LOCK_MS, group_configs, share_ops
from workloads.share_client import ShareClient, ShareSettings, choose_ack

SETTINGS = ShareSettings(
    queue=QueueSettings(
        bootstrap="127.0.0.1:1",
        topic="t",
        partitions=2,
        acks="all",
        idempotence=False,
        consumer_group=False,
        timeouts=DEFAULT_TIMEOUTS,
    ),
    group="t-share",
    release_p=0.5,
    reject_p=0.25,
    drain_idle_s=0.3,
)


def test_ops_send_unique_messages_to_every_partition_and_poll_as_often() -> None:
    ops = list(itertools.islice(share_ops(random.Random(3), 4), 2000))
    sends = [op for op in ops if op["f"] == "send"]
    assert {op["f"] for op in ops} == {"send", "poll"}
    assert [op["value"] for op in sends] == list(range(1, len(sends) + 1))
    assert {op["key"] for op in sends} == {0, 1, 2, 3}
    assert 900 < len(sends) < 1100


def test_acknowledgements_follow_the_probabilities() -> None:
    rng = random.Random(5)
    drawn = [choose_ack(rng, 0.2, 0.05) for _ in range(10_000)]
    assert 1800 < drawn.count("release") < 2200
    assert 400 < drawn.count("reject") < 600
    assert drawn.count("accept") == 10_000 - drawn.count("release") - drawn.count("reject")


def test_the_group_starts_at_the_earliest_offset_with_a_short_lock_and_the_run_limit() -> None:
    ctx = Context(
        bootstrap="127.0.0.1:1",
        topic="t",
        kafka_config="safe",
        store="linearizable",
        keys=2,
        partitions=1,
        replication_factor=3,
        timeouts=DEFAULT_TIMEOUTS,
        share=ShareOptions(delivery_limit=4),
    )
    assert group_configs(ctx) == {
        "share.auto.offset.reset": "earliest",
        "share.record.lock.duration.ms": str(LOCK_MS),
        "share.delivery.count.limit": "4",
    }


def test_only_a_release_with_share_groups_gets_their_broker_settings() -> None:
    def props(share_groups: bool) -> str:
        return config.kraft_properties(
            node_id=1,
            address="10.0.0.1",
            broker=True,
            controller=False,
            quorum_voters="4@10.0.0.4:9093",
            brokers=3,
            profile=config.PROFILES["safe"],
            share_groups=share_groups,
        )

    assert "group.share.min.record.lock.duration.ms=1000" in props(True)
    assert "share.coordinator.state.topic.replication.factor=3" in props(True)
    assert "group.share" not in props(False)
    assert [v for v, r in RELEASES.items() if r.share_workload] == ["4.3.0", "4.3.1", "4.4.0"]


def test_run_takes_the_share_options_on_4_4_0() -> None:
    argv = ["run", "--workload", "share", "--kafka-version", "4.4.0", "--crash-clients", "20"]
    args = build_parser().parse_args([*argv, "--release-p", "0.3", "--reject-p", "0.1"])
    spec = spec_from_args(args, seed=1)
    assert (spec.workload, spec.share.release_p, spec.share.reject_p) == ("share", 0.3, 0.1)
    assert spec.crash_clients == 20
    assert spec.share.delivery_limit == 3 and spec.to_json()["delivery_limit"] == 3  # test.json's
    limited = build_parser().parse_args([*argv, "--delivery-limit", "7"])
    assert spec_from_args(limited, seed=1).share.delivery_limit == 7


class FakeMessage:
    def __init__(self, partition: int, offset: int, value: bytes, count: int) -> None:
        self._where = (partition, offset)
        self._value = value
        self._count = count

    def error(self) -> None:
        return None

    def partition(self) -> int:
        return self._where[0]

    def offset(self) -> int:
        return self._where[1]

    def value(self) -> bytes:
        return self._value

    def delivery_count(self) -> int:
        return self._count


class FakeShareConsumer:
    """Hands out batches in turn, remembers acknowledgements, answers commits as told."""

    def __init__(self, batches: list[list[FakeMessage]], refuse: KafkaError | None = None):
        self.batches = batches
        self.refuse = refuse
        self.acked: list[tuple[int, int, int]] = []

    def poll(self, _timeout: float) -> list[FakeMessage]:
        return self.batches.pop(0) if self.batches else []

    def acknowledge(self, msg: FakeMessage, kind: int) -> None:
        self.acked.append((msg.partition(), msg.offset(), kind))

    def commit_sync(self, _timeout: float) -> dict[TopicPartition, Any]:
        parts = {p for p, _, _ in self.acked}
        error = None if self.refuse is None else KafkaException(self.refuse)
        return {TopicPartition("t", p): error for p in parts}

    def close(self) -> None:
        pass


def _client(consumer: FakeShareConsumer, crash_every_s: float | None = None) -> ShareClient:
    client = ShareClient(SETTINGS, "p1", crash_every_s=crash_every_s)
    client._consumer = consumer  # type: ignore[assignment]
    return client


def test_a_poll_records_each_delivery_its_acknowledgement_and_the_commit() -> None:
    consumer = FakeShareConsumer([[FakeMessage(0, 4, b"7", 1), FakeMessage(1, 2, b"9", 2)]])
    client = _client(consumer)
    done = client.invoke({"f": "poll", "value": None})
    client.close()
    assert done["type"] == "ok" and done["member"] == "p1"
    (r,) = done["value"]
    assert r["deliveries"] == [[0, 4, 7, 1], [1, 2, 9, 2]]
    assert {kind for _, _, kind in r["acks"]} <= {"accept", "release", "reject"}
    assert {(p, o) for p, o, _ in r["acks"]} == {(0, 4), (1, 2)}
    assert r["committed"] == {"0": None, "1": None}
    assert r["began-ns"] <= r["polled-ns"] <= r["acked-ns"] <= r["committed-ns"]
    assert len(consumer.acked) == 2


def test_a_commit_a_partition_refused_makes_the_poll_info() -> None:
    refused = KafkaError(KafkaError.INVALID_RECORD_STATE)
    client = _client(FakeShareConsumer([[FakeMessage(0, 1, b"3", 1)]], refuse=refused))
    done = client.invoke({"f": "poll", "value": None})
    client.close()
    assert done["type"] == "info"
    assert done["value"][0]["committed"]["0"].startswith("INVALID_RECORD_STATE")


def test_a_crash_walks_away_holding_what_the_poll_handed_over() -> None:
    consumer = FakeShareConsumer([[FakeMessage(0, 1, b"3", 1)]])
    client = _client(consumer, crash_every_s=1e-9)
    done = client.invoke({"f": "poll", "value": None})
    assert done["type"] == "ok" and "crashed" in done
    assert consumer.acked == [] and "acks" not in done["value"][0]
    assert client.failure is not None
    client.close()


def test_a_drain_accepts_everything_until_nothing_comes() -> None:
    batches = [[FakeMessage(0, 1, b"3", 2)], [], [FakeMessage(1, 0, b"4", 1)]]
    consumer = FakeShareConsumer(batches)
    client = _client(consumer)
    done = client.invoke({"f": "drain", "value": None})
    client.close()
    assert done["type"] == "ok"
    assert [r["deliveries"] for r in done["value"]] == [[[0, 1, 3, 2]], [[1, 0, 4, 1]]]
    assert all(kind == "accept" for r in done["value"] for _, _, kind in r["acks"])


class HangingShareConsumer(FakeShareConsumer):
    """Closes only when told: as a share consumer whose partition's leader was killed."""

    def __init__(self) -> None:
        super().__init__([])
        self.release = threading.Event()

    def close(self) -> None:
        self.release.wait(30)


def test_a_share_consumer_that_does_not_close_is_left_behind_within_the_close_time() -> None:
    consumer = HangingShareConsumer()
    client = _client(consumer)
    began = time.monotonic()
    client.close()
    consumer.release.set()
    assert time.monotonic() - began < DEFAULT_TIMEOUTS.close + 2
