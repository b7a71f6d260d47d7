"""An in-process partitioned log with Kafka's compaction rule and unclean-election truncation,
for tests without a cluster.

Delivery to replicas is immediate, or held back until `deliver()` for deterministic interleavings.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any

from kvstore.records import Record, decode, encode
from kvstore.replica import Pending, Replica

Message = tuple[int, bytes, bytes | None]
"""(offset, key, value) as stored; value None is a tombstone."""


class MemoryLog:
    """A shared log of `partitions` partitions; each `connect()` is one instance."""

    def __init__(
        self,
        partitions: int = 1,
        *,
        hold: bool = False,
        compacted: bool = False,
        unclean_election: bool = False,
    ) -> None:
        self.partitions: list[list[Message]] = [[] for _ in range(partitions)]
        self._ends = [0] * partitions
        self._hold = hold
        self.compacted = compacted
        self.unclean_election = unclean_election
        self._lock = threading.RLock()
        self._connections: list[MemoryConnection] = []

    def connect(self) -> MemoryConnection:
        """Returns a new instance's connection, its replica caught up to the end of the log."""
        with self._lock:
            connection = MemoryConnection(self, len(self.partitions))
            self._connections.append(connection)
            connection.catch_up()
            return connection

    def append(self, partition: int, key: bytes, value: bytes | None) -> None:
        """Appends one message; delivers it at once unless delivery is held."""
        with self._lock:
            self.partitions[partition].append((self._ends[partition], key, value))
            self._ends[partition] += 1
            if not self._hold:
                self.deliver()

    def deliver(self, to: MemoryConnection | None = None, limit: int | None = None) -> None:
        """Brings one connected replica, or every one, up to the end of the log.

        With `limit`, each replica reads at most that many messages, so
        replicas can be made to lag each other by several records.
        """
        with self._lock:
            for connection in self._connections if to is None else [to]:
                connection.catch_up(limit)

    def length(self) -> int:
        """Returns the number of messages in all partitions."""
        with self._lock:
            return sum(len(p) for p in self.partitions)

    def compact(self) -> None:
        """Keeps the last message of each key and drops tombstones, as Kafka's cleaner may.

        Offsets are kept, so they become sparse.
        """
        with self._lock:
            for i, messages in enumerate(self.partitions):
                last = {key: offset for offset, key, _ in messages}
                self.partitions[i] = [
                    m for m in messages if last[m[1]] == m[0] and m[2] is not None
                ]

    def end(self, partition: int = 0) -> int:
        """Returns the offset the next message of partition will get."""
        with self._lock:
            return self._ends[partition]

    def truncate(self, partition: int, end: int) -> None:
        """Cuts partition back to offset `end`, as an unclean leader election does (later
        appends reuse the offsets). Every replica that had read past `end` is failed with
        the cause, as librdkafka reports it (auto.offset.reset=error), and fed no more."""
        with self._lock:
            self.partitions[partition] = [m for m in self.partitions[partition] if m[0] < end]
            self._ends[partition] = min(self._ends[partition], end)
            for connection in list(self._connections):
                if connection.read_past(partition, end):
                    connection.replica.fail(
                        f"log of partition {partition} truncated at offset {end},"
                        " below what this instance applied"
                    )
                    self._connections.remove(connection)

    def disconnect(self, connection: MemoryConnection) -> None:
        """Stops delivering to connection."""
        with self._lock:
            if connection in self._connections:
                self._connections.remove(connection)


class MemoryConnection:
    """One instance's connection to a MemoryLog; records go through the real encoding."""

    def __init__(self, log: MemoryLog, partitions: int) -> None:
        self._log = log
        self._replica = Replica(partitions)
        self._read = [0] * partitions

    @property
    def replica(self) -> Replica:
        """The instance's copy of the map."""
        return self._replica

    @property
    def unclean_election(self) -> bool:
        """Whether the log may be truncated (it is the log's setting)."""
        return self._log.unclean_election

    def read_past(self, partition: int, end: int) -> bool:
        """Returns whether this instance has applied partition beyond offset `end`."""
        return self._read[partition] > end

    def send(self, partition: int, record: Record, pending: Pending[Any]) -> None:
        """Appends record; an in-process append cannot fail."""
        key, value = encode(record)
        self._log.append(partition, key, value)

    def discard(self, partition: int, attempt: str) -> None:
        """Appends a tombstone for attempt when the log is compacted."""
        if self._log.compacted:
            self._log.append(partition, attempt.encode(), None)

    def close(self) -> None:
        """Detaches from the log."""
        self._log.disconnect(self)

    def catch_up(self, limit: int | None = None) -> None:
        """Applies messages not yet read in offset order: all of them, or at most `limit`."""
        budget = limit
        for p, messages in enumerate(self._log.partitions):
            # Offsets only grow along a partition, so the unread part starts here.
            start = bisect.bisect_left(messages, self._read[p], key=lambda m: m[0])
            for offset, _, value in messages[start:]:
                if budget == 0:
                    return
                self._replica.apply(p, offset, decode(value))
                self._read[p] = offset + 1
                budget = None if budget is None else budget - 1
