"""An independent oracle for the linearizability checker, aimed at its speed-ups.

The oracle shares nothing with `checkers/` but the op vocabulary documented in
`checkers.linearizable.models`: it implements the register, cas-register and map
semantics itself, splits histories by key itself, and decides linearizability by a plain
memoised search over (set of ops done, state). An ok op may run next once every ok op
that returned strictly before its invoke is done; a crashed (info) op never constrains
others (its return is at +infinity) and may run at any point after its invoke, or never;
a crashed read says nothing.
A key is linearizable iff every ok op can be done, and a history iff each of its keys is.

The histories stress what the checker's author called soundness-critical: many crashed
writes, cas, put-if-absent, replace and remove ops; few distinct values (equivalent and
"weaker" crashed ops); values written but never read (renamed to one token); crashed ops
observable only through a later cas or replace, or invoked after every ok op; reads of values
only a crashed op wrote; equal timestamps (a.ret == b.call is concurrent); several keys per
history, given as lists and tuples; values given as lists or tuples; None values.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from checkers.linearizable.checker import check
from checkers.linearizable.models import MODELS
from history import Op, OpType

INF = float("inf")
MODEL_NAMES = ("register", "cas-register", "map")


# --- the oracle -------------------------------------------------------------------------------


class _Fail:
    """The result of an op that cannot happen in a state."""


FAIL = _Fail()


def norm(value: Any) -> Any:
    """Returns value with every list turned into a tuple, so that it can be compared and
    hashed whichever container the history used."""
    if isinstance(value, list | tuple):
        return tuple(norm(v) for v in value)
    return value


def apply_ok(state: Any, f: str, value: Any) -> Any:
    """Returns the state after an ok op with this completion value, or FAIL."""
    if f in ("read", "get"):
        return state if value == state else FAIL
    if f in ("write", "put"):
        return value
    if f == "cas":
        old, new = value
        return new if state == old else FAIL
    if f == "put-if-absent":
        new, applied = value
        if applied:
            return new if state is None else FAIL
        return state if state is not None else FAIL
    if f == "replace":
        old, new, applied = value
        if applied:
            return new if state == old else FAIL
        return state if state != old else FAIL
    if f == "remove":
        return None if bool(value) == (state is not None) else FAIL
    raise ValueError(f"unknown operation {f!r}")


def apply_crashed(state: Any, f: str, value: Any) -> Any:
    """Returns the state after a crashed op with this invoke value takes effect: it had
    whatever outcome the state gives, so it never fails."""
    if f in ("read", "get"):
        return state
    if f in ("write", "put"):
        return value
    if f in ("cas", "replace"):
        old, new = value[0], value[1]
        return new if state == old else state
    if f == "put-if-absent":
        return value if state is None else state
    if f == "remove":
        return None
    raise ValueError(f"unknown operation {f!r}")


def linearizable_key(ops: Sequence[Op]) -> bool:
    """Whether one key's ops have a linearization (initial state None)."""
    n = len(ops)
    values = [norm(op.value) for op in ops]
    ok = [op.type == "ok" for op in ops]
    all_ok = sum(1 << i for i in range(n) if ok[i])
    must_follow = [
        sum(1 << j for j, b in enumerate(ops) if ok[j] and b.ret is not None and b.ret < a.call)
        for a in ops
    ]
    failed: set[tuple[int, Any]] = set()

    def extend(done: int, state: Any) -> bool:
        if done & all_ok == all_ok:
            return True  # the crashed ops left over never took effect
        if (done, state) in failed:
            return False
        for i in range(n):
            if done >> i & 1 or must_follow[i] & ~done:
                continue
            apply = apply_ok if ok[i] else apply_crashed
            nxt = apply(state, ops[i].f, values[i])
            if nxt is not FAIL and extend(done | 1 << i, nxt):
                return True
        failed.add((done, state))
        return False

    return extend(0, None)


def linearizable(ops: Sequence[Op]) -> bool:
    """Whether every key of the history is linearizable."""
    keys: dict[Any, list[Op]] = {}
    for op in ops:
        keys.setdefault(norm(op.key), []).append(op)
    return all(linearizable_key(k) for k in keys.values())


def checker(ops: Sequence[Op], model: str) -> Any:
    return check(ops, MODELS[model], jobs=1)["valid"]


# --- histories ----------------------------------------------------------------------------------


def _pick(rnd: random.Random, values: Sequence[Any]) -> Any:
    v = rnd.choice(values)
    return list(v) if isinstance(v, tuple) and rnd.random() < 0.5 else v


def _choose(
    rnd: random.Random, model: str, values: Sequence[Any], crashed: bool
) -> tuple[str, Any]:
    """Returns an operation and its invoke value; crashed ops are mostly writes of some kind."""
    if model == "map":
        fs = ["put", "put-if-absent", "put-if-absent", "replace", "replace", "remove"]
        f = rnd.choice(fs if crashed else ["get", "get", *fs])
        if f == "replace":
            return f, [_pick(rnd, values), _pick(rnd, values)]
        return f, None if f in ("get", "remove") else _pick(rnd, values)
    fs = ["write", "cas", "cas"] if model == "cas-register" else ["write"]
    f = rnd.choice(fs if crashed or rnd.random() < 0.5 else ["read"])
    if f == "cas":
        cas = [_pick(rnd, values), _pick(rnd, values)]
        return f, cas if rnd.random() < 0.7 else tuple(cas)
    return f, None if f == "read" else _pick(rnd, values)


def _run(state: Any, f: str, value: Any) -> tuple[Any, Any, bool]:
    """Runs an op on a real register or map. Returns (new state, ok value, failed)."""
    v = norm(value)
    if f in ("read", "get"):
        return state, state, False
    if f in ("write", "put"):
        return v, value, False
    if f == "cas":
        return (v[1], value, False) if state == v[0] else (state, value, True)
    if f == "put-if-absent":
        return (v, [value, True], False) if state is None else (state, [value, False], False)
    if f == "replace":
        hit = state == v[0]
        return (v[1] if hit else state), [value[0], value[1], hit], False
    return None, state is not None, False


def _corrupt(rnd: random.Random, f: str, result: Any, values: Sequence[Any]) -> Any:
    """Returns a plausible, possibly wrong completion value."""
    if f in ("read", "get"):
        return _pick(rnd, [None, *values])
    if f == "put-if-absent":
        return [result[0], not result[1]]
    if f == "replace":
        return [result[0], result[1], not result[2]]
    if f == "remove":
        return not result
    if f == "cas":
        return [_pick(rnd, values), result[1]]
    return result


def simulated(
    rnd: random.Random,
    model: str,
    n: int,
    *,
    crash: float,
    corrupt: float,
    values: Sequence[Any],
    keys: Sequence[Any],
    span: int,
    width: int,
    late: float = 0.2,
    spaced: bool = False,
) -> list[Op]:
    """Returns n ops of a simulated store, shuffled: each ok op takes effect inside its
    interval, a crashed one later or never; some ok results are then corrupted. Integer times
    in small ranges make equal timestamps common; `late` crashed ops are invoked after every
    ok op returned; `spaced` ops follow each other (for long histories)."""
    plans = []
    for i in range(n):
        call = 2 * i + rnd.randint(0, 2) if spaced else rnd.randint(0, span)
        ret = call + rnd.randint(0, width)
        crashed = rnd.random() < crash
        if crashed and rnd.random() < late:
            call = (2 * n if spaced else span) + width + rnd.randint(0, 2)
        f, value = _choose(rnd, model, values, crashed)
        if crashed:
            point = rnd.uniform(call, call + 3 * width + 5) if rnd.random() < 0.6 else INF
        else:
            point = rnd.uniform(call, ret)
        plans.append((point, rnd.random(), i, call, ret, crashed, f, value, rnd.choice(keys)))
    states: dict[Any, Any] = {}
    ops = []
    for point, _, i, call, ret, crashed, f, value, key in sorted(plans):
        result, failed = value, False
        if point != INF:
            states[norm(key)], result, failed = _run(states.get(norm(key)), f, value)
        if crashed:
            ops.append(Op(i, i, f, key, None if f == "remove" else value, "info", call, None))
        elif not failed:
            if rnd.random() < corrupt:
                result = _corrupt(rnd, f, result, values)
            ops.append(Op(i, i, f, key, result, "ok", call, ret))
    rnd.shuffle(ops)
    return ops


def arbitrary(
    rnd: random.Random, model: str, n: int, *, crash: float, values: Sequence[Any], span: int
) -> list[Op]:
    """Returns n ops with arbitrary results (not from any execution): crashed ones mostly
    writes of some kind, every time in a small range."""
    ops = []
    for i in range(n):
        call = rnd.randint(0, span)
        ret = call + rnd.randint(0, 3)
        crashed = rnd.random() < crash
        f, value = _choose(rnd, model, values, crashed)
        if not crashed:
            if f == "put-if-absent":
                value = [value, rnd.random() < 0.5]
            elif f == "replace":
                value = [*value, rnd.random() < 0.5]
            elif f == "remove":
                value = rnd.random() < 0.5
            elif f in ("read", "get"):
                value = _pick(rnd, [None, *values])
        elif f == "remove":
            value = None
        ops.append(
            Op(i, i, f, "k", value, "info" if crashed else "ok", call, None if crashed else ret)
        )
    return ops


VALUE_SETS: tuple[tuple[Any, ...], ...] = (
    (1, 2),
    (1, 2, 3),
    (1, 2, None),
    (1, (1, 2), 3),
    tuple(range(1, 20)),  # mostly written but never read: renamed to one token
)
KEY_SETS: tuple[tuple[Any, ...], ...] = (("k",), ("k",), ("a", "b"), (("x", 1), ["x", 1], "y"))


def random_history(rnd: random.Random, n: int) -> tuple[str, list[Op]]:
    """Returns a model name and a small history of one of the shapes above."""
    model = rnd.choice([*MODEL_NAMES, "cas-register", "map"])
    values = rnd.choice(VALUE_SETS)
    if rnd.random() < 0.25:
        crash = rnd.choice([0.3, 0.5, 0.7])
        return model, arbitrary(rnd, model, n, crash=crash, values=values, span=rnd.choice([1, n]))
    ops = simulated(
        rnd,
        model,
        n,
        crash=rnd.choice([0.2, 0.4, 0.6]),
        corrupt=rnd.choice([0.05, 0.15, 0.3]),
        values=values,
        keys=rnd.choice(KEY_SETS),
        span=rnd.choice([2, 4, 8, 2 * n]),
        width=rnd.choice([0, 1, 2, 4]),
        late=rnd.choice([0.0, 0.3]),
    )
    return model, ops


# --- hand-written cases ---------------------------------------------------------------------------


_INDEXES = itertools.count()


def ok(f: str, value: Any, call: int, ret: int, key: Any = "k") -> Op:
    i = next(_INDEXES)
    return Op(i, i, f, key, value, "ok", call, ret)


def info(f: str, value: Any, call: int, key: Any = "k") -> Op:
    i = next(_INDEXES)
    return Op(i, i, f, key, value, "info", call, None)


CASES: list[tuple[str, str, list[Op], bool]] = [
    (
        "read of a value only a crashed write wrote",
        "register",
        [ok("write", 1, 0, 1), info("write", 2, 2), ok("read", 2, 3, 4), ok("read", 1, 5, 6)],
        False,
    ),
    (
        "crashed write seen only through a later cas",
        "cas-register",
        [ok("write", 1, 0, 1), info("write", 7, 0), ok("cas", [7, 3], 2, 3), ok("read", 3, 4, 5)],
        True,
    ),
    (
        "crashed write invoked after every ok op cannot explain a read",
        "register",
        [ok("write", 1, 0, 1), ok("read", 2, 2, 3), info("write", 2, 4)],
        False,
    ),
    (
        "touching intervals are concurrent",
        "register",
        [ok("write", 1, 0, 2), ok("read", 1, 2, 2), ok("write", 2, 2, 3), ok("read", None, 0, 2)],
        True,
    ),
    (
        "a crashed op invoked exactly when the read returns may precede it",
        "register",
        [ok("read", 5, 0, 3), info("write", 5, 3)],
        True,
    ),
    (
        "crashed put-if-absent and replace chain to a value a get sees",
        "map",
        [
            info("put-if-absent", 1, 0),
            info("replace", [1, 2], 0),
            info("remove", None, 0),
            ok("replace", [2, 3, True], 1, 2),
            ok("get", 3, 3, 4),
        ],
        True,
    ),
    (
        "two equivalent crashed put-if-absent: one before the remove, one after",
        "map",
        [
            info("put-if-absent", 1, 0),
            info("put-if-absent", 1, 0),
            ok("get", 1, 1, 2),
            ok("remove", True, 3, 4),
            ok("get", 1, 5, 6),
        ],
        True,
    ),
    (
        "one crashed put-if-absent cannot apply twice",
        "map",
        [
            info("put-if-absent", 1, 0),
            ok("get", 1, 1, 2),
            ok("remove", True, 3, 4),
            ok("get", 1, 5, 6),
        ],
        False,
    ),
    (
        "a crashed put stands in where the weaker put-if-absent cannot",
        "map",
        [
            info("put-if-absent", 1, 0),
            info("put", 1, 0),
            ok("put", 2, 1, 2),
            ok("get", 1, 3, 4),
            ok("remove", True, 5, 6),
            ok("get", 1, 7, 8),
        ],
        True,
    ),
    (
        "unread values stay distinct from None",
        "map",
        [ok("put", 41, 0, 1), ok("put-if-absent", [42, False], 2, 3), ok("remove", True, 4, 5)],
        True,
    ),
    (
        "keys given as lists and tuples are one key",
        "cas-register",
        [ok("write", [1, 2], 0, 1, key=["x", 1]), ok("cas", [(1, 2), 3], 2, 3, key=("x", 1))],
        True,
    ),
    (
        "a stale read on one key of two",
        "register",
        [
            ok("write", 1, 0, 1, key="a"),
            ok("write", 1, 0, 1, key="b"),
            ok("write", 2, 2, 3, key="b"),
            ok("read", 1, 4, 5, key="a"),
            ok("read", 1, 4, 5, key="b"),
        ],
        False,
    ),
]


@pytest.mark.parametrize(("name", "model", "ops", "expected"), CASES, ids=[c[0] for c in CASES])
def test_hand_written_cases(name: str, model: str, ops: list[Op], expected: bool) -> None:
    assert linearizable(ops) is expected, "the oracle disagrees with the case"
    assert checker(ops, model) is expected


# --- generated histories ------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(rnd=st.randoms(use_true_random=False), n=st.integers(2, 9))
def test_agrees_with_the_oracle(rnd: random.Random, n: int) -> None:
    model, ops = random_history(rnd, n)
    expected = linearizable(ops)
    event("valid" if expected else "invalid")
    assert checker(ops, model) is expected


def test_seeded_sweep_yields_both_verdicts() -> None:
    verdicts: Counter[tuple[str, bool]] = Counter()
    for seed in range(3000):
        rnd = random.Random(seed)
        model, ops = random_history(rnd, rnd.randint(3, 9))
        expected = linearizable(ops)
        assert checker(ops, model) is expected, f"seed {seed}"
        verdicts[model, expected] += 1
    for model in MODEL_NAMES:
        assert verdicts[model, True] >= 60 and verdicts[model, False] >= 40, verdicts


def test_many_crashes_few_values() -> None:
    """Mostly crashed ops over two or three values: equivalent and weaker crashed ops."""
    verdicts: Counter[bool] = Counter()
    for seed in range(1200):
        rnd = random.Random(10_000 + seed)
        model = rnd.choice(MODEL_NAMES)
        n = rnd.randint(6, 12)
        values = rnd.choice([(1, 2), (1, 2, None), (1, 2, 3)])
        maker: Callable[[], list[Op]] = (
            partial(arbitrary, rnd, model, n, crash=0.6, values=values, span=3)
            if seed % 2
            else partial(
                simulated,
                rnd,
                model,
                n,
                crash=0.6,
                corrupt=0.2,
                values=values,
                keys=("k",),
                span=4,
                width=2,
                late=0.1,
            )
        )
        ops = maker()
        expected = linearizable(ops)
        assert checker(ops, model) is expected, f"seed {10_000 + seed}"
        verdicts[expected] += 1
    assert verdicts[True] >= 100 and verdicts[False] >= 100, verdicts


def test_long_histories_with_a_handful_of_crashes() -> None:
    """30-60 ops following each other, 2-7 crashed, at most one corrupted result."""
    verdicts: Counter[bool] = Counter()
    for seed in range(500):
        rnd = random.Random(20_000 + seed)
        model = rnd.choice(MODEL_NAMES)
        n = rnd.randint(30, 60)
        ops = simulated(
            rnd,
            model,
            n,
            crash=rnd.randint(2, 7) / n,
            corrupt=rnd.choice([0.02, 0.05]),
            values=rnd.choice(VALUE_SETS[:2] + VALUE_SETS[4:]),
            keys=("k",),
            span=0,
            width=rnd.choice([2, 4, 6]),
            late=0.1,
            spaced=True,
        )
        expected = linearizable(ops)
        assert checker(ops, model) is expected, f"seed {20_000 + seed}"
        verdicts[expected] += 1
    assert verdicts[True] >= 50 and verdicts[False] >= 50, verdicts


def _shapes(model: str, span: int) -> list[tuple[str, Any, OpType, int, int | None]]:
    """Returns every single op over values 1 and 2 (and None where it can be read or
    compared) with integer times below span: (f, value, type, call, ret)."""
    olds = (None, 1, 2)
    if model == "map":
        oks: list[tuple[str, Any]] = [
            *(("get", v) for v in olds),
            *(("put", v) for v in (1, 2)),
            *(("put-if-absent", [v, a]) for v in (1, 2) for a in (True, False)),
            *(
                ("replace", [o, n, a])
                for o in olds
                for n in (1, 2)
                for a in (True, False)
                if o != n
            ),
            *(("remove", b) for b in (True, False)),
        ]
        infos: list[tuple[str, Any]] = [
            *(("put", v) for v in (1, 2)),
            *(("put-if-absent", v) for v in (1, 2)),
            *(("replace", [o, n]) for o in olds for n in (1, 2) if o != n),
            ("remove", None),
        ]
    else:
        writes = [("write", v) for v in (1, 2)]
        cas = [("cas", [o, n]) for o in olds for n in (1, 2) if o != n]
        oks, infos = [*(("read", v) for v in olds), *writes, *cas], [*writes, *cas]
    shapes: list[tuple[str, Any, OpType, int, int | None]] = [
        (f, v, "ok", c, r) for f, v in oks for c in range(span) for r in range(c, span)
    ]
    shapes += [(f, v, "info", c, None) for f, v in infos for c in range(span)]
    return shapes


@pytest.mark.parametrize(("model", "stride"), [("cas-register", 1), ("map", 7)])
def test_every_small_history(model: str, stride: int) -> None:
    """Every history of three ops on the shapes above (every stride-th one for the map):
    all tie patterns of two time points, crashed ops alone or together."""
    shapes = _shapes(model, 2)
    verdicts: Counter[bool] = Counter()
    combos = itertools.combinations_with_replacement(shapes, 3)
    for combo in itertools.islice(combos, 0, None, stride):
        ops = [Op(i, i, f, "k", v, t, c, r) for i, (f, v, t, c, r) in enumerate(combo)]
        expected = linearizable(ops)
        assert checker(ops, model) is expected, ops
        verdicts[expected] += 1
    assert min(verdicts.values()) >= 1000, verdicts


def test_wide_concurrency() -> None:
    """14-22 ops, up to all of them concurrent: deep backtracking, where the cache prunes
    configurations with more crashed ops than a failed one (these seeds include a history on
    which pruning the other way round, fewer crashed ops than a failed one, gives a false
    invalid)."""
    verdicts: Counter[bool] = Counter()
    for seed in range(1500, 2100):
        rnd = random.Random(seed)
        model = rnd.choice(MODEL_NAMES)
        n = rnd.randint(14, 22)
        ops = simulated(
            rnd,
            model,
            n,
            crash=rnd.choice([0.1, 0.3]),
            corrupt=0.1,
            values=rnd.choice(VALUE_SETS),
            keys=("k",),
            span=rnd.choice([n, 2 * n]),
            width=rnd.choice([6, 10, 20]),
            late=0.1,
        )
        expected = linearizable(ops)
        assert checker(ops, model) is expected, f"seed {seed}"
        verdicts[expected] += 1
    assert verdicts[True] >= 100 and verdicts[False] >= 100, verdicts
