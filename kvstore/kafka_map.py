"""KafkaMap: the linearizable map whose only storage and only coordination is a Kafka topic.

Writes race for the key's next version; reads wait for a barrier record (the Upstash design).

Outcomes. A method returns only what the log proves; DefiniteFailure means certainly not
applied, Indeterminate may have been applied, and nothing but a StoreError leaves a method
(an unexpected exception is a bug whose effect is unknown: Indeterminate). Keys and values
are checked before anything is sent (InvalidArgument). An instance whose log was
truncated (an unclean leader election), whose client hit a fatal error, whose consumer
thread died or which was closed is failed: its waiting operations end Indeterminate at
once, later ones DefiniteFailure before sending, and `failure` says why, so that the
workload opens a fresh instance, which reads what Kafka kept.

Unclean election. An attempt is judged lost when the first record of its (key, version)
in the log is another's. While the topic allows unclean leader election, that log can be
truncated and our record (retried by the producer, or never acknowledged) appended again
where it wins, so an operation with an attempt judged lost and none won raises
Indeterminate instead of DefiniteFailure, and instead of returning False. For the same
reason no write is tombstoned there (`_tidy`): only barriers are compacted away. The
setting is read from the topic itself when the instance opens.
"""

from __future__ import annotations

import functools
import itertools
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from typing import ParamSpec, Self, TypeVar

from kvstore.api import DEFAULT_TIMEOUTS, Timeouts
from kvstore.connection import Connection
from kvstore.errors import DefiniteFailure, Indeterminate, StoreError
from kvstore.kafka_log import KafkaConnection
from kvstore.records import (
    Barrier,
    CommandName,
    Key,
    Record,
    Value,
    Write,
    partition_for,
    require_key,
    require_value,
)
from kvstore.replica import Capture
from kvstore.state import Entry, MapState, Outcome, precondition_holds

T = TypeVar("T")
P = ParamSpec("P")
LOG = logging.getLogger("kvstore")


def store_errors(method: Callable[P, T]) -> Callable[P, T]:
    """Takes a public store method. Returns it raising nothing but StoreErrors: anything
    else is a bug whose effect is unknown, so Indeterminate (logged with its traceback)."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except StoreError:
            raise
        except Exception as e:
            LOG.exception("unexpected error in %s", method.__qualname__)
            reason = f"unexpected {type(e).__name__}: {e}"
            # The client's state is unknown after it (e.g. confluent-kafka raising a
            # SystemError once its producer has hit a fatal error): fail the instance too,
            # so that a fresh one takes its place.
            fail = getattr(getattr(args[0], "_conn", None), "fail", None) if args else None
            if callable(fail):
                fail(reason)
            raise Indeterminate(reason) from e

    return guarded


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
    ) -> None:
        self._setup(
            KafkaConnection(bootstrap_servers, topic, client_id, timeouts), client_id, timeouts
        )

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

    @store_errors
    def get(self, key: Key) -> Value | None:
        """Returns the key's value as of a barrier appended during the call."""
        partition = partition_for(require_key(key), self._replica.partitions)
        return self._barriers([partition], lambda s, _: s.get(key), self._deadline())[0]

    @store_errors
    def put(self, key: Key, value: Value) -> None:
        """Sets the key to value."""
        self._write(require_key(key), "put", None, require_value(value))

    @store_errors
    def put_if_absent(self, key: Key, value: Value) -> bool:
        """Sets the key to value if absent. Returns whether it did."""
        return self._write(require_key(key), "put-if-absent", None, require_value(value))

    @store_errors
    def replace(self, key: Key, old: Value, new: Value) -> bool:
        """Sets the key to new if its value is old. Returns whether it did."""
        return self._write(require_key(key), "replace", require_value(old), require_value(new))

    @store_errors
    def remove(self, key: Key) -> bool:
        """Removes the key. Returns whether it was present."""
        return self._write(require_key(key), "remove", None, None)

    @store_errors
    def size(self) -> int:
        """Returns the number of keys present."""
        return sum(self._snapshot(lambda s, _: s.size()))

    @store_errors
    def keys(self) -> set[Key]:
        """Returns the keys present."""
        return set().union(*self._snapshot(lambda s, _: s.keys()))

    @property
    def failure(self) -> str | None:
        """Why this instance serves no more operations, or None."""
        return self._replica.failure

    @store_errors
    def close(self) -> None:
        """Fails the operations still waiting (Indeterminate), then stops the consumer
        thread and the Kafka clients, within Timeouts.close."""
        self._replica.fail("instance closed")
        self._conn.close()

    def _write(self, key: Key, name: CommandName, old: Value | None, new: Value | None) -> bool:
        """Runs one write operation. Returns whether it applied.

        Raises DefiniteFailure when every attempt is known to have lost (or
        none was sent), Indeterminate when the last attempt's fate is unknown,
        or when one was judged lost under unclean election (module docstring).
        """
        deadline = self._deadline()
        partition = partition_for(key, self._replica.partitions)
        entry = self._local_entry(key)
        fresh = False
        lost = 0
        try:
            while True:
                if not precondition_holds(name, old, None if entry is None else entry.value):
                    if fresh:
                        return self._refused(f"{name} {key!r} refused", lost)
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
                lost += 1
                # Our record is in everyone's log now, so the state at it is fresh.
                entry, fresh = outcome.entry, True
        except DefiniteFailure as failure:
            if lost and self._conn.unclean_election:
                raise self._may_land(str(failure), lost) from failure
            raise

    def _refused(self, what: str, lost: int) -> bool:
        """Returns False for a write whose precondition does not hold, unless an attempt of
        it was judged lost under unclean election: then raises Indeterminate."""
        if lost and self._conn.unclean_election:
            raise self._may_land(what, lost)
        return False

    def _may_land(self, what: str, lost: int) -> Indeterminate:
        return Indeterminate(
            f"{what}; {lost} attempt(s) judged lost may still land:"
            " the topic allows unclean leader election"
        )

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
        """Tombstones what compaction may drop: the entry we superseded, or our losing record.

        Not while the topic allows unclean election: a truncation can drop the record
        that justified a tombstone and keep the tombstone, which would then erase a
        live entry (or a lost attempt that landed again) from every later replay.
        """
        if self._conn.unclean_election:
            return
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
