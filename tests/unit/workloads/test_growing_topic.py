"""A topic add-partitions grows: the generators send to, and assign, the new partitions as
soon as the count grows, and the final drains cover them."""

from __future__ import annotations

import itertools
import random

from kvstore import DEFAULT_TIMEOUTS
from workloads.core import Context, PartitionCount
from workloads.queue import QUEUE, queue_ops
from workloads.share import share_ops


def _partitions_named(ops: list[dict[str, object]]) -> set[int]:
    sent = {int(op["key"]) for op in ops if op["f"] == "send"}  # type: ignore[call-overload]
    assigned = {p for op in ops if op["f"] == "assign" for p in op["value"]}  # type: ignore[attr-defined]
    return sent | assigned


def test_the_queue_generator_names_new_partitions_once_the_count_grows() -> None:
    count = PartitionCount(2)
    ops = queue_ops(random.Random(7), count, consumer_group=False)
    before = list(itertools.islice(ops, 300))
    count.grew(4)
    after = list(itertools.islice(ops, 300))
    assert _partitions_named(before) == {0, 1}
    assert _partitions_named(after) == {0, 1, 2, 3}


def test_the_share_generator_sends_to_new_partitions_once_the_count_grows() -> None:
    count = PartitionCount(2)
    ops = share_ops(random.Random(7), count)
    list(itertools.islice(ops, 10))
    count.grew(5)
    count.grew(3)  # partitions stay: a smaller count is never taken
    assert count() == 5
    assert _partitions_named(list(itertools.islice(ops, 300))) == {0, 1, 2, 3, 4}


def test_the_final_drains_cover_every_partition_the_topic_has_now() -> None:
    ctx = Context(
        bootstrap="",
        topic="t",
        kafka_config="safe",
        store="linearizable",
        keys=2,
        partitions=2,
        replication_factor=3,
        timeouts=DEFAULT_TIMEOUTS,
        grown=PartitionCount(2),
    )
    assert [op["key"] for op in QUEUE.final_reads(ctx)] == [0, 1]
    assert ctx.grown is not None
    ctx.grown.grew(6)
    assert [op["key"] for op in QUEUE.final_reads(ctx)] == [0, 1, 2, 3, 4, 5]
