"""Tests that 1, 1.0 and true are three different values everywhere: frozen values, the
models (a read of true after a write of 1 is not linearizable), keys (1 and true are two
keys), lost acknowledged writes, the EDN reader's sets and maps, and the reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import lost_acks
from checkers.linearizable import checker as linearizable
from checkers.linearizable.models import MODELS
from history import Op, edn, load, pair
from history.frozen import freeze, thaw
from tests.unit.harness.commands.test_check import run

LOOKALIKES: list[Any] = [1, 1.0, True, 0, 0.0, False, -0.0]


def exact(value: Any) -> Any:
    """Returns value with each scalar's type beside it, for comparisons that tell 1 from 1.0."""
    if isinstance(value, list):
        return [exact(v) for v in value]
    return (type(value).__name__, value)


def test_lookalike_values_freeze_apart_and_thaw_back() -> None:
    frozen = [freeze(v) for v in LOOKALIKES]
    assert len(set(frozen[:3])) == 3 and len(set(frozen[3:6])) == 3
    assert freeze(0.0) == freeze(-0.0)  # two floats Python and JSON hold equal
    assert freeze([1, True]) != freeze([True, 1]) != freeze([1, 1])
    assert freeze({"a": 1}) != freeze({"a": True})
    assert [exact(thaw(f)) for f in frozen] == [exact(v) for v in LOOKALIKES]
    assert exact(thaw(freeze([1, [1.0, True]]))) == exact([1, [1.0, True]])


def sequential(values: list[tuple[str, Any]]) -> list[Op]:
    """Returns one process's ops, one after another: (f, value) pairs of a register."""
    return [
        Op(i, 0, f, None, value, "ok", 10 * i, 10 * i + 5) for i, (f, value) in enumerate(values)
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read", "write"]), st.sampled_from(LOOKALIKES))))
def test_a_sequential_register_history_is_valid_iff_each_read_is_exactly_the_last_write(
    steps: list[tuple[str, Any]],
) -> None:
    state: Any = None
    expected = True
    for f, value in steps:
        if f == "write":
            state = value
        elif exact(value) != exact(state):  # ("float", -0.0) == ("float", 0.0), as in JSON
            expected = False
    result = linearizable.check(sequential(steps), MODELS["register"], jobs=1)
    assert result["valid"] is expected


def history_text(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / "history.jsonl"
    events = [{"index": i, "time": i, **e} for i, e in enumerate(lines)]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


@pytest.mark.parametrize(("written", "read"), [(1, True), (1, 1.0), (True, 1), (0, False)])
def test_write_one_read_true_is_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: Any, read: Any
) -> None:
    path = history_text(
        tmp_path,
        [
            {"process": 0, "type": "invoke", "f": "write", "value": written},
            {"process": 0, "type": "ok", "f": "write", "value": written},
            {"process": 0, "type": "invoke", "f": "read", "value": None},
            {"process": 0, "type": "ok", "f": "read", "value": read},
        ],
    )
    code, out, _ = run(capsys, str(path), "--json")
    result = json.loads(out)
    assert (code, result["valid"]) == (1, False)
    [failure] = result["failures"]
    assert exact(failure["op"]["value"]) == exact(read)
    assert exact(failure["states"]) == exact([written])


def test_map_keys_one_and_true_are_two_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = history_text(
        tmp_path,
        [
            {"process": 0, "type": "invoke", "f": "put", "key": 1, "value": 5},
            {"process": 0, "type": "ok", "f": "put", "key": 1, "value": 5},
            {"process": 0, "type": "invoke", "f": "get", "key": True, "value": None},
            {"process": 0, "type": "ok", "f": "get", "key": True, "value": None},
            {"process": 0, "type": "invoke", "f": "get", "key": 1.0, "value": None},
            {"process": 0, "type": "ok", "f": "get", "key": 1.0, "value": None},
        ],
    )
    code, out, _ = run(capsys, str(path), "--json")
    result = json.loads(out)
    assert (code, result["valid"], result["keys"]) == (0, True, 3)


def test_a_true_read_back_for_an_added_one_is_lost_and_unexpected() -> None:
    events = [
        {"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "add", "value": 1},
        {"index": 1, "time": 1, "process": 0, "type": "ok", "f": "add", "value": 1},
        {"index": 2, "time": 2, "process": 1, "type": "invoke", "f": "read", "value": None},
        {"index": 3, "time": 3, "process": 1, "type": "ok", "f": "read", "value": [True, 1.0]},
    ]
    result = lost_acks.check(events)
    assert result["valid"] is False
    [by_key] = result["by_key"]
    assert exact(by_key["lost"]) == exact([1])
    assert sorted(map(repr, by_key["unexpected"])) == ["1.0", "True"]
    json.dumps(result)  # every value thawed: nothing JSON cannot hold


def test_edn_sets_and_map_keys_keep_lookalikes_apart(tmp_path: Path) -> None:
    [(_, form)] = edn.read_forms("[#{1 1.0 true} {1 :int, true :bool, 1.0 :float}]")
    members, mapping = form
    assert sorted(map(repr, members)) == ["1", "1.0", "True"]
    assert len(mapping) == 3
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 0, :type :invoke, :f :write, :value 1}\n"
        "{:process 0, :type :ok, :f :write, :value 1}\n"
        "{:process 0, :type :invoke, :f :read, :value nil}\n"
        "{:process 0, :type :ok, :f :read, :value true}\n"
    )
    result = linearizable.check(load(path).ops, MODELS["register"], jobs=1)
    assert result["valid"] is False


def test_reports_print_booleans_and_floats_as_json_does() -> None:
    ops = pair(
        [
            {"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "read", "key": True},
            {
                "index": 1,
                "time": 1,
                "process": 0,
                "type": "ok",
                "f": "read",
                "key": True,
                "value": 1.5,
            },
        ]
    )
    [failure] = linearizable.check(ops, MODELS["register"], jobs=1)["failures"]
    assert json.loads(json.dumps(failure))["key"] is True
    assert exact(failure["op"]["value"]) == exact(1.5)
