"""The user-defined model of docs/CHECKERS.md (examples/counter_model.py) against a
brute-force oracle, and the page's block kept the same text as the file.

The oracle shares nothing with checkers/ but the counter's vocabulary: it tries every order
of a key's ops that respects real time (an ok op that returned before another's invoke comes
first), each crashed add placed anywhere after its invoke or left out, crashed reads
ignored, and accepts when one order explains every ok read.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import fork_pool
from checkers.linearizable import checker as linearizable
from checkers.linearizable.model_loader import load_model
from checkers.linearizable.models import Model
from history import Op
from tests.support import ROOT

EXAMPLE = ROOT / "examples" / "counter_model.py"
INF = float("inf")


@pytest.fixture(scope="module")
def counter() -> Model:
    return load_model(f"{EXAMPLE}:COUNTER")


def test_the_checkers_page_shows_the_example_file_verbatim() -> None:
    page = (ROOT / "docs" / "CHECKERS.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert EXAMPLE.read_text() in blocks


# --- the oracle -------------------------------------------------------------------------------


def oracle_key(ops: Sequence[Op]) -> bool:
    """Whether one key's ops have a linearization, by trying every order."""
    ok = sum(1 << i for i, op in enumerate(ops) if op.type == "ok")
    before = [
        sum(1 << j for j, b in enumerate(ops) if b.ret is not None and b.ret < a.call) for a in ops
    ]
    seen: set[tuple[int, int]] = set()

    def extend(done: int, count: int) -> bool:
        if done & ok == ok:
            return True
        if (done, count) in seen:
            return False
        seen.add((done, count))
        for i, op in enumerate(ops):
            if done >> i & 1 or before[i] & ~done:
                continue
            if op.f == "read" and (op.type == "info" or op.value != count):
                continue
            after = count + op.value if op.f == "add" else count
            if extend(done | 1 << i, after):
                return True
        return False

    return extend(0, 0)


def oracle(ops: Sequence[Op]) -> bool:
    keys: dict[Any, list[Op]] = {}
    for op in ops:
        keys.setdefault(op.key, []).append(op)
    return all(oracle_key(k) for k in keys.values())


def simulated(rnd: random.Random, n: int, *, crash: float, corrupt: float) -> list[Op]:
    """Returns n ops of a simulated counter store over two keys: each ok op takes effect
    inside its interval, a crashed one later or never; some ok reads are then corrupted."""
    plans = []
    for i in range(n):
        call = rnd.randint(0, 12)
        ret = call + rnd.randint(0, 6)
        crashed = rnd.random() < crash
        f = rnd.choice(["add", "read"])
        point = rnd.uniform(call, call + 20) if rnd.random() < 0.6 else INF
        amount = rnd.randint(1, 3) if f == "add" else None
        plan = (point if crashed else rnd.uniform(call, ret), i, call, ret, crashed, f, amount)
        plans.append((*plan, rnd.choice(["a", "b"])))
    counts: dict[str, int] = {}
    ops = []
    for point, i, call, ret, crashed, f, amount, key in sorted(plans):
        if point != INF and f == "add":
            counts[key] = counts.get(key, 0) + amount
        if crashed:
            ops.append(Op(i, i, f, key, amount, "info", call, None))
            continue
        value = amount if f == "add" else counts.get(key, 0)
        if f == "read" and rnd.random() < corrupt:
            value += rnd.choice([-2, -1, 1, 2])
        ops.append(Op(i, i, f, key, value, "ok", call, ret))
    return sorted(ops, key=lambda op: op.index)


# --- the counter against it -------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.integers(2, 8),
    crash=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_agrees_with_the_oracle(counter: Model, seed: int, n: int, crash: float) -> None:
    ops = simulated(random.Random(seed), n, crash=crash, corrupt=0.4)
    assert linearizable.check(ops, counter, jobs=1)["valid"] is oracle(ops)


def test_seeded_sweep_yields_both_verdicts_with_crashed_adds(counter: Model) -> None:
    verdicts = set()
    for seed in range(300):
        ops = simulated(random.Random(seed), 7, crash=0.4, corrupt=0.3)
        expected = oracle(ops)
        assert linearizable.check(ops, counter, jobs=1)["valid"] is expected, seed
        verdicts.add((expected, any(op.f == "add" and op.type == "info" for op in ops)))
    assert verdicts == {(True, True), (False, True), (True, False), (False, False)}


def op(index: int, f: str, value: Any, call: int, ret: int | None, key: str = "k") -> Op:
    return Op(index, index, f, key, value, "ok" if ret is not None else "info", call, ret)


@pytest.mark.parametrize(
    ("ops", "valid"),
    [
        ([op(0, "read", 0, 0, 1), op(1, "add", 2, 2, 3), op(2, "read", 2, 4, 5)], True),
        ([op(0, "add", 2, 0, 1), op(1, "read", 0, 2, 3)], False),  # a stale read
        # Concurrent with the add, a read may see it or not.
        ([op(0, "add", 2, 0, 5), op(1, "read", 0, 1, 2), op(2, "read", 2, 3, 4)], True),
        # A crashed add may land after a later read, or never: not half of it.
        ([op(0, "add", 2, 0, None), op(1, "read", 0, 1, 2), op(2, "read", 2, 3, 4)], True),
        ([op(0, "add", 2, 0, None), op(1, "read", 1, 1, 2)], False),
        # Nor land before its invoke.
        ([op(0, "read", 2, 0, 1), op(1, "add", 2, 2, None)], False),
        # Once seen, it cannot be undone.
        (
            [op(0, "add", 2, 0, None), op(1, "read", 2, 1, 2), op(2, "read", 0, 3, 4)],
            False,
        ),
    ],
)
def test_hand_written_histories(counter: Model, ops: list[Op], valid: bool) -> None:
    assert oracle(ops) is valid
    assert linearizable.check(ops, counter, jobs=1)["valid"] is valid


def test_a_model_from_a_file_spreads_its_keys_over_supervised_processes(
    counter: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(linearizable, "PARALLEL_MIN_OPS", 1)
    jobs: list[int] = []
    supervised_map = fork_pool.supervised_map

    def counted(task: Any, parts: int, workers: int, limit: float | None) -> list[Any]:
        jobs.append(workers)
        return supervised_map(task, parts, workers, limit)

    monkeypatch.setattr(fork_pool, "supervised_map", counted)
    ops = [
        *(op(i, "add", 1, 2 * i, 2 * i + 1, key=f"k{i % 4}") for i in range(8)),
        op(8, "read", 2, 20, 21, key="k0"),
        op(9, "read", 3, 20, 21, key="k1"),  # invalid: k1 got two adds
    ]
    parallel = linearizable.check(ops, counter, jobs=2)
    serial = linearizable.check(ops, counter, jobs=1)
    assert jobs == [2, 1]
    assert parallel["valid"] is False
    assert parallel["failures"] == serial["failures"]
