"""Tests of the models: each operation's step, the messages, and the effect/observes contract
that the search relies on to skip crashed ops."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from checkers.linearizable.models import MODELS, UNKNOWN, UNREAD, Inconsistent, Model, freeze, thaw
from history import Op, OpType

REGISTER, CAS, MAP, SET = (MODELS[n] for n in ("register", "cas-register", "map", "set"))


def op(f: str, value: Any, type_: OpType = "ok") -> Op:
    return Op(
        index=0,
        process=0,
        f=f,
        key="k",
        value=value,
        type=type_,
        call=0,
        ret=None if type_ == "info" else 1,
    )


def test_models_are_keyed_by_name() -> None:
    assert set(MODELS) == {"register", "cas-register", "map", "set", "kv-append"}
    assert all(m.name == name for name, m in MODELS.items())


def test_register_read_and_write() -> None:
    assert REGISTER.init is None
    assert REGISTER.step(None, op("read", None)) is None
    assert REGISTER.step(None, op("write", 3)) == 3
    assert REGISTER.step(3, op("read", 3)) == 3
    bad = REGISTER.step(3, op("read", 4))
    assert bad == Inconsistent("read 4 but value is 3")


def test_cas_register_cas() -> None:
    assert CAS.step(1, op("cas", [1, 2])) == 2
    assert CAS.step(3, op("cas", [1, 2])) == Inconsistent("can't CAS 3 from 1 to 2")
    assert CAS.step(3, op("cas", [1, 2], "info")) == 3  # a crashed cas may have failed
    assert "cas" not in REGISTER.fs and "cas" in CAS.fs


def test_json_lists_compare_equal_to_tuples_and_states_stay_hashable() -> None:
    state = CAS.step(None, op("write", [1, [2, 3]]))
    assert state == (1, (2, 3))
    hash(state)
    assert CAS.step(state, op("read", [1, [2, 3]])) == state
    assert CAS.step(state, op("cas", [[1, [2, 3]], 5])) == 5
    assert thaw(freeze({"a": [1, 2]})) == [["a", [1, 2]]]


def test_map_get_and_put() -> None:
    assert MAP.step(None, op("get", None)) is None
    assert MAP.step(None, op("put", 4)) == 4
    assert MAP.step(4, op("get", 4)) == 4
    assert isinstance(MAP.step(4, op("get", None)), Inconsistent)


def test_map_put_if_absent() -> None:
    assert MAP.step(None, op("put-if-absent", [5, True])) == 5
    assert MAP.step(1, op("put-if-absent", [5, False])) == 1
    assert isinstance(MAP.step(1, op("put-if-absent", [5, True])), Inconsistent)
    assert isinstance(MAP.step(None, op("put-if-absent", [5, False])), Inconsistent)
    assert MAP.step(None, op("put-if-absent", 5, "info")) == 5
    assert MAP.step(1, op("put-if-absent", 5, "info")) == 1


def test_map_replace() -> None:
    assert MAP.step(1, op("replace", [1, 2, True])) == 2
    assert MAP.step(3, op("replace", [1, 2, False])) == 3
    assert isinstance(MAP.step(3, op("replace", [1, 2, True])), Inconsistent)
    assert isinstance(MAP.step(1, op("replace", [1, 2, False])), Inconsistent)
    assert MAP.step(1, op("replace", [1, 2], "info")) == 2
    assert MAP.step(3, op("replace", [1, 2], "info")) == 3


def test_map_remove() -> None:
    assert MAP.step(1, op("remove", True)) is None
    assert MAP.step(None, op("remove", False)) is None
    assert isinstance(MAP.step(None, op("remove", True)), Inconsistent)
    assert isinstance(MAP.step(1, op("remove", False)), Inconsistent)
    assert MAP.step(1, op("remove", None, "info")) is None


def test_set_add_and_read() -> None:
    state = SET.step(SET.init, op("add", 1))
    state = SET.step(state, op("add", 2))
    assert SET.step(state, op("read", [2, 1])) == frozenset({1, 2})
    bad = SET.step(state, op("read", [1, 3]))
    assert isinstance(bad, Inconsistent) and "missing [2]" in bad.message


def test_describe_op_says_what_happened() -> None:
    assert REGISTER.describe_op(op("write", 3)) == "process 0 write 3"
    assert "cas 1 -> 2" in CAS.describe_op(op("cas", [1, 2]))
    assert "crashed" in MAP.describe_op(op("put", 1, "info"))
    assert MAP.describe_state(None) == "unset/absent"


# --- the contract of effect and observes, checked against step on small universes ---------

STATES = [None, 1, 2, 3]


def _ops(model: Model) -> list[Op]:
    values: list[Any] = [None, 1, 2, 3]
    pairs = [list(p) for p in itertools.product([None, 1, 2], [1, 2])]
    if model.name == "map":
        oks = (
            [op("get", v) for v in values]
            + [op("put", v) for v in (1, 2)]
            + [op("put-if-absent", [v, a]) for v in (1, 2) for a in (True, False)]
            + [op("replace", [*p, a]) for p in pairs for a in (True, False)]
            + [op("remove", a) for a in (True, False)]
        )
        infos = (
            [op("put", v, "info") for v in (1, 2)]
            + [op("put-if-absent", v, "info") for v in (1, 2)]
            + [op("replace", p, "info") for p in pairs]
            + [op("remove", None, "info")]
        )
        return oks + infos
    oks = [op("read", v) for v in values] + [op("write", v) for v in (1, 2)]
    infos = [op("write", v, "info") for v in (1, 2)]
    if "cas" in model.fs:
        oks += [op("cas", p) for p in pairs]
        infos += [op("cas", p, "info") for p in pairs]
    return oks + infos


@pytest.mark.parametrize("name", ["register", "cas-register", "map"])
def test_observes_covers_every_state_an_op_depends_on(name: str) -> None:
    model = MODELS[name]
    for o in _ops(model):
        seen = model.observes(o)
        results = [model.step(s, o) for s in STATES]
        if seen is not None and not seen:  # blind: same result from every state
            assert len(set(results)) == 1 and not isinstance(results[0], Inconsistent), o
            continue
        for s, r in zip(STATES, results, strict=True):
            matters = not isinstance(r, Inconsistent) if o.type == "ok" else r != s
            if matters:
                assert seen is None or s in seen, (o, s)


@pytest.mark.parametrize("name", ["register", "cas-register", "map"])
def test_a_crashed_op_either_sets_its_effect_or_does_nothing(name: str) -> None:
    model = MODELS[name]
    for o in _ops(model):
        if o.type != "info":
            continue
        effect = model.effect(o)
        assert effect is not UNKNOWN, o
        for s in STATES:
            assert model.step(s, o) in (s, effect), (o, s)


@pytest.mark.parametrize("name", ["register", "cas-register", "map"])
def test_renaming_an_unmentioned_value_commutes_with_step(name: str) -> None:
    """Writing UNREAD instead of a value the op never compares with must lead to the renamed
    state: that is what lets the checker merge such values."""
    model = MODELS[name]
    assert model.mentions is not None and model.rename_written is not None
    for o in _ops(model):
        for hidden in (1, 2):
            if hidden in model.mentions(o):
                continue

            def rename(v: Any, hidden: int = hidden) -> Any:
                return UNREAD if v == hidden else v

            renamed = model.rename_written(o, rename)
            for s in STATES:
                before = model.step(s, o)
                after = model.step(rename(s), renamed)
                if isinstance(before, Inconsistent):
                    assert isinstance(after, Inconsistent), (o, s)
                else:
                    assert after == rename(before), (o, s)


@pytest.mark.parametrize("name", ["register", "cas-register", "map"])
def test_a_crashed_op_sets_its_effect_on_exactly_the_states_it_observes(name: str) -> None:
    """The search prefers, of two crashed ops with one effect, the one observing fewer
    states: that needs `observes` to be exact for crashed ops (empty: every state)."""
    model = MODELS[name]
    for o in _ops(model):
        if o.type != "info":
            continue
        trigger = model.observes(o) or None
        for s in STATES:
            expected = model.effect(o) if trigger is None or s in trigger else s
            assert model.step(s, o) == expected, (o, s)
