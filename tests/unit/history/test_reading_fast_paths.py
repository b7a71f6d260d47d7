"""Tests that the fast readers change nothing but speed, and that the bad inputs that once
broke `harness check` (255) are refused as one `FILE:LINE: problem` line (254).

history.jsonl is parsed by orjson, with the standard library's parser behind it for what
orjson refuses or would read differently: each line must give the same value, types
included, or the same error, as with the standard library alone. The Jepsen log reader's
shortcut through JSON must refuse a value nested deeper than a history may hold, as its
EDN reader does, and a process number of any length is an input error, not a crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import cli
from harness.commands import check
from history import HistoryError, jsonl
from history.events import VALUE_BUDGET
from history.formats import read_jsonl
from history.frozen import MAX_NESTING
from tests.unit.harness.commands.test_check import run

DIGITS = 5000  # over Python's limit on converting digits to an integer (4,300)
DEEP = 3000  # levels: past Python's recursion limit and orjson's (1,024)


_INVOKE = '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "write", "value": '


def _line(value_text: str) -> str:
    return _INVOKE + value_text + "}"


# --- bad inputs: 254 with one line, never 255 ------------------------------------------


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> str:
    """Checks text as the file name; asserts exit 254 and one line naming its line 1.
    Returns the problem."""
    path = tmp_path / name
    path.write_text(text)
    code, out, err = run(capsys, str(path))
    assert (code, out) == (254, "")
    assert err.count("\n") == 1 and err.startswith(f"{path}:1: ")
    assert not list(tmp_path.glob("harness-*crash-*"))
    return err.removeprefix(f"{path}:1: ").strip()


def test_a_log_value_nested_thousands_deep_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = "[" * DEEP + "1" + "]" * DEEP
    text = f"INFO jepsen.util - 1 :invoke :write {deep}\nINFO jepsen.util - 1 :ok :write 1\n"
    problem = _refused(tmp_path, capsys, "deep.log", text)
    assert problem == f"bad EDN in log line: nested deeper than {MAX_NESTING} levels"


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 500, 1023, 1024, 1025])
def test_a_log_value_nested_past_the_bound_is_refused_as_in_edn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    # Below Python's recursion limit the JSON shortcut used to accept what EDN refuses.
    text = "INFO jepsen.util - 1 :invoke :write " + "[" * depth + "]" * depth + "\n"
    problem = _refused(tmp_path, capsys, "deep.log", text)
    assert problem == f"bad EDN in log line: nested deeper than {MAX_NESTING} levels"


def test_a_log_value_nested_to_the_bound_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = "[" * MAX_NESTING + "1" + "]" * MAX_NESTING
    path = tmp_path / "deep.log"
    path.write_text(
        f"INFO jepsen.util - 1 :invoke :write {value}\nINFO jepsen.util - 1 :ok :write {value}\n"
    )
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "") and out.startswith("VALID ")


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_log_process_of_thousands_of_digits_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sign: str
) -> None:
    process = sign + "1" * DIGITS
    text = (
        f"INFO jepsen.util - {process} :invoke :write 1\n"
        f"INFO jepsen.util - {process} :ok :write 1\n"
    )
    problem = _refused(tmp_path, capsys, "digits.log", text)
    assert problem == "process with more than 4300 digits"


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("a.jsonl", _line("[" * DEEP + "]" * DEEP) + "\n", "nested deeper than"),
        ("b.jsonl", _line('{"a": ' * DEEP + "1" + "}" * DEEP) + "\n", "nested deeper than"),
        ("c.jsonl", _line("[" * 1000 + "]" * 1000) + "\n", "nested deeper than"),
        ("d.jsonl", _line("1" * DIGITS) + "\n", "integer with more than 4300 digits"),
        ("e.jsonl", _line("0").replace('"process": 0', f'"process": {"1" * DIGITS}'), "4300"),
        ("f.jsonl", _line("0").replace('"time": 1', f'"time": -{"1" * DIGITS}'), "4300"),
        ("a.edn", "{:process 0 :type :invoke :f :w :value " + "[" * DEEP + "]" * DEEP + "}", ""),
        ("b.edn", "{:process 0 :type :invoke :f :w :value " + "{:a " * DEEP + "1" + "}" * DEEP, ""),
        ("c.edn", "[{:process 0 :type :invoke :f :w :value " + "#{" * DEEP + "}" * DEEP + "}]", ""),
        ("d.edn", "{:process " + "1" * DIGITS + " :type :invoke :f :w :value 1}", "4300 digits"),
        ("e.edn", "{:process 0 :type :invoke :f :w :value " + "1" * DIGITS + "N}", "4300 digits"),
        ("f.edn", "{:process 0 :type :invoke :f :w :index " + "1" * DIGITS + "}", "4300 digits"),
        ("b.log", "INFO jepsen.util - 1 :invoke :write {:a " + "(" * DEEP + ")" * DEEP + "}", ""),
        ("c.log", "INFO jepsen.util - 1 :invoke :write [" + "1" * DIGITS + " 2]", "4300 digits"),
    ],
)
def test_deep_values_and_long_integers_are_refused_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, problem: str
) -> None:
    refused = _refused(tmp_path, capsys, name, text)
    assert problem in refused
    assert problem or "nested deeper" in refused


# --- the crash log goes to --out, even for an error that escapes `check` itself --------


def _escaping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Makes `check` break, and its own crash handling break too, as when memory runs out:
    the error reaches harness.cli."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    def no_memory(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(check, "_check_all", broken)
    monkeypatch.setattr(check, "write_crash_log", no_memory)
    monkeypatch.setattr(cli, "_RESERVE", [b""])  # released by the MemoryError: not the real one


def _log_named(err: str) -> Path:
    assert err.count("\n") == 1 and err.startswith("harness: internal error: MemoryError")
    return Path(err.split("traceback in ")[1].split(")")[0])


def test_an_error_escaping_check_logs_into_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _escaping(monkeypatch)
    history = tmp_path / "in" / "history.jsonl"
    history.parent.mkdir()
    history.write_text(_line("1") + "\n")
    out = tmp_path / "out" / "not yet made"
    code, printed, err = run(capsys, str(history), "--out", str(out))
    assert (code, printed) == (255, "")
    log = _log_named(err)
    assert log.parent == out and "MemoryError" in log.read_text()
    assert not list(history.parent.glob("harness-*crash-*"))


def test_an_error_escaping_check_logs_beside_the_history_without_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _escaping(monkeypatch)
    history = tmp_path / "history.jsonl"
    history.write_text(_line("1") + "\n")
    code, _, err = run(capsys, str(history))
    assert code == 255 and _log_named(err).parent == tmp_path


# --- orjson's values and errors are the standard library's ------------------------------


class _NoOrjson:
    """Stands in for orjson in history.jsonl: refuses everything, so every line is read by
    the standard library's parser, as before orjson."""

    JSONDecodeError = orjson.JSONDecodeError

    @staticmethod
    def loads(text: bytes) -> Any:
        raise orjson.JSONDecodeError("refused", "", 0)


def _typed(value: Any) -> Any:
    """Returns value with the type of every part beside it: 1, 1.0 and True stay apart."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float):
        return ("float", value.hex())  # -0.0 apart from 0.0
    return (type(value).__name__, value)


def _outcome(text: str) -> Any:
    """Returns what read_jsonl makes of text: its events, typed, or its error."""
    try:
        return [
            (line, _typed(event))
            for line, event in jsonl.read_jsonl_lines(
                enumerate(text.split("\n"), 1), "h", VALUE_BUDGET
            )
        ]
    except HistoryError as e:
        return str(e)


def _same_as_the_standard_library(text: str) -> None:
    fast = _outcome(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "orjson", _NoOrjson)
        exact = _outcome(text)
    assert fast == exact


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**40])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=())),  # lone surrogates too
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON_VALUES, ascii_only=st.booleans(), key=_JSON_VALUES)
def test_any_json_value_reads_as_the_standard_library_reads_it(
    value: Any, ascii_only: bool, key: Any
) -> None:
    event = {"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "w", "value": value}
    event["key"] = key
    _same_as_the_standard_library(json.dumps(event, ensure_ascii=ascii_only))


# Number spellings, valid and not: long mantissas, huge exponents, leading zeros, signs.
_NUMBERS = st.from_regex(r"-?(0|[0-9]{1,25})(\.[0-9]{0,20})?([eE][+-]?[0-9]{1,4})?", fullmatch=True)
_ODD_TOKENS = st.sampled_from(
    [
        "NaN",
        "Infinity",
        "-Infinity",
        "1e400",
        "-1e999",
        "2.5e-400",
        "-0",
        "-0.0",
        "01",
        "1.",
        ".5",
        "+1",
        "[1,]",
        '"\\ud800"',
        '"\\udc00\\ud800"',
        '"\\ud83d\\ude00"',
        '"\x01"',
        "[" * 1030 + "]" * 1030,
        "[" * 1000 + "]" * 1000,
        "[" * 101 + "]" * 101,
        "tru",
        "nul",
    ]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    token=_NUMBERS | _ODD_TOKENS,
    before=st.sampled_from(["", " ", "\t", "\xa0", "\x0c"]),
    after=st.sampled_from(["", " ", "\r", "\xa0", " x", ', "value": 2', "}"]),
)
def test_any_line_reads_or_fails_as_with_the_standard_library(
    token: str, before: str, after: str
) -> None:
    _same_as_the_standard_library(before + _line(token) + after)


@pytest.mark.parametrize(
    "text",
    [
        '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "w", "f": "x"}',
        '{"process": 0, "value": 1, "time": 1, "type": "invoke", "value": 2, "f": "w"}',
        '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "w", "value": 1}' * 2,
        "[]",
        "null",
        "",
        "  ",
        '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "w", "value": '
        + "9" * 19
        + "}",
        '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "w", "value": -'
        + "9" * 19
        + "}",
        '{"index": 0, "time": 1700000000000000000, "process": 0, "type": "invoke", "f": "w"}',
        '{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "w", "value": "'
        + "1" * 30
        + '"}',
    ],
)
def test_duplicate_keys_long_digits_and_odd_lines_read_as_before(text: str) -> None:
    _same_as_the_standard_library(text)


def test_an_integer_beyond_64_bits_stays_an_exact_integer() -> None:
    for number in (2**64, -(2**63) - 1, 10**40, 2**64 - 1, -(2**63)):
        ((_, event),) = read_jsonl(_line(str(number)), "h")
        assert event["value"] == number and type(event["value"]) is int
