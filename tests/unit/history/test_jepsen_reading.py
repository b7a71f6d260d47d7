"""Jepsen's formats are read as Jepsen's analysis reads them, each oddity with a warning;
our own history.jsonl is read strictly, the same oddity refused.

kafka_test.clj (jepsen-io/jepsen, jepsen/test/jepsen/tests/kafka_test.clj) goes on with a
process after its info ("txn abort": `(o 6 1 :info ...)` then `(o 7 1 :invoke ...)`) and
repeats an index (`(o 1 0 :ok ...)` then `(o 1 1 :invoke ...)`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from history import HistoryError, load, pair_invocations, read_strictly

INVOKE, INFO = "invoke", "info"


def edn(tmp_path: Path, *events: tuple[int, int, str, str]) -> Path:
    """Writes EDN events of (index, process, type, f), each at time `index`."""
    lines = [
        f"{{:index {i}, :time {i}, :process {p}, :type :{t}, :f :{f}, :value 1}}"
        for i, p, t, f in events
    ]
    path = tmp_path / "history.edn"
    path.write_text("\n".join(lines) + "\n")
    return path


def jsonl(tmp_path: Path, *events: tuple[int, int, str, str]) -> Path:
    """Writes the same events as history.jsonl."""
    lines = [
        json.dumps({"index": i, "time": i, "process": p, "type": t, "f": f, "value": 1})
        for i, p, t, f in events
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


GOES_ON = (
    (0, 0, INVOKE, "write"),
    (1, 0, INFO, "write"),
    (2, 0, INVOKE, "read"),
    (3, 0, "ok", "read"),
)
REPEATS = (
    (0, 0, INVOKE, "write"),
    (1, 0, "ok", "write"),
    (1, 1, INVOKE, "read"),
    (2, 1, "ok", "read"),
)


def test_a_process_going_on_after_its_info_is_read_in_edn_with_a_warning(tmp_path: Path) -> None:
    history = load(edn(tmp_path, *GOES_ON))
    assert [(op.process, op.f, op.type) for op in history.ops] == [
        (0, "write", "info"),
        (0, "read", "ok"),
    ]
    [warning] = history.warnings
    assert warning.startswith("line 3: process 0 goes on after its info on line 2")


def test_a_process_going_on_after_its_info_is_refused_in_our_jsonl(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="process 0 reused after its info on line 2"):
        load(jsonl(tmp_path, *GOES_ON))


def test_one_warning_counts_every_time_a_process_went_on(tmp_path: Path) -> None:
    events = (*GOES_ON[:3], (3, 0, INFO, "read"), (4, 0, INVOKE, "write"), (5, 0, INFO, "write"))
    [warning] = load(edn(tmp_path, *events, (6, 0, INVOKE, "read"))).warnings
    assert warning.startswith("line 3: process 0 goes on after its info on line 2 (and 2 more")


def test_a_repeated_index_numbers_edn_events_by_position_with_a_warning(tmp_path: Path) -> None:
    history = load(edn(tmp_path, *REPEATS))
    assert [e["index"] for e in history.events] == [0, 1, 2, 3]
    assert [op.index for op in history.ops] == [0, 2]
    [warning] = history.warnings
    assert warning.startswith("line 3: its :index is missing or does not follow the one before")


def test_a_repeated_index_is_refused_in_our_jsonl(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="index 1 does not follow index 1"):
        load(jsonl(tmp_path, *REPEATS))


def test_edn_without_indexes_is_numbered_by_position_silently(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 0, :type :invoke, :f :read}\n{:process 0, :type :ok, :f :read, :value 1}\n"
    )
    history = load(path)
    assert ([e["index"] for e in history.events], history.warnings) == ([0, 1], ())


def test_increasing_sparse_indexes_are_kept(tmp_path: Path) -> None:
    events = ((3, 0, INVOKE, "read"), (9, 0, "ok", "read"))
    history = load(edn(tmp_path, *events))
    assert ([e["index"] for e in history.events], history.warnings) == ([3, 9], ())


def test_pairing_events_again_follows_the_formats_rule() -> None:
    events = [
        {"index": i, "time": i, "process": 0, "type": t, "f": "write", "value": 1}
        for i, t in enumerate((INVOKE, INFO, INVOKE, "ok"))
    ]
    invocations, _ = pair_invocations(events, retires=read_strictly("edn"))
    assert [i.completion["type"] for i in invocations if i.completion] == [INFO, "ok"]
    with pytest.raises(HistoryError, match="reused after its info"):
        pair_invocations(events, retires=read_strictly("jsonl"))
