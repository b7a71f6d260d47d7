"""history.edn's lines read quickly (history/jepsen_edn.py, through JSON) give the events
and errors the EDN reader gives: each file is read as it is, and again with a comment
ending its first line, which makes it no quick line, so that the EDN reader reads every
line."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from history import HistoryError, load

OK = "{:type :ok, :f :write, :value 0, :process 8, :time 1, :index 1}"
INVOKE = "{:type :invoke, :f :write, :value 0, :process 8, :time 0, :index 0}"


def _op(kind: str, value: str, i: int, more: str = "", process: str = "1") -> str:
    fields = f":type :{kind}, :f :write, :value {value}, :process {process}, :time {i}"
    return f"{{{fields}, :index {i}{more}}}"


def _long(slow_at: int) -> list[str]:
    # Many quick lines, so that they span batches, and one the EDN reader must read.
    rng = random.Random(slow_at)
    lines = []
    for i in range(0, 5000, 2):
        value = rng.choice(["nil", str(rng.randrange(5)), f"[{rng.randrange(3)} [1 2]]"])
        lines += [_op("invoke", value, i), _op("ok", value, i + 1)]
    lines.insert(slow_at, _op("invoke", ":kw", 9999, process="2"))
    return lines


CASES: dict[str, list[str]] = {
    "plain": [INVOKE, OK],
    "keyword value": [_op("invoke", ":x", 0), _op("ok", ":x", 1)],
    "key twice": ["{:type :invoke, :type :ok, :f :write, :value 0, :process 8, :time 0}"],
    "error": [_op("invoke", "nil", 0), _op("info", "nil", 1, ", :error :timed-out")],
    "nil error": [_op("invoke", "nil", 0), _op("fail", "nil", 1, ", :error nil")],
    "ok without value": [INVOKE, "{:type :ok, :f :write, :process 8, :time 1, :index 1}"],
    "blank lines": [INVOKE, "", "  ,", OK],
    "leading zero": [_op("invoke", "007", 0), OK],
    "long integer": [_op("invoke", "1234567890123456789012", 0), OK],
    "minus zero": [_op("invoke", "-0", 0), OK],
    "no separator": ["{:type :invoke, :f :write:value 0, :process 8, :time 0, :index 0}"],
    "deep vectors": [_op("invoke", "[0 [1 [2]]]", 0), _op("ok", "[0 [1 [2]]]", 1)],
    "nil and booleans": [_op("invoke", "[nil true false -3]", 0), _op("ok", "[nil [true] []]", 1)],
    "keyword named nil": [
        "{:type :invoke, :f :nil, :value nil, :process 1, :time 0, :index 0}",
        "{:type :ok, :f :nil, :value [nil], :process 1, :time 1, :index 1}",
    ],
    "nemesis": [
        _op("info", "nil", 0, process=":nemesis"),
        _op("info", "[1 2]", 1, process=":nemesis"),
    ],
    "process nil": [_op("invoke", "0", 0, process="nil")],
    "time keyword": ["{:type :invoke, :f :write, :value 0, :process 8, :time :x, :index 0}"],
    "another field": [_op("invoke", "0", 0, ", :foo 3"), OK],
    "tabs and commas": [
        "{:type\t:invoke,,:f :write , :value [1,2], :process 8, :time 0, :index 0}",
        OK,
    ],
    "no spaces": ["{:type :invoke,:f :write,:value 0,:process 8,:time 0,:index 0}", OK],
    "two maps": [INVOKE + " " + OK],
    "a map over two lines": [
        "{:type :invoke, :f :write,",
        ":value 0, :process 8, :time 0, :index 0}",
        OK,
    ],
    "a vector after maps": [INVOKE, OK, "[1 2]"],
    "a record": ["#jepsen.history.Op" + INVOKE, OK],
    "unknown type": ["{:type :frob, :f :write, :value 0, :process 1, :time 0, :index 0}"],
    "indexes back": [_op("invoke", "0", 5), _op("ok", "0", 1)],
    "no indexes": [
        "{:type :invoke, :f :write, :value 0, :process 8, :time 5}",
        "{:type :ok, :f :write, :value 0, :process 8, :time 9}",
    ],
    "time nil": [_op("invoke", "0", 0), "{:type :ok, :f :write, :value 0, :process 1, :time nil}"],
    "time missing later": [_op("invoke", "0", 0), "{:type :ok, :f :write, :process 1, :index 1}"],
    "time missing first": ["{:type :invoke, :f :write, :process 1, :index 0}", _op("ok", "0", 1)],
    "index true": [_op("invoke", "0", 0), "{:type :ok, :f :write, :process 1, :index true}"],
    "index missing later": [_op("invoke", "0", 0), "{:type :ok, :f :write, :process 1, :time 1}"],
    "index repeated": [_op("invoke", "0", 0), _op("ok", "0", 0)],
    "process missing": ["{:type :invoke, :f :write, :value 0, :time 0, :index 0}"],
    "keyed": [_op("invoke", "[1 2]", 0), _op("ok", "[1 2]", 1)],
    "keyed, then not": [_op("invoke", "[1 2]", 0), _op("ok", "[1 2]", 1), _op("invoke", "3", 2)],
    "indexes back late": [*_long(4000)[:3000], _op("invoke", "0", 5)],
    "time missing late": [*_long(4000)[:3000], "{:type :invoke, :f :write, :process 3}"],
    "slow line late": _long(3001),
    "slow line in the first batch": _long(7),
}


def _read(path: Path) -> dict[str, Any]:
    try:
        history = load(path)
    except HistoryError as e:
        return {"error": e.problem, "line": e.line}
    return {"events": history.events, "ops": repr(history.ops)}


@pytest.mark.parametrize("name", list(CASES))
def test_quick_lines_read_as_the_edn_reader_reads_them(tmp_path: Path, name: str) -> None:
    lines = CASES[name]
    quick, slow = tmp_path / "quick.edn", tmp_path / "slow.edn"
    quick.write_text("".join(line + "\n" for line in lines))
    first, *rest = lines or [""]
    slow.write_text("".join(line + "\n" for line in [first + " ; the EDN reader's", *rest]))
    assert _read(quick) == _read(slow)
