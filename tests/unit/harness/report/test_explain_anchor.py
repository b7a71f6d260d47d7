"""The argument of a non-linearizable key names the op that pinned the state the failing op
had to follow, and spells values as its history does (issue 34, item 4).

Each history below has exactly one planted violation: without the planted op it is
linearizable, with it the check names that op, and the sentence is checked for truth
against the history itself: the pinned op returned before the failing op was invoked, it
left the state the sentence says, and the failing op cannot follow that state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checkers.linearizable import MODELS, Inconsistent, check, explain, respelled
from harness.cli import main
from harness.report.explain import BUILT_TO_FAIL, key_sentence
from harness.report.explain import explain as sentences
from history import Op, freeze
from workloads.names import STORES

MS = 1_000_000
PYTHON_WORDS = re.compile(r"\b(None|True|False)\b|(?<!\w)'")
"""Python's spelling of values: None, True, False, a string in single quotes."""


@dataclass(frozen=True)
class Planted:
    """A history with one planted violation: its ops, the planted op's index, the index of
    the op that pinned the state, the words that op is said in, and the state it left."""

    model: str
    ops: list[Op]
    planted: int
    pinned: int | None
    pinned_words: str
    state: str


def ops_of(*spans: tuple[int, str, Any, str, float, float | None]) -> list[Op]:
    """Takes (process, f, value, type, call ms, ret ms) per op, on one key. Returns Ops."""
    return [
        Op(i, p, f, 0, value, kind, int(call * MS), None if ret is None else int(ret * MS))  # type: ignore[arg-type]
        for i, (p, f, value, kind, call, ret) in enumerate(spans)
    ]


CASES = {
    # The issue's register key: write 4 returned, write 5 crashed, read 5 pinned the state
    # at 5, and a read invoked later read 4. Write 4 is no argument; read 5 is.
    "register through a crashed write": Planted(
        "register",
        ops_of(
            (1, "write", 4, "ok", 0, 10),
            (2, "write", 5, "info", 20, None),
            (0, "read", 5, "ok", 30, 40),
            (3, "read", 4, "ok", 359.1, 370),
        ),
        planted=3,
        pinned=2,
        pinned_words="read 5 (op 2, process 0)",
        state="5",
    ),
    "register stale read": Planted(
        "register",
        ops_of(
            (0, "write", 1, "ok", 0, 10),
            (1, "write", 2, "ok", 20, 30),
            (2, "read", 2, "ok", 35, 45),
            (0, "read", 1, "ok", 50, 60),
        ),
        planted=3,
        pinned=2,
        pinned_words="read 2 (op 2, process 2)",
        state="2",
    ),
    "register read of an unset value": Planted(
        "register",
        ops_of((0, "write", 1, "ok", 0, 10), (1, "read", None, "ok", 20, 30)),
        planted=1,
        pinned=0,
        pinned_words="write 1 (op 0, process 0)",
        state="1",
    ),
    "cas from a value overwritten": Planted(
        "cas-register",
        ops_of(
            (0, "write", 1, "ok", 0, 10),
            (1, "write", 2, "ok", 20, 30),
            (0, "cas", [1, 3], "ok", 40, 50),
        ),
        planted=2,
        pinned=1,
        pinned_words="write 2 (op 1, process 1)",
        state="2",
    ),
    "map get of null after a put": Planted(
        "map",
        ops_of(
            (0, "put", 1, "ok", 0, 10),
            (1, "put", 2, "info", 12, None),
            (2, "get", 2, "ok", 15, 25),
            (1, "get", None, "ok", 30, 40),
        ),
        planted=3,
        pinned=2,
        pinned_words="get 2 (op 2, process 2)",
        state="2",
    ),
    "map remove true of an absent key": Planted(
        "map",
        ops_of(
            (0, "put", 1, "ok", 0, 10),
            (1, "remove", True, "ok", 20, 30),
            (2, "remove", True, "ok", 40, 50),
        ),
        planted=2,
        pinned=1,
        pinned_words="remove true (op 1, process 1)",
        state="unset/absent",
    ),
    "map put-if-absent applied on a held key": Planted(
        "map",
        ops_of(
            (0, "put-if-absent", [1, True], "ok", 0, 10),
            (1, "get", 1, "ok", 15, 18),
            (2, "put-if-absent", [2, True], "ok", 20, 30),
        ),
        planted=2,
        pinned=1,
        pinned_words="get 1 (op 1, process 1)",
        state="1",
    ),
    "map replace applied on the wrong value": Planted(
        "map",
        ops_of(
            (0, "put", 46, "ok", 0, 10),
            (1, "replace", [46, 48, True], "ok", 20, 30),
            (2, "replace", [46, 47, True], "ok", 40, 50),
        ),
        planted=2,
        pinned=1,
        pinned_words="replace 46 -> 48 (applied) (op 1, process 1)",
        state="48",
    ),
    "kv-append stale get": Planted(
        "kv-append",
        ops_of(
            (0, "append", "a", "ok", 0, 10),
            (1, "append", "b", "info", 12, None),
            (2, "get", "ab", "ok", 15, 25),
            (0, "get", "a", "ok", 30, 40),
        ),
        planted=3,
        pinned=2,
        pinned_words='get "ab" (op 2, process 2)',
        state='"ab"',
    ),
    "kv-append get of null after an append": Planted(
        "kv-append",
        ops_of((0, "append", "x", "ok", 0, 10), (1, "get", None, "ok", 20, 30)),
        planted=1,
        pinned=0,
        pinned_words='append "x" (op 0, process 0)',
        state='"x"',
    ),
    "a read before any op returned": Planted(
        "register",
        ops_of((0, "read", 3, "ok", 0, 10), (1, "write", 3, "ok", 20, 30)),
        planted=0,
        pinned=None,
        pinned_words="",
        state="unset/absent",
    ),
}


def failure_of(case: Planted) -> dict[str, Any]:
    result = check(case.ops, MODELS[case.model])
    assert result["valid"] is False
    (failure,) = result["failures"]
    return failure  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", list(CASES))
def test_each_planted_violation_is_the_only_one(name: str) -> None:
    case = CASES[name]
    without = [op for op in case.ops if op.index != case.planted]
    assert check(without, MODELS[case.model])["valid"] is True
    assert failure_of(case)["op"]["index"] == case.planted


@pytest.mark.parametrize("name", list(CASES))
def test_the_argument_names_the_op_that_pinned_the_state_and_is_true(name: str) -> None:
    case = CASES[name]
    model = MODELS[case.model]
    failure = failure_of(case)
    said = key_sentence(failure)
    failing = case.ops[case.planted]
    if case.pinned is None:
        assert failure["pinned_by"] is None
        assert f"before any op returned, in the state {case.state}" in said
        assert all(op.ret is None or op.ret >= failing.call for op in case.ops)
        state = model.init
    else:
        pinned = case.ops[case.pinned]
        assert failure["pinned_by"]["index"] == case.pinned
        assert f"after {case.pinned_words} returned, which left the state {case.state};" in said
        # True of the history: it returned before the failing op began, so any order puts
        # it first; the state it left is the one said; the failing op cannot follow it.
        assert pinned.ret is not None and pinned.ret < failing.call
        state = _state_after(model, case.ops, case.pinned)
        assert failure["pinned_state"] == case.state
    frozen = Op(*[freeze(v) if n == "value" else v for n, v in _fields(failing)])
    if not failure["concurrent"]:
        assert isinstance(model.step(state, frozen), Inconsistent)
        assert said.endswith("; no op overlapped it.")
    assert not PYTHON_WORDS.search(said), said


def _fields(op: Op) -> list[tuple[str, Any]]:
    return [(name, getattr(op, name)) for name in Op.__dataclass_fields__]


def _state_after(model: Any, ops: list[Op], index: int) -> Any:
    """The state the pinned op left, by its own words: what it read, or what it wrote."""
    op = ops[index]
    value = freeze(op.value)
    if op.f in ("read", "get"):
        return value
    if op.f == "remove":
        return None
    if op.f in ("put-if-absent",):
        return value[0]
    if op.f in ("cas", "replace"):
        return value[1]
    if op.f == "append":  # the case's appends start from nothing
        return "".join(o.value for o in ops[: index + 1] if o.f == "append")
    return value


def test_the_issues_register_sentence_names_the_read_not_the_write() -> None:
    said = key_sentence(failure_of(CASES["register through a crashed write"]))
    assert said == (
        "Key 0 is not linearizable: read (op 3, process 3) was invoked at 0.359 s, 319.1 ms "
        "after read 5 (op 2, process 0) returned, which left the state 5; yet it read 4; "
        "no op overlapped it."
    )
    assert "write 4" not in said


def test_values_are_spelled_as_json_in_a_jsonl_history_and_as_edn_in_jepsen_s() -> None:
    json_said = key_sentence(failure_of(CASES["map get of null after a put"]))
    assert "yet it read null" in json_said
    edn = respelled({"failures": [failure_of(CASES["map get of null after a put"])]}, "edn")
    edn_said = key_sentence(edn["failures"][0])
    assert "yet it read nil" in edn_said and "null" not in edn_said
    removed = failure_of(CASES["map remove true of an absent key"])
    assert "op 2 (process 2 remove true)" in " ".join(explain({"failures": [removed]}))
    assert removed["message"] == "remove found the key but it was absent"
    appended = respelled({"failures": [failure_of(CASES["kv-append stale get"])]}, "jepsen-log")
    assert 'yet it read "a"' in key_sentence(appended["failures"][0])


def test_a_model_message_is_spelled_too() -> None:
    failure = failure_of(CASES["map get of null after a put"])
    assert failure["message"] == "get null but value is 2"
    (edn,) = respelled({"failures": [failure]}, "edn")["failures"]
    assert edn["message"] == "get nil but value is 2"
    assert edn["op"]["text"] == "process 1 get nil"


def test_an_edn_history_is_explained_in_edn_by_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The issue's register key, as Jepsen writes it, with the state pinned by a read of nil.
    lines = [
        "{:type :invoke, :f :write, :value 4, :process 1, :time 0, :index 0}",
        "{:type :ok, :f :write, :value 4, :process 1, :time 10000000, :index 1}",
        "{:type :invoke, :f :write, :value nil, :process 2, :time 20000000, :index 2}",
        "{:type :invoke, :f :read, :value nil, :process 0, :time 30000000, :index 3}",
        "{:type :ok, :f :read, :value nil, :process 0, :time 40000000, :index 4}",
        "{:type :invoke, :f :read, :value nil, :process 3, :time 359100000, :index 5}",
        "{:type :ok, :f :read, :value 4, :process 3, :time 370000000, :index 6}",
        "{:type :info, :f :write, :value nil, :process 2, :time 400000000, :index 7}",
    ]
    path = tmp_path / "history.edn"
    path.write_text("\n".join(lines) + "\n")
    assert main(["check", str(path), "--model", "register", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "op 5 (process 3 read 4) cannot be linearized: read 4 but value is nil" in out
    assert "after read nil (op 3, process 0) returned, which left the state unset/absent" in out
    assert not PYTHON_WORDS.search(out.replace(str(tmp_path), "")), out


def test_an_invalid_store_variant_built_to_fail_is_called_expected() -> None:
    failure = failure_of(CASES["register stale read"])
    results = {"valid": False, "linearizable": {"valid": False, "failures": [failure]}}
    for store in BUILT_TO_FAIL:
        said = sentences(results, {"store": store})
        assert said[1].startswith(f"Expected: this store variant ({store}) is built to fail: ")
    assert not any("Expected" in s for s in sentences(results, {"store": "linearizable"}))
    valid = {"valid": True, "stats": {"count": 4}, "linearizable": {"valid": True, "keys": 1}}
    assert not any("Expected" in s for s in sentences(valid, {"store": "local-read"}))
    assert set(BUILT_TO_FAIL) == set(STORES) - {"linearizable"}
