"""Duplicate keys are refused, in EDN as Clojure's reader refuses them and in JSON, where
orjson and the standard library keep the last silently: a map that names a key twice would
hide one of its values (a poll's records of a partition, an event's outcome). A key that
only looks repeated (a colon inside a string, an escaped spelling of another key) is
read as ever."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from history import HistoryError, edn, load

SENDS_EDN = (
    "{:index 0, :time 1, :type :invoke, :process 0, :f :send, :value [[:send 0 1]]}\n"
    "{:index 1, :time 2, :type :ok, :process 0, :f :send, :value [[:send 0 [0 1]]]}\n"
    "{:index 2, :time 3, :type :invoke, :process 0, :f :send, :value [[:send 0 2]]}\n"
    "{:index 3, :time 4, :type :ok, :process 0, :f :send, :value [[:send 0 [1 2]]]}\n"
    "{:index 4, :time 5, :type :invoke, :process 1, :f :poll, :value [[:poll]]}\n"
)


def _jsonl(*events: dict[str, object]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


SENDS_JSONL = _jsonl(
    {"index": 0, "time": 1, "type": "invoke", "process": 0, "f": "send", "key": 0, "value": 1},
    {"index": 1, "time": 2, "type": "ok", "process": 0, "f": "send", "key": 0, "value": [0, 1]},
    {"index": 2, "time": 3, "type": "invoke", "process": 0, "f": "send", "key": 0, "value": 2},
    {"index": 3, "time": 4, "type": "ok", "process": 0, "f": "send", "key": 0, "value": [1, 2]},
    {"index": 4, "time": 5, "type": "invoke", "process": 1, "f": "poll", "value": None},
)


POLL = '{"index": 5, "time": 6, "type": "ok", "process": 1, "f": "poll", '
"""The start of a poll's completion, as JSON."""


def _check(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / name
    path.write_text(text)
    code = main(["check", str(path), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 254, out + err
    assert out == "" and err.startswith(f"{path}:6: ") and err.count("\n") == 1
    return err


def test_an_edn_poll_naming_a_partition_twice_is_refused_not_read_last_wins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Read last-wins, offset 0 held 1 alone; its first entry says 2 was there too.
    poll = "{:index 5, :time 6, :type :ok, :process 1, :f :poll, "
    poll += ":value [[:poll {0 [[0 2]], 0 [[0 1]]}]]}\n"
    err = _check(tmp_path, "history.edn", SENDS_EDN + poll, capsys)
    assert "duplicate key 0" in err


def test_a_json_poll_naming_a_partition_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poll = POLL + '"value": {"0": [[0, 2]], "0": [[0, 1]]}}\n'
    err = _check(tmp_path, "history.jsonl", SENDS_JSONL + poll, capsys)
    assert "duplicate key '0'" in err


@pytest.mark.parametrize(
    "line",
    [
        # the outcome twice: fail read last would drop the op
        POLL + '"type": "fail", "value": {}}',
        # an escaped spelling of the same key
        POLL + '"value": {"0": [[0, 2]], "\\u0030": []}}',
        # a duplicate nested below a string holding a colon: the slow path finds it too
        POLL + '"error": "a: b", "value": {"0": [], "0": []}}',
        # in another map among the fields, whose keys the quick count takes in
        POLL + '"rebalanced": {"assigned": [0], "assigned": [1]}, "value": {"0": [[0, 1]]}}',
        # a repeated field hiding a map the count would have taken in
        POLL + '"rebalanced": {"assigned": [0]}, "rebalanced": 1, "value": {}}',
        # beyond 64 bits: read by the standard library
        POLL + '"x": 99999999999999999999999, "value": {"0": [], "0": []}}',
    ],
)
def test_json_duplicates_anywhere_are_refused(tmp_path: Path, line: str) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(SENDS_JSONL + line + "\n")
    with pytest.raises(HistoryError) as info:
        load(path)
    assert info.value.line == 6 and "duplicate key" in info.value.problem


@pytest.mark.parametrize(
    "line",
    [
        POLL + '"error": "a: b", "value": {"0": [[0, 1]]}}',
        POLL + '"value": {"0": [[0, 1]], "1:": []}}',
        POLL + '"value": {"0": [[0, 1]], "\\u0031": []}}',
        POLL + '"m": {"a": {"b": {}}}, "value": {"0": [[0, 1]]}}',
        POLL + '"rebalanced": {"assigned": [0], "revoked": []}, "value": {"0": [[0, 1]]}}',
    ],
)
def test_json_keys_that_only_look_repeated_are_read(tmp_path: Path, line: str) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(SENDS_JSONL + line + "\n")
    assert len(load(path).events) == 6


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{0 [[0 2]], 0 [[0 1]]}", "duplicate key 0"),
        ('{:a 1 :b 2 "x" 3 :a 4}', "duplicate key :a"),
        ("{[1 2] 1 [1 2] 2}", "duplicate key [1, 2]"),
        ("#{1 2 1}", "duplicate set element 1"),
    ],
)
def test_edn_duplicates_are_refused_as_clojure_refuses_them(text: str, problem: str) -> None:
    with pytest.raises(edn.EdnError) as info:
        edn.read_forms(text)
    assert problem in info.value.problem


@pytest.mark.parametrize("text", ["{1 :a 1.0 :b}", '{1 :a "1" :b}', "{:a 1 a 2}", "#{1 1.0 true}"])
def test_edn_keys_of_different_kinds_are_different_keys(text: str) -> None:
    [(_, value)] = edn.read_forms(text)
    assert len(value) == (3 if text.startswith("#") else 2)
