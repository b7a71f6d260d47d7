"""The queue workload: producers and consumers of a plain Kafka topic, one partition per
key, checked for lost acknowledged writes and Jepsen's Kafka ordering anomalies.

Each process sends unique integers to random partitions and polls what its consumer
is given (assigned partitions, or membership of one consumer group with `--sub-via
subscribe`, whose positions commit ops commit unless `--auto-commit`); now and then it
is assigned a new set of partitions (or subscribes again). With `--crash-clients` a
client walks away now and then and is replaced. With `--txn` each op is instead one Kafka
transaction of send and poll micro-ops (workloads/txn_client.py; with `--client java`,
through the Java client: workloads/java_client.py), some aborted on purpose (`--abort-p`).
After healing, every partition is drained from the beginning to its high watermark, at
read_committed: what Kafka kept.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable, Iterator

from kvstore import create_store_topic
from kvstore.topic import TopicAdmin
from workloads.core import Client, Context, OpDict, Workload, consumer_group_name
from workloads.java_client import JavaTxnClient
from workloads.queue_client import QueueClient, QueueSettings
from workloads.txn_client import TransactionalIds, TxnClient

# Sends and polls in equal measure; a reassignment now and then, so that consumers are
# seen across assignment changes as well as within one.
SEND, POLL = 0.5, 0.47
# Under --txn, transactions take the sends' and polls' share and the rest still moves the
# consumers; each holds 1 to MAX_MICRO_OPS micro-ops, sends and polls in equal measure.
MAX_MICRO_OPS = 4
TXN = SEND + POLL
# In a group committing by hand, this share of the polls' is commits: about one commit per
# four polls, so a crash often falls between a poll and its commit.
COMMIT = 0.12
Partitions = int | Callable[[], int]
"""A partition count, or what says it now (a topic add-partitions grows)."""


def count_now(partitions: Partitions) -> int:
    """Returns the partition count now."""
    return partitions if isinstance(partitions, int) else partitions()


def queue_ops(
    rng: random.Random, partitions: Partitions, consumer_group: bool, commits: bool = False
) -> Iterator[OpDict]:
    """Takes a random source, a partition count (or what says it now), whether the
    consumers are in a group and whether they commit by hand. Yields queue invokes
    forever: sends of unique integers, polls, commits (if asked), and assigns of random
    partition sets (or, with a consumer group, subscribes)."""
    messages = itertools.count(1)
    polls = SEND + POLL - COMMIT if commits else SEND + POLL
    while True:
        r = rng.random()
        if r < SEND:
            yield {
                "f": "send",
                "key": rng.randrange(count_now(partitions)),
                "value": next(messages),
            }
        elif r < polls:
            yield {"f": "poll", "value": None}
        elif r < SEND + POLL:
            yield {"f": "commit", "value": None}
        else:
            yield _reposition(rng, partitions, consumer_group)


def txn_ops(
    rng: random.Random, partitions: Partitions, consumer_group: bool, abort_p: float
) -> Iterator[OpDict]:
    """Takes a random source, a partition count and the probability of an abort. Yields
    invokes forever: transactions of 1 to MAX_MICRO_OPS sends (unique integers) and polls,
    each marked `abort` with probability abort_p (the mark reaches the client, not the
    history), and now and then an assign (or, with a consumer group, a subscribe)."""
    messages = itertools.count(1)
    while True:
        if rng.random() >= TXN:
            yield _reposition(rng, partitions, consumer_group)
            continue
        micro_ops: list[list[object]] = []
        for _ in range(rng.randint(1, MAX_MICRO_OPS)):
            if rng.random() < 0.5:
                micro_ops.append(["send", rng.randrange(count_now(partitions)), next(messages)])
            else:
                micro_ops.append(["poll"])
        yield {"f": "txn", "value": micro_ops, "abort": rng.random() < abort_p}


def _reposition(rng: random.Random, partitions: Partitions, consumer_group: bool) -> OpDict:
    if consumer_group:
        return {"f": "subscribe", "value": None}
    total = count_now(partitions)
    chosen = rng.sample(range(total), rng.randint(1, total))
    return {"f": "assign", "value": sorted(chosen)}


def create_topic(admin: TopicAdmin, ctx: Context) -> None:
    """Creates the topic: one partition per key, preferred leaders rotating over the
    brokers (so any broker, the controller too, leads some), safe or unsafe settings."""
    create_store_topic(
        admin,
        ctx.topic,
        ctx.keys,
        ctx.replication_factor,
        safety="unsafe" if ctx.kafka_config == "unsafe" else "safe",
        timeouts=ctx.timeouts,
    )


def settings(ctx: Context) -> QueueSettings:
    """Returns the clients' Kafka settings for a run."""
    return QueueSettings(
        bootstrap=ctx.bootstrap,
        topic=ctx.topic,
        partitions=ctx.keys,
        acks=ctx.queue.producer_acks,
        idempotence=ctx.queue.idempotence,
        consumer_group=ctx.queue.consumer_group,
        timeouts=ctx.timeouts,
        isolation_level=ctx.queue.isolation_level,
        txn=ctx.queue.txn,
        group_protocol=ctx.queue.group_protocol,
        auto_commit=ctx.queue.auto_commit,
        auto_offset_reset=ctx.queue.auto_offset_reset,
        watch_partitions=ctx.grown is not None,
        client_clocks=ctx.client_clocks,
    )


_TXN_IDS: dict[str, TransactionalIds] = {}
_TXN_IDS_LOCK = threading.Lock()


def transactional_ids(topic: str) -> TransactionalIds:
    """Returns the pool of transactional ids of the run on topic (a fresh topic per run)."""
    with _TXN_IDS_LOCK:
        return _TXN_IDS.setdefault(topic, TransactionalIds(topic))


def open_client(ctx: Context, client_id: str) -> Client:
    """Opens one process's producer (transactional with --txn) and consumer; with --txn
    and --client java, a driver process of the Java client holding them."""
    if ctx.queue.txn:
        ids = transactional_ids(ctx.topic)
        if ctx.queue.client == "java":
            return JavaTxnClient(settings(ctx), client_id, ids, crash_every_s=ctx.crash_clients)
        return TxnClient(settings(ctx), client_id, ids, crash_every_s=ctx.crash_clients)
    return QueueClient(settings(ctx), client_id, crash_every_s=ctx.crash_clients)


def partitions_of(ctx: Context) -> Partitions:
    """Returns the run's partition count: fixed, or what says it as add-partitions grows
    the topic."""
    return ctx.keys if ctx.grown is None else ctx.grown


def drains(ctx: Context) -> list[OpDict]:
    """Returns the final reads: one drain of every partition the topic has now."""
    return [{"f": "drain", "key": p, "value": None} for p in range(ctx.partition_count())]


def ops(rng: random.Random, ctx: Context) -> Iterator[OpDict]:
    """Yields the run's invokes: transactions with --txn, else one-message ops."""
    if ctx.queue.txn:
        return txn_ops(rng, partitions_of(ctx), ctx.queue.consumer_group, ctx.queue.abort_p)
    commits = ctx.queue.consumer_group and not ctx.queue.auto_commit
    return queue_ops(rng, partitions_of(ctx), ctx.queue.consumer_group, commits)


QUEUE = Workload(
    name="queue",
    create_topics=create_topic,
    ops=ops,
    open_client=open_client,
    final_reads=drains,
    model="queue",
    group=lambda ctx: consumer_group_name(ctx.topic) if ctx.queue.consumer_group else None,
    recount_from_disk=True,
)
