"""The transaction checks run on every queue history whose graph may hold a cycle
(checkers/queue/acyclic.py), with or without transactions, as Elle's search runs on every
history: a poll that returned a message before its send began is a G1c-realtime; a
correct simulated history surely holds none, and is not searched."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.queue import checker as queue
from tests.support.jepsen_kafka import cases, check_ops, found, o
from tests.support.queue_sim import SimConfig, simulate
from tests.unit.checkers.queue.test_properties import EXAMPLES, configs

READ_BEFORE_SENT = [
    o(0, 1, "invoke", "poll", "[[:poll]]"),
    o(1, 1, "ok", "poll", "[[:poll {:x [[0 :a]]}]]"),
    o(2, 0, "invoke", "send", "[[:send :x :a]]"),
    o(3, 0, "ok", "send", "[[:send :x [0 :a]]]"),
]


def test_a_poll_before_its_send_began_is_a_g1c_realtime(tmp_path: Path) -> None:
    outcome = check_ops(tmp_path, *READ_BEFORE_SENT)
    [cycle] = cases(outcome, "G1c-realtime")
    steps = [(s["from"], s["to"], s["type"]) for s in cycle["steps"]]
    assert steps == [(0, 2, "realtime"), (2, 0, "wr")]
    assert found(outcome) == {"G1c-realtime": 1}
    assert outcome["valid"] is False


def test_the_same_ops_in_time_order_are_valid_and_not_searched(tmp_path: Path) -> None:
    outcome = check_ops(
        tmp_path,
        o(0, 0, "invoke", "send", "[[:send :x :a]]"),
        o(1, 0, "ok", "send", "[[:send :x [0 :a]]]"),
        o(2, 1, "invoke", "poll", "[[:poll]]"),
        o(3, 1, "ok", "poll", "[[:poll {:x [[0 :a]]}]]"),
    )
    assert (outcome["valid"], found(outcome)) == (True, {})
    assert "transactions" not in outcome  # acyclic: the graph was never built


@settings(max_examples=EXAMPLES, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), config=configs)
def test_a_correct_simulated_history_is_acyclic(seed: int, config: SimConfig) -> None:
    events, _ = simulate(seed, config)
    result = queue.check(events)
    assert result["acyclic"] is (result["txn_ops"] == 0)
