"""The model a history is checked against when none is named: guessed from its operations'
names, as Jepsen's workloads name them, and for polls from their values.

`harness check` and `check --spark` guess alike; a guess that fails says it was one.
"""

from __future__ import annotations

from typing import Any

from history import History, Keyword

MAP_FS = frozenset({"get", "put", "put-if-absent", "replace", "remove"})
SET_FS = frozenset({"add", "send", "read"})
QUEUE_FS = frozenset({"poll", "drain", "txn"})


def default_model(history: History) -> str:
    """Takes a history; returns the model its operation names suggest (and for polls, their
    values: a share workload's rounds, else a queue's). Jepsen's Kafka workload
    (jepsen.tests.kafka) names its ops send, poll, txn, assign, subscribe, crash and
    debug-topic-partitions, and a send's value is a list of micro-ops ([[:send k v]];
    read as jepsen.independent's [key value] when every value has two elements, so its key
    a tuple): any of those makes it a queue history, even with no poll (a set's send is
    of one element)."""
    fs = history.fs
    if fs & QUEUE_FS:
        from checkers.groups.share_history import share_events  # a queue's history only

        return "share" if share_events(history.events) else "queue"
    jepsen_queue_fs = {"assign", "subscribe", "crash", "debug-topic-partitions"}
    if fs & jepsen_queue_fs or any(
        op.f == "send" and (_micro_ops(op.value) or isinstance(op.key, tuple)) for op in history.ops
    ):
        return "queue"
    if "append" in fs:
        return "kv-append"
    if fs & MAP_FS:
        return "map"
    # A set read is a list in jsonl and a set (#{...}) in EDN.
    lists_read = any(
        op.f == "read" and isinstance(op.value, list | frozenset) for op in history.ops
    )
    if fs and fs <= SET_FS and (fs & {"add", "send"} or lists_read):
        return "set"
    return "cas-register"


def _micro_ops(value: Any) -> bool:
    """Whether an op's value is a Jepsen queue op's: a list of micro-ops, each a list that
    starts with its name (`[[:send 0 1]]`, `[["send", 0, 1]]`)."""
    if not isinstance(value, list | tuple) or not value:
        return False
    first = value[0]
    if not isinstance(first, list | tuple) or not first:
        return False
    name = first[0].name if isinstance(first[0], Keyword) else first[0]
    return name in ("send", "poll")
