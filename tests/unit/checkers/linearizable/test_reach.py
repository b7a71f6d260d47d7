"""The search's pruning by the next read (linearizable/reach.py) on kv-append: it must never change
a verdict, so it is checked against the brute-force oracle of test_kv_append on histories
built to tempt it (one key, many concurrent ops, values that repeat and prefix each other,
empty appends, nil and "" reads, crashed puts and appends), and it must cut the search."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.linearizable.checker import check
from checkers.linearizable.model_core import Inconsistent
from checkers.linearizable.models import KV_APPEND
from checkers.linearizable.search import Limits, search
from history import Op
from tests.unit.checkers.linearizable.test_kv_append import oracle

VALUES = ["a", "b", "ab", ""]  # "a" then "b" reads as "ab": orders that look alike
INF = float("inf")


def crowded(rnd: random.Random, n: int, crash: float, corrupt: float) -> list[Op]:
    """Returns n ops on one key of a simulated store, most of them overlapping; each ok op
    takes effect inside its interval, a crashed one later or never; some gets are then
    changed to another plausible string, "" or nil."""
    plans = []
    for i in range(n):
        call = rnd.randint(0, 8)
        ret = call + rnd.randint(0, 10)
        f = rnd.choices(["get", "append", "put"], weights=[4, 5, 1])[0]
        crashed = f != "get" and rnd.random() < crash
        point = rnd.choice([rnd.uniform(call, call + 20), INF]) if crashed else None
        plans.append((rnd.uniform(call, ret) if point is None else point, i, call, ret, f, crashed))
    state: str | None = None
    ops = []
    for point, i, call, ret, f, crashed in sorted(plans):
        value = rnd.choice(VALUES) if f != "get" else None
        if point != INF:
            state = _apply(state, f, value)
        if crashed:
            ops.append(Op(i, i, f, "k", value, "info", call, None))
            continue
        if f == "get":
            value = state
            if rnd.random() < corrupt:
                value = rnd.choice([None, "", "a", "ba", (state or "") + "a", (state or "")[1:]])
        ops.append(Op(i, i, f, "k", value, "ok", call, ret))
    return sorted(ops, key=lambda op: op.index)


def _apply(state: str | None, f: str, value: str | None) -> str | None:
    if f == "put":
        return value
    if f == "append":
        return (state or "") + (value or "")
    return state


@settings(max_examples=400, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    n=st.integers(3, 9),
    crash=st.sampled_from([0.0, 0.3, 0.7]),
    corrupt=st.sampled_from([0.0, 0.2, 0.5]),
)
def test_pruning_agrees_with_the_oracle(
    rnd: random.Random, n: int, crash: float, corrupt: float
) -> None:
    ops = crowded(rnd, n, crash, corrupt)
    assert check(ops, KV_APPEND, jobs=1)["valid"] is oracle(ops)


def test_seeded_sweep_sees_both_verdicts_with_crashed_puts() -> None:
    verdicts = set()
    for seed in range(400):
        ops = crowded(random.Random(seed), 8, 0.4, 0.25)
        expected = oracle(ops)
        assert check(ops, KV_APPEND, jobs=1)["valid"] is expected, seed
        verdicts.add((expected, any(op.f == "put" and op.type == "info" for op in ops)))
    assert verdicts == {(True, True), (False, True), (True, False), (False, False)}


def op(index: int, f: str, value: str | None, call: int, ret: int | None) -> Op:
    return Op(index, index, f, "k", value, "ok" if ret is not None else "info", call, ret)


def rounds(count: int, width: int) -> list[Op]:
    """Returns `count` rounds of `width` concurrent appends followed by a get that read
    them in the reverse of their invoke order, the order a search tries last."""
    ops: list[Op] = []
    text = ""
    for r in range(count):
        t = 10 * r
        for w in range(width):
            ops.append(op(len(ops), "append", f"{r}.{w} ", t + w, t + 8))
        text += "".join(f"{r}.{w} " for w in reversed(range(width)))
        ops.append(op(len(ops), "get", text, t + 9, t + 9))
    return ops


def test_a_wrong_order_of_appends_is_cut_before_the_next_get() -> None:
    ops = rounds(20, 7)  # 7! orders a round without the cut
    outcome = search(ops, KV_APPEND, Limits())
    assert outcome.valid is True
    assert outcome.configs < 20 * 8 * 8


def test_crashed_appends_nobody_read_do_not_blow_up_the_chains() -> None:
    # Ten appends that crashed and never took effect can go anywhere: 10! orders of them
    # before each op, unless chains are tried only when needed and cut by the next get.
    ops = rounds(10, 3)
    ops += [op(len(ops) + c, "append", f"lost{c} ", c, None) for c in range(10)]
    outcome = search(ops, KV_APPEND, Limits())
    assert outcome.valid is True
    assert outcome.configs < 10 * 4 * 4


def test_a_blind_put_that_may_come_first_stops_the_cut() -> None:
    # Appending "b" to "a" cannot give "b", unless the put lands between them.
    ops = [op(0, "append", "a", 0, 1), op(1, "put", "", 2, 6), op(2, "append", "b", 3, 4)]
    ops.append(op(3, "get", "b", 5, 7))
    assert oracle(ops) is True
    assert check(ops, KV_APPEND, jobs=1)["valid"] is True
    crashed_put = [*ops[:1], op(1, "put", "", 2, None), *ops[2:]]
    assert oracle(crashed_put) is True
    assert check(crashed_put, KV_APPEND, jobs=1)["valid"] is True


def test_a_cut_reports_the_get_that_cannot_be_reached() -> None:
    ops = [op(0, "append", "x ", 0, 1), op(1, "append", "y ", 2, 3), op(2, "get", "y x ", 4, 5)]
    (fail,) = check(ops, KV_APPEND, jobs=1)["failures"]
    assert fail["op"]["index"] == 2
    assert fail["message"] == 'get "y x " but value is "x "'
    assert [o["index"] for o in fail["longest_prefix"]] == [0]


def test_nil_is_only_read_before_any_write() -> None:
    reaches = KV_APPEND.reaches
    assert reaches is not None
    get_nil, get_empty = op(0, "get", None, 0, 1), op(0, "get", "", 0, 1)
    assert reaches(None, get_nil) and not reaches("", get_nil)
    assert reaches(None, get_empty) and reaches("", get_empty) and not reaches("a", get_empty)
    assert reaches("a", op(0, "get", "ab", 0, 1)) and not reaches("b", op(0, "get", "ab", 0, 1))
    # what reaches promises: no chain of appends and gets from a refused state succeeds
    for state in (None, "", "a", "b", "ab"):
        for value in (None, "", "a", "ab", "ba"):
            get = op(0, "get", value, 0, 1)
            if not reaches(state, get):
                for tail in ("", "a", "b", "ab", "ba"):
                    after = KV_APPEND.step(state, op(1, "append", tail, 0, 1))
                    assert isinstance(KV_APPEND.step(after, get), Inconsistent)
