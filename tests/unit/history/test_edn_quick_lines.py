"""history.edn's lines read quickly (history/jepsen_edn.py, through JSON, a batch at a time
or a line at a time) give the events and errors the EDN reader gives: each file is read as
it is, and again with a comment ending its first line, which makes it no quick line, so
that the EDN reader reads every line."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    # Batches of 1,024 lines read in one go, and one read line by line after them.
    "key twice in the second batch": [
        *_long(5000)[:1500],
        "{:type :ok, :f :write, :f :read, :value 0, :process 1, :time 1501, :index 1501}",
    ],
    "bad type in the second batch": [
        *_long(5000)[:1500],
        "{:type :frob, :f :write, :value 0, :process 1, :time 1501, :index 1501}",
    ],
    "blank line in the second batch": [*_long(5000)[:1500], "", *_long(5000)[1500:1600]],
    "NUL in a line": [INVOKE, "{:type :ok, :f :write, :value 0, :process 8, :time 1}\x00"],
    # Spellings that are no JSON object once spaces are colons and commas.
    "comma after a name": ["{:type, :invoke, :f :write, :value 0, :process 8, :time 0}", OK],
    "two spaces": ["{:type  :invoke, :f :write, :value 0, :process 8, :time 0}", OK],
    "no comma between fields": ["{:type :invoke :f :write :value 0 :process 8 :time 0}", OK],
    "space before the brace": ["{:type :invoke, :f :write, :value [1 2], :process 8 }", OK],
    "spaces in a vector": [_op("invoke", "[ 1 2 ]", 0), _op("ok", "[1 , 2]", 1)],
    "a tab after a comma": ["{:type :invoke,\t:f :write, :value 0, :process 8, :time 0}", OK],
    "nil after a name": [_op("invoke", "nil", 0), _op("info", "[nil nil]", 1, ", :error :nil")],
    "key twice, last": ["{:type :invoke, :f :write, :value 0, :process 8, :time 0, :time 1}"],
    # Layouts: every line's fields in the first line's order (history/jepsen_edn_layout.py).
    "index first": [
        "{:index 0, :time 0, :type :invoke, :process 0, :f :read, :value nil}",
        "{:index 1, :time 1, :type :ok, :process 0, :f :read, :value [1 [2 nil]]}",
        "{:index 2, :time 2, :type :info, :process :nemesis, :f :start, :value nil}",
        "{:index 3, :time 3, :type :invoke, :process 0, :f :cas, :value [1 2]}",
        "{:index 4, :time 4, :type :fail, :process 0, :f :cas, :value [1 2], :error :nil}",
    ],
    "errors placed alike": [
        _op("invoke", "1", 0),
        _op("info", "1", 1, ", :error :timed-out"),
        _op("invoke", "2", 2),
        _op("fail", "2", 3, ", :error :no"),
    ],
    "errors placed otherwise": [
        _op("invoke", "1", 0),
        _op("info", "1", 1, ", :error :timed-out"),
        _op("invoke", "0", 2, process="8"),
        "{:type :fail, :f :write, :value 0, :process 8, :time 3, :error :x, :index 3}",
    ],
    "error first": [
        "{:error :x, :type :invoke, :f :write, :value 0, :process 8, :time 0, :index 0}",
        "{:error :y, :type :fail, :f :write, :value 0, :process 8, :time 1, :index 1}",
    ],
    "error in the first line": [_op("invoke", "1", 0, ", :error :x"), _op("ok", "1", 1)],
    "error twice": [_op("invoke", "1", 0), _op("fail", "1", 1, ", :error :x, :error :y")],
    "error not a keyword": [_op("invoke", "1", 0), _op("fail", "1", 1, ", :error 3")],
    "fields in another order later": [
        _op("invoke", "1", 0),
        "{:f :write, :type :ok, :value 1, :process 1, :time 1, :index 1}",
    ],
    "a field fewer later": [_op("invoke", "1", 0), "{:type :ok, :f :write, :process 1, :index 1}"],
    "process named nil": [_op("info", "nil", 0, process=":nil"), _op("info", "1", 1, process=":x")],
    "negative and zero integers": [_op("invoke", "[-0 -7]", -3), _op("ok", "[0 -18]", 0)],
    "without time or index": [
        "{:type :invoke, :f :write, :value [1 2], :process 8}",
        "{:type :ok, :f :write, :value [1 2], :process 8}",
    ],
}


def _read(path: Path) -> dict[str, Any]:
    try:
        history = load(path)
    except HistoryError as e:
        return {"error": e.problem, "line": e.line}
    return {"events": repr(history.events), "ops": repr(history.ops)}


def _write(path: Path, lines: list[str], quick: bool) -> None:
    first, *rest = lines or [""]
    if not quick:
        first += " ; the EDN reader's"
    text = "".join(line + "\n" for line in [first, *rest])
    path.write_bytes(text.encode(errors="surrogateescape"))  # \udcff: the byte 0xff


@pytest.mark.parametrize("name", list(CASES))
def test_quick_lines_read_as_the_edn_reader_reads_them(tmp_path: Path, name: str) -> None:
    quick, slow = tmp_path / "quick.edn", tmp_path / "slow.edn"
    _write(quick, CASES[name], quick=True)
    _write(slow, CASES[name], quick=False)
    assert _read(quick) == _read(slow)


_KEYWORDS = st.sampled_from([":invoke", ":ok", ":fail", ":info", ":read", ":nil", ":time"])
_ATOMS = st.sampled_from(["nil", "true", "false", "0", "-3", "17", "007", "1" * 19])
_VALUES = st.recursive(
    _ATOMS, lambda inner: st.lists(inner, max_size=3).map(" ".join).map("[{}]".format), max_leaves=6
)
_SEPARATORS = st.sampled_from([" ", ", ", ",", "  ", "\t", " ,"])
_FIELDS = st.sampled_from(
    [
        (":type", st.sampled_from([":invoke", ":ok", ":info", ":fail", ":frob"])),
        (":f", _KEYWORDS),
        (":error", _KEYWORDS),
        (":process", st.sampled_from(["1", "2", ":nemesis"])),
        *((name, _VALUES) for name in (":value", ":time", ":index", ":key")),
    ]
)


@st.composite
def _line(draw: st.DrawFn) -> Callable[[int], str]:
    """A map of an op's fields as a function of its place i, mostly as Jepsen prints one
    (its :time and :index i), sometimes spelled otherwise, missing a field or naming one
    twice."""
    common = f"{{:type :{draw(st.sampled_from(['invoke', 'ok', 'info']))}, :f :write, "
    if draw(st.integers(0, 9)):
        value, process = draw(_VALUES), draw(st.integers(0, 3))
        return lambda i: common + f":value {value}, :process {process}, :time {i}, :index {i}}}"
    fields = []
    for _ in range(draw(st.integers(0, 7))):
        name, values = draw(_FIELDS)
        fields.append(f"{name}{draw(_SEPARATORS)}{draw(values)}")
    odd = "{" + draw(_SEPARATORS).join(fields) + "}"
    return lambda i: odd


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shapes=st.lists(_line(), min_size=1, max_size=40),
    stride=st.integers(1, 97),
    size=st.sampled_from([3, 1030, 2060]),
)
def test_any_history_reads_as_the_edn_reader_reads_it(
    tmp_path: Path, shapes: list[Callable[[int], str]], stride: int, size: int
) -> None:
    # Up to 40 drawn lines, placed over 3, 1,030 or 2,060 lines (past one and two batches
    # of 1,024) by a drawn stride: drawing each of 2,060 lines exceeded hypothesis' budget
    # for one example. The first line an EDN map, never `{}` (which would be history.jsonl).
    lines = [INVOKE, *(shapes[(i * stride) % len(shapes)](i) for i in range(1, size))]
    quick, slow = tmp_path / "quick.edn", tmp_path / "slow.edn"
    _write(quick, lines, quick=True)
    _write(slow, lines, quick=False)
    assert _read(quick) == _read(slow)


def test_a_batch_read_line_by_line_finds_the_first_error_of_its_batch(tmp_path: Path) -> None:
    # The quick lines' batches are the same read in one go or line by line (1,024 lines
    # each), and within a batch a line not UTF-8 is found as its lines are taken, before
    # a bad quick line is read: line 1901, not line 1101, whichever way it is read.
    lines = [
        *_long(5000)[:1100],
        "{:type :frob, :f :write, :value 0, :process 1, :time 1100, :index 1100}",
        *_long(5000)[1101:1900],
        '{:type :ok, :f :write, :value "\udcff", :process 1, :time 1900, :index 1900}',
    ]
    path = tmp_path / "history.edn"
    _write(path, lines, quick=True)
    assert _read(path) == {"error": "not UTF-8 text (byte 32)", "line": 1901}
