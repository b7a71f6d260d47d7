"""The queue workload: producers and consumers of a plain Kafka topic, one partition per
key, checked for lost acknowledged writes and Jepsen's Kafka ordering anomalies.

Each process sends unique integers to random partitions and polls what its consumer
is given (assigned partitions, or `--consumer-group` membership); now and then it is
assigned a new set of partitions. After healing, every partition is drained from the
beginning to its high watermark: what Kafka kept.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

from checkers.queue_policy import SubVia
from checkers.registry import CHECKERS, CheckOptions, run_checker
from history import History
from kvstore import create_store_topic
from kvstore.topic import TopicAdmin
from workloads.core import Client, Context, OpDict, Workload
from workloads.queue_client import QueueClient, QueueSettings

# Sends and polls in equal measure; a reassignment now and then, so that consumers are
# seen across assignment changes as well as within one.
SEND, POLL = 0.5, 0.47


def queue_ops(rng: random.Random, partitions: int, consumer_group: bool) -> Iterator[OpDict]:
    """Takes a random source and a partition count. Yields queue invokes forever: sends
    of unique integers, polls, and assigns of random partition sets (or, with a
    consumer group, subscribes)."""
    messages = itertools.count(1)
    while True:
        r = rng.random()
        if r < SEND:
            yield {"f": "send", "key": rng.randrange(partitions), "value": next(messages)}
        elif r < SEND + POLL:
            yield {"f": "poll", "value": None}
        elif consumer_group:
            yield {"f": "subscribe", "value": None}
        else:
            chosen = rng.sample(range(partitions), rng.randint(1, partitions))
            yield {"f": "assign", "value": sorted(chosen)}


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
        acks=ctx.producer_acks,
        idempotence=ctx.idempotence,
        consumer_group=ctx.consumer_group,
        timeouts=ctx.timeouts,
    )


def open_client(ctx: Context, client_id: str) -> Client:
    """Opens one process's producer and consumer."""
    return QueueClient(settings(ctx), client_id)


def check(history: History, ctx: Context) -> dict[str, dict[str, Any]]:
    """Returns the queue checker's section and, counted as for sets, `lost-acks`, whose
    verdict is the queue section's: it counts the drains' losses the queue checker judges,
    under the run's policy (--ignore), and with the polls where no drain is final."""
    sub_via: SubVia = "subscribe" if ctx.consumer_group else "assign"
    options = CheckOptions(sub_via=sub_via, ignore=ctx.ignore)
    result = run_checker(CHECKERS["queue"], history, options)
    sections: dict[str, dict[str, Any]] = {"queue": result}
    if isinstance(result.get("lost_acks"), dict):
        sections["lost-acks"] = result.pop("lost_acks") | {"valid": result["valid"]}
    return sections


QUEUE = Workload(
    name="queue",
    create_topics=create_topic,
    ops=lambda rng, ctx: queue_ops(rng, ctx.keys, ctx.consumer_group),
    open_client=open_client,
    final_reads=lambda ctx: [{"f": "drain", "key": p, "value": None} for p in range(ctx.keys)],
    check=check,
    recount_from_disk=True,
)
