"""One instance's copy of the map, fed by its consumer, and the waits on records of ours.

Thread-safe and free of Kafka I/O: the consumer thread calls `apply`, client threads wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from kvstore.errors import DefiniteFailure, Indeterminate
from kvstore.records import Record
from kvstore.state import MapState, Outcome

T = TypeVar("T")
Capture = Callable[[MapState, Outcome], T]


class Pending(Generic[T]):
    """The answer to one record of ours, captured when the replica applies it.

    Settled once: the first `resolve` or `fail` wins.
    """

    def __init__(self, attempt: str, partition: int, capture: Capture[T]) -> None:
        self.attempt = attempt
        self.partition = partition
        self._capture = capture
        self._done = threading.Event()
        self._value: T | None = None
        self._error: Exception | None = None

    def settle(self, state: MapState, outcome: Outcome) -> None:
        """Captures the answer from the state right after our record was applied."""
        if not self._done.is_set():
            self._value = self._capture(state, outcome)
            self._done.set()

    def fail(self, error: Exception) -> None:
        """Makes `result` raise error, unless the answer is already in."""
        if not self._done.is_set():
            self._error = error
            self._done.set()

    def wait(self, timeout: float) -> bool:
        """Waits up to timeout seconds. Returns whether it is settled."""
        return self._done.wait(max(0.0, timeout))

    def result(self) -> T:
        """Returns the captured answer, or raises the failure. Only once settled."""
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class Replica:
    """The per-partition states of one instance, how far each has read, and who waits on what."""

    def __init__(self, partitions: int) -> None:
        self._cond = threading.Condition()
        self._states = [MapState() for _ in range(partitions)]
        self._positions = [0] * partitions
        self._pending: dict[str, Pending[Any]] = {}
        self._failure: str | None = None

    @property
    def partitions(self) -> int:
        """The number of partitions of the topic."""
        return len(self._states)

    def expect(self, attempt: str, partition: int, capture: Capture[T]) -> Pending[T]:
        """Registers a wait for our record `attempt`; call before sending it.

        Raises DefiniteFailure if the replica has failed: nothing is sent then.
        """
        pending = Pending(attempt, partition, capture)
        with self._cond:
            if self._failure is not None:
                raise DefiniteFailure(f"replica unusable: {self._failure}")
            self._pending[attempt] = pending
        return pending

    def forget(self, attempt: str) -> None:
        """Stops waiting for `attempt` (its op gave up); a late arrival is still applied."""
        with self._cond:
            self._pending.pop(attempt, None)

    def apply(self, partition: int, offset: int, record: Record | None) -> None:
        """Applies the record at offset, or only moves past it when None (tombstone, foreign)."""
        self.apply_all([(partition, offset, record)])

    def apply_all(self, read: Sequence[tuple[int, int, Record | None]]) -> None:
        """Applies (partition, offset, record) triples in order, as `apply` does each, under
        one lock: a replay reads many thousands at a time."""
        if not read:
            return
        with self._cond:
            for partition, offset, record in read:
                if record is not None:
                    state = self._states[partition]
                    outcome = state.apply(record)
                    pending = self._pending.pop(record.attempt, None)
                    if pending is not None:
                        pending.settle(state, outcome)
                if offset >= self._positions[partition]:
                    self._positions[partition] = offset + 1
            self._cond.notify_all()

    def reached(self, partition: int, end: int) -> None:
        """Notes that the consumer reached offset `end` of partition (offsets may be sparse)."""
        with self._cond:
            self._advance(partition, end)

    def fail(self, reason: str) -> None:
        """Marks the replica unusable (its log was truncated, its client hit a fatal error,
        its instance closed) and fails every wait at once as Indeterminate. The first
        reason is the one kept: later ones are consequences."""
        with self._cond:
            if self._failure is None:
                self._failure = reason
            waiting, self._pending = list(self._pending.values()), {}
            self._cond.notify_all()
        for pending in waiting:
            pending.fail(Indeterminate(f"replica failed: {self._failure}"))

    @property
    def failure(self) -> str | None:
        """Why the replica is unusable, or None."""
        return self._failure

    def read(self, query: Callable[[Sequence[MapState]], T]) -> T:
        """Runs query on the current states, under the lock. Returns its answer."""
        with self._cond:
            return query(self._states)

    def wait_caught_up(self, ends: Sequence[int], timeout: float) -> bool:
        """Waits until every partition p has been read up to ends[p]. Returns whether it was."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while any(pos < end for pos, end in zip(self._positions, ends, strict=True)):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._failure is not None:
                    return False
                self._cond.wait(remaining)
            return True

    def _advance(self, partition: int, position: int) -> None:
        if position > self._positions[partition]:
            self._positions[partition] = position
            self._cond.notify_all()
