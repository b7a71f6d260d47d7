"""Property tests: the WGL search agrees with a brute-force enumeration on small histories.

Histories come from a simulated register or map (true linearization points, some crashed
ops, some corrupted results), so both verdicts occur; the oracle tries every order.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import cache
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from checkers.linearizable.checker import check, drop_crashed_reads, freeze_values
from checkers.linearizable.models import MODELS, Inconsistent, Model
from history import Op

VALUES = (1, 2, 3)
WIDE = tuple(range(1, 40))  # mostly distinct values: crashed ops nobody reads get skipped
INF = float("inf")


def _choose_f(rnd: random.Random, model: str, values: tuple[int, ...]) -> tuple[str, Any]:
    """Returns an operation and its invoke value."""
    if model == "map":
        f = rnd.choice(["get", "put", "put-if-absent", "replace", "remove"])
        if f == "replace":
            return f, [rnd.choice(values), rnd.choice(values)]
        return f, None if f in ("get", "remove") else rnd.choice(values)
    fs = ["read", "write", "cas"] if model == "cas-register" else ["read", "write"]
    f = rnd.choice(fs)
    if f == "cas":
        return f, [rnd.choice(values), rnd.choice(values)]
    return f, None if f == "read" else rnd.choice(values)


def _apply(state: Any, f: str, value: Any) -> tuple[Any, Any, bool]:
    """Runs one op on a real register or map. Returns (new state, ok value, did it fail)."""
    if f in ("read", "get"):
        return state, state, False
    if f in ("write", "put"):
        return value, value, False
    if f == "cas":
        return (value[1], value, False) if state == value[0] else (state, value, True)
    if f == "put-if-absent":
        return (value, [value, True], False) if state is None else (state, [value, False], False)
    if f == "replace":
        hit = state == value[0]
        return (value[1] if hit else state), [value[0], value[1], hit], False
    return None, state is not None, False  # remove


def _corrupt(f: str, value: Any, rnd: random.Random) -> Any:
    """Returns a plausible but possibly wrong completion value."""
    if f in ("read", "get"):
        return rnd.choice([None, *VALUES])
    if f == "put-if-absent":
        return [value[0], not value[1]]
    if f == "replace":
        return [value[0], value[1], not value[2]]
    if f == "remove":
        return not value
    return value


def simulate(
    rnd: random.Random,
    model: str,
    n: int,
    crash: float = 0.25,
    corrupt: float = 0.15,
    values: tuple[int, ...] = VALUES,
) -> list[Op]:
    """Returns n ops of a simulated store: each op takes effect at a random point inside its
    interval (a crashed one later or never); some ok results are then corrupted."""
    plans = []
    for i in range(n):
        call = rnd.randint(0, 30)
        ret = call + rnd.randint(1, 12)
        crashed = rnd.random() < crash
        point = (
            rnd.uniform(call, ret)
            if not crashed
            else (rnd.uniform(call, call + 40) if rnd.random() < 0.6 else INF)
        )
        plans.append((point, i, call, ret, crashed, *_choose_f(rnd, model, values)))
    state: Any = None
    ops = []
    for point, i, call, ret, crashed, f, value in sorted(plans):
        if point != INF:
            state, result, failed = _apply(state, f, value)
        else:
            result, failed = value, False
        if crashed:
            info_value = None if f == "remove" else value
            ops.append(
                Op(
                    index=i,
                    process=i,
                    f=f,
                    key="k",
                    value=info_value,
                    type="info",
                    call=call,
                    ret=None,
                )
            )
        elif not failed:
            if rnd.random() < corrupt:
                result = _corrupt(f, result, rnd)
            ops.append(
                Op(index=i, process=i, f=f, key="k", value=result, type="ok", call=call, ret=ret)
            )
    return sorted(ops, key=lambda op: op.index)


def brute_force(ops: list[Op], model: Model) -> bool:
    """Returns whether some order of all ok ops and any subset of crashed ops respects real
    time and the model. Exponential: for at most 7 ops."""
    ops = freeze_values(drop_crashed_reads(ops, model))
    oks = frozenset(i for i, op in enumerate(ops) if op.type == "ok")
    infos = frozenset(i for i, op in enumerate(ops) if op.type != "ok")

    def ret(i: int) -> float:
        r = ops[i].ret
        return INF if r is None else r

    @cache  # only makes the enumeration affordable beyond 7 ops; it prunes nothing
    def extend(left: frozenset[int], spare: frozenset[int], state: Any) -> bool:
        if not left:
            return True
        for i in left | spare:
            if any(ret(j) < ops[i].call for j in left if j != i):
                continue
            nxt = model.step(state, ops[i])
            if not isinstance(nxt, Inconsistent) and extend(left - {i}, spare - {i}, nxt):
                return True
        return False

    return extend(oks, infos, model.init)


@pytest.mark.parametrize("model", ["register", "cas-register", "map"])
@settings(max_examples=150, deadline=None)
@given(rnd=st.randoms(use_true_random=False), n=st.integers(1, 7))
def test_search_agrees_with_brute_force(model: str, rnd: random.Random, n: int) -> None:
    ops = simulate(rnd, model, n)
    expected = brute_force(ops, MODELS[model])
    event("valid" if expected else "invalid")
    assert check(ops, MODELS[model], jobs=1)["valid"] is expected


@pytest.mark.parametrize("model", ["register", "cas-register", "map"])
def test_seeded_sweep_agrees_and_yields_both_verdicts(model: str) -> None:
    verdicts: Counter[bool] = Counter()
    for seed in range(300):
        rnd = random.Random(seed)
        ops = simulate(rnd, model, rnd.randint(3, 7), corrupt=0.3)
        expected = brute_force(ops, MODELS[model])
        assert check(ops, MODELS[model], jobs=1)["valid"] is expected, f"seed {seed}"
        verdicts[expected] += 1
    assert verdicts[True] >= 60 and verdicts[False] >= 60, verdicts


@pytest.mark.parametrize("model", ["register", "cas-register", "map"])
def test_seeded_sweep_with_many_crashes_and_distinct_values(model: str) -> None:
    """Longer histories (up to 12 ops, a third crashed, mostly distinct values): here the
    search skips crashed ops nobody observes, and must still agree with the enumeration."""
    verdicts: Counter[bool] = Counter()
    for seed in range(150):
        rnd = random.Random(1000 + seed)
        ops = simulate(rnd, model, rnd.randint(6, 12), crash=0.35, corrupt=0.2, values=WIDE)
        expected = brute_force(ops, MODELS[model])
        assert check(ops, MODELS[model], jobs=1)["valid"] is expected, f"seed {1000 + seed}"
        verdicts[expected] += 1
    assert verdicts[True] >= 30 and verdicts[False] >= 30, verdicts


def _multi_key_step(state: Any, op: Op) -> Any:
    """A register per key inside one state: a sorted tuple of (key, value) pairs."""
    current = dict(state)
    nxt = MODELS["cas-register"].step(current.get(op.key), op)
    if isinstance(nxt, Inconsistent):
        return nxt
    current[op.key] = nxt
    return tuple(sorted(current.items()))


# A fresh Model: effect and observes must describe this model's states, so keep the defaults.
UNSPLIT = Model(
    name="multi-register",
    init=(),
    step=_multi_key_step,
    fs=MODELS["cas-register"].fs,
    reads=MODELS["cas-register"].reads,
    key_of=lambda op: None,
)


def _keyed(rnd: random.Random) -> list[Op]:
    ops = []
    for key in ("a", "b"):
        for op in simulate(rnd, "cas-register", rnd.randint(1, 4), corrupt=0.1):
            ops.append(
                Op(
                    index=op.index * 2 + (key == "b"),
                    process=op.process,
                    f=op.f,
                    key=key,
                    value=op.value,
                    type=op.type,
                    call=op.call,
                    ret=op.ret,
                )
            )
    return ops


@settings(max_examples=100, deadline=None)
@given(rnd=st.randoms(use_true_random=False))
def test_split_by_key_agrees_with_the_unsplit_search(rnd: random.Random) -> None:
    ops = _keyed(rnd)
    split = check(ops, MODELS["cas-register"], jobs=1)
    unsplit = check(ops, UNSPLIT, jobs=1)
    event(f"valid={split['valid']}")
    assert unsplit["keys"] <= 1
    assert split["valid"] is unsplit["valid"]
    assert split["valid"] is brute_force(ops, UNSPLIT)


def _without_skipping(model: Model) -> Model:
    """The same model with the default effect and observes: the search then skips no
    crashed op, which makes it slower but obviously complete."""
    return Model(name=model.name, init=model.init, step=model.step, fs=model.fs, reads=model.reads)


@pytest.mark.parametrize("model", ["register", "cas-register", "map"])
def test_skipping_unobserved_crashed_ops_never_changes_a_verdict(model: str) -> None:
    """Histories too long to enumerate (30 ops, a third crashed): the search with crashed-op
    skipping must agree with the search without it."""
    verdicts: Counter[bool] = Counter()
    for seed in range(60):
        rnd = random.Random(5000 + seed)
        values = WIDE if seed % 2 else VALUES
        ops = simulate(rnd, model, 30, crash=0.3, corrupt=0.06, values=values)
        plain = check(ops, _without_skipping(MODELS[model]), jobs=1, time_limit=20)["valid"]
        assert check(ops, MODELS[model], jobs=1)["valid"] is plain, f"seed {5000 + seed}"
        verdicts[plain is True] += 1
    assert verdicts[True] >= 10 and verdicts[False] >= 10, verdicts
