"""Tests that no reader drops, merges or reorders an event: Jepsen logs with two op lines on
one line (interleaved logging) or with CR line ends, an ok read of null in history.jsonl,
and EDN histories with :time on some events only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from history import load
from tests.unit.harness.commands.test_check import run

LOG = [
    "INFO  jepsen.util - 0\t:invoke\t:write\t1",
    "INFO  jepsen.util - 0\t:ok\t:write\t1",
    "INFO  jepsen.util - 1\t:invoke\t:read\tnil",
    "INFO  jepsen.util - 1\t:ok\t:read\t2",
]


def shape(path: Path) -> list[tuple[Any, ...]]:
    return [(op.process, op.f, op.value, op.type) for op in load(path).ops]


# --- Jepsen logs ---------------------------------------------------------------------


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
def test_every_line_end_ends_a_log_line(tmp_path: Path, end: str) -> None:
    path = tmp_path / "jepsen.log"
    path.write_bytes(end.join(LOG).encode() + end.encode())
    assert shape(path) == [(0, "write", 1, "ok"), (1, "read", 2, "ok")]
    assert list(load(path).invoke_lines) == [1, 3]  # CR-only ends count as line ends


def test_two_op_lines_logged_onto_one_line_are_two_events(tmp_path: Path) -> None:
    path = tmp_path / "jepsen.log"
    path.write_text(f"{LOG[0]}\n{LOG[1]}{LOG[2]}\n{LOG[3]}\n")
    assert shape(path) == [(0, "write", 1, "ok"), (1, "read", 2, "ok")]


def test_an_interleaved_read_of_a_stale_value_is_still_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "jepsen.log"
    path.write_text(f"{LOG[0]}{LOG[1]}\n{LOG[2]}\n" + LOG[3].replace("2", "1") + "\n")
    assert run(capsys, str(path), "--model", "register")[0] == 0
    path.write_text(f"{LOG[0]}{LOG[1]}\n{LOG[2]}\n{LOG[3]}\n")
    assert run(capsys, str(path), "--model", "register")[0] == 1


def test_a_cut_op_line_before_another_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "jepsen.log"
    path.write_text(f"{LOG[0]}\nINFO  jepsen.util - 0\t:ok{LOG[1]}\n")
    with pytest.raises(Exception, match=r":2: truncated op line"):
        load(path)


# --- history.jsonl: a null read is a read of null -------------------------------------


def jsonl(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps({"index": i, "time": i, **e}) + "\n" for i, e in enumerate(events))
    )
    return path


def test_an_ok_read_of_null_keeps_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = jsonl(
        tmp_path / "history.jsonl",
        [
            {"process": 0, "type": "invoke", "f": "write", "value": 1},
            {"process": 0, "type": "ok", "f": "write", "value": 1},
            {"process": 1, "type": "invoke", "f": "read", "value": 1},
            {"process": 1, "type": "ok", "f": "read", "value": None},
        ],
    )
    assert load(path).ops[1].value is None
    code, out, _ = run(capsys, str(path), "--model", "register", "--out", str(tmp_path))
    assert code == 1, out


def test_an_ok_completion_without_a_value_takes_its_invokes(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "history.jsonl",
        [
            {"process": 0, "type": "invoke", "f": "write", "value": 1},
            {"process": 0, "type": "ok", "f": "write"},
        ],
    )
    assert load(path).ops[0].value == 1


def test_an_edn_ok_read_of_nil_keeps_nil(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 1, :type :invoke, :f :read, :value 1}\n"
        "{:process 1, :type :ok, :f :read, :value nil}\n"
    )
    assert load(path).ops[0].value is None


# --- EDN: :time on some events only --------------------------------------------------

EDN = [
    "{:process 0, :type :invoke, :f :write, :value 1, :time 5000000000}",
    "{:process 0, :type :ok, :f :write, :value 1, :time 5000000100}",
    "{:process 1, :type :invoke, :f :read, :value nil}",
    "{:process 1, :type :ok, :f :read, :value 1}",
]


@pytest.mark.parametrize("untimed", [[2, 3], [0], [1, 3], [0, 1, 2, 3]])
def test_edn_without_time_on_every_event_is_ordered_by_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], untimed: list[int]
) -> None:
    lines = [
        line.replace(", :time", ", :untimed") if i in untimed else line
        for i, line in enumerate(EDN)
    ]
    path = tmp_path / "history.edn"
    path.write_text("\n".join(lines) + "\n")
    ops = load(path).ops
    assert [(op.call, op.ret) for op in ops] == [(0, 1), (2, 3)]
    assert run(capsys, str(path), "--model", "register")[0] == 0


def test_edn_with_time_on_every_event_keeps_its_times(tmp_path: Path) -> None:
    lines = [*EDN[:2], EDN[2][:-1] + ", :time 5000000200}", EDN[3][:-1] + ", :time 5000000300}"]
    path = tmp_path / "history.edn"
    path.write_text("\n".join(lines) + "\n")
    ops = load(path).ops
    assert [(op.call, op.ret) for op in ops] == [(5000000000, 5000000100), (5000000200, 5000000300)]


# --- facts guessed from the first events, read again when they prove wrong -----------


def edn_lines(values: list[tuple[str, str]]) -> str:
    """Returns an EDN history of one process's ok ops: (f, value) pairs."""
    lines = []
    for f, value in values:
        for kind in ("invoke", "ok"):
            lines.append(f"{{:process 0, :type :{kind}, :f :{f}, :value {value}}}\n")
    return "".join(lines)


@pytest.mark.parametrize(
    ("values", "keys"),
    [
        ([("write", "[1 2]"), ("write", "[1 3]")], [1, 1]),  # keyed, guessed at once
        ([("write", "[1 2]"), ("write", "3")], [None, None]),  # a pair first, then not
        ([("cas", "[1 2]"), ("read", "[1 nil]")], [1, 1]),  # a cas pair first, then a read
        ([("cas", "[1 2]"), ("cas", "[2 3]")], [None, None]),  # unkeyed cas pairs
    ],
)
def test_keys_are_read_as_the_whole_history_says(
    tmp_path: Path, values: list[tuple[str, str]], keys: list[Any]
) -> None:
    path = tmp_path / "history.edn"
    path.write_text(edn_lines(values))
    assert [op.key for op in load(path).ops] == keys


class Recorder:
    """A Reader that keeps what it is given."""

    def __init__(self) -> None:
        self.added: list[tuple[Any, Any]] = []

    def add(self, invoke: Any, invoke_line: int, completion: Any, line: int) -> None:
        self.added.append((invoke["value"], invoke.get("key")))

    def finish(self) -> object:
        return self.added


def test_a_reader_is_given_each_invocation_once_when_a_history_is_read_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.edn"
    path.write_text(edn_lines([("write", "[1 2]"), ("write", "3")]))
    assert load(path, reader=Recorder()).read == [([1, 2], None), (3, None)]
