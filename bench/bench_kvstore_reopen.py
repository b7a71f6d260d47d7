"""Reopen cost of KafkaMap after a long run: how long a fresh instance takes to open (read the
store topic to its end) after N kv ops, on an uncompacted topic (the store's topic before
issue 11) and on the compacted store topic under the safe and the unclean-election rule,
once the log cleaner has run.

The N ops are run by the real KafkaMap over the in-process log (the kv workload's ops and
mix, one instance), and the messages they appended (keys, values, tombstones, in order) are
produced to each topic as they are: what N ops over Kafka leave, without hours of cluster
time. On the unclean-election topic the map writes no tombstones, so none are produced.

Usage: .venv/bin/python bench/bench_kvstore_reopen.py [--ops 1000000] [--runs 3]
       [--bootstrap H:P,...]  (without it, a cluster named kvreopen is started and removed)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections.abc import Sequence

from bench_kvstore import on_cluster  # bench/ is on the path of a script run from it
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

from harness.cluster.admin import Admin
from kvstore import KafkaMap
from kvstore.memlog import MemoryLog
from kvstore.records import BARRIER_KEY, Barrier, encode
from kvstore.topic import COMPACTION_SEGMENT_MS, DEFAULT_COMPACTION_LAG_MS, topic_config
from workloads.kv import HANDLERS, kv_ops
from workloads.store_client import StoreClient

TARGET_REOPEN_S = 5.0
Message = tuple[bytes, bytes | None]


def generate(ops: int, keys: int, seed: int) -> list[Message]:
    """Runs `ops` kv ops on one KafkaMap over a compacted in-process log. Returns the
    messages the map appended, in order."""
    log = MemoryLog(compacted=True)
    client = StoreClient(KafkaMap.over(log.connect(), "bench"), HANDLERS)
    invokes = kv_ops(random.Random(seed), keys)
    for _ in range(ops):
        completion = client.invoke(next(invokes))
        if completion["type"] != "ok":
            raise RuntimeError(f"in-process op did not succeed: {completion}")
    return [(key, value) for _, key, value in log.partitions[0]]


def produce_all(bootstrap: str, topic: str, messages: Sequence[Message]) -> None:
    """Produces messages to partition 0 of topic in order, as fast as the cluster takes them."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 50, "batch.size": 1 << 20}
    )
    for key, value in messages:
        while True:
            try:
                producer.produce(topic, value, key, 0)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError(f"{topic}: messages still unsent after 120 s")


def count_messages(bootstrap: str, topic: str) -> int:
    """Returns how many messages partition 0 of topic holds now (what a reopen reads)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"count-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        count = 0
        while True:
            for m in consumer.consume(10_000, 1.0):
                error = m.error()
                if error is None:
                    count += 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    return count
    finally:
        consumer.close()


def wait_for_cleaner(bootstrap: str, topics: dict[str, int], max_wait: float) -> dict[str, int]:
    """Waits until the cleaner has brought each compacted topic down to its expected count
    (or max_wait passed), appending a barrier to each every few seconds as a run's traffic
    would, so that segments roll. Returns each topic's final count."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    _, tick = encode(Barrier("bench-tick"))
    deadline = time.monotonic() + max_wait
    counts = dict.fromkeys(topics, -1)
    while True:
        for topic in topics:
            producer.produce(topic, tick, BARRIER_KEY, 0)
        producer.flush(10)
        counts = {topic: count_messages(bootstrap, topic) for topic in topics}
        print(f"  waiting for the cleaner: {counts}", flush=True)
        if all(counts[t] <= expected for t, expected in topics.items()):
            return counts
        if time.monotonic() > deadline:
            return counts
        time.sleep(10)


def reopen_seconds(bootstrap: str, topic: str, runs: int) -> list[float]:
    """Opens a fresh KafkaMap on topic `runs` times. Returns each open's wall time."""
    times = []
    for i in range(runs):
        started = time.monotonic()
        m = KafkaMap(bootstrap, topic, f"reopen-{i}")
        times.append(time.monotonic() - started)
        m.close()
    return times


def bench(bootstrap: str, args: argparse.Namespace) -> bool:
    """Runs the benchmark on a cluster. Prints every figure; returns whether the compacted
    safe topic reopens within the target."""
    started = time.monotonic()
    messages = generate(args.ops, args.keys, args.seed)
    untombstoned = [m for m in messages if m[1] is not None]
    writes = sum(1 for key, _ in untombstoned if key != BARRIER_KEY)
    print(
        f"{args.ops} ops made {len(messages)} messages ({len(messages) - len(untombstoned)}"
        f" tombstones, {writes} writes) in {time.monotonic() - started:.0f} s",
        flush=True,
    )
    admin = Admin(bootstrap, timeout=10)
    suffix = uuid.uuid4().hex[:6]
    plan = {
        f"reopen-plain-{suffix}": ({}, untombstoned),
        f"reopen-safe-{suffix}": (topic_config("safe", compaction=True), messages),
        f"reopen-unsafe-{suffix}": (topic_config("unsafe", compaction=True), untombstoned),
    }
    for topic, (config, to_send) in plan.items():
        admin.create_topic(topic, [sorted(admin.brokers())], config)
        admin.wait_full_isr(topic, 60)
        t = time.monotonic()
        produce_all(bootstrap, topic, to_send)
        print(f"produced {len(to_send)} to {topic} in {time.monotonic() - t:.0f} s", flush=True)
    plain, safe, unsafe = plan
    counts = {plain: count_messages(bootstrap, plain)}
    # The safe topic keeps one record per key, the unsafe one every write; plus barriers.
    counts |= wait_for_cleaner(
        bootstrap, {safe: args.keys + 10, unsafe: writes + 10}, args.max_cleaner_wait
    )
    medians = {}
    for name, topic in (
        ("uncompacted", plain),
        ("compacted, safe", safe),
        ("compacted, unclean election allowed", unsafe),
    ):
        times = reopen_seconds(bootstrap, topic, args.runs)
        medians[name] = statistics.median(times)
        print(
            f"{name}: {counts[topic]} messages; reopen {', '.join(f'{t:.2f}' for t in times)} s,"
            f" median {medians[name]:.2f} s ({counts[topic] / medians[name]:,.0f} messages/s)",
            flush=True,
        )
    met = medians["compacted, safe"] <= TARGET_REOPEN_S
    print(f"target (compacted safe reopen <= {TARGET_REOPEN_S} s): {'met' if met else 'NOT met'}")
    return met


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the benchmark. Returns 0 when the target is met, else 1."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", help="an existing cluster; default: start one")
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=8, help="as the kv workload's default")
    parser.add_argument("--runs", type=int, default=3, help="reopens timed per topic")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--max-cleaner-wait",
        type=float,
        default=3 * (DEFAULT_COMPACTION_LAG_MS + COMPACTION_SEGMENT_MS) / 1000,
        help="seconds to wait for the log cleaner",
    )
    args = parser.parse_args(argv)
    return 0 if on_cluster(args.bootstrap, "kvreopen", lambda b: bench(b, args)) else 1


if __name__ == "__main__":
    sys.exit(main())
