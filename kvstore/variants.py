"""The weaker maps the harness must catch: same interface as KafkaMap, known anomalies.

Each class docstring names the anomaly a checker is expected to find in it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kvstore.errors import DefiniteFailure
from kvstore.kafka_map import KafkaMap, store_errors
from kvstore.records import Command, CommandName, Key, Value, Write, partition_for, require_key
from kvstore.state import MapState, Outcome, precondition_holds

T = TypeVar("T")


class LocalReadMap(KafkaMap):
    """KafkaMap whose get, size and keys answer from the local replica, with no barrier.

    Expected anomaly: stale reads. After a write on one instance has returned,
    a get on another instance whose consumer lags still returns the old value,
    so histories with several instances are not linearizable. Writes are
    KafkaMap's and stay correct.
    """

    @store_errors
    def get(self, key: Key) -> Value | None:
        """Returns the key's value on the local replica."""
        require_key(key)
        return self._local(lambda states: states[partition_for(key, len(states))].get(key))

    @store_errors
    def size(self) -> int:
        """Returns the number of keys present on the local replica."""
        return self._local(lambda states: sum(s.size() for s in states))

    @store_errors
    def keys(self) -> set[Key]:
        """Returns the keys present on the local replica."""
        return self._local(lambda states: set().union(*(s.keys() for s in states)))

    def _local(self, query: Callable[[Sequence[MapState]], T]) -> T:
        failure = self._replica.failure
        if failure is not None:
            raise DefiniteFailure(f"replica unusable: {failure}")
        return self._replica.read(query)


class ReplicaStyleMap(LocalReadMap):
    """The ReplicaMap design: operations replicated through the log, preconditions checked locally.

    Every operation is one Command record that each replica applies in log
    order, checking its precondition against its own state; before sending,
    the precondition is checked on the local copy, and a failure there
    returns False at once. Reads are local. Expected anomalies: stale reads,
    and conditional operations refused on a stale copy (put_if_absent returns
    False although the key was removed before the call began). Not
    linearizable, but every replica converges to the same state.
    """

    def _write(self, key: Key, name: CommandName, old: Value | None, new: Value | None) -> bool:
        """Sends a Command if the local copy allows it. Returns whether it applied."""
        deadline = self._deadline()
        entry = self._local_entry(key)
        if not precondition_holds(name, old, None if entry is None else entry.value):
            return False
        record = Command(key, name, old, new, self._attempt_id())
        partition = partition_for(key, self._replica.partitions)
        if self._attempt(partition, record, deadline).applied:
            return True
        # Refused where it was applied: under unclean election it may land again elsewhere.
        return self._refused(f"{name} {key!r} refused when applied", 1)


class PublishedRuleMap(KafkaMap):
    """KafkaMap deciding whether an attempt won by value equality, as the published code does.

    The winner of our (key, version) counts as ours if it carries our value,
    and for put_if_absent also if it is a removal (the published code's null
    result reads as success), and remove is the published one. Expected
    anomalies: two concurrent put_if_absent calls with the same value both
    return True; a put_if_absent that lost its version to a remove of the
    already removed key returns True although the key stays absent; a replace
    that lost to an equal-valued write returns True; a remove returns True
    although a concurrent write won its version and the key stays present.

    What each needs to be visible: every one is a lost version race, so it needs
    a concurrent op on the same key whose record reaches the log first for the
    same version, and a later read of that key to contradict the True.
    - two True put_if_absent: a concurrent put_if_absent of the same value on an
      absent key (the kv workload repeats a key's last put-if-absent value for this);
    - put_if_absent True on an absent key: a concurrent remove of the already
      removed key (only this remove writes a removal for an absent key), and a get
      after both that returns None;
    - replace True without effect: a concurrent put, put_if_absent or replace that
      writes the same new value (the kv and register workloads write each value
      once per key, put_if_absent's repeats aside, so only the unit tests show it);
    - remove True with the key present: a concurrent put, put_if_absent or replace
      of a present key, and a get after both that returns the written value.
    """

    @store_errors
    def remove(self, key: Key) -> bool:
        """Removes the key as published: returns whether it was present, win or lose.

        A removal record is written for any key ever written, even one already
        removed, so it can race a put_if_absent for the same version.
        """
        deadline = self._deadline()
        partition = partition_for(require_key(key), self._replica.partitions)
        entry = self._barriers([partition], lambda s, _: s.entry(key), deadline)[0]
        if entry is None:
            return False
        self._attempt(partition, Write(key, entry.version + 1, None, self._attempt_id()), deadline)
        return entry.value is not None

    def _won(self, name: CommandName, record: Write, outcome: Outcome) -> bool:
        winner = outcome.entry
        if winner is None:
            return False
        return winner.value == record.value or (name == "put-if-absent" and winner.value is None)
