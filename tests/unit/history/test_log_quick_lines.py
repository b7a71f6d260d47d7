"""A Jepsen text log's batches read quickly (history/jepsen_log.py, its records by one
regular expression and their values through JSON) give the events, ops, warnings and errors
the line-by-line reader gives: each log is read as it is, and again with the quick path
refused for every batch, so that each line is read on its own."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history import HistoryError, jepsen_log, load

P = "INFO  jepsen.util - "


def _op(process: str, kind: str, f: str, rest: str) -> str:
    return f"{P}{process}\t:{kind}\t:{f}{rest}"


def _pair(process: int, f: str, value: str, end: str = "ok", more: str | None = None) -> list[str]:
    # The completion's rest is the invoke's value unless said.
    rest = "\t" + value if more is None else more
    return [_op(str(process), "invoke", f, "\t" + value), _op(str(process), end, f, rest)]


def _long(odd_at: int, odd: str) -> list[str]:
    # Many common lines, so that they span batches, and one odd line among them.
    rng = random.Random(odd_at)
    lines: list[str] = []
    for i in range(1500):
        value = rng.choice(["nil", str(rng.randrange(5)), f"[{rng.randrange(3)} {i % 4}]"])
        end = rng.choice(["ok", "ok", "fail", "info"])
        more = "\t:timed-out" if end == "info" else "\t" + value
        lines += _pair(i % 7, rng.choice(["read", "write", "cas"]), value, end, more)
    lines.insert(odd_at, odd)
    return lines


CASES: dict[str, list[str]] = {
    "plain": _pair(0, "read", "nil", more="\t3") + _pair(1, "cas", "[3 0]", more="\t[3 0]"),
    "spaces": ["INFO  jepsen.util - 0 :invoke :read nil", "INFO  jepsen.util - 0 :ok :read 2"],
    "timed out": _pair(2, "cas", "[4 4]", "info", "\t[4 4]\t:timed-out"),
    "lone keyword": _pair(2, "read", "nil", "info", "\t:timed-out"),
    "lone keyword failed": _pair(2, "read", "nil", "fail", "\t:not-found"),
    "keyword as an ok's value": _pair(2, "read", "nil", "ok", "\t:x"),
    "keyword as an invoke's value": [_op("1", "invoke", "write", "\t:x")],
    "keyword glued": _pair(2, "read", "nil", "info", "\t1:timed-out"),
    "two keywords": _pair(2, "read", "nil", "info", "\t1\t:a\t:b"),
    "keyword then value": _pair(2, "read", "nil", "info", "\t:a 1"),
    "keyword odd": _pair(2, "read", "nil", "info", "\t1\t:timed-out?"),
    "keyword space": _pair(2, "read", "nil", "info", "\t1 :timed-out  "),
    "no value": [_op("1", "invoke", "read", ""), _op("1", "ok", "read", "")],
    "ok without value": _pair(0, "write", "1", more=""),
    "blank value": [_op("1", "invoke", "read", "\t  "), _op("1", "ok", "read", " ")],
    "nemesis": [
        _op(":nemesis", "info", "start", "\tnil"),
        _op(":nemesis", "info", "start", "\t#<Object 1>"),
        *_pair(0, "read", "nil", more="\t1"),
    ],
    "nemesis alone": [_op(":nemesis", "info", "start", "\tnil")],
    "named processes": [_op(":a", "invoke", "read", "\tnil"), _op(":a", "ok", "read", "\t1")],
    "f glued to a keyword": _pair(0, "read:timed-out", "nil", "info"),
    "f before a keyword value": _pair(0, "a:b", "1 :c d", "info"),
    "leading zeros": [*_pair(7, "read", "nil", more="\t1"), _op("007", "invoke", "read", "\tnil")],
    "long process": [_op("1" * 20, "invoke", "read", "\tnil")],
    "huge process": [_op("1" * 5000, "invoke", "read", "\tnil")],
    "minus zero": _pair(0, "write", "-0", more="\t-0"),
    "negative": _pair(0, "write", "-3", more="\t[-3 -0]"),
    "booleans": _pair(0, "write", "true", more="\t[false true nil]"),
    "nested": _pair(0, "write", "[1 [2 [3 []]]]", more="\t[[] [[]]]"),
    "deep": _pair(0, "write", "[" * 101 + "]" * 101),
    "deep enough": _pair(0, "write", "[" * 100 + "]" * 100),
    "19 digits": _pair(0, "write", "1" * 19, more="\t" + "9" * 18),
    "18 digits negative": _pair(0, "write", "-" + "9" * 18),
    "exponent": _pair(0, "write", "1e5"),
    "float": _pair(0, "write", "1.5"),
    "null symbol": _pair(0, "write", "null"),
    "nils glued": _pair(0, "write", "nilnil"),
    "string": _pair(0, "write", '"a b"'),
    "keyword in a vector": _pair(0, "write", "[:a 1]"),
    "two vectors": _pair(0, "write", "[1][2]"),
    "two values": _pair(0, "write", "1 2"),
    "a vector over two records": _pair(0, "write", "[", more="\t]"),
    "rows closed early": [
        *_pair(0, "write", "1],[2", more="\t[3"),
        _op("1", "invoke", "write", "\t]"),
    ],
    "a row closed early": [_op("1", "invoke", "write", "\t],[")],
    "commas": _pair(0, "write", "[1, 2]", more="\t[1,2]"),
    "tab in a vector": _pair(0, "write", "[1\t2]"),
    "trailing blanks": _pair(0, "write", "[1 2] ", more="\t3\t"),
    "other blank": _pair(0, "write", "[1\u20032]"),
    "unicode digits": _pair(0, "write", "\u0663", more="\t1"),
    "unicode process": [_op("\u0663", "invoke", "read", "\tnil")],
    "odd f": _pair(0, "foo/bar?", "1") + _pair(1, ":x", "1") + _pair(2, 'a"b', "1"),
    "odd type": [_op("0", "invokeX", "read", "\tnil")],
    "keyed": _pair(0, "write", "[1 2]") + _pair(1, "read", "[1 nil]", more="\t[1 2]"),
    "keyed cas": _pair(0, "cas", "[1 [2 3]]", more="\t[1 [2 3]]"),
    "unkeyed cas": _pair(0, "cas", "[2 3]", more="\t[2 3]"),
    "keyed then not": _pair(0, "write", "[1 2]") + _pair(1, "read", "nil", more="\t3"),
    "two records on a line": [_pair(0, "read", "nil")[0] + " " + _pair(1, "read", "nil")[0]],
    "named, not a record": ["INFO  jepsen.util - Relative time begins", *_pair(0, "read", "nil")],
    "truncated": [*_pair(0, "read", "nil"), "INFO  jepsen.util - 3\t:invoke"],
    "other lines": ["INFO  jepsen.core - Worker 0 starting", *_pair(0, "read", "nil"), "x"],
    "prefixed": ["2024-01-01 10:00:00,123{GMT} INFO [w] jepsen.util - 3\t:invoke\t:read\tnil"],
    "no record": ["INFO  jepsen.core - nothing here"],
    "double invoke": _pair(0, "read", "nil")[:1] * 2,
    "odd line late": _long(2500, _op("9", "invoke", "write", "\t:x")),
    "odd line in the first batch": _long(7, "INFO  jepsen.util - 9\t:invoke"),
    "bad EDN late": _long(1800, _op("9", "invoke", "write", '\t"open')),
    "keyed late": _long(900, _op("9", "invoke", "write", "\t[1 2]")),
}


def _read(path: Path) -> dict[str, Any]:
    try:
        history = load(path)
    except HistoryError as e:
        return {"error": e.problem, "line": e.line}
    # repr: True and 1, 1.0 and 1 are equal, but not the same value read
    return {
        "events": repr(history.events),
        "ops": repr(history.ops),
        "warnings": history.warnings,
        "nemesis": repr(history.nemesis),
    }


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    quick = _read(path)
    with monkeypatch.context() as patched:
        patched.setattr(jepsen_log, "_quick_events", lambda *_: None)
        slow = _read(path)
    return quick, slow


@pytest.mark.parametrize("name", list(CASES))
def test_quick_batches_read_as_the_line_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    path = tmp_path / "jepsen.log"
    path.write_text("".join(line + "\n" for line in CASES[name]))
    quick, slow = _both(path, monkeypatch)
    assert quick == slow


@pytest.mark.parametrize(
    "data",
    [
        b"INFO  jepsen.util - 0\t:invoke\t:read\tnil\r\nINFO  jepsen.util - 0\t:ok\t:read\t1\r\n",
        b"\xef\xbb\xbfINFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0 :ok :read",
        b"INFO  jepsen.util - 0\t:invoke\t:read\tnil\n\xff\nINFO  jepsen.util - 0\t:ok\t:read\t1\n",
        b"INFO  jepsen.util - 0\t:invoke\t:read\tnil\rINFO  jepsen.util - 0\t:ok\t:read\t1\n",
    ],
    ids=["CRLF", "BOM and no last LF", "not UTF-8", "lone CR"],
)
def test_line_ends_and_bytes_read_as_the_line_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    path = tmp_path / "jepsen.log"
    path.write_bytes(data)
    quick, slow = _both(path, monkeypatch)
    assert quick == slow


def test_the_common_log_is_read_quickly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Not a test of results (those above are): that the quick path is the one taken, so
    # that the comparisons above compare two readers.
    path = tmp_path / "jepsen.log"
    path.write_text("".join(line + "\n" for line in _long(0, "")))
    taken: list[bool] = []
    quick_events = jepsen_log._quick_events

    def spy(*args: Any) -> Any:
        located = quick_events(*args)
        taken.append(located is not None)
        return located

    monkeypatch.setattr(jepsen_log, "_quick_events", spy)
    load(path)
    assert taken and all(taken)


_COMMON = {
    "process": ["0", "3", "-1", "12", ":nemesis"],
    "blank": [" ", "\t", " \t"],
    "type": ["invoke", "ok", "fail", "info"],
    "f": ["read", "cas", "write"],
    "token": [
        "nil",
        "true",
        "false",
        "0",
        "-0",
        "12",
        "-3",
        "[1 2]",
        "[nil [3]]",
        "[]",
        "[0 [1 2]]",
    ],
    "error": ["", "\t:timed-out", "\t:not-found"],
}
_ODD = {
    "process": ["007", ":n.x", "1" * 19, "x"],
    "blank": [",", ", ", "\u2003", "", "  "],
    "type": ["frob"],
    "f": [":write", "a:b", "x?"],
    "token": [
        *("null", "007", "1e5", "1.5", "9" * 19, "-", ":a", '"s"', "x", "nilnil", "\u0663"),
        *("[", "]", "[1\t2]", "[1  2]"),
    ],
    "error": [" :b", ":c", "\t:x ", "\t:a\t:b"],
}


def _records(odd: bool) -> st.SearchStrategy[str]:
    """Op records of common fields, or of fields each sometimes odd."""

    def field(name: str) -> st.SearchStrategy[str]:
        common = st.sampled_from(_COMMON[name])
        return st.one_of(*[common] * 5, st.sampled_from(_ODD[name])) if odd else common

    return st.tuples(
        field("process"),
        field("blank"),
        field("type"),
        field("f"),
        st.lists(
            st.tuples(field("blank"), field("token")), min_size=int(not odd), max_size=1 + odd
        ),
        field("error"),
    ).map(
        lambda r: (
            f"{P}{r[0]}{r[1] or ' '}:{r[2]}\t:{r[3]}"
            + "".join(blank + token for blank, token in r[4])
            + r[5]
        )
    )


_OTHER_LINES = st.sampled_from(["", "x", "INFO  jepsen.core - Worker 1 done", P + "3"])


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.lists(st.one_of(*[_records(odd=False)] * 8, _OTHER_LINES), min_size=1, max_size=40),
        st.lists(st.one_of(*[_records(odd=True)] * 8, _OTHER_LINES), min_size=1, max_size=8),
    )
)
def test_any_log_reads_as_the_line_reader_reads_it(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "jepsen.log"
        path.write_text("".join(line + "\n" for line in lines))
        quick = _read(path)
        with patch.object(jepsen_log, "_quick_events", lambda *_: None):
            assert quick == _read(path)
