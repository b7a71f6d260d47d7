"""Tests of the linearizability checker on constructed histories: anomalies it must report
with the right op, tricky valid cases, bounds that give "unknown", and the report itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checkers import fork_pool
from checkers.linearizable import checker as linearizable
from checkers.linearizable import graph
from checkers.linearizable.checker import check, explain, merge_validity
from checkers.linearizable.models import MODELS
from history import MalformedOp, Op, OpType

CAS, REGISTER, MAP = MODELS["cas-register"], MODELS["register"], MODELS["map"]


class History:
    """Builds ops with increasing indexes; times are plain integers."""

    def __init__(self) -> None:
        self.ops: list[Op] = []

    def ok(self, process: int, f: str, value: Any, call: int, ret: int, key: Any = "k") -> Op:
        return self._add(process, f, value, "ok", call, ret, key)

    def info(self, process: int, f: str, value: Any, call: int, key: Any = "k") -> Op:
        return self._add(process, f, value, "info", call, None, key)

    def _add(
        self,
        process: int,
        f: str,
        value: Any,
        type_: OpType,
        call: int,
        ret: int | None,
        key: Any,
    ) -> Op:
        op = Op(
            index=len(self.ops),
            process=process,
            f=f,
            key=key,
            value=value,
            type=type_,
            call=call,
            ret=ret,
        )
        self.ops.append(op)
        return op


def invalid_op(result: dict[str, Any]) -> int:
    assert result["valid"] is False, result
    (fail,) = result["failures"]
    return int(fail["op"]["index"])


# --- anomalies: each must be invalid and name the op that cannot be placed ---------------


def test_stale_read() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.ok(1, "write", 2, 20, 30)
    read = h.ok(0, "read", 1, 40, 50)
    result = check(h.ops, REGISTER)
    assert invalid_op(result) == read.index
    fail = result["failures"][0]
    assert fail["message"] == "read 1 but value is 2"
    assert fail["states"] == [2]
    assert fail["previous_ok"]["index"] == 1


def test_lost_update_two_cas_from_the_same_value() -> None:
    h = History()
    h.ok(0, "write", 0, 0, 10)
    h.ok(1, "cas", [0, 1], 20, 30)
    second = h.ok(2, "cas", [0, 2], 21, 32)
    result = check(h.ops, CAS)
    assert invalid_op(result) == second.index
    assert result["failures"][0]["message"] == "can't CAS 1 from 0 to 2"


def test_read_of_a_value_never_written() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.info(1, "write", 2, 5)
    read = h.ok(0, "read", 7, 20, 30)
    assert invalid_op(check(h.ops, REGISTER)) == read.index


def test_cas_against_a_value_no_longer_current() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.ok(1, "write", 2, 20, 30)
    cas = h.ok(0, "cas", [1, 3], 40, 50)
    result = check(h.ops, CAS)
    assert invalid_op(result) == cas.index
    assert result["failures"][0]["message"] == "can't CAS 2 from 1 to 3"


def test_map_two_concurrent_put_if_absent_both_applied() -> None:
    h = History()
    h.ok(0, "put-if-absent", [1, True], 0, 10)
    second = h.ok(1, "put-if-absent", [2, True], 5, 15)
    result = check(h.ops, MAP)
    assert invalid_op(result) == second.index
    assert [c["index"] for c in result["failures"][0]["concurrent"]] == [0]


def test_map_get_after_a_completed_put_returns_the_old_value() -> None:
    h = History()
    h.ok(0, "put", 1, 0, 10)
    h.ok(1, "put", 2, 20, 30)
    get = h.ok(0, "get", 1, 40, 50)
    assert invalid_op(check(h.ops, MAP)) == get.index


def test_anomaly_after_a_long_valid_prefix_is_found_at_the_right_op() -> None:
    h = History()
    for i in range(200):  # two writers and a reader, overlapping
        h.ok(0, "write", 2 * i, 100 * i, 100 * i + 60)
        h.ok(1, "write", 2 * i + 1, 100 * i + 10, 100 * i + 70)
        h.ok(2, "read", 2 * i + 1, 100 * i + 80, 100 * i + 90)
    stale = h.ok(2, "read", 5, 20_000, 20_010)
    result = check(h.ops, REGISTER)
    assert invalid_op(result) == stale.index
    assert result["failures"][0]["prefix_length"] == 600


# --- valid but tricky ------------------------------------------------------------------


def test_crashed_write_taking_effect_late() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.info(1, "write", 2, 20)
    h.ok(0, "read", 1, 30, 40)
    h.ok(0, "read", 2, 50, 60)
    h.ok(0, "read", 2, 70, 80)
    assert check(h.ops, REGISTER)["valid"] is True


def test_crashed_write_never_taking_effect() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.info(1, "write", 2, 20)
    h.ok(0, "read", 1, 30, 40)
    h.ok(0, "read", 1, 50, 60)
    assert check(h.ops, REGISTER)["valid"] is True


def test_crashed_write_cannot_take_effect_before_it_was_invoked() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    read = h.ok(0, "read", 2, 20, 30)
    h.info(1, "write", 2, 40)
    assert invalid_op(check(h.ops, REGISTER)) == read.index


def test_chain_of_crashed_ops_explains_a_read() -> None:
    h = History()
    h.info(1, "write", 1, 0)
    h.info(2, "cas", [1, 2], 5)
    h.ok(0, "read", 2, 10, 20)
    assert check(h.ops, CAS)["valid"] is True


def test_crashed_read_says_nothing() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.info(1, "read", 99, 20)
    result = check(h.ops, REGISTER)
    assert result["valid"] is True and result["ops"] == 1


def test_map_values_from_json_lists() -> None:
    h = History()
    h.ok(0, "put", [1, 2], 0, 10)
    h.ok(0, "replace", [[1, 2], [3], True], 20, 30)
    h.ok(1, "get", [3], 40, 50)
    assert check(h.ops, MAP)["valid"] is True


def test_keys_are_checked_separately() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10, key="a")
    h.ok(1, "write", 2, 20, 30, key="b")
    h.ok(0, "read", 1, 40, 50, key="a")
    h.ok(1, "read", 1, 40, 50, key="b")
    result = check(h.ops, REGISTER)
    assert result["keys"] == 2 and result["valid"] is False
    assert [f["key"] for f in result["failures"]] == ["b"]


# --- bounds: "unknown", never a hang or a crash ----------------------------------------


def hard_history(writers: int = 16) -> list[Op]:
    """Many overlapping writes, then a read of a value nobody wrote: the search must try
    every order of the writes before it can say invalid."""
    h = History()
    for i in range(writers):
        h.ok(i, "write", i, 0, 100)
    h.ok(0, "read", 999, 200, 210)
    return h.ops


def test_time_limit_gives_unknown_with_cause_timeout() -> None:
    result = check(hard_history(), REGISTER, time_limit=0.2)
    assert result["valid"] == "unknown"
    (fail,) = result["failures"]
    assert fail["cause"] == "timeout" and fail["valid"] == "unknown"
    assert "time limit" in explain(result)[0]


def test_memory_bound_gives_unknown_with_cause_memory() -> None:
    result = check(hard_history(), REGISTER, max_cache_bytes=200_000)
    assert result["valid"] == "unknown"
    assert result["failures"][0]["cause"] == "memory"


def test_small_hard_history_is_invalid_within_bounds() -> None:
    assert check(hard_history(writers=5), REGISTER, time_limit=30)["valid"] is False


def test_unknown_operation_is_an_error_not_an_anomaly() -> None:
    h = History()
    h.ok(0, "cas", [1, 2], 0, 10)
    with pytest.raises(ValueError, match="'cas' is not an operation of the register model"):
        check(h.ops, REGISTER)


def test_merge_validity_by_priority() -> None:
    assert merge_validity([True, "unknown", False]) is False
    assert merge_validity([True, "unknown"]) == "unknown"
    assert merge_validity([True, True]) is True
    assert merge_validity([]) is True


# --- the report ------------------------------------------------------------------------


def test_result_is_json_and_explain_reads_well() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10)
    h.ok(1, "write", 2, 5, 30)
    h.info(2, "write", 3, 6)
    read = h.ok(0, "read", 4, 20, 40)
    result = check(h.ops, REGISTER)
    assert json.loads(json.dumps(result)) == result
    assert invalid_op(result) == read.index
    fail = result["failures"][0]
    assert sorted(fail["states"]) == [1, 2, 3]
    assert {c["index"] for c in fail["concurrent"]} == {1, 2}
    lines = explain(result)
    assert lines[0] == 'key "k": not linearizable'
    assert "read 4" in lines[1]
    assert any("could then only have been" in line for line in lines)
    assert any("concurrent with it" in line for line in lines)


def forced_pool(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Makes every check with jobs > 1 use the process pool; returns a list that grows by
    one each time the pool runs."""
    monkeypatch.setattr(linearizable, "PARALLEL_MIN_OPS", 1)
    # Threads left by other tests (a Kafka client's close abandoned in the background)
    # would make the check stay in process; these tests are about the pool.
    monkeypatch.setattr(fork_pool, "can_fork", lambda: True)
    pools: list[int] = []
    run_pool = linearizable._run_pool

    def counted(*args: Any) -> Any:
        pools.append(1)
        return run_pool(*args)

    monkeypatch.setattr(linearizable, "_run_pool", counted)
    return pools


def test_parallel_keys_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    h = History()
    for k in range(6):
        h.ok(0, "write", 1, 0, 10, key=k)
        h.ok(1, "read", 1 if k % 3 else 2, 20, 30, key=k)
    serial = check(h.ops, REGISTER, jobs=1)
    pools = forced_pool(monkeypatch)
    parallel = check(h.ops, REGISTER, jobs=2)
    assert pools == [1]
    assert parallel["failures"] == serial["failures"]
    assert [f["key"] for f in parallel["failures"]] == [0, 3]


def test_precedence_and_the_counterexample_graph() -> None:
    h = History()
    a = h.ok(0, "write", 1, 0, 10)
    b = h.ok(1, "write", 2, 5, 20)
    c = h.ok(0, "read", 2, 30, 40)
    d = h.info(2, "write", 3, 35)
    edges = graph.precedence(h.ops)
    pairs = {(u, v) for u, out in edges.items() for v in out}
    assert pairs == {(a.index, c.index), (b.index, c.index), (a.index, d.index), (b.index, d.index)}
    assert graph.concurrent_with(h.ops, a) == [b]
    assert graph.concurrent_with(h.ops, c) == [d]
    shown = graph.counterexample_graph([b, a], c, [d])
    assert shown["nodes"] == [
        {"index": b.index, "role": "prefix"},
        {"index": a.index, "role": "prefix"},
        {"index": c.index, "role": "failing"},
        {"index": d.index, "role": "concurrent"},
    ]
    assert [b.index, a.index, "linearized"] in shown["edges"]
    assert [a.index, c.index, "real-time"] in shown["edges"]
    assert len(shown["edges"]) == 5


def test_a_malformed_op_is_refused_before_any_search() -> None:
    h = History()
    h.ok(0, "write", 1, 0, 10, key="good")
    h.ok(0, "cas", 5, 20, 30, key="bad")  # a cas needs [old, new]
    with pytest.raises(MalformedOp) as info:
        check(h.ops, CAS)
    assert (info.value.index, info.value.in_value) == (h.ops[1].index, True)
    assert "a cas value must be [old, new], not 5" in info.value.problem


def test_a_model_that_raises_makes_only_its_key_unknown() -> None:
    def fragile_step(state: Any, op: Op) -> Any:
        if op.value == 13:
            raise RuntimeError("unlucky")
        return CAS.step(state, op)

    h = History()
    h.ok(0, "write", 13, 0, 10, key="bad")
    h.ok(0, "write", 1, 0, 10, key="good")
    h.ok(1, "read", 2, 20, 30, key="good")
    result = check(h.ops, CAS.with_(step=fragile_step, mentions=None, rename_written=None))
    assert result["valid"] is False
    causes = {f["key"]: f.get("cause") for f in result["failures"]}
    assert causes == {"bad": "error", "good": None}
    assert "RuntimeError: unlucky" in explain(result)[0]
