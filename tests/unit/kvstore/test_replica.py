"""Barrier bookkeeping: waits on our records, captures at the cut, catch-up, failure."""

from __future__ import annotations

import threading

import pytest

from kvstore.errors import DefiniteFailure, Indeterminate
from kvstore.records import Barrier, Value, Write
from kvstore.replica import Capture, Replica
from kvstore.state import MapState, Outcome


def value_of(key: str) -> Capture[Value | None]:
    def capture(state: MapState, _: Outcome) -> Value | None:
        return state.get(key)

    return capture


def test_a_barrier_captures_the_state_at_its_own_offset() -> None:
    replica = Replica(1)
    pending = replica.expect("b1", 0, value_of("k"))
    replica.apply(0, 0, Write("k", 1, "before", "A"))
    replica.apply(0, 1, Barrier("b1"))
    replica.apply(0, 2, Write("k", 2, "after", "B"))
    assert pending.wait(0)
    assert pending.result() == "before"


def test_a_write_learns_whether_it_won() -> None:
    replica = Replica(1)
    mine = replica.expect("B", 0, lambda _, outcome: outcome)
    replica.apply(0, 0, Write("k", 1, "a", "A"))
    replica.apply(0, 1, Write("k", 1, "b", "B"))
    outcome = mine.result()
    assert not outcome.applied
    assert outcome.entry is not None and outcome.entry.attempt == "A"


def test_only_the_awaited_attempt_settles_a_wait() -> None:
    replica = Replica(1)
    pending = replica.expect("b1", 0, value_of("k"))
    replica.apply(0, 0, Barrier("someone else's"))
    assert not pending.wait(0)


def test_a_forgotten_attempt_is_still_applied_when_it_arrives() -> None:
    replica = Replica(1)
    pending = replica.expect("A", 0, value_of("k"))
    replica.forget("A")
    replica.apply(0, 0, Write("k", 1, "late", "A"))
    assert not pending.wait(0)
    assert replica.read(lambda states: states[0].get("k")) == "late"


def test_partitions_keep_separate_states() -> None:
    replica = Replica(2)
    replica.apply(1, 0, Write("k", 1, "one", "A"))
    assert replica.read(lambda states: [s.get("k") for s in states]) == [None, "one"]


def test_catching_up_counts_tombstones_and_sparse_offsets() -> None:
    replica = Replica(2)
    assert not replica.wait_caught_up([2, 10], 0.01)
    replica.apply(0, 0, Write("k", 1, "a", "A"))
    replica.apply(0, 1, None)
    replica.reached(1, 10)
    assert replica.wait_caught_up([2, 10], 0.01)


def test_catching_up_wakes_a_waiting_thread() -> None:
    replica = Replica(1)
    done = threading.Event()

    def waiter() -> None:
        if replica.wait_caught_up([1], 5.0):
            done.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    replica.apply(0, 0, Barrier("x"))
    thread.join(5.0)
    assert done.is_set()


def test_a_failed_replica_fails_every_wait_and_refuses_new_ones() -> None:
    replica = Replica(1)
    pending = replica.expect("A", 0, value_of("k"))
    replica.fail("log truncated")
    assert pending.wait(0)
    with pytest.raises(Indeterminate, match="log truncated"):
        pending.result()
    with pytest.raises(DefiniteFailure):
        replica.expect("B", 0, value_of("k"))
    assert not replica.wait_caught_up([5], 1.0)


def test_the_first_settlement_wins() -> None:
    replica = Replica(1)
    pending = replica.expect("A", 0, value_of("k"))
    replica.apply(0, 0, Write("k", 1, "a", "A"))
    pending.fail(Indeterminate("late delivery error"))
    assert pending.result() == "a"
