"""The Client protocol and the Workload: what a run needs from a workload, as plain data.

Ops flow as small dicts: an invoke is {"f", "key", "value"}; a completion adds "type"
(ok, fail or info), its "value" and, when something went wrong, an "error".
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from kvstore import Timeouts
from kvstore.topic import TopicAdmin
from workloads.options import NatsOptions, QueueOptions, ShareOptions

OpDict = dict[str, Any]


class Client(Protocol):
    """One process's connection to the system under test."""

    def invoke(self, op: OpDict) -> OpDict:
        """Takes an invoke. Returns its completion: type ok, fail or info, never raising."""
        ...

    @property
    def failure(self) -> str | None:
        """Returns why the client can serve no more ops (it must be replaced), or None."""
        ...

    def close(self) -> None:
        """Releases the client, within a bounded time."""
        ...


class PartitionCount:
    """The topic's partition count as the run knows it now: the workload's keys, until
    add-partitions grows the topic (nemesis.expand tells `grew`); the generator and the
    final reads ask it each time. Thread-safe: the nemesis thread writes, workers read."""

    def __init__(self, initial: int) -> None:
        self._count = initial
        self._lock = threading.Lock()

    def __call__(self) -> int:
        """Returns the count now."""
        with self._lock:
            return self._count

    def grew(self, total: int) -> None:
        """Takes the topic's new partition count (never smaller: partitions stay)."""
        with self._lock:
            self._count = max(self._count, total)


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What a workload knows of the run it is part of: where the cluster is, its topic,
    and the run's options (the workloads' own records, as TestSpec holds them)."""

    bootstrap: str
    topic: str
    kafka_config: str
    """safe or unsafe: the settings its topics are created with."""
    store: str
    """The `--store` name, for workloads served by the store under test."""
    keys: int
    partitions: int
    replication_factor: int
    timeouts: Timeouts
    crash_clients: float | None = None
    """The mean seconds between one queue or share client's crashes (with txn:
    mid-transaction; else instead of an op), or None."""
    queue: QueueOptions = field(default_factory=QueueOptions)
    share: ShareOptions = field(default_factory=ShareOptions)
    nats: NatsOptions = field(default_factory=NatsOptions)
    grown: PartitionCount | None = None
    """With add-partitions: the topic's partition count as it grows (else it stays
    `keys`), and the clients look for new partitions every second."""

    client_clocks: str | None = None
    """With a client clock fault: the folder of the Java clients' clock files, one per
    driver, which the fault rewrites (else the clients' clocks are the machine's)."""

    def partition_count(self) -> int:
        """Returns the topic's partition count now: `keys`, or more once it grew."""
        return self.keys if self.grown is None else self.grown()


def consumer_group_name(topic: str) -> str:
    """Returns the consumer group that a run's queue consumers join with --sub-via
    subscribe (a fresh topic per run, so a fresh group)."""
    return f"{topic}-group"


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """What a run needs from a workload: its topics, its ops, its clients, its checks."""

    name: str
    create_topics: Callable[[TopicAdmin, Context], None]
    """Creates what the clients need on a fresh cluster."""
    ops: Callable[[random.Random, Context], Iterator[OpDict]]
    """Takes a random source; yields invokes forever."""
    open_client: Callable[[Context, str], Client]
    """Takes a client id; returns an open client (raises when it cannot open now)."""
    final_reads: Callable[[Context], list[OpDict]]
    """Returns the invokes that read everything back once the faults are healed."""
    model: str
    """The registry entry (checkers.CHECKERS) its history is checked against; a run adds
    the run's own checks (RUN_CHECKERS) beside it."""
    group: Callable[[Context], str | None] = lambda ctx: None
    """Returns the consumer or share group the run's clients join, if any: the target of
    the coordinator faults (nemesis.coordinator)."""
    recount_from_disk: bool = False
    """Whether lost acknowledged sends are counted again from the brokers' log segments
    (harness.run.recount) before the cluster stops: for workloads of plain sends."""


def ok(value: Any) -> OpDict:
    """Returns an ok completion carrying value."""
    return {"type": "ok", "value": value}


def fail(error: str, value: Any = None) -> OpDict:
    """Returns a fail completion: the op certainly did not take effect."""
    return {"type": "fail", "value": value, "error": error}


def info(error: str, value: Any = None) -> OpDict:
    """Returns an info completion: the op may or may not take effect, at any later time."""
    return {"type": "info", "value": value, "error": f"indeterminate: {error}"}
