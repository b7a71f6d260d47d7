"""The queue workload on NATS without a server: its ops are sends of unique integers to
the one partition and polls; a message becomes [stream sequence, value]; the final
reads are one drain per server, named by node; the loop thread runs a coroutine and
gives up on one that does not answer."""

from __future__ import annotations

import asyncio
import itertools
import random
from types import SimpleNamespace

import pytest

from workloads.nats_loop import LoopThread
from workloads.nats_queue import NATS_QUEUE, PARTITION, _record, nats_queue_ops, subject


def test_the_ops_send_unique_values_to_the_one_partition_and_poll() -> None:
    ops = list(itertools.islice(nats_queue_ops(random.Random(3), None), 400))  # type: ignore[arg-type]
    sends = [op for op in ops if op["f"] == "send"]
    assert {op["f"] for op in ops} == {"send", "poll"}
    assert {op["key"] for op in sends} == {PARTITION}
    assert [op["value"] for op in sends] == list(range(1, len(sends) + 1))
    assert subject("store-7") == "store-7.0"


def test_the_final_reads_drain_through_every_server_in_node_order() -> None:
    urls = "nats://10.0.0.101:4222,nats://10.0.0.102:4222,nats://10.0.0.103:4222"
    ctx = SimpleNamespace(bootstrap=urls)
    drains = NATS_QUEUE.final_reads(ctx)  # type: ignore[arg-type]
    assert [(d["f"], d["key"], d["node"]) for d in drains] == [
        ("drain", PARTITION, "n1"),
        ("drain", PARTITION, "n2"),
        ("drain", PARTITION, "n3"),
    ]
    assert [d["server"] for d in drains] == urls.split(",")


def test_a_message_is_its_stream_sequence_and_value() -> None:
    def msg(data: bytes, seq: int) -> object:
        return SimpleNamespace(
            data=data, metadata=SimpleNamespace(sequence=SimpleNamespace(stream=seq))
        )

    assert _record(msg(b"42", 9)) == [9, 42]  # type: ignore[arg-type]
    assert _record(msg(b"not ours", 10)) == [10, "not ours"]  # type: ignore[arg-type]


def test_the_loop_thread_answers_and_times_out() -> None:
    loop = LoopThread("test")
    try:

        async def answer() -> int:
            return 7

        assert loop.run(answer(), 5.0) == 7
        with pytest.raises(TimeoutError, match=r"no answer within 0\.2 s"):
            loop.run(asyncio.sleep(10), 0.2)
    finally:
        loop.close()
