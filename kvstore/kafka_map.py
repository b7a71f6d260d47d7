"""KafkaMap: the linearizable map whose only storage and only coordination is a Kafka topic.

Writes race for the key's next version; reads wait for a barrier record (the Upstash design).
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Sequence
from typing import Self, TypeVar

from kvstore.api import DEFAULT_TIMEOUTS, Timeouts
from kvstore.connection import Connection
from kvstore.errors import DefiniteFailure, Indeterminate
from kvstore.kafka_log import KafkaConnection
from kvstore.records import Barrier, CommandName, Key, Record, Value, Write, partition_for
from kvstore.replica import Capture
from kvstore.state import Entry, MapState, Outcome, precondition_holds

T = TypeVar("T")


class KafkaMap:
    """The correct map: linearizable, expected to show no anomaly.

    Every write attempt is one record (key, version, value, attempt id); every
    instance applies the log in order and the first record of each (key,
    version) wins. An attempt won iff the winner carries its own attempt id.
    A conditional write first checks its precondition on the local replica:
    if it holds, it races for local version + 1; if that loses, the replica
    as of our record (now fresh) decides between giving up and another try.
    A precondition that fails locally is confirmed through a barrier first.
    Reads append a barrier and answer from the state at that barrier. With
    several partitions, size and keys repeat the per-partition barriers until
    two rounds see no change, so the answer held at one instant.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        client_id: str,
        timeouts: Timeouts = DEFAULT_TIMEOUTS,
        *,
        compacted: bool = False,
    ) -> None:
        connection = KafkaConnection(
            bootstrap_servers, topic, client_id, timeouts, compacted=compacted
        )
        self._setup(connection, client_id, timeouts)

    @classmethod
    def over(
        cls, connection: Connection, client_id: str, timeouts: Timeouts = DEFAULT_TIMEOUTS
    ) -> Self:
        """Takes an open connection (e.g. to a memlog.MemoryLog). Returns an instance using it."""
        instance = cls.__new__(cls)
        instance._setup(connection, client_id, timeouts)
        return instance

    def _setup(self, connection: Connection, client_id: str, timeouts: Timeouts) -> None:
        self.client_id = client_id
        self._conn = connection
        self._replica = connection.replica
        self._timeouts = timeouts
        # The nonce keeps attempt ids unique when a client id is reused across runs.
        self._attempt_prefix = f"{client_id}/{uuid.uuid4().hex[:8]}/"
        self._counter = itertools.count()

    def get(self, key: Key) -> Value | None:
        """Returns the key's value as of a barrier appended during the call."""
        partition = partition_for(key, self._replica.partitions)
        return self._barriers([partition], lambda s, _: s.get(key), self._deadline())[0]

    def put(self, key: Key, value: Value) -> None:
        """Sets the key to value."""
        self._write(key, "put", None, value)

    def put_if_absent(self, key: Key, value: Value) -> bool:
        """Sets the key to value if absent. Returns whether it did."""
        return self._write(key, "put-if-absent", None, value)

    def replace(self, key: Key, old: Value, new: Value) -> bool:
        """Sets the key to new if its value is old. Returns whether it did."""
        return self._write(key, "replace", old, new)

    def remove(self, key: Key) -> bool:
        """Removes the key. Returns whether it was present."""
        return self._write(key, "remove", None, None)

    def size(self) -> int:
        """Returns the number of keys present."""
        return sum(self._snapshot(lambda s, _: s.size()))

    def keys(self) -> set[Key]:
        """Returns the keys present."""
        return set().union(*self._snapshot(lambda s, _: s.keys()))

    def close(self) -> None:
        """Stops the consumer thread and the Kafka clients, within Timeouts.close."""
        self._conn.close()

    def _write(self, key: Key, name: CommandName, old: Value | None, new: Value | None) -> bool:
        """Runs one write operation. Returns whether it applied.

        Raises DefiniteFailure when every attempt is known to have lost (or
        none was sent), Indeterminate when the last attempt's fate is unknown.
        """
        deadline = self._deadline()
        partition = partition_for(key, self._replica.partitions)
        entry = self._local_entry(key)
        fresh = False
        while True:
            if not precondition_holds(name, old, None if entry is None else entry.value):
                if fresh:
                    return False
                entry = self._barriers([partition], lambda s, _: s.entry(key), deadline)[0]
                fresh = True
                continue
            if time.monotonic() >= deadline:
                raise DefiniteFailure(f"{name} {key!r}: every attempt lost its version race")
            version = 1 if entry is None else entry.version + 1
            record = Write(key, version, new, self._attempt_id())
            outcome = self._attempt(partition, record, deadline)
            self._tidy(partition, record, outcome)
            if self._won(name, record, outcome):
                return True
            # Our record is in everyone's log now, so the state at it is fresh.
            entry, fresh = outcome.entry, True

    def _won(self, name: CommandName, record: Write, outcome: Outcome) -> bool:
        """Whether our attempt won its version: the first record for it is ours."""
        return outcome.applied

    def _local_entry(self, key: Key) -> Entry | None:
        """Returns the key's entry on the local replica, which may be stale."""
        return self._replica.read(lambda states: states[partition_for(key, len(states))].entry(key))

    def _attempt(self, partition: int, record: Record, deadline: float) -> Outcome:
        """Sends one record of ours and waits until the local replica applies it."""
        pending = self._replica.expect(record.attempt, partition, _outcome)
        try:
            self._conn.send(partition, record, pending)
            if not pending.wait(deadline - time.monotonic()):
                raise Indeterminate(
                    f"attempt {record.attempt} not back within {self._timeouts.operation}s"
                )
            return pending.result()
        finally:
            self._replica.forget(record.attempt)

    def _tidy(self, partition: int, record: Record, outcome: Outcome) -> None:
        """Tombstones what compaction may drop: the entry we superseded, or our losing record."""
        if outcome.applied and outcome.superseded is not None:
            self._conn.discard(partition, outcome.superseded.attempt)
        elif not outcome.applied:
            self._conn.discard(partition, record.attempt)

    def _snapshot(self, capture: Capture[T]) -> list[T]:
        """Returns capture of every partition's state, all as of one instant during the call."""
        deadline = self._deadline()
        everywhere = range(self._replica.partitions)

        def counted(state: MapState, outcome: Outcome) -> tuple[int, T]:
            return state.changes, capture(state, outcome)

        first = self._barriers(everywhere, counted, deadline)
        if len(first) == 1:
            return [first[0][1]]
        # Round two is sent after round one is back; no change in between on any
        # partition means the states held together from the last to the first
        # barrier append.
        while True:
            second = self._barriers(everywhere, counted, deadline)
            if [c for c, _ in first] == [c for c, _ in second]:
                return [v for _, v in second]
            first = second

    def _barriers(self, partitions: Sequence[int], capture: Capture[T], deadline: float) -> list[T]:
        """Appends a barrier to each partition. Returns capture at each, in order.

        A barrier changes nothing, so every failure here is a DefiniteFailure.
        """
        pendings = []
        try:
            for p in partitions:
                attempt = self._attempt_id()
                pending = self._replica.expect(attempt, p, capture)
                pendings.append(pending)
                self._conn.send(p, Barrier(attempt), pending)
            results = []
            for pending in pendings:
                if not pending.wait(deadline - time.monotonic()):
                    raise DefiniteFailure(f"barrier not back within {self._timeouts.operation}s")
                results.append(pending.result())
                self._conn.discard(pending.partition, pending.attempt)
            return results
        except Indeterminate as e:
            raise DefiniteFailure(f"barrier failed: {e}") from e
        finally:
            for pending in pendings:
                self._replica.forget(pending.attempt)

    def _attempt_id(self) -> str:
        return f"{self._attempt_prefix}{next(self._counter)}"

    def _deadline(self) -> float:
        return time.monotonic() + self._timeouts.operation


def _outcome(_state: MapState, outcome: Outcome) -> Outcome:
    return outcome
