"""The share workload (Kafka 4.3 and later): producers send unique integers to a topic and
ShareConsumers in one share group (KIP-932, Kafka's queues) accept, release or reject them.

Each process sends to random partitions and polls its share consumer (workloads/
share_client.py), acknowledging each record it is handed: released with probability
`--release-p` (delivered again, up to the group's delivery count limit), rejected with
`--reject-p` (archived), else accepted. The group is set up before the run to start at
the earliest offset, with a short record lock and a small delivery limit, so that
redeliveries and archiving by the limit happen within a run. After healing, one drain
accepts whatever the group still hands out; checkers/groups/share.py judges the history.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from kvstore.topic import TopicAdmin
from workloads.core import Client, Context, OpDict, Workload
from workloads.queue import Partitions, count_now, create_topic, partitions_of, settings
from workloads.share_client import ShareClient, ShareSettings

SEND = 0.5
LOCK_MS = 5000
"""The group's share.record.lock.duration.ms: a record a crashed client held comes back
within a run (the brokers' minimum is lowered for it: compose/share.properties.tmpl)."""
DRAIN_IDLE_S = LOCK_MS / 1000 + 3
GROUP_CONFIG_S = 30.0


def group_name(ctx: Context) -> str:
    """Returns the run's share group (a fresh topic per run, so a fresh group)."""
    return f"{ctx.topic}-share"


def share_ops(rng: random.Random, partitions: Partitions) -> Iterator[OpDict]:
    """Takes a random source and a partition count (or what says it now). Yields share
    invokes forever: sends of unique integers to random partitions and polls, in equal
    measure."""
    messages = itertools.count(1)
    while True:
        if rng.random() < SEND:
            yield {
                "f": "send",
                "key": rng.randrange(count_now(partitions)),
                "value": next(messages),
            }
        else:
            yield {"f": "poll", "value": None}


def group_configs(ctx: Context) -> dict[str, str]:
    """Returns the share group's settings: where it starts in a partition it has no state
    for (--share-auto-offset-reset: earliest by default; Kafka's default, latest, skips
    whatever was sent before the group first fetched), the lock, the run's delivery
    limit (--delivery-limit, which test.json records)."""
    return {
        "share.auto.offset.reset": ctx.share.share_auto_offset_reset,
        "share.record.lock.duration.ms": str(LOCK_MS),
        "share.delivery.count.limit": str(ctx.share.delivery_limit),
    }


def create_topic_and_group(admin: TopicAdmin, ctx: Context) -> None:
    """Creates the topic as the queue workload does, then sets the share group's configs
    (incrementalAlterConfigs on the GROUP resource), before any member joins."""
    create_topic(admin, ctx)
    entries = [
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        for name, value in group_configs(ctx).items()
    ]
    resource = ConfigResource(ResourceType.GROUP, group_name(ctx), incremental_configs=entries)
    client = AdminClient({"bootstrap.servers": ctx.bootstrap})
    for future in client.incremental_alter_configs([resource]).values():
        future.result(timeout=GROUP_CONFIG_S)


def share_settings(ctx: Context) -> ShareSettings:
    """Returns the clients' settings for a run."""
    return ShareSettings(
        queue=settings(ctx),
        group=group_name(ctx),
        release_p=ctx.share.release_p,
        reject_p=ctx.share.reject_p,
        drain_idle_s=DRAIN_IDLE_S,
    )


def open_client(ctx: Context, client_id: str) -> Client:
    """Opens one process's producer and share consumer."""
    return ShareClient(share_settings(ctx), client_id, crash_every_s=ctx.crash_clients)


SHARE = Workload(
    name="share",
    create_topics=create_topic_and_group,
    ops=lambda rng, ctx: share_ops(rng, partitions_of(ctx)),
    open_client=open_client,
    final_reads=lambda ctx: [{"f": "drain", "value": None}],
    model="share",
    group=group_name,
)
