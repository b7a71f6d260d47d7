"""Tests for the EDN reader and the three history formats (jsonl, EDN, Jepsen text logs).

Equivalent histories in each format must give the same ops; malformed ones one-line errors.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history import Event, History, HistoryError, Op, edn, load
from history.edn_values import BigDecimal, Char, Keyword, Symbol, Tagged
from history.formats import EDN, JEPSEN_LOG, JSONL, detect_format, parse_history
from tests.support import DATA


def shape(ops: list[Op]) -> list[tuple[Any, ...]]:
    """The parts of ops every format agrees on (text logs have no times)."""
    return [(o.process, o.f, o.key, o.value, o.type, o.error, o.ret is None) for o in ops]


def write(tmp_path: Path, text: str, name: str = "h") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- the EDN reader ---------------------------------------------------------


def test_edn_scalars() -> None:
    forms = [f for _, f in edn.read_forms('nil true false 42 -7 12N 1.5 2e3 3M "a\\"b\\n" \\x')]
    three = BigDecimal(Decimal(3))
    assert forms == [None, True, False, 42, -7, 12, 1.5, 2000.0, three, 'a"b\n', Char("x")]


def test_edn_keywords_and_symbols_are_not_strings() -> None:
    kw, sym = (f for _, f in edn.read_forms(":timed-out foo/bar"))
    assert kw == Keyword("timed-out") and kw != "timed-out" and repr(kw) == ":timed-out"
    assert sym == Symbol("foo/bar") and sym != "foo/bar" and repr(sym) == "foo/bar"


def test_edn_collections() -> None:
    ((_, form),) = edn.read_forms("{:a [1 (2 3)], [1 2] #{4 5}, :c {}}")
    assert form == {Keyword("a"): [1, [2, 3]], (1, 2): frozenset({4, 5}), Keyword("c"): {}}


def test_edn_tagged_discard_comment_and_lines() -> None:
    text = "; a comment\n#_ {:skipped 1}\n#jepsen.independent/tuple [1 2]\n\n:x"
    tuple_ = Tagged("jepsen.independent/tuple", [1, 2])
    assert edn.read_forms(text) == [(3, tuple_), (5, Keyword("x"))]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("[1 2\n3", 1, "never closed"),
        ("1\n2 ]", 2, "unexpected ']'"),
        ('\n"abc', 2, "string is never closed"),
        ("{:a}", 1, "even number"),
        ("\n\n12abc", 3, "bad number"),
        ('"\\q"', 1, "bad string escape"),
    ],
)
def test_edn_errors_name_the_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(edn.EdnError) as info:
        edn.read_forms(text)
    assert info.value.line == line and problem in info.value.problem


# --- detection ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ('{"type": "invoke"}\n', JSONL),
        ("\n  {:type :invoke}\n", EDN),
        ("[{:type :invoke}]", EDN),
        ("INFO  jepsen.util - 3\t:invoke\t:read\tnil\n", JEPSEN_LOG),
        ("[main] starting\n[w 3] jepsen.util: 3\t:invoke\t:read\tnil\n", JEPSEN_LOG),
        ("", JSONL),
        ("hello world\n", None),
    ],
)
def test_detect_format(text: str, fmt: str | None) -> None:
    assert detect_format(text) == fmt


def test_format_comes_from_content_not_name(tmp_path: Path) -> None:
    path = write(tmp_path, (DATA / "register.edn").read_text(), "history.jsonl")
    assert load(path).format == EDN


# --- equivalent histories ---------------------------------------------------


def test_register_history_in_three_formats_gives_the_same_ops() -> None:
    jsonl, edn_h, log = (load(DATA / n) for n in ("register.jsonl", "register.edn", "register.log"))
    assert (jsonl.format, edn_h.format, log.format) == (JSONL, EDN, JEPSEN_LOG)
    assert shape(jsonl.ops) == shape(edn_h.ops) == shape(log.ops)
    assert jsonl.ops == edn_h.ops  # times included: the EDN carries the same ones
    assert [e["f"] for e in log.nemesis] == ["start", "stop"]
    assert [e["process"] for e in edn_h.nemesis] == ["nemesis", "nemesis"]


def test_register_history_ops() -> None:
    ops = load(DATA / "register.jsonl").ops
    assert [(o.process, o.f, o.value, o.type, o.call, o.ret) for o in ops] == [
        (0, "write", 1, "ok", 10, 30),
        (1, "read", 1, "ok", 20, 40),
        (0, "cas", [1, 4], "info", 50, None),
        (2, "write", 2, "info", 90, None),
    ]
    assert ops[2].error == "timed-out"


def test_text_log_uses_positions_as_time() -> None:
    history = load(DATA / "register.log")
    assert (history.ops[0].call, history.ops[0].ret) == (0, 2)  # two op records may share a line
    assert list(history.invoke_lines[:2]) == [2, 3]


@pytest.mark.parametrize("name", ["keyed_plain.edn", "keyed_tagged.edn", "keyed_field.edn"])
def test_keyed_edn_matches_keyed_jsonl(name: str) -> None:
    expected = load(DATA / "keyed.jsonl")
    got = load(DATA / name)
    assert got.ops == expected.ops
    assert [o.key for o in got.ops] == [3, 5]


def test_unkeyed_cas_pairs_are_not_taken_for_keys(tmp_path: Path) -> None:
    text = (
        "{:type :invoke, :f :cas, :value [1 2], :process 0, :time 1}\n"
        "{:type :ok, :f :cas, :value [1 2], :process 0, :time 2}\n"
        "{:type :invoke, :f :read, :value nil, :process 0, :time 3}\n"
        "{:type :ok, :f :read, :value 2, :process 0, :time 4}\n"
    )
    ops = load(write(tmp_path, text)).ops
    assert [(o.key, o.value) for o in ops] == [(None, [1, 2]), (None, 2)]


def test_edn_keywords_and_sets_in_values_stay_so(tmp_path: Path) -> None:
    text = (
        "{:type :invoke, :f :read, :value nil, :process 0, :time 1}\n"
        "{:type :ok, :f :read, :value #{3 1 2}, :process 0, :time 2, :error :none}\n"
    )
    (op,) = load(write(tmp_path, text)).ops
    assert (op.value, op.error) == (frozenset({1, 2, 3}), "none")


def test_text_log_values_and_errors() -> None:
    text = "\n".join(
        [
            "INFO  jepsen.util - 3\t:invoke\t:cas\t[1 4]",
            "INFO  jepsen.util - 3\t:fail\t:cas\t[1 4]\t:precondition-failed",
            "INFO  jepsen.util - 4\t:invoke\t:read\tnil",
            "INFO  jepsen.util - 4\t:info\t:read\t:timed-out",
            'INFO  jepsen.util - 5\t:invoke\t:add\t"x y"',
            'INFO  jepsen.util - 5\t:ok\t:add\t"x y"',
        ]
    )
    events = [e for _, e in parse_history(text, "log")[1]]
    assert [(e["value"], e.get("error")) for e in events] == [
        ([1, 4], None),
        ([1, 4], "precondition-failed"),
        (None, None),
        (None, "timed-out"),
        ("x y", None),
        ("x y", None),
    ]


def test_edn_ops_printed_as_records(tmp_path: Path) -> None:
    text = (
        "#jepsen.history.Op{:index 0, :time 5, :type :invoke, :process 0, :f :read, :value nil}\n"
        "#jepsen.history.Op{:index 1, :time 6, :type :ok, :process 0, :f :read, :value 3}\n"
    )
    assert [(o.value, o.call, o.ret) for o in load(write(tmp_path, text)).ops] == [(3, 5, 6)]


def test_text_log_keeps_unreadable_nemesis_values_as_text(tmp_path: Path) -> None:
    text = "INFO  jepsen.util - :nemesis\t:info\t:start\t#<Thing 0x1f>\n"
    (event,) = load(write(tmp_path, text)).nemesis
    assert event["value"] == "#<Thing 0x1f>"


def test_edn_history_as_one_vector() -> None:
    history: History = load(DATA / "keyed_plain.edn")
    assert len(history.events) == 6


# --- malformed input: one line, the right line number -----------------------


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('{"type": "invoke", "process": 0, "f": "r", "time": 1}\n{"type": \n', 2, "bad JSON"),
        ('{"type": "invoke", "process": 0, "f": "r", "time": 1}\n\n{"ty"}', 3, "bad JSON"),
        ('{"type": "invoke"}\n[1]\n', 1, "missing process, f, time"),
        ('{"type": "invoke", "process": 1.5, "f": "r", "time": 1}', 1, "bad process"),
        ("{:type :invoke, :f :read, :process 0}\n{:type :ok :f :read\n", 2, "bad EDN"),
        ("{:type :invoke, :f :read, :process 0}\n[1 2]\n", 2, "expected an EDN map"),
        ("{:type :invoke, :f :read}\n", 1, "missing process"),
        (
            "INFO  jepsen.util - 1\t:invoke\t:read\tnil\nINFO  jepsen.util - 1\t:ok\t:read\t[1\n",
            2,
            "bad EDN in log line",
        ),
        ("\n\nnot a history\n", 3, "unrecognised history"),
    ],
)
def test_malformed_input_gives_one_line_error(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(HistoryError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: ")
    assert problem in message


# --- property: one random history, printed three ways, reads back the same ------

VALUES = st.recursive(
    st.none() | st.integers(-5, 5) | st.text("abc xy", max_size=4),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=5,
)


def to_edn(value: Any, *, comments: bool = False) -> str:
    """EDN text for a value; with comments, one between every two elements of a vector."""
    if value is None:
        return "nil"
    if isinstance(value, list):
        between = " ; between\n " if comments else " "
        return "[" + between.join(to_edn(v, comments=comments) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


@st.composite
def histories(draw: st.DrawFn) -> list[Event]:
    """Valid unkeyed histories: three workers, a new process after each info."""
    events: list[Event] = []
    processes = [0, 1, 2]
    invoked: list[str | None] = [None, None, None]  # the f each worker has in flight
    for _ in range(draw(st.integers(0, 14))):
        w = draw(st.integers(0, 2))
        f = invoked[w]
        if f is None:
            f = draw(st.sampled_from(["read", "write", "cas"]))
            value = None if f == "read" else draw(VALUES)
            events.append({"process": processes[w], "type": "invoke", "f": f, "value": value})
            invoked[w] = f
            continue
        kind = draw(st.sampled_from(["ok", "fail", "info"]))
        events.append({"process": processes[w], "type": kind, "f": f, "value": draw(VALUES)})
        invoked[w] = None
        if kind == "info":
            processes[w] += 3
    if not events or not any(e["value"] is None for e in events):
        # Only [x y] values everywhere would read as a keyed Jepsen history.
        events.append({"process": 9, "type": "invoke", "f": "read", "value": None})
    return [{"index": i, "time": i + 1, **e} for i, e in enumerate(events)]


@settings(max_examples=60, deadline=None)
@given(history=histories())
def test_three_formats_agree(
    tmp_path_factory: pytest.TempPathFactory, history: list[Event]
) -> None:
    folder = tmp_path_factory.mktemp("h")
    jsonl = write(folder, "".join(json.dumps(e) + "\n" for e in history), "a")
    edn_lines = [
        f"{{:index {e['index']}, :time {e['time']}, :type :{e['type']}, :f :{e['f']}, "
        f":process {e['process']}, ; a comment inside\n "
        f":value {to_edn(e['value'], comments=True)}}} ; after\n"
        for e in history
    ]
    edn_h = write(folder, "; a history\n" + "".join(edn_lines) + "; the end", "b")
    log_lines = [
        f"INFO  jepsen.util - {e['process']}\t:{e['type']}\t:{e['f']}\t{to_edn(e['value'])}\n"
        for e in history
    ]
    log = write(folder, "".join(log_lines), "c")
    expected = load(jsonl).ops
    assert load(edn_h).ops == expected
    assert shape(load(log).ops) == shape(expected)
