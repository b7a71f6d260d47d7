"""The kv-append model (strings that appends extend) against a brute-force oracle, and
`harness check` on kv-append histories in Jepsen EDN and history.jsonl.

The oracle shares nothing with checkers/ but the vocabulary: it tries every order of a
key's ops that respects real time (an ok op that returned before another's invoke comes
first), each crashed put or append placed anywhere after its invoke or left out, crashed
gets ignored, and accepts when one order explains every ok op.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.linearizable.checker import check
from checkers.linearizable.models import MODELS
from history import Op, load
from tests.unit.harness.commands.test_check import run

INF = float("inf")


def oracle_step(state: str | None, op: Op) -> tuple[bool, str | None]:
    """Returns (whether op can happen in state, the state after it)."""
    if op.f == "get":
        if op.type == "info":
            return True, state
        never_written = state is None and op.value in (None, "")
        return never_written or op.value == state, state
    if op.f == "put":
        return True, op.value
    return True, (state or "") + op.value


def oracle_key(ops: Sequence[Op]) -> bool:
    """Whether one key's ops have a linearization, by trying every order."""
    n = len(ops)
    ok = sum(1 << i for i, op in enumerate(ops) if op.type == "ok")
    before = [
        sum(1 << j for j, b in enumerate(ops) if b.ret is not None and b.ret < a.call) for a in ops
    ]
    seen: set[tuple[int, str | None]] = set()

    def extend(done: int, state: str | None) -> bool:
        if done & ok == ok:
            return True
        if (done, state) in seen:
            return False
        seen.add((done, state))
        for i in range(n):
            if done >> i & 1 or before[i] & ~done:
                continue
            possible, after = oracle_step(state, ops[i])
            if possible and extend(done | 1 << i, after):
                return True
        return False

    return extend(0, None)


def oracle(ops: Sequence[Op]) -> bool:
    keys: dict[Any, list[Op]] = {}
    for op in ops:
        keys.setdefault(op.key, []).append(op)
    return all(oracle_key(k) for k in keys.values())


def simulated(rnd: random.Random, n: int, *, crash: float, corrupt: float) -> list[Op]:
    """Returns n ops of a simulated kv-append store over two keys: each ok op takes effect
    inside its interval, a crashed one later or never; some ok gets are then corrupted."""
    plans = []
    for i in range(n):
        call = rnd.randint(0, 12)
        ret = call + rnd.randint(0, 6)
        crashed = rnd.random() < crash
        f = rnd.choices(["get", "append", "put"], weights=[3, 4, 1])[0]
        value = None if f == "get" else f"{'xyz'[i % 3]}{i} "
        point = rnd.uniform(call, call + 20) if rnd.random() < 0.6 else INF
        plans.append((point if crashed else rnd.uniform(call, ret), i, call, ret, crashed, f))
        plans[-1] += (value, rnd.choice(["a", "b"]))
    states: dict[str, str | None] = {}
    ops = []
    for point, i, call, ret, crashed, f, value, key in sorted(plans):
        result = value
        if point != INF:
            _, states[key] = oracle_step(states.get(key), Op(i, i, f, key, value, "ok", 0, 0))
            result = states.get(key) if f == "get" else value
        if crashed:
            ops.append(Op(i, i, f, key, value, "info", call, None))
            continue
        if f == "get" and rnd.random() < corrupt:
            result = rnd.choice(["", None, "x0 ", (result or "") + "y1 ", (result or "")[1:]])
        ops.append(Op(i, i, f, key, result, "ok", call, ret))
    rnd.shuffle(ops)
    return sorted(ops, key=lambda op: op.index)


@settings(max_examples=300, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    n=st.integers(2, 8),
    crash=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_agrees_with_the_oracle(rnd: random.Random, n: int, crash: float) -> None:
    ops = simulated(rnd, n, crash=crash, corrupt=0.4)
    assert check(ops, MODELS["kv-append"], jobs=1)["valid"] is oracle(ops)


def test_seeded_sweep_yields_both_verdicts_with_crashed_appends() -> None:
    verdicts = []
    for seed in range(300):
        ops = simulated(random.Random(seed), 7, crash=0.4, corrupt=0.3)
        expected = oracle(ops)
        assert check(ops, MODELS["kv-append"], jobs=1)["valid"] is expected, seed
        crashed_append = any(op.f == "append" and op.type == "info" for op in ops)
        verdicts.append((expected, crashed_append))
    assert {(True, True), (False, True), (True, False), (False, False)} <= set(verdicts)


def op(index: int, f: str, value: Any, call: int, ret: int | None, key: str = "k") -> Op:
    return Op(index, index, f, key, value, "ok" if ret is not None else "info", call, ret)


@pytest.mark.parametrize(
    ("ops", "valid"),
    [
        ([op(0, "get", None, 0, 1), op(1, "get", "", 2, 3)], True),  # never written: both
        ([op(0, "put", "", 0, 1), op(1, "get", None, 2, 3)], False),  # written: "" only
        (
            [op(0, "append", "x ", 0, 1), op(1, "append", "y ", 2, 3), op(2, "get", "x y ", 4, 5)],
            True,
        ),
        (
            [op(0, "append", "x ", 0, 1), op(1, "append", "y ", 2, 3), op(2, "get", "y x ", 4, 5)],
            False,
        ),
        # Concurrent appends may land in either order.
        (
            [op(0, "append", "x ", 0, 3), op(1, "append", "y ", 0, 3), op(2, "get", "y x ", 4, 5)],
            True,
        ),
        # A crashed append may land after a later read, or never: not both halves of it.
        ([op(0, "append", "x ", 0, None), op(1, "get", "", 1, 2), op(2, "get", "x ", 3, 4)], True),
        ([op(0, "append", "x ", 0, None), op(1, "get", "x ", 1, 2), op(2, "get", "", 3, 4)], False),
        ([op(0, "put", "a", 0, 1), op(1, "append", "b", 2, 3), op(2, "get", "b", 4, 5)], False),
    ],
)
def test_hand_written_cases(ops: list[Op], valid: bool) -> None:
    assert oracle(ops) is valid
    assert check(ops, MODELS["kv-append"], jobs=1)["valid"] is valid


EDN_HISTORY = """\
{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}
{:process 1, :type :invoke, :f :get, :key "0", :value nil}
{:process 0, :type :ok, :f :append, :key "0", :value "x 0 0 y"}
{:process 1, :type :ok, :f :get, :key "0", :value "x 0 0 y"}
{:process 0, :type :invoke, :f :append, :key "1", :value "x 0 1 y"}
{:process 0, :type :info, :f :append, :key "1", :value "x 0 1 y"}
{:process 2, :type :invoke, :f :get, :key "1", :value nil}
{:process 2, :type :ok, :f :get, :key "1", :value ""}
"""


def test_check_reads_jepsen_edn_and_guesses_kv_append(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.edn"
    path.write_text(EDN_HISTORY)
    code, out, _ = run(capsys, str(path), "--json")
    result = json.loads(out)
    assert (code, result["model"], result["keys"], result["valid"]) == (0, "kv-append", 2, True)
    read = '{:process 1, :type :ok, :f :get, :key "0", :value "x 0 0 y"}'
    path.write_text(EDN_HISTORY.replace(read, read.replace("x 0 0 y", "x 0")))
    code, out, _ = run(capsys, str(path))
    assert code == 1
    assert 'get "x 0" but value is "x 0 0 y"' in out


def test_jsonl_and_edn_give_the_same_ops(tmp_path: Path) -> None:
    edn_path = tmp_path / "history.edn"
    edn_path.write_text(EDN_HISTORY)
    from_edn = load(edn_path)
    jsonl_path = tmp_path / "history.jsonl"
    jsonl_path.write_text("".join(json.dumps(e) + "\n" for e in from_edn.events))
    assert load(jsonl_path).ops == from_edn.ops


@pytest.mark.parametrize(
    ("f", "value", "problem"),
    [
        ("append", 5, "an append value must be a string, not 5"),
        ("put", ["x"], "a put value must be a string, not ['x']"),
        ("get", 3, "a get value must be a string or nil, not 3"),
    ],
)
def test_values_that_are_not_strings_are_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], f: str, value: Any, problem: str
) -> None:
    path = tmp_path / "history.jsonl"
    events = [
        {
            "process": 0,
            "type": "invoke",
            "f": f,
            "key": "k",
            "value": None if f == "get" else value,
        },
        {"process": 0, "type": "ok", "f": f, "key": "k", "value": value},
    ]
    path.write_text(
        "".join(json.dumps({"index": i, "time": i, **e}) + "\n" for i, e in enumerate(events))
    )
    code, out, err = run(capsys, str(path), "--model", "kv-append")
    assert (code, out) == (254, "")
    assert err.strip().endswith(problem)
